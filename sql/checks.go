package sql

import (
	"fmt"
	"io"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// CHECK constraints: the table implements go-mysql-server's CheckTable
// and CheckAlterableTable, whose planner adds the checks to INSERT and
// UPDATE; the catalog keeps them with the table (catalog.Table.Checks).

// GetChecks implements sql.CheckTable.
func (t *Table) GetChecks(ctx *gms.Context) ([]gms.CheckDefinition, error) {
	def := t.defNow(ctx)
	out := make([]gms.CheckDefinition, len(def.Checks))
	for i, c := range def.Checks {
		out[i] = gms.CheckDefinition{Name: c.Name, CheckExpression: c.Expr, Enforced: c.Enforced}
	}
	return out, nil
}

// CreateCheck implements sql.CheckAlterableTable. An unnamed check gets
// MySQL's name, <table>_chk_<n>; names are unique in a database.
func (t *Table) CreateCheck(ctx *gms.Context, check *gms.CheckDefinition) error {
	return t.changeDef(ctx, func(ch *catalog.Change, nt *catalog.Table) error {
		name := check.Name
		if name == "" {
			name = nextCheckName(nt)
		}
		if checkExists(nt, name) || ch != nil && checkOwner(ch.Schema(), nt.DBID, name) != "" {
			return mysql.NewSQLError(3822, "HY000", "Duplicate check constraint name '%s'.", name)
		}
		nt.Checks = append(nt.Checks, catalog.Check{Name: name, Expr: check.CheckExpression, Enforced: check.Enforced})
		return nil
	})
}

func nextCheckName(t *catalog.Table) string {
	for n := 1; ; n++ {
		name := fmt.Sprintf("%s_chk_%d", t.Name, n)
		if !checkExists(t, name) {
			return name
		}
	}
}

func checkExists(t *catalog.Table, name string) bool {
	return slices.ContainsFunc(t.Checks, func(c catalog.Check) bool { return strings.EqualFold(c.Name, name) })
}

// checkOwner is the table of database dbID with a check of that name.
func checkOwner(s *catalog.Schema, dbID int64, name string) string {
	for _, t := range s.Tables(dbID) {
		if checkExists(t, name) {
			return t.Name
		}
	}
	return ""
}

// DropCheck implements sql.CheckAlterableTable.
func (t *Table) DropCheck(ctx *gms.Context, name string) error {
	return t.changeDef(ctx, func(_ *catalog.Change, nt *catalog.Table) error {
		i := slices.IndexFunc(nt.Checks, func(c catalog.Check) bool { return strings.EqualFold(c.Name, name) })
		if i < 0 {
			return errNoConstraint(name)
		}
		nt.Checks = slices.Delete(nt.Checks, i, i+1)
		return nil
	})
}

func errNoConstraint(name string) error {
	return mysql.NewSQLError(3940, "HY000", "Constraint '%s' does not exist.", name)
}

// precheckCheckNames refuses a CHECK name the statement repeats or
// another table of the database has (3822).
func (d *Database) precheckCheckNames(ctx *gms.Context, spec *sqlparser.TableSpec, t *catalog.Table) error {
	seen := map[string]bool{}
	for _, c := range spec.Constraints {
		if _, ok := c.Details.(*sqlparser.CheckConstraintDefinition); !ok || c.Name == "" {
			continue
		}
		dup := seen[strings.ToLower(c.Name)]
		if t.ID < catalog.TempIDBase {
			dup = dup || checkOwner(d.e.schemaFor(ctx), d.def.ID, c.Name) != ""
		}
		if dup {
			return mysql.NewSQLError(3822, "HY000", "Duplicate check constraint name '%s'.", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
	}
	return nil
}

// bindByName numbers the columns of expr as their names are in sch.
func bindByName(expr gms.Expression, sch gms.Schema) (gms.Expression, error) {
	out, _, err := transform.Expr(expr, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		i := sch.IndexOfColName(gf.Name())
		if i < 0 {
			return nil, transform.SameTree, gms.ErrColumnNotFound.New(gf.Name())
		}
		return gf.WithIndex(i), transform.NewTree, nil
	})
	return out, err
}

// checkRows fails with 3819 at the first row of t for which expr is false.
func checkRows(ctx *gms.Context, t *Table, name string, expr gms.Expression) error {
	parts, err := t.Partitions(ctx)
	if err != nil {
		return err
	}
	rows := gms.NewTableRowIter(ctx, t, parts)
	defer rows.Close(ctx)
	for {
		row, err := rows.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		res, err := gms.EvaluateCondition(ctx, expr, row)
		if err != nil {
			return err
		}
		if gms.IsFalse(res) {
			return gms.ErrCheckConstraintViolated.New(name)
		}
	}
}

// createCheck executes ALTER TABLE ... ADD CHECK. go-mysql-server checks
// the rows through the table it resolved before the statement's other
// clauses ran, with the expression's columns numbered for the table
// after them: a check on a column the same ALTER adds failed. Here the
// rows are the table's as it is now, and the columns are found by name.
func createCheck(ctx *gms.Context, n *plan.CreateCheck) (gms.RowIter, error) {
	tbl, ok, err := n.Database().GetTableInsensitive(ctx, n.Table.Name())
	if err != nil {
		return nil, err
	}
	alterable, isT := tbl.(*Table)
	if !ok || !isT {
		return nil, gms.ErrTableNotFound.New(n.Table.Name())
	}
	expr, err := bindByName(n.Check.Expr, alterable.Schema())
	if err != nil {
		return nil, err
	}
	check := *n.Check
	if check.Name == "" {
		check.Name = nextCheckName(alterable.defNow(ctx))
	}
	def, err := plan.NewCheckDefinition(ctx, &check)
	if err != nil {
		return nil, err
	}
	publish := func() error { return alterable.CreateCheck(ctx, def) }
	if !check.Enforced || alterable.IsTemporary() {
		err = publish()
	} else {
		// Enforced by every transaction before the rows are checked.
		err = alterable.db.e.enforceThenValidate(ctx, publish, func() error {
			err := checkRows(ctx, alterable, check.Name, expr)
			if gms.ErrCheckConstraintViolated.Is(err) {
				alterable.dropAddedColumns(ctx, expr)
			}
			return err
		}, func() error { return alterable.DropCheck(ctx, check.Name) })
	}
	if err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}

// dropAddedColumns drops the columns that expr uses and the statement
// added, so that ADD COLUMN c ... CHECK (...) refused for the rows there
// are leaves the table as it was.
func (t *Table) dropAddedColumns(ctx *gms.Context, expr gms.Expression) {
	sess, ok := ctx.Session.(*Session)
	if !ok {
		return
	}
	added := sess.addedColumns(ctx, t.m.def.ID)
	var drop []string
	transform.InspectExpr(expr, func(e gms.Expression) bool {
		gf, ok := e.(*expression.GetField)
		same := func(c string) bool { return ok && strings.EqualFold(c, gf.Name()) }
		if ok && slices.ContainsFunc(added, same) && !slices.ContainsFunc(drop, same) {
			drop = append(drop, gf.Name())
		}
		return false
	})
	for _, name := range drop {
		if err := t.DropColumn(ctx, name); err != nil {
			t.db.e.log.Warn("dropping a column whose check failed", "table", t.Name(), "column", name, "err", err)
		}
	}
}
