package server

import (
	"regexp"
	"slices"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

var (
	reIndexDDL  = regexp.MustCompile(`(?is)^\s*(create\s+(unique\s+)?index|alter\s+table)\b`)
	reCreateIdx = regexp.MustCompile(`(?is)^\s*create\s+(unique\s+)?index\b`)
	reDDLOption = regexp.MustCompile(`(?i)(,?\s*)\b(algorithm|lock)\s*=?\s*([a-z]+)\b`)
)

// checkDDLOptions validates the ALGORITHM= and LOCK= options of ALTER TABLE
// and CREATE INDEX with MySQL 8's meaning. Every change ReorgDB makes is
// online (no lock) and at least INPLACE, so COPY and INPLACE, and every
// LOCK, are met; ALGORITHM=INSTANT is refused here for what can never be
// instant (building or dropping an index, adding a constraint: 1845),
// and by the SQL layer for a column change it finds needs its rows
// rewritten or an index dropped (1846). Unknown values get 1800 / 1801.
// go-mysql-server cannot parse the options after CREATE INDEX, so they
// are removed from that statement's text.
func checkDDLOptions(q string) (string, error) {
	if !reIndexDDL.MatchString(q) {
		return q, nil
	}
	var bad error
	out := reDDLOption.ReplaceAllStringFunc(q, func(m string) string {
		g := reDDLOption.FindStringSubmatch(m)
		opt, val := strings.ToUpper(g[2]), strings.ToUpper(g[3])
		var err error
		switch {
		case opt == "ALGORITHM" && !slices.Contains([]string{"DEFAULT", "INSTANT", "INPLACE", "COPY"}, val):
			err = mysql.NewSQLError(1800, "HY000", "Unknown ALGORITHM '%s'", g[3])
		case opt == "LOCK" && !slices.Contains([]string{"DEFAULT", "NONE", "SHARED", "EXCLUSIVE"}, val):
			err = mysql.NewSQLError(1801, "HY000", "Unknown LOCK type '%s'", g[3])
		case opt == "ALGORITHM" && val == "INSTANT" && neverInstant(q):
			err = mysql.NewSQLError(1845, "0A000", "ALGORITHM=INSTANT is not supported for this operation. Try ALGORITHM=COPY/INPLACE.")
		}
		if err != nil && bad == nil {
			bad = err
		}
		if reCreateIdx.MatchString(q) {
			return ""
		}
		return m
	})
	if bad != nil {
		return q, bad
	}
	return out, nil
}

// neverInstant reports whether statement q builds or drops an index or
// adds a constraint, none of which MySQL 8 can do with ALGORITHM=INSTANT.
func neverInstant(q string) bool {
	if reCreateIdx.MatchString(q) {
		return true
	}
	st, err := sqlparser.Parse(q)
	if err != nil {
		return false
	}
	at, ok := st.(*sqlparser.AlterTable)
	if !ok {
		return false
	}
	for _, d := range at.Statements {
		if d.IndexSpec != nil && (d.IndexSpec.Action == sqlparser.CreateStr || d.IndexSpec.Action == sqlparser.DropStr) {
			return true
		}
		if d.ConstraintAction == sqlparser.AddStr {
			return true
		}
		if d.TableSpec == nil {
			continue
		}
		if len(d.TableSpec.Indexes) > 0 || len(d.TableSpec.Constraints) > 0 {
			return true
		}
		for _, c := range d.TableSpec.Columns {
			if c.Type.KeyOpt != 0 { // an inline UNIQUE / KEY: an index build
				return true
			}
		}
	}
	return false
}

var (
	reCreateIfNotExists = regexp.MustCompile("(?is)^(\\s*create\\s+(?:unique\\s+)?index\\s+)if\\s+not\\s+exists\\s+`?(\\w+)`?(\\s+on\\s+)([`\\w.]+)(.*)$")
	reDropIfExists      = regexp.MustCompile("(?is)^(\\s*drop\\s+index\\s+)if\\s+exists\\s+`?(\\w+)`?(\\s+on\\s+)([`\\w.]+)(.*)$")
)

// ifExists handles CREATE INDEX IF NOT EXISTS and DROP INDEX IF EXISTS,
// which go-mysql-server does not parse: when the condition makes the
// statement a no-op it says so (noop), otherwise it returns the statement
// without the clause.
func (h *handler) ifExists(c *mysql.Conn, q string) (string, bool) {
	if m := reCreateIfNotExists.FindStringSubmatch(q); m != nil {
		db, table := h.qualify(c, m[4])
		if h.s.engine.HasIndex(db, table, m[2]) {
			return q, true
		}
		return m[1] + "`" + m[2] + "`" + m[3] + m[4] + m[5], false
	}
	if m := reDropIfExists.FindStringSubmatch(q); m != nil {
		db, table := h.qualify(c, m[4])
		if !h.s.engine.HasIndex(db, table, m[2]) {
			return q, true
		}
		return m[1] + "`" + m[2] + "`" + m[3] + m[4] + m[5], false
	}
	return q, false
}
