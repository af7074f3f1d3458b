package sql

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
)

// ALTER TABLE ... ADD COLUMN is instant, as MySQL 8's ALGORITHM=INSTANT:
// only the catalog changes. Rows are stored by column ID and the new
// column gets a new ID, so rows written before it simply lack it and read
// its origin default (catalog.Column.Origin, fixed when the column is
// added). The change is a DDL job (ddl.JobAddColumn, listed by ADMIN SHOW
// DDL JOBS): one schema step, absent -> public, then a wait on the
// metadata lock. Transactions still on the old version may write rows
// without the column; those read the default too, and snapshot isolation
// keeps them from overwriting a row that a transaction on the new version
// wrote (first committer wins), so no value is lost.

var _ gms.AlterableTable = (*Table)(nil)

// addColumn executes a plan.AddColumn instead of go-mysql-server's
// executor, which after AddColumn rewrites every row to fill in the
// default (through the table object it resolved before the column
// existed). Its checks are kept: the AFTER column exists, the default
// refers to columns before it, and a string type without a collation
// takes the table's.
func (o *execOverride) addColumn(ctx *gms.Context, n *plan.AddColumn) (gms.RowIter, error) {
	nm, ok := n.Table.(gms.Nameable)
	if !ok {
		return nil, fmt.Errorf("reorgdb: ADD COLUMN on %T", n.Table)
	}
	tbl, ok, err := n.Database().GetTableInsensitive(ctx, nm.Name())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gms.ErrTableNotFound.New(nm.Name())
	}
	alterable, ok := tbl.(gms.AlterableTable)
	if !ok {
		return nil, gms.ErrAlterTableNotSupported.New(tbl.Name())
	}
	if err := n.ValidateDefaultPosition(n.TargetSchema()); err != nil {
		return nil, err
	}
	col := n.Column()
	if ct, ok := col.Type.(gms.TypeWithCollation); ok && ct.Collation() == gms.Collation_Unspecified {
		if col.Type, err = ct.WithNewCollation(alterable.Collation()); err != nil {
			return nil, err
		}
	}
	if err := alterable.AddColumn(ctx, col, n.Order()); err != nil {
		return nil, err
	}
	if sess, ok := ctx.Session.(*Session); ok {
		if t, ok := tbl.(*Table); ok {
			sess.markAddedColumn(ctx, t.m.def.ID, col.Name)
		}
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}

func notInstant(format string, args ...any) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
		"This version of ReorgDB doesn't yet support '"+format+"'", args...)
}

// AddColumn implements sql.AlterableTable: an instant ADD COLUMN.
func (t *Table) AddColumn(ctx *gms.Context, col *gms.Column, order *gms.ColumnOrder) error {
	switch {
	case col.AutoIncrement:
		return mysql.NewSQLError(1846, "0A000",
			"ALGORITHM=INSTANT is not supported. Reason: ADD COLUMN %s AUTO_INCREMENT would have to give every existing row a value; ReorgDB adds columns only instantly", col.Name)
	case col.PrimaryKey:
		return notInstant("ADD COLUMN %s ... PRIMARY KEY (changing the primary key)", col.Name)
	case col.Generated != nil:
		// ReorgDB keeps a VIRTUAL column's value in the row too (the
		// prepared-statement fast path, index backfill and ADMIN CHECK
		// read it from there), so either kind would need every existing
		// row rewritten.
		return notInstant("ADD COLUMN %s ... generated column; it would have to be computed for every existing row", col.Name)
	case col.Default != nil && perRowDefault(col.Default.Expr):
		return notInstant("ADD COLUMN %s with a DEFAULT (%s) that gives each row its own value; use a constant default, or the statement's time", col.Name, col.Default.String())
	}
	c := catalog.Column{
		Name:     col.Name,
		Type:     col.Type.String(),
		Nullable: col.Nullable,
		Comment:  col.Comment,
	}
	if col.OnUpdate != nil {
		c.OnUpdate = col.OnUpdate.String()
	}
	if col.Default != nil {
		c.HasDefault, c.Default = true, defaultText(ctx, col)
	}
	origin, err := originValue(ctx, col)
	if err != nil {
		return err
	}
	if origin != nil {
		b, err := codec.EncodeRow(nil, []int64{0}, []any{origin})
		if err != nil {
			return err
		}
		c.Origin = b
	}
	spec := ddl.ColumnSpec{Column: c}
	if order != nil {
		spec.First, spec.After = order.First, order.AfterColumn
	}
	// Validate now, against the newest definition, so that a bad
	// statement fails at once and never becomes a job.
	e := t.db.e
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.m.def.Name)
	}
	scratch := cur.Clone()
	if err := ddl.AddColumnTo(scratch, spec); err != nil {
		return jobError(err)
	}
	if _, err := buildMeta(t.m.dbName, scratch); err != nil {
		return err
	}
	if t.IsTemporary() {
		return t.alterTemp(ctx, scratch)
	}
	// The issuing transaction must not hold the job's metadata lock.
	return jobError(e.outsideMDL(ctx, func() error {
		id, err := e.DDL.SubmitAddColumn(t.db.def.Name, t.Name(), t.m.def.ID, ctx.Query(), spec)
		if err != nil {
			return err
		}
		return e.DDL.Wait(ctx, id)
	}))
}

// statementTime names the functions whose value is fixed for the length
// of a statement: an ADD COLUMN that defaults to one gives every existing
// row the ALTER's time, as MySQL's ADD COLUMN does.
var statementTime = map[string]bool{
	"now": true, "current_timestamp": true, "localtime": true, "localtimestamp": true,
	"curdate": true, "current_date": true, "curtime": true, "current_time": true,
	"utc_timestamp": true, "utc_date": true, "utc_time": true,
}

// perRowDefault says whether a DEFAULT expression could give each existing
// row its own value (RAND(), UUID(), ...). An ADD COLUMN evaluates its
// default once, for all the rows it does not rewrite, so it refuses such
// a default rather than give every row the same one.
func perRowDefault(e gms.Expression) bool {
	return transform.InspectExpr(e, func(e gms.Expression) bool {
		nd, ok := e.(gms.NonDeterministicExpression)
		if !ok || !nd.IsNonDeterministic() {
			return false
		}
		f, ok := e.(gms.FunctionExpression)
		return !ok || !statementTime[strings.ToLower(f.FunctionName())]
	})
}

// implicitValue is the value MySQL gives a NOT NULL column of type typ
// that has no default: 0, the empty string, an ENUM's first element, ...
func implicitValue(typ gms.Type) any {
	if et, ok := typ.(gms.EnumType); ok && len(et.Values()) > 0 {
		return et.Values()[0]
	}
	return typ.Zero()
}

// originValue is the canonical value that rows written before the column
// existed read for it: the constant DEFAULT, NULL for a nullable column
// without one, and the type's implicit default (0, empty string, ...) for a NOT
// NULL column without one, as MySQL does.
func originValue(ctx *gms.Context, col *gms.Column) (any, error) {
	var v any
	switch {
	case col.Default != nil:
		d, err := col.Default.Eval(ctx, nil)
		if err != nil {
			return nil, err
		}
		v = d
	case col.Nullable:
		return nil, nil
	default:
		v = implicitValue(col.Type)
	}
	if v == nil {
		if !col.Nullable {
			return nil, mysql.NewSQLError(mysql.ERInvalidDefault, "42000", "Invalid default value for '%s'", col.Name)
		}
		return nil, nil
	}
	cv, _, err := col.Type.Convert(ctx, v)
	if err != nil {
		return nil, mysql.NewSQLError(mysql.ERInvalidDefault, "42000", "Invalid default value for '%s'", col.Name)
	}
	return toCanonical(kindOf(col.Type), cv)
}
