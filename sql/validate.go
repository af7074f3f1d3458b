package sql

import (
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/reorgdb/reorgdb/mdl"
)

// A constraint added to a table with rows (ADD FOREIGN KEY, ADD CHECK) is
// validated after it is enforced, not before: checked first, a row that a
// transaction still on the older schema version wrote after the check's
// snapshot would escape it. So the constraint is published first, which
// makes every transaction that starts from then on enforce it; the
// statement waits on the metadata lock until no transaction on an older
// version remains, takes a fresh snapshot, which now holds every row
// written without the constraint, and checks the rows there. A violation
// takes the constraint away again and fails the statement, as MySQL's
// table copy would have.

// enforceThenValidate publishes a constraint, waits until every
// transaction enforces it, checks the rows at a fresh snapshot, and undoes
// the constraint if they fail.
func (e *Engine) enforceThenValidate(ctx *gms.Context, publish, validate, undo func() error) error {
	if err := publish(); err != nil {
		return err
	}
	err := e.freshSnapshotAfterMDL(ctx)
	if err == nil {
		err = validate()
	}
	if err != nil {
		if uerr := undo(); uerr != nil {
			e.log.Warn("undoing a constraint that failed validation", "err", uerr)
		}
	}
	return err
}

// freshSnapshotAfterMDL waits until no transaction uses a schema version
// older than the statement's, then moves the statement's transaction to a
// new snapshot and the newest schema.
func (e *Engine) freshSnapshotAfterMDL(ctx *gms.Context) error {
	tx, err := txnFrom(ctx)
	if err != nil {
		return err
	}
	if err := e.implicitCommit(ctx); err != nil {
		return err
	}
	v := e.cat.Current().Version
	if err := e.mdl.Wait(ctx, v, tx.lease, ddlSettings().MDLWarnAfter, func(l *mdl.Lease) {
		e.log.Warn("ALTER TABLE waits on the metadata lock to validate a constraint", "txn", l.Owner, "age", time.Since(l.Started))
	}); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted()
		}
		return err
	}
	return e.renewSnapshot(ctx)
}

// createForeignKey answers ALTER TABLE ... ADD FOREIGN KEY with
// foreign_key_checks on: the key is added, enforced, then the child's
// rows are checked (see enforceThenValidate). Temporary tables, and keys
// added without checks, are go-mysql-server's as before.
func createForeignKey(ctx *gms.Context, n *plan.CreateForeignKey) (gms.RowIter, error) {
	checks, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	if err != nil || checks != int8(1) || n.FkDef.SchemaName != "" || n.FkDef.ParentSchema != "" {
		return nil, err
	}
	child, parent, err := foreignKeyTables(ctx, n)
	if err != nil {
		return nil, err
	}
	t, ok := child.(*Table)
	if !ok || t.IsTemporary() {
		return nil, nil
	}
	before := map[string]bool{}
	for _, fk := range t.defNow(ctx).ForeignKeys {
		before[strings.ToLower(fk.Name)] = true
	}
	var added gms.ForeignKeyConstraint
	publish := func() error {
		return plan.ResolveForeignKey(ctx, child, parent, *n.FkDef, true, true, false)
	}
	validate := func() error {
		child, parent, err := foreignKeyTables(ctx, n)
		if err != nil {
			return err
		}
		fks, err := child.GetDeclaredForeignKeys(ctx)
		if err != nil {
			return err
		}
		for _, fk := range fks {
			if !before[strings.ToLower(fk.Name)] {
				added = fk
			}
		}
		// Checked as go-mysql-server checks a key made without checks.
		check := added
		check.IsResolved = false
		return plan.ResolveForeignKey(ctx, child, parent, check, false, true, true)
	}
	undo := func() error {
		if added.Name == "" {
			return nil
		}
		return t.DropForeignKey(ctx, added.Name)
	}
	if err := t.db.e.enforceThenValidate(ctx, publish, validate, undo); err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}

// foreignKeyTables resolves a foreign key's child and parent tables in
// the statement's current schema, as go-mysql-server does when it runs
// the ALTER.
func foreignKeyTables(ctx *gms.Context, n *plan.CreateForeignKey) (gms.ForeignKeyTable, gms.ForeignKeyTable, error) {
	fk := n.FkDef
	get := func(db, table string) (gms.ForeignKeyTable, error) {
		d, err := n.DbProvider.Database(ctx, db)
		if err != nil {
			return nil, err
		}
		t, ok, err := d.GetTableInsensitive(ctx, table)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, gms.ErrTableNotFound.New(table)
		}
		fkt, ok := t.(gms.ForeignKeyTable)
		if !ok {
			return nil, gms.ErrNoForeignKeySupport.New(table)
		}
		return fkt, nil
	}
	child, err := get(fk.Database, fk.Table)
	if err != nil {
		return nil, nil, err
	}
	parent, err := get(fk.ParentDatabase, fk.ParentTable)
	return child, parent, err
}
