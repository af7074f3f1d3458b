package server

import (
	"regexp"
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
// and CREATE INDEX: every index change is online (INPLACE, no lock), so
// those values and DEFAULT are accepted and anything else is refused. An
// ALTER TABLE that only adds columns is instant, so it accepts every
// ALGORITHM (INSTANT, INPLACE, COPY) and LOCK value.
// go-mysql-server cannot parse the options after CREATE INDEX, so they are
// removed from that statement's text.
func checkDDLOptions(q string) (string, error) {
	if !reIndexDDL.MatchString(q) {
		return q, nil
	}
	addColumns := onlyAddsColumns(q)
	var bad error
	out := reDDLOption.ReplaceAllStringFunc(q, func(m string) string {
		g := reDDLOption.FindStringSubmatch(m)
		opt, val := strings.ToUpper(g[2]), strings.ToUpper(g[3])
		ok := val == "DEFAULT" || (opt == "ALGORITHM" && val == "INPLACE") || (opt == "LOCK" && val == "NONE")
		if addColumns {
			// ADD COLUMN is instant, which satisfies any algorithm and lock.
			ok = ok || opt == "ALGORITHM" && (val == "INSTANT" || val == "COPY") ||
				opt == "LOCK" && (val == "SHARED" || val == "EXCLUSIVE")
		}
		if !ok && bad == nil {
			bad = mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of ReorgDB doesn't yet support '%s=%s'; index changes are always online: use %s=%s or DEFAULT",
				opt, val, opt, map[string]string{"ALGORITHM": "INPLACE", "LOCK": "NONE"}[opt])
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

// onlyAddsColumns reports whether q is an ALTER TABLE whose clauses are
// ADD COLUMN clauses without inline keys and table options (ALGORITHM=,
// LOCK=).
func onlyAddsColumns(q string) bool {
	st, err := sqlparser.Parse(q)
	if err != nil {
		return false
	}
	at, ok := st.(*sqlparser.AlterTable)
	if !ok {
		return false
	}
	adds := false
	for _, d := range at.Statements {
		switch {
		case d.ColumnAction == sqlparser.AddStr && d.IndexSpec == nil && d.ConstraintAction == "":
			if d.TableSpec != nil {
				if len(d.TableSpec.Indexes) > 0 || len(d.TableSpec.Constraints) > 0 {
					return false
				}
				for _, c := range d.TableSpec.Columns {
					if c.Type.KeyOpt != 0 { // an inline UNIQUE / KEY: an index build
						return false
					}
				}
			}
			adds = true
		case d.ColumnAction == "" && d.IndexSpec == nil && d.ConstraintAction == "" && d.TableSpec == nil && d.PartitionSpec == nil && d.AutoIncSpec == nil && d.Action == sqlparser.AlterStr:
		default:
			return false
		}
	}
	return adds
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
