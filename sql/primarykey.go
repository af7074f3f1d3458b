package sql

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/ddl"
)

// ADD PRIMARY KEY and DROP PRIMARY KEY on a table whose rows are keyed by
// a hidden handle. Such a table's primary key is non-clustered (TiDB's
// NONCLUSTERED): a unique index named PRIMARY over the hidden handle, as
// CREATE TABLE makes for a primary key that is not one integer column.
// So ADD PRIMARY KEY is an online ADD INDEX job whose index becomes the
// primary key when it goes public (its columns NOT NULL from then on; a
// row holding NULL fails the job with 1138), and DROP PRIMARY KEY is a
// DROP INDEX job. A clustered integer primary key keys the rows
// themselves and cannot be dropped without rewriting them.

var _ gms.PrimaryKeyAlterableTable = (*Table)(nil)

// CreatePrimaryKey implements sql.PrimaryKeyAlterableTable.
func (t *Table) CreatePrimaryKey(ctx *gms.Context, columns []gms.IndexColumn) error {
	if t.IsTemporary() {
		return errNotSupported("ADD PRIMARY KEY on a temporary table")
	}
	if t.m.def.HandleColumn != 0 || primaryIndex(t.m.def) != nil {
		return mysql.NewSQLError(mysql.ERMultiplePriKey, "42000", "Multiple primary key defined")
	}
	if queryInvisible(ctx.Query())["primary"] {
		return errInvisiblePK()
	}
	spec := ddl.IndexSpec{Name: "PRIMARY", Unique: true, Primary: true}
	for _, c := range columns {
		col, _ := t.m.def.ColumnByName(c.Name)
		if col == nil {
			return mysql.NewSQLError(mysql.ERKeyColumnDoesNotExist, "42000", "Key column '%s' doesn't exist in table", c.Name)
		}
		if col.Generated != "" && col.Virtual {
			return mysql.NewSQLError(3106, "HY000", "'Defining a virtual generated column as primary key' is not supported for generated columns.")
		}
		spec.Columns = append(spec.Columns, catalog.IndexColumn{ColumnID: col.ID, Length: c.Length})
	}
	return t.addIndexJob(ctx, []ddl.IndexSpec{spec})
}

// DropPrimaryKey implements sql.PrimaryKeyAlterableTable.
func (t *Table) DropPrimaryKey(ctx *gms.Context) error {
	if t.IsTemporary() {
		return errNotSupported("DROP PRIMARY KEY on a temporary table")
	}
	e := t.db.e
	def, ok := e.cat.Current().TableByID(t.m.def.ID)
	if !ok {
		return gms.ErrTableNotFound.New(t.Name())
	}
	if def.HandleColumn != 0 {
		return errNotSupported("ALTER TABLE ... DROP PRIMARY KEY of a clustered integer primary key (the rows are keyed by it)")
	}
	ix := primaryIndex(def)
	if ix == nil || ix.State != catalog.StatePublic {
		return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP 'PRIMARY'; check that column/key exists")
	}
	if err := t.checkFKWithoutPrimary(ctx); err != nil {
		return err
	}
	return e.outsideMDL(ctx, func() error {
		id, err := e.DDL.SubmitDropIndex(t.db.def.Name, t.Name(), def.ID, ix, ctx.Query())
		if err != nil {
			return err
		}
		return jobError(e.DDL.Wait(ctx, id))
	})
}

// checkFKWithoutPrimary refuses, as DROP INDEX does, to drop the primary
// key when a foreign key of the table or one that references it has no
// other index to use.
func (t *Table) checkFKWithoutPrimary(ctx *gms.Context) error {
	fks, err := t.GetDeclaredForeignKeys(ctx)
	if err != nil {
		return err
	}
	for _, fk := range fks {
		if _, ok, err := plan.FindFKIndexWithPrefix(ctx, t, fk.Columns, false, "PRIMARY"); err != nil || !ok {
			return cmpErr(err, gms.ErrForeignKeyDropIndex.New("PRIMARY", fk.Name))
		}
	}
	refs, err := t.GetReferencedForeignKeys(ctx)
	if err != nil {
		return err
	}
	for _, fk := range refs {
		if _, ok, err := plan.FindFKIndexWithPrefix(ctx, t, fk.ParentColumns, true, "PRIMARY"); err != nil || !ok {
			return cmpErr(err, gms.ErrForeignKeyDropIndex.New("PRIMARY", fk.Name))
		}
	}
	return nil
}

// cmpErr is err when there is one, else otherwise.
func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

func errNotSupported(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of ReorgDB doesn't yet support '%s'", what)
}
