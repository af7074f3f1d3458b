package sql

import (
	"fmt"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

// FOREIGN KEY and CHECK constraints. The table implements
// go-mysql-server's ForeignKeyTable and CheckAlterableTable: its planner
// then wraps INSERT, UPDATE and DELETE in its foreign-key handler
// (reference checks and referential actions through the editors below)
// and adds the check filters, and its DDL validates existing rows. The
// catalog keeps the definitions with the table (catalog.Table.ForeignKeys
// and Checks).

var (
	_ gms.ForeignKeyTable     = (*Table)(nil)
	_ gms.CheckAlterableTable = (*Table)(nil)
	_ gms.CheckTable          = (*Table)(nil)
	_ gms.ForeignKeyEditor    = (*fkEditor)(nil)
	_ gms.ReferenceChecker    = (*Table)(nil)
)

// defNow is the table's definition as the statement sees it now: a DDL
// statement sees its own earlier changes (go-mysql-server keeps using
// the table it resolved before them).
func (t *Table) defNow(ctx *gms.Context) *catalog.Table {
	if t.IsTemporary() {
		if def, ok := t.latestDef(ctx); ok {
			return def
		}
		return t.m.def
	}
	if def, ok := t.db.e.schemaFor(ctx).TableByID(t.m.def.ID); ok {
		return def
	}
	return t.m.def
}

func toGMSForeignKey(db, table string, fk catalog.ForeignKey) gms.ForeignKeyConstraint {
	action := func(s string) gms.ForeignKeyReferentialAction {
		if s == "" {
			return gms.ForeignKeyReferentialAction_DefaultAction
		}
		return gms.ForeignKeyReferentialAction(s)
	}
	return gms.ForeignKeyConstraint{
		Name:           fk.Name,
		Database:       db,
		Table:          table,
		Columns:        slices.Clone(fk.Columns),
		ParentDatabase: fk.ParentDB,
		ParentTable:    fk.ParentTable,
		ParentColumns:  slices.Clone(fk.ParentColumns),
		OnUpdate:       action(fk.OnUpdate),
		OnDelete:       action(fk.OnDelete),
		IsResolved:     !fk.Unresolved,
	}
}

func fromGMSForeignKey(fk gms.ForeignKeyConstraint) catalog.ForeignKey {
	action := func(a gms.ForeignKeyReferentialAction) string {
		if a == gms.ForeignKeyReferentialAction_DefaultAction {
			return ""
		}
		return string(a)
	}
	return catalog.ForeignKey{
		Name:          fk.Name,
		Columns:       slices.Clone(fk.Columns),
		ParentDB:      fk.ParentDatabase,
		ParentTable:   fk.ParentTable,
		ParentColumns: slices.Clone(fk.ParentColumns),
		OnUpdate:      action(fk.OnUpdate),
		OnDelete:      action(fk.OnDelete),
		Unresolved:    !fk.IsResolved,
	}
}

// GetDeclaredForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetDeclaredForeignKeys(ctx *gms.Context) ([]gms.ForeignKeyConstraint, error) {
	def := t.defNow(ctx)
	out := make([]gms.ForeignKeyConstraint, len(def.ForeignKeys))
	for i, fk := range def.ForeignKeys {
		out[i] = toGMSForeignKey(t.db.def.Name, def.Name, fk)
	}
	return out, nil
}

// GetReferencedForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetReferencedForeignKeys(ctx *gms.Context) ([]gms.ForeignKeyConstraint, error) {
	if t.IsTemporary() {
		return nil, nil
	}
	s := t.db.e.schemaFor(ctx)
	var out []gms.ForeignKeyConstraint
	for _, c := range s.ChildTables(t.db.def.Name, t.Name()) {
		db, ok := s.DatabaseByID(c.DBID)
		if !ok {
			continue
		}
		for _, fk := range c.ForeignKeys {
			if strings.EqualFold(fk.ParentDB, t.db.def.Name) && strings.EqualFold(fk.ParentTable, t.Name()) {
				out = append(out, toGMSForeignKey(db.Name, c.Name, fk))
			}
		}
	}
	return out, nil
}

// errCannotAddForeignKey is MySQL 8's answer to a foreign key on or to a
// temporary table.
func errCannotAddForeignKey() error {
	return mysql.NewSQLError(1215, "HY000", "Cannot add foreign key constraint")
}

// AddForeignKey implements sql.ForeignKeyTable. Names are unique in a
// database, as in MySQL.
func (t *Table) AddForeignKey(ctx *gms.Context, fk gms.ForeignKeyConstraint) error {
	if t.IsTemporary() {
		return errCannotAddForeignKey()
	}
	if _, isTemp := tempFor(ctx, t.db.def.ID, fk.ParentTable); isTemp && strings.EqualFold(fk.ParentDatabase, t.db.def.Name) {
		return errCannotAddForeignKey()
	}
	return t.changeDef(ctx, func(ch *catalog.Change, nt *catalog.Table) error {
		if owner := foreignKeyOwner(ch.Schema(), t.db.def.ID, fk.Name); owner != "" {
			return mysql.NewSQLError(1826, "HY000", "Duplicate foreign key constraint name '%s'", fk.Name)
		}
		nt.ForeignKeys = append(nt.ForeignKeys, fromGMSForeignKey(fk))
		return nil
	})
}

// foreignKeyOwner is the table of database dbID with a foreign key of
// that name, or "".
func foreignKeyOwner(s *catalog.Schema, dbID int64, name string) string {
	for _, t := range s.Tables(dbID) {
		for _, fk := range t.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				return t.Name
			}
		}
	}
	return ""
}

// DropForeignKey implements sql.ForeignKeyTable. The index the key used
// stays, as in MySQL.
func (t *Table) DropForeignKey(ctx *gms.Context, name string) error {
	return t.changeDef(ctx, func(_ *catalog.Change, nt *catalog.Table) error {
		i := slices.IndexFunc(nt.ForeignKeys, func(fk catalog.ForeignKey) bool { return strings.EqualFold(fk.Name, name) })
		if i < 0 {
			return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", name)
		}
		nt.ForeignKeys = slices.Delete(nt.ForeignKeys, i, i+1)
		return nil
	})
}

// UpdateForeignKey implements sql.ForeignKeyTable: go-mysql-server
// renames a key's columns with them, and marks a key made under
// foreign_key_checks = 0 resolved once a statement has checked it.
func (t *Table) UpdateForeignKey(ctx *gms.Context, name string, fk gms.ForeignKeyConstraint) error {
	update := func(_ *catalog.Change, nt *catalog.Table) error {
		i := slices.IndexFunc(nt.ForeignKeys, func(x catalog.ForeignKey) bool { return strings.EqualFold(x.Name, name) })
		if i < 0 {
			return gms.ErrForeignKeyNotFound.New(name, nt.Name)
		}
		nt.ForeignKeys[i] = fromGMSForeignKey(fk)
		return nil
	}
	if !t.IsTemporary() && t.resolvesOnly(ctx, name, fromGMSForeignKey(fk)) {
		// That happens inside DML, whose transaction must not commit.
		e := t.db.e
		e.ddlMu.Lock()
		defer e.ddlMu.Unlock()
		_, err := e.cat.Update(func(ch *catalog.Change, _ *kv.Txn) error {
			cur, ok := ch.Schema().TableByID(t.m.def.ID)
			if !ok {
				return gms.ErrTableNotFound.New(t.Name())
			}
			nt := cur.Clone()
			if err := update(ch, nt); err != nil {
				return err
			}
			ch.PutTable(nt)
			return nil
		})
		return err
	}
	return t.changeDef(ctx, update)
}

// resolvesOnly reports whether fk differs from the table's key name only
// in being resolved.
func (t *Table) resolvesOnly(ctx *gms.Context, name string, fk catalog.ForeignKey) bool {
	for _, x := range t.defNow(ctx).ForeignKeys {
		if strings.EqualFold(x.Name, name) {
			return x.Unresolved && !fk.Unresolved && x.Name == fk.Name && x.ParentDB == fk.ParentDB && x.ParentTable == fk.ParentTable &&
				slices.Equal(x.Columns, fk.Columns) && slices.Equal(x.ParentColumns, fk.ParentColumns) &&
				x.OnUpdate == fk.OnUpdate && x.OnDelete == fk.OnDelete
		}
	}
	return false
}

// CreateIndexForForeignKey implements sql.ForeignKeyTable: the index
// MySQL adds to a child whose columns have none. go-mysql-server looks
// for one in the definition it resolved before the statement's own
// indexes were added, so an index that now leads with the columns
// serves instead.
func (t *Table) CreateIndexForForeignKey(ctx *gms.Context, def gms.IndexDef) error {
	if hasLeadingIndex(t.defNow(ctx), def.ColumnNames()) {
		return nil
	}
	return t.CreateIndex(ctx, def)
}

// hasLeadingIndex reports whether an index of def (or its integer primary
// key) starts with the columns cols, in order.
func hasLeadingIndex(def *catalog.Table, cols []string) bool {
	ids := make([]int64, len(cols))
	for i, name := range cols {
		c, _ := def.ColumnByName(name)
		if c == nil {
			return false
		}
		ids[i] = c.ID
	}
	if len(ids) == 1 && def.HandleColumn == ids[0] {
		return true
	}
	for _, ix := range def.Indexes {
		if len(ix.Columns) < len(ids) {
			continue
		}
		ok := true
		for i, id := range ids {
			ok = ok && ix.Columns[i].ColumnID == id && ix.Columns[i].Length == 0
		}
		if ok {
			return true
		}
	}
	return false
}

// GetForeignKeyEditor implements sql.ForeignKeyTable. A temporary table
// has no foreign keys and none may reference it, so go-mysql-server asks
// for its editor only to check rows against it as a new key's parent,
// which its lookups refuse.
func (t *Table) GetForeignKeyEditor(ctx *gms.Context) gms.ForeignKeyEditor {
	nt := *t
	nt.tempParent = t.IsTemporary()
	// Constraint lookups use every index whatever the statement's hints,
	// and read whole rows.
	nt.hint, nt.proj, nt.projPos, nt.projDec, nt.lookup = nil, nil, nil, nil, nil
	return &fkEditor{editor: nt.newEditor(ctx), t: &nt}
}

// fkEditor is the editor go-mysql-server's foreign-key handler writes
// through and looks up parent and child rows with.
type fkEditor struct {
	*editor
	t *Table
}

func (f *fkEditor) GetIndexes(ctx *gms.Context) ([]gms.Index, error) { return f.t.GetIndexes(ctx) }
func (f *fkEditor) PreciseMatch() bool                               { return f.t.PreciseMatch() }

// IndexedAccess implements sql.IndexAddressable. A constraint's lookup
// reads the newest committed rows, not the statement's snapshot: a
// parent's DELETE that waited for the lock a child's INSERT took on the
// parent row must then find that child (InnoDB reads them with locks).
func (f *fkEditor) IndexedAccess(ctx *gms.Context, lookup gms.IndexLookup) gms.IndexedTable {
	if f.tx != nil && !f.tx.done {
		f.tx.txn.SetReadTS(f.t.db.e.store.ReadTS())
	}
	return f.t.IndexedAccess(ctx, lookup)
}

// SetReferenceCheck implements sql.ReferenceChecker: a lookup of the
// parent row a child row needs locks what it finds and reads its newest
// version, as InnoDB's shared lock does, so that a parent deleted by a
// transaction that committed meanwhile is not taken for present and the
// parent cannot be deleted until this transaction ends.
func (t *Table) SetReferenceCheck() error {
	t.refCheck = true
	return nil
}

// changeDef applies change to a copy of the table's newest definition and
// makes it the table's: in the catalog, or in the session for a
// temporary table.
func (t *Table) changeDef(ctx *gms.Context, change func(ch *catalog.Change, nt *catalog.Table) error) error {
	if t.IsTemporary() {
		cur, ok := t.latestDef(ctx)
		if !ok {
			return gms.ErrTableNotFound.New(t.Name())
		}
		nt := cur.Clone()
		if err := change(nil, nt); err != nil {
			return err
		}
		return t.alterTemp(ctx, nt)
	}
	e := t.db.e
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	return e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().TableByID(t.m.def.ID)
		if !ok {
			return gms.ErrTableNotFound.New(t.Name())
		}
		nt := cur.Clone()
		if err := change(ch, nt); err != nil {
			return err
		}
		ch.PutTable(nt)
		return nil
	})
}

// precheckForeignKeys validates the FOREIGN KEY clauses of a CREATE TABLE
// of t (with the statement's indexes) against t and their parents, with
// MySQL's errors, before the table exists: go-mysql-server adds the keys
// to the table it has made, and would leave it behind on an error.
func (d *Database) precheckForeignKeys(ctx *gms.Context, spec *sqlparser.TableSpec, t *catalog.Table) error {
	if err := d.precheckCheckNames(ctx, spec, t); err != nil {
		return err
	}
	n := 0
	seen := map[string]bool{}
	for _, c := range spec.Constraints {
		def, ok := c.Details.(*sqlparser.ForeignKeyDefinition)
		if !ok {
			continue
		}
		n++
		if c.Name != "" && seen[strings.ToLower(c.Name)] {
			return mysql.NewSQLError(1826, "HY000", "Duplicate foreign key constraint name '%s'", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if t.ID >= catalog.TempIDBase || def.OnDelete == sqlparser.SetDefault || def.OnUpdate == sqlparser.SetDefault {
			return errCannotAddForeignKey()
		}
		fk := fromParsedForeignKey(c.Name, def)
		if fk.Name == "" {
			fk.Name = fmt.Sprintf("%s_ibfk_%d", strings.ToLower(t.Name), n)
		} else if foreignKeyOwner(d.e.schemaFor(ctx), d.def.ID, fk.Name) != "" {
			return mysql.NewSQLError(1826, "HY000", "Duplicate foreign key constraint name '%s'", fk.Name)
		}
		if err := checkChildColumns(t, fk); err != nil {
			return err
		}
		if !foreignKeyChecks(ctx) {
			continue
		}
		if err := d.precheckParent(ctx, fk, t); err != nil {
			return err
		}
	}
	return nil
}

// checkChildColumns checks that the key's columns are t's, and nullable
// for SET NULL.
func checkChildColumns(t *catalog.Table, fk catalog.ForeignKey) error {
	for _, name := range fk.Columns {
		col, _ := t.ColumnByName(name)
		if col == nil {
			return mysql.NewSQLError(mysql.ERKeyColumnDoesNotExist, "42000", "Key column '%s' doesn't exist in table", name)
		}
		if !col.Nullable && (fk.OnDelete == "SET NULL" || fk.OnUpdate == "SET NULL") {
			return mysql.NewSQLError(1830, "HY000", "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL", col.Name, fk.Name)
		}
	}
	return nil
}

// parentOf returns the table that foreign key fk of table t, in database
// d, references (t itself for a key on its own table) and its database's
// ID (0 if there is no such database); ok is false when there is no such
// table.
func (d *Database) parentOf(s *catalog.Schema, fk catalog.ForeignKey, t *catalog.Table) (parent *catalog.Table, dbID int64, ok bool) {
	dbName := fk.ParentDB
	if dbName == "" {
		dbName = d.def.Name
	}
	if strings.EqualFold(dbName, d.def.Name) && strings.EqualFold(fk.ParentTable, t.Name) {
		return t, d.def.ID, true
	}
	db, ok := s.Database(dbName)
	if !ok {
		return nil, 0, false
	}
	parent, ok = s.Table(db.ID, fk.ParentTable)
	return parent, db.ID, ok
}

// precheckParent checks that a foreign key's parent exists and has an
// index that starts with the referenced columns, whose types match the
// key's.
func (d *Database) precheckParent(ctx *gms.Context, fk catalog.ForeignKey, t *catalog.Table) error {
	parent, dbID, ok := d.parentOf(d.e.schemaFor(ctx), fk, t)
	if parent != t && dbID != 0 {
		if _, isTemp := tempFor(ctx, dbID, fk.ParentTable); isTemp {
			return errCannotAddForeignKey()
		}
	}
	if !ok {
		return errNoParent(fk.ParentTable)
	}
	for _, name := range fk.ParentColumns {
		if col, _ := parent.ColumnByName(name); col == nil {
			return mysql.NewSQLError(3734, "HY000", "Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in the referenced table '%s'", name, fk.Name, fk.ParentTable)
		}
	}
	if len(fk.Columns) != len(fk.ParentColumns) {
		return errCannotAddForeignKey()
	}
	if !hasLeadingIndex(parent, fk.ParentColumns) {
		return errMissingParentIndex(fk.Name, fk.ParentTable)
	}
	return checkKeyTypes(ctx, t, parent, fk)
}

// checkKeyTypes applies go-mysql-server's rules for the column types of a
// foreign key, with MySQL's error.
func checkKeyTypes(ctx *gms.Context, child, parent *catalog.Table, fk catalog.ForeignKey) error {
	cm, err := buildMeta("", child)
	if err != nil {
		return err
	}
	pm, err := buildMeta("", parent)
	if err != nil {
		return err
	}
	byName := func(sch gms.Schema) map[string]*gms.Column {
		out := make(map[string]*gms.Column, len(sch))
		for _, c := range sch {
			out[strings.ToLower(c.Name)] = c
		}
		return out
	}
	def := toGMSForeignKey("", child.Name, fk)
	if err := plan.ValidateForeignKeyDefinition(ctx, def, byName(cm.schema), byName(pm.schema)); err != nil {
		if gms.ErrForeignKeyColumnTypeMismatch.Is(err) || gms.ErrForeignKeyTextBlob.Is(err) {
			return errIncompatibleKey(fk)
		}
		return err
	}
	return nil
}

// errIncompatibleKey is MySQL 8's error 3780, naming the key's first
// columns.
func errIncompatibleKey(fk catalog.ForeignKey) error {
	return mysql.NewSQLError(3780, "HY000", "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.",
		fk.Columns[0], fk.ParentColumns[0], fk.Name)
}

func errNoParent(table string) error {
	return mysql.NewSQLError(1824, "HY000", "Failed to open the referenced table '%s'", table)
}

// errMissingParentIndex is MySQL 8's error 1822.
func errMissingParentIndex(name, table string) error {
	return mysql.NewSQLError(1822, "HY000", "Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'", name, table)
}

func foreignKeyChecks(ctx *gms.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	if err != nil {
		return true
	}
	n, ok := v.(int8)
	return !ok || n != 0
}

// hasConstraints reports whether writes to table def of database db must
// be checked against foreign keys (as child or parent) or checks.
func hasConstraints(s *catalog.Schema, db string, def *catalog.Table) bool {
	return len(def.ForeignKeys) > 0 || len(def.Checks) > 0 || len(s.ChildTables(db, def.Name)) > 0
}

// renameParent makes the foreign keys of children that reference table
// oldName of database db reference newName, as RENAME TABLE does in MySQL.
func renameParent(ch *catalog.Change, children []*catalog.Table, db, oldName, newName string) {
	for _, c := range children {
		cur, ok := ch.Schema().TableByID(c.ID)
		if !ok {
			continue
		}
		nc := cur.Clone()
		for i := range nc.ForeignKeys {
			if strings.EqualFold(nc.ForeignKeys[i].ParentDB, db) && strings.EqualFold(nc.ForeignKeys[i].ParentTable, oldName) {
				nc.ForeignKeys[i].ParentTable = newName
			}
		}
		ch.PutTable(nc)
	}
}

// refusedByOtherDatabase is MySQL's error 3730 for DROP DATABASE db when
// a table of another database has a foreign key to one of db's tables.
func refusedByOtherDatabase(ctx *gms.Context, s *catalog.Schema, db string) error {
	d, ok := s.Database(db)
	if !ok || !foreignKeyChecks(ctx) {
		return nil
	}
	for _, t := range s.Tables(d.ID) {
		for _, c := range s.ChildTables(d.Name, t.Name) {
			if c.DBID == d.ID {
				continue
			}
			for _, fk := range c.ForeignKeys {
				if strings.EqualFold(fk.ParentDB, d.Name) && strings.EqualFold(fk.ParentTable, t.Name) {
					return mysql.NewSQLError(3730, "HY000", "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", t.Name, fk.Name, c.Name)
				}
			}
		}
	}
	return nil
}
