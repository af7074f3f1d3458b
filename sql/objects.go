package sql

import (
	"slices"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

// Views, triggers and stored procedures: go-mysql-server parses, plans
// and runs them, and asks the database only to keep their definitions.
// ReorgDB keeps them in the catalog with the database (catalog.Object),
// so they are versioned like tables, change under the metadata lock,
// commit implicitly as MySQL's DDL does, and survive a restart.

var (
	_ gms.ViewDatabase            = (*Database)(nil)
	_ gms.TriggerDatabase         = (*Database)(nil)
	_ gms.StoredProcedureDatabase = (*Database)(nil)
)

// current is the database's definition in the statement's schema.
func (d *Database) current(ctx *gms.Context) *catalog.Database {
	if db, ok := d.e.schemaFor(ctx).Database(d.def.Name); ok {
		return db
	}
	return d.def
}

// updateDef changes the database's definition as one schema change.
func (d *Database) updateDef(ctx *gms.Context, fn func(db *catalog.Database) error) error {
	return d.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().Database(d.def.Name)
		if !ok {
			return gms.ErrDatabaseNotFound.New(d.def.Name)
		}
		db := cur.Clone()
		if err := fn(db); err != nil {
			return err
		}
		ch.PutDatabase(db)
		return nil
	})
}

func findObject(objs []catalog.Object, name string) int {
	return slices.IndexFunc(objs, func(o catalog.Object) bool { return strings.EqualFold(o.Name, name) })
}

// addObject adds o to *objs, or returns exists when the name is taken.
func addObject(objs *[]catalog.Object, o catalog.Object, exists error) error {
	if findObject(*objs, o.Name) >= 0 {
		return exists
	}
	*objs = append(*objs, o)
	return nil
}

// dropObject removes the object called name from *objs, or returns missing.
func dropObject(objs *[]catalog.Object, name string, missing error) error {
	i := findObject(*objs, name)
	if i < 0 {
		return missing
	}
	*objs = slices.Delete(*objs, i, i+1)
	return nil
}

func sqlMode(ctx *gms.Context) string {
	if v, err := ctx.GetSessionVariable(ctx, "sql_mode"); err == nil {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return ""
}

// CreateView implements sql.ViewDatabase.
func (d *Database) CreateView(ctx *gms.Context, name, selectStatement, createViewStmt string) error {
	if err := d.checkViewSelect(ctx, selectStatement); err != nil {
		return err
	}
	now := time.Now().UTC()
	db := d.current(ctx)
	createViewStmt, selectStatement = qualifyFunctionCalls(db, createViewStmt), qualifyFunctionCalls(db, selectStatement)
	o := catalog.Object{Name: name, Create: createViewStmt, Body: selectStatement, SQLMode: sqlMode(ctx), Created: now, Modified: now}
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return addObject(&db.Views, o, gms.ErrExistingView.New(db.Name, name))
	})
}

// DropView implements sql.ViewDatabase.
func (d *Database) DropView(ctx *gms.Context, name string) error {
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return dropObject(&db.Views, name, gms.ErrViewDoesNotExist.New(db.Name, name))
	})
}

// GetViewDefinition implements sql.ViewDatabase.
func (d *Database) GetViewDefinition(ctx *gms.Context, name string) (gms.ViewDefinition, bool, error) {
	db := d.current(ctx)
	i := findObject(db.Views, name)
	if i < 0 {
		return gms.ViewDefinition{}, false, nil
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.lendViewDB(db.Name)
	}
	return viewDef(db.Name, db.Views[i]), true, nil
}

// AllViews implements sql.ViewDatabase.
func (d *Database) AllViews(ctx *gms.Context) ([]gms.ViewDefinition, error) {
	db := d.current(ctx)
	out := make([]gms.ViewDefinition, len(db.Views))
	for i, o := range db.Views {
		out[i] = viewDef(db.Name, o)
	}
	return out, nil
}

func viewDef(db string, o catalog.Object) gms.ViewDefinition {
	return gms.ViewDefinition{Name: o.Name, TextDefinition: o.Body, CreateViewStatement: qualifyViewName(db, o.Create), SqlMode: o.SQLMode}
}

// qualifyFunctionCalls names db in each unqualified call of one of db's
// stored functions in text, as MySQL does in a view's definition, so that
// the view calls them whatever the reading connection's current database.
func qualifyFunctionCalls(db *catalog.Database, text string) string {
	if len(db.Functions) == 0 {
		return text
	}
	toks, ok := tokenize(text)
	if !ok {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.typ != ast.ID || toks[i+1].typ != '(' || i > 0 && toks[i-1].typ == '.' || findObject(db.Functions, t.val) < 0 {
			continue
		}
		b.WriteString(text[last:t.start])
		b.WriteString("`" + strings.ReplaceAll(db.Name, "`", "``") + "`.")
		last = t.start
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// qualifyViewName names the view of a CREATE VIEW statement with its
// database, db, unless it names one already: go-mysql-server binds the
// statement again to read the view, and takes an unqualified name in the
// current database, which a connection using db.v may not have (1046).
func qualifyViewName(db, create string) string { return qualifyAfter(db, create, ast.VIEW) }

// qualifyAfter names db in the name that follows the first token of type
// typ in create, unless it names a database already. A trigger's CREATE
// statement (ON t) needs it as a view's does: go-mysql-server binds it
// again for a write to db.t from a connection whose current database is
// another one, or none.
func qualifyAfter(db, create string, typ int) string {
	toks, ok := tokenize(create)
	if !ok {
		return create
	}
	for i, t := range toks {
		if t.typ != typ {
			continue
		}
		if i+2 < len(toks) && toks[i+2].typ == '.' || i+1 >= len(toks) {
			return create
		}
		at := toks[i+1].start
		return create[:at] + "`" + strings.ReplaceAll(db, "`", "``") + "`." + create[at:]
	}
	return create
}

// GetTriggers implements sql.TriggerDatabase.
func (d *Database) GetTriggers(ctx *gms.Context) ([]gms.TriggerDefinition, error) {
	db := d.current(ctx)
	out := make([]gms.TriggerDefinition, len(db.Triggers))
	for i, o := range db.Triggers {
		create := o.Create
		if !strings.EqualFold(ctx.GetCurrentDatabase(), db.Name) {
			// Bound from another database, the trigger's table and
			// functions are those of its own, as in MySQL; from its own
			// database (mysqldump's SHOW CREATE TRIGGER) it reads as
			// written.
			create = qualifyFunctionCalls(db, qualifyAfter(db.Name, create, ast.ON))
		}
		out[i] = gms.TriggerDefinition{Name: o.Name, CreateStatement: create, CreatedAt: o.Created, SqlMode: o.SQLMode}
	}
	return d.triggersNotShadowed(ctx, out), nil
}

// CreateTrigger implements sql.TriggerDatabase.
func (d *Database) CreateTrigger(ctx *gms.Context, def gms.TriggerDefinition) error {
	if err := d.checkTriggerTable(ctx, def.CreateStatement); err != nil {
		return err
	}
	created := def.CreatedAt
	if created.IsZero() {
		created = time.Now().UTC()
	}
	o := catalog.Object{Name: def.Name, Create: def.CreateStatement, SQLMode: def.SqlMode, Created: created, Modified: created}
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return addObject(&db.Triggers, o, mysql.NewSQLError(1359, "HY000", "Trigger already exists"))
	})
}

// DropTrigger implements sql.TriggerDatabase.
func (d *Database) DropTrigger(ctx *gms.Context, name string) error {
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return dropObject(&db.Triggers, name, gms.ErrTriggerDoesNotExist.New(name))
	})
}

// GetStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) GetStoredProcedure(ctx *gms.Context, name string) (gms.StoredProcedureDetails, bool, error) {
	db := d.current(ctx)
	i := findObject(db.Procedures, name)
	if i < 0 {
		return gms.StoredProcedureDetails{}, false, nil
	}
	return procDetails(db.Procedures[i]), true, nil
}

// GetStoredProcedures implements sql.StoredProcedureDatabase.
func (d *Database) GetStoredProcedures(ctx *gms.Context) ([]gms.StoredProcedureDetails, error) {
	db := d.current(ctx)
	out := make([]gms.StoredProcedureDetails, len(db.Procedures))
	for i, o := range db.Procedures {
		out[i] = procDetails(o)
	}
	return out, nil
}

func procDetails(o catalog.Object) gms.StoredProcedureDetails {
	return gms.StoredProcedureDetails{Name: o.Name, CreateStatement: o.Create, CreatedAt: o.Created, ModifiedAt: o.Modified, SqlMode: o.SQLMode}
}

// SaveStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) SaveStoredProcedure(ctx *gms.Context, spd gms.StoredProcedureDetails) error {
	o := catalog.Object{Name: spd.Name, Create: spd.CreateStatement, SQLMode: spd.SqlMode, Created: spd.CreatedAt, Modified: spd.ModifiedAt}
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return addObject(&db.Procedures, o, gms.ErrStoredProcedureAlreadyExists.New(spd.Name))
	})
}

// DropStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) DropStoredProcedure(ctx *gms.Context, name string) error {
	return d.updateDef(ctx, func(db *catalog.Database) error {
		return dropObject(&db.Procedures, name, gms.ErrStoredProcedureDoesNotExist.New(name))
	})
}
