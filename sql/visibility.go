package sql

import (
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

// ALTER TABLE t ALTER INDEX i [IN]VISIBLE: go-mysql-server's parser
// accepts the clause but drops the index name, so the statement is
// recognised here from its text and, after go-mysql-server has run the
// (empty) ALTER TABLE for its privilege check and implicit commit,
// applied to the catalog. An invisible index is written by DML as before
// but hidden from the planner: Table.GetIndexes leaves it out, except
// for the catalog views (SHOW INDEX, SHOW CREATE TABLE,
// information_schema.statistics), which show it as invisible.

const reIdent = "(`(?:[^`]|``)+`|[\\w$\u0080-\U0010FFFF]+)"

var (
	reAlterTableHead = regexp.MustCompile(`(?is)^\s*alter\s+table\s+` + reIdent + `(?:\s*\.\s*` + reIdent + `)?\s+(.*?)\s*;?\s*$`)
	reAlterIndexVis  = regexp.MustCompile(`(?is)^alter\s+index\s+` + reIdent + `\s+(visible|invisible)\s*(?:,\s*|$)`)
	reHasAlterIndex  = regexp.MustCompile(`(?is)\balter\s+index\b`)
)

// IndexVisibility is one ALTER INDEX clause.
type IndexVisibility struct {
	Index   string
	Visible bool
}

// AlterIndexStatement is an ALTER TABLE made of ALTER INDEX clauses only.
type AlterIndexStatement struct {
	DB, Table string // DB is "" when the statement does not name one
	Clauses   []IndexVisibility
}

func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}

// ParseAlterIndex recognises ALTER TABLE ... ALTER INDEX clauses: nil for
// any other statement, an error (1235) for ALTER INDEX mixed with other
// clauses, which are not supported together.
func ParseAlterIndex(query string) (*AlterIndexStatement, error) {
	m := reAlterTableHead.FindStringSubmatch(query)
	if m == nil || !reHasAlterIndex.MatchString(m[3]) {
		return nil, nil
	}
	st := &AlterIndexStatement{Table: unquoteIdent(m[1])}
	if m[2] != "" {
		st.DB, st.Table = st.Table, unquoteIdent(m[2])
	}
	rest := m[3]
	for rest != "" {
		c := reAlterIndexVis.FindStringSubmatch(rest)
		if c == nil {
			return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of ReorgDB doesn't yet support 'ALTER INDEX together with other ALTER TABLE clauses'")
		}
		st.Clauses = append(st.Clauses, IndexVisibility{Index: unquoteIdent(c[1]), Visible: strings.EqualFold(c[2], "visible")})
		rest = rest[len(c[0]):]
	}
	return st, nil
}

// queryInvisible returns the lower-case names of the indexes an ALTER
// TABLE, CREATE INDEX or CREATE TABLE statement declares INVISIBLE
// (an unnamed one under its first column's name, the primary key as
// "primary"): go-mysql-server parses the option and drops it.
func queryInvisible(query string) map[string]bool {
	if !strings.Contains(strings.ToLower(query), "invisible") {
		return nil
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	add := func(name string, primary bool, cols []*sqlparser.IndexColumn, opts []*sqlparser.IndexOption) {
		for _, o := range opts {
			if !strings.EqualFold(o.Name, "invisible") {
				continue
			}
			switch {
			case primary:
				name = "primary"
			case name == "" && len(cols) > 0:
				name = cols[0].Column.String()
			}
			out[strings.ToLower(name)] = true
		}
	}
	var ddls []*sqlparser.DDL
	switch s := stmt.(type) {
	case *sqlparser.AlterTable:
		ddls = s.Statements
	case *sqlparser.DDL:
		ddls = []*sqlparser.DDL{s}
	}
	for _, d := range ddls {
		if is := d.IndexSpec; is != nil && is.Action == sqlparser.CreateStr {
			add(is.ToName.String(), is.Type == sqlparser.PrimaryStr, is.Columns, is.Options)
		}
		if d.TableSpec != nil {
			for _, ix := range d.TableSpec.Indexes {
				add(ix.Info.Name.String(), ix.Info.Primary, ix.Columns, ix.Options)
			}
		}
	}
	return out
}

// SetIndexVisibility applies an ALTER INDEX statement: metadata only,
// in one schema version, as MySQL does.
func (e *Engine) SetIndexVisibility(ctx *gms.Context, st *AlterIndexStatement) error {
	db := st.DB
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" {
		return mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	return e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		d, ok := ch.Schema().Database(db)
		if !ok {
			return mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		if s, ok := ctx.Session.(*Session); ok {
			if _, temp := s.tempTable(d.ID, st.Table); temp {
				return errNotSupported("ALTER INDEX on a temporary table")
			}
		}
		cur, ok := ch.Schema().Table(d.ID, st.Table)
		if !ok {
			return mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "Table '%s.%s' doesn't exist", db, st.Table)
		}
		nt := cur.Clone()
		for _, c := range st.Clauses {
			if err := setVisible(nt, c); err != nil {
				return err
			}
		}
		ch.PutTable(nt)
		return nil
	})
}

func setVisible(t *catalog.Table, c IndexVisibility) error {
	if strings.EqualFold(c.Index, "PRIMARY") && (t.HandleColumn != 0 || primaryIndex(t) != nil) {
		if !c.Visible {
			return errInvisiblePK()
		}
		return nil
	}
	ix := t.IndexByName(c.Index)
	if ix == nil || ix.Primary || ix.State != catalog.StatePublic {
		return mysql.NewSQLError(mysql.ERKeyDoesNotExist, "42000", "Key '%s' doesn't exist in table '%s'", c.Index, t.Name)
	}
	ix.Invisible = !c.Visible
	return nil
}

func errInvisiblePK() error {
	return mysql.NewSQLError(3522, mysql.SSUnknownSQLState, "A primary key index cannot be invisible")
}

// primaryIndex is the table's non-clustered primary key, or nil.
func primaryIndex(t *catalog.Table) *catalog.Index {
	for _, ix := range t.Indexes {
		if ix.Primary {
			return ix
		}
	}
	return nil
}

// visible reports whether the planner may use the index.
func (ix *indexMeta) visible() bool { return ix.def == nil || !ix.def.Invisible }

// showingAllIndexes reports whether GetIndexes must include invisible
// indexes: for a catalog view or a statement that changes indexes (DROP
// INDEX, RENAME INDEX, ... look them up there), not for the planner.
func showingAllIndexes(ctx *gms.Context) bool {
	if ctx == nil {
		return false
	}
	if s, ok := ctx.Session.(*Session); ok && s.allIndexes.Load() {
		return true
	}
	return reIndexDDLStmt.MatchString(ctx.Query())
}

var reIndexDDLStmt = regexp.MustCompile(`(?is)^\s*(alter\s+table|drop\s+index|create\s+(unique\s+)?index)\b`)

// withAllIndexes runs fn with GetIndexes offering invisible indexes too.
func withAllIndexes[T any](ctx *gms.Context, fn func() (T, error)) (T, error) {
	if s, ok := ctx.Session.(*Session); ok {
		s.allIndexes.Store(true)
		defer s.allIndexes.Store(false)
	}
	return fn()
}
