package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// RewriteForShare returns q with MySQL 8's locking clause FOR SHARE
// written as LOCK IN SHARE MODE, which means the same and is the form
// go-mysql-server's grammar knows. A FOR SHARE followed by OF, NOWAIT or
// SKIP LOCKED is left alone (the parser then reports it): those change
// what the lock does.
func RewriteForShare(q string) string {
	if !MayHaveForShare(q) {
		return q
	}
	type token struct{ typ, start, end int } // start and end are SHARE's only
	var toks []token
	tk := sqlparser.NewStringTokenizer(q)
	for {
		typ, val := tk.Scan()
		if typ == sqlparser.LEX_ERROR {
			return q
		}
		if typ == sqlparser.COMMENT {
			continue
		}
		// Position is one past the token's end (the tokenizer's lookahead).
		end := tk.Position - 1
		toks = append(toks, token{typ, end - len(val), end})
		if typ == 0 {
			break
		}
	}
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].typ != sqlparser.FOR || toks[i+1].typ != sqlparser.SHARE {
			continue
		}
		switch toks[i+2].typ {
		case 0, ';', ')':
		default:
			continue
		}
		// The tokenizer reads FOR SHARE as a pair, so FOR's position is
		// found from SHARE's: only blanks may stand between them.
		share := toks[i+1]
		before := strings.TrimRight(q[:share.start], " \t\r\n")
		if len(before) < len("FOR") || !strings.EqualFold(before[len(before)-3:], "FOR") || len(before)-3 < last {
			continue
		}
		b.WriteString(q[last : len(before)-3])
		b.WriteString("LOCK IN SHARE MODE")
		last = share.end
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// MayHaveForShare says whether q holds the word SHARE in any case, a cheap
// test before tokenizing.
func MayHaveForShare[T string | []byte](q T) bool {
	for i := 0; i+5 <= len(q); i++ {
		if q[i]|0x20 == 's' && foldEqual(q[i:i+5], "share") {
			return true
		}
	}
	return false
}
