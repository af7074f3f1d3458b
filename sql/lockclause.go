package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Marks that RewriteLockingClause leaves in a statement's text for a
// modifier go-mysql-server's grammar lacks; the transaction reads them
// there (beginStmt).
const (
	nowaitMark     = "/* NOWAIT */"
	skipLockedMark = "/* SKIP LOCKED */"
	// ofMark opens the list of an OF clause: "/* OF a,b */".
	ofMark = "/* OF "
)

// RewriteLockingClause returns q with MySQL 8's locking clauses written in
// forms go-mysql-server's grammar knows, with the same meaning:
//
//	FOR SHARE              LOCK IN SHARE MODE
//	FOR SHARE SKIP LOCKED  LOCK IN SHARE MODE /* SKIP LOCKED */
//	FOR SHARE NOWAIT       LOCK IN SHARE MODE /* NOWAIT */
//	FOR UPDATE NOWAIT      FOR UPDATE /* NOWAIT */
//	FOR UPDATE OF a, b     FOR UPDATE /* OF a,b */
//
// FOR UPDATE and FOR UPDATE SKIP LOCKED are the grammar's own. OF names
// the tables (or their aliases) whose rows the clause locks; the others
// are read as by a plain SELECT.
func RewriteLockingClause(q string) string {
	if !MayHaveLockingClause(q) {
		return q
	}
	toks, ok := lockTokens(q)
	if !ok {
		return q
	}
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(toks); i++ {
		x := toks[i+1]
		if toks[i].typ != sqlparser.FOR || (x.typ != sqlparser.SHARE && x.typ != sqlparser.UPDATE) {
			continue
		}
		of, next, ok := lockOf(toks, i+2)
		if !ok {
			continue
		}
		mark, next := lockModifier(toks, next)
		switch toks[next].typ {
		case 0, ';', ')':
		default:
			continue
		}
		if x.typ == sqlparser.UPDATE && mark != nowaitMark && of == "" {
			continue
		}
		// The tokenizer reads FOR with the word after it, so FOR's
		// position is found from that word's: only blanks stand between.
		before := strings.TrimRight(q[:x.start], " \t\r\n")
		if len(before) < len("FOR") || !strings.EqualFold(before[len(before)-3:], "FOR") || len(before)-3 < last {
			continue
		}
		b.WriteString(q[last : len(before)-3])
		if x.typ == sqlparser.SHARE {
			b.WriteString("LOCK IN SHARE MODE")
		} else {
			b.WriteString("FOR UPDATE")
		}
		if of != "" {
			b.WriteString(" " + of)
		}
		if mark != "" {
			b.WriteString(" " + mark)
		}
		last = toks[next-1].end
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

type lockToken struct {
	typ, start, end int
	val             string
}

// lockTokens tokenizes q, comments left out; the last token is the end
// of input (type 0). Positions are right for every token but FOR.
func lockTokens(q string) ([]lockToken, bool) {
	var toks []lockToken
	tk := sqlparser.NewStringTokenizer(q)
	for {
		typ, val := tk.Scan()
		if typ == sqlparser.LEX_ERROR {
			return nil, false
		}
		if typ == sqlparser.COMMENT {
			continue
		}
		// Position is one past the token's end (the tokenizer's lookahead).
		end := tk.Position - 1
		toks = append(toks, lockToken{typ, end - len(val), end, string(val)})
		if typ == 0 {
			return toks, true
		}
	}
}

// lockOf reads the OF clause at toks[i], if any, and returns its mark
// (ofMark, the names in lower case, " */") and the index of the token
// after it; ok is false for a list this cannot mark (a name holding a
// comma or the end of a comment), left for the parser to report.
func lockOf(toks []lockToken, i int) (mark string, next int, ok bool) {
	if toks[i].typ != sqlparser.OF {
		return "", i, true
	}
	var names []string
	for i++; ; i++ {
		t := toks[i]
		if t.typ != sqlparser.ID {
			return "", i, false
		}
		name := strings.ToLower(t.val)
		if name == "" || strings.ContainsAny(name, ",*/`") {
			return "", i, false
		}
		names = append(names, name)
		if toks[i+1].typ != ',' {
			return ofMark + strings.Join(names, ",") + " */", i + 1, true
		}
		i++
	}
}

// lockOfNames is the list of an OF clause that RewriteLockingClause
// marked in q, nil if there is none.
func lockOfNames(q string) []string {
	i := strings.Index(q, ofMark)
	if i < 0 {
		return nil
	}
	rest := q[i+len(ofMark):]
	end := strings.Index(rest, " */")
	if end < 0 {
		return nil
	}
	return strings.Split(rest[:end], ",")
}

// lockModifier reads the NOWAIT or SKIP LOCKED at toks[i], if any, and
// returns its mark and the index of the token after it.
func lockModifier(toks []lockToken, i int) (mark string, next int) {
	switch {
	case toks[i].typ == sqlparser.NOWAIT:
		return nowaitMark, i + 1
	case toks[i].typ == sqlparser.SKIP && i+1 < len(toks) && toks[i+1].typ == sqlparser.LOCKED:
		return skipLockedMark, i + 2
	}
	return "", i
}

// MayHaveLockingClause says whether q holds the word SHARE or NOWAIT, or
// UPDATE followed by OF, in any case: a cheap test before tokenizing.
func MayHaveLockingClause[T string | []byte](q T) bool {
	for i := 0; i+5 <= len(q); i++ {
		switch q[i] | 0x20 {
		case 's':
			if foldEqual(q[i:i+5], "share") {
				return true
			}
		case 'n':
			if i+6 <= len(q) && foldEqual(q[i:i+6], "nowait") {
				return true
			}
		case 'u':
			if i+6 <= len(q) && foldEqual(q[i:i+6], "update") && followedByOf(q[i+6:]) {
				return true
			}
		}
	}
	return false
}

// followedByOf says whether q starts with blanks and the word OF.
func followedByOf[T string | []byte](q T) bool {
	i := 0
	for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\r' || q[i] == '\n') {
		i++
	}
	return i > 0 && i+2 <= len(q) && foldEqual(q[i:i+2], "of") &&
		(i+2 == len(q) || q[i+2] == ' ' || q[i+2] == '\t' || q[i+2] == '\r' || q[i+2] == '\n' || q[i+2] == '`')
}
