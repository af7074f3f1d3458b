package sql

import (
	"regexp"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Index hints (USE / IGNORE / FORCE INDEX). go-mysql-server parses them
// (sqlparser.AliasedTableExpr.Hints) but its planner drops them, so the
// adapter applies them itself: the table a statement resolves carries the
// hint, and GetIndexes offers the planner only the indexes the hint
// allows. That covers every place the planner picks an index (filters,
// ORDER BY, lookup joins), since all of them ask GetIndexes:
//
//   - IGNORE INDEX (i, ...): i is never used.
//   - USE INDEX (i, ...): only the named indexes, or a table scan.
//   - FORCE INDEX (i, ...): the same set. go-mysql-server takes the best
//     index that serves a filter or the order whenever there is one, and
//     never weighs it against a table scan, so an index that can serve is
//     always used, as MySQL's FORCE INDEX does.
//
// The grammar takes one hint per table, with INDEX (not KEY) and no FOR
// JOIN / ORDER BY / GROUP BY clause. A hint belongs to a table name, not
// to one occurrence of it: when a statement names the same table twice
// with different hints (or one without), none of them applies, which can
// cost speed but never changes results.

// indexHint is one table's hint: kind is "use", "ignore" or "force", and
// names are lower case.
type indexHint struct {
	kind  string
	names []string
}

func (h *indexHint) nameSet() map[string]bool {
	m := make(map[string]bool, len(h.names))
	for _, n := range h.names {
		m[n] = true
	}
	return m
}

// allows reports whether the hint lets the planner use index name.
func (h *indexHint) allows(name string) bool {
	if h == nil {
		return true
	}
	in := false
	for _, n := range h.names {
		if strings.EqualFold(n, name) {
			in = true
			break
		}
	}
	if h.kind == "ignore" {
		return !in
	}
	return in
}

// reIndexHint finds statements that may have a hint, so that the others
// are not parsed a second time.
var reIndexHint = regexp.MustCompile(`(?i)\b(use|ignore|force)\s+index\b`)

// mayHaveIndexHint is reIndexHint.MatchString, with a plain scan for the
// word INDEX first: the regexp costs far more than the statement itself on
// a bulk INSERT of a few hundred kilobytes.
func mayHaveIndexHint(q string) bool {
	for i := 0; i+5 <= len(q); i++ {
		if q[i]|0x20 == 'i' && strings.EqualFold(q[i:i+5], "index") {
			return reIndexHint.MatchString(q)
		}
	}
	return false
}

// stmtHints is the hints of one statement, by "db.table" in lower case;
// a nil entry is a table named more than once with differing hints.
type stmtHints struct {
	at    time.Time // the statement's ctx.QueryTime
	query string
	hints map[string]*indexHint
}

// indexHintFor returns the hint that the statement being planned gives
// table db.table, or nil. The session keeps its last statement's hints,
// found once per statement: go-mysql-server resolves a statement's tables
// one by one, and a bulk INSERT's text is long.
func indexHintFor(ctx *gms.Context, db, table string) *indexHint {
	if ctx == nil || ctx.Session == nil {
		return nil
	}
	q, at := ctx.Query(), ctx.QueryTime()
	s, _ := ctx.Session.(*Session)
	var sh *stmtHints
	if s != nil {
		sh = s.hints.Load()
	}
	if sh == nil || !sh.at.Equal(at) || sh.query != q {
		sh = &stmtHints{at: at, query: q}
		if mayHaveIndexHint(q) {
			sh.hints = parseIndexHints(ctx, q)
		}
		if s != nil {
			s.hints.Store(sh)
		}
	}
	return sh.hints[strings.ToLower(db+"."+table)]
}

// parseIndexHints collects the hints of every table a statement names.
// A statement that does not parse here has none (go-mysql-server reports
// the error).
func parseIndexHints(ctx *gms.Context, q string) map[string]*indexHint {
	stmt, _, err := sqlparser.ParseOneWithOptions(ctx, q, gms.LoadSqlMode(ctx).ParserOptions())
	if err != nil {
		return nil
	}
	for {
		// Walk does not enter an EXPLAIN's statement.
		ex, ok := stmt.(*sqlparser.Explain)
		if !ok {
			break
		}
		stmt = ex.Statement
	}
	curDB := ctx.GetCurrentDatabase()
	out := map[string]*indexHint{}
	seen := map[string]bool{}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		ate, ok := node.(*sqlparser.AliasedTableExpr)
		if !ok {
			return true, nil
		}
		tn, ok := ate.Expr.(sqlparser.TableName)
		if !ok {
			return true, nil
		}
		db := tn.DbQualifier.String()
		if db == "" {
			db = curDB
		}
		k := strings.ToLower(db + "." + tn.Name.String())
		var h *indexHint
		if ate.Hints != nil {
			h = &indexHint{kind: strings.TrimSpace(strings.ToLower(ate.Hints.Type))}
			for _, c := range ate.Hints.Indexes {
				h.names = append(h.names, strings.ToLower(c.String()))
			}
		}
		if seen[k] {
			if !sameHint(out[k], h) {
				out[k] = nil
			}
		} else {
			seen[k] = true
			out[k] = h
		}
		return true, nil
	}, stmt)
	return out
}

func sameHint(a, b *indexHint) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.kind != b.kind || len(a.names) != len(b.names) {
		return false
	}
	as, bs := a.nameSet(), b.nameSet()
	for n := range as {
		if !bs[n] {
			return false
		}
	}
	return true
}

// checkHint fails, as MySQL does, when a hint names an index the table
// does not have.
func checkHint(h *indexHint, m *tableMeta) error {
	if h == nil {
		return nil
	}
	for _, n := range h.names {
		found := false
		for _, ix := range m.indexes {
			if ix.visible() && strings.EqualFold(ix.name(), n) {
				found = true
				break
			}
		}
		if !found {
			return mysql.NewSQLError(mysql.ERKeyDoesNotExist, "42000", "Key '%s' doesn't exist in table '%s'", n, m.def.Name)
		}
	}
	return nil
}

// reHintList finds an index hint's list of names, and rePrimary the
// unquoted PRIMARY in it.
var (
	reHintList = regexp.MustCompile(`(?i)\b(use|ignore|force)(\s+index\s*\()([^()]*)\)`)
	rePrimary  = regexp.MustCompile("(?i)(^|[^`\\w])primary\\b")
)

// QuotePrimaryInHints returns query with PRIMARY quoted in its index
// hints: MySQL takes FORCE INDEX (PRIMARY), but go-mysql-server's grammar
// reserves the word and fails to parse it. Text in quotes or comments is
// left alone, and the rewrite is dropped unless every string literal
// token is unchanged.
func QuotePrimaryInHints(query string) string {
	if !mayHaveIndexHint(query) {
		return query
	}
	quoted := quotedRanges(query)
	inQuotes := func(at int) bool {
		for _, r := range quoted {
			if at >= r[0] && at < r[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	last := 0
	for _, m := range reHintList.FindAllStringSubmatchIndex(query, -1) {
		if inQuotes(m[0]) {
			continue
		}
		names := query[m[6]:m[7]]
		b.WriteString(query[last:m[6]])
		b.WriteString(rePrimary.ReplaceAllString(names, "${1}`PRIMARY`"))
		last = m[7]
	}
	if last == 0 {
		return query
	}
	b.WriteString(query[last:])
	out := b.String()
	if out == query || !sameStringLiterals(query, out) {
		return query
	}
	return out
}

// quotedRanges returns the byte ranges [start, end) of query's quoted
// strings and identifiers and of its comments (not /*! ... */, which is
// code).
func quotedRanges(q string) [][2]int {
	var out [][2]int
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) {
				if q[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out = append(out, [2]int{i, min(j+1, len(q))})
			i = j
		case c == '#' || c == '-' && strings.HasPrefix(q[i:], "-- "):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			out = append(out, [2]int{i, i + j})
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*") && !strings.HasPrefix(q[i:], "/*!"):
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			out = append(out, [2]int{i, end})
			i = end - 1
		}
	}
	return out
}

// sameStringLiterals reports whether a and b have the same string literal
// tokens.
func sameStringLiterals(a, b string) bool {
	la, oka := stringLiterals(a)
	lb, okb := stringLiterals(b)
	if !oka || !okb || len(la) != len(lb) {
		return false
	}
	for i := range la {
		if la[i] != lb[i] {
			return false
		}
	}
	return true
}

func stringLiterals(q string) ([]string, bool) {
	tkn := sqlparser.NewStringTokenizer(q)
	var out []string
	for {
		typ, val := tkn.Scan()
		switch typ {
		case 0:
			return out, true
		case sqlparser.LEX_ERROR:
			return nil, false
		case sqlparser.STRING:
			out = append(out, string(val))
		}
	}
}
