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

// UpdateForeignKey implements sql.ForeignKeyTable: go-mysql-server marks
// a key made under foreign_key_checks = 0 resolved once it has checked it.
func (t *Table) UpdateForeignKey(ctx *gms.Context, name string, fk gms.ForeignKeyConstraint) error {
	return t.changeDef(ctx, func(_ *catalog.Change, nt *catalog.Table) error {
		i := slices.IndexFunc(nt.ForeignKeys, func(x catalog.ForeignKey) bool { return strings.EqualFold(x.Name, name) })
		if i < 0 {
			return gms.ErrForeignKeyNotFound.New(name, nt.Name)
		}
		nt.ForeignKeys[i] = fromGMSForeignKey(fk)
		return nil
	})
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

// LookupPartitions implements sql.IndexedTable.
func (t *Table) LookupPartitions(_ *gms.Context, lookup gms.IndexLookup) (gms.PartitionIter, error) {
	if t.tempParent {
		return nil, errCannotAddForeignKey()
	}
	if t.lookup == nil || t.lookup.Index != lookup.Index {
		return nil, fmt.Errorf("reorgdb: lookup on %s without IndexedAccess", t.Name())
	}
	return &singlePartitionIter{}, nil
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

// precheckParent checks that a foreign key's parent exists and has an
// index that starts with the referenced columns, whose types match the
// key's.
func (d *Database) precheckParent(ctx *gms.Context, fk catalog.ForeignKey, t *catalog.Table) error {
	dbName := fk.ParentDB
	if dbName == "" {
		dbName = d.def.Name
	}
	parent := t
	if !strings.EqualFold(dbName, d.def.Name) || !strings.EqualFold(fk.ParentTable, t.Name) {
		s := d.e.schemaFor(ctx)
		db, ok := s.Database(dbName)
		if !ok {
			return errNoParent(fk.ParentTable)
		}
		if _, isTemp := tempFor(ctx, db.ID, fk.ParentTable); isTemp {
			return errCannotAddForeignKey()
		}
		if parent, ok = s.Table(db.ID, fk.ParentTable); !ok {
			return errNoParent(fk.ParentTable)
		}
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

// findForeignKey finds foreign key name of table (of database db first,
// else of any database) in the newest schema.
func (e *Engine) findForeignKey(db, table, name string) (string, catalog.ForeignKey, bool) {
	s := e.cat.Current()
	dbs := s.Databases()
	slices.SortStableFunc(dbs, func(a, b *catalog.Database) int {
		return boolRank(strings.EqualFold(b.Name, db)) - boolRank(strings.EqualFold(a.Name, db))
	})
	for _, d := range dbs {
		t, ok := s.Table(d.ID, table)
		if !ok {
			continue
		}
		for _, fk := range t.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				return d.Name, fk, true
			}
		}
	}
	return "", catalog.ForeignKey{}, false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ForeignKeyText is how MySQL's errors name foreign key name of child
// table table: "(`db`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES
// `p` (`id`) ON DELETE CASCADE)". db is the session's database.
// A key the statement query was adding is taken from the statement.
func (e *Engine) ForeignKeyText(db, table, name, query string) (string, bool) {
	childDB, fk, ok := e.findForeignKey(db, table, name)
	if !ok {
		if fk, ok = statementForeignKey(query, name); !ok {
			return "", false
		}
		childDB = db
		if fk.ParentDB == "" {
			fk.ParentDB = db
		}
	}
	parent := gms.QuoteIdentifier(fk.ParentTable)
	if !strings.EqualFold(fk.ParentDB, childDB) {
		parent = gms.QuoteIdentifier(fk.ParentDB) + "." + parent
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(%s.%s, CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (%s)",
		gms.QuoteIdentifier(childDB), gms.QuoteIdentifier(table), gms.QuoteIdentifier(fk.Name),
		strings.Join(gms.QuoteIdentifiers(fk.Columns), ", "), parent, strings.Join(gms.QuoteIdentifiers(fk.ParentColumns), ", "))
	// InnoDB keeps RESTRICT as no action given.
	if fk.OnDelete != "" && fk.OnDelete != "RESTRICT" {
		b.WriteString(" ON DELETE " + fk.OnDelete)
	}
	if fk.OnUpdate != "" && fk.OnUpdate != "RESTRICT" {
		b.WriteString(" ON UPDATE " + fk.OnUpdate)
	}
	b.WriteString(")")
	return b.String(), true
}

// ForeignKeyChild is the name of the table that has foreign key name
// referencing table parent of database db, or "".
func (e *Engine) ForeignKeyChild(db, parent, name string) string {
	for _, c := range e.cat.Current().ChildTables(db, parent) {
		for _, fk := range c.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				return c.Name
			}
		}
	}
	return ""
}

// statementForeignKey is foreign key name of a CREATE or ALTER TABLE
// statement; an unnamed one matches a generated name (<table>_ibfk_<n>)
// when it is the statement's only unnamed key.
func statementForeignKey(query, name string) (catalog.ForeignKey, bool) {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return catalog.ForeignKey{}, false
	}
	var ddls []*sqlparser.DDL
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		ddls = []*sqlparser.DDL{s}
	case *sqlparser.AlterTable:
		ddls = s.Statements
	}
	var named, unnamed []catalog.ForeignKey
	for _, d := range ddls {
		if d.TableSpec == nil {
			continue
		}
		for _, c := range d.TableSpec.Constraints {
			def, ok := c.Details.(*sqlparser.ForeignKeyDefinition)
			if !ok {
				continue
			}
			fk := fromParsedForeignKey(c.Name, def)
			if c.Name == "" {
				unnamed = append(unnamed, fk)
			} else if strings.EqualFold(c.Name, name) {
				named = append(named, fk)
			}
		}
	}
	switch {
	case len(named) > 0:
		return named[0], true
	case len(unnamed) == 1 && strings.Contains(name, "_ibfk_"):
		unnamed[0].Name = name
		return unnamed[0], true
	}
	return catalog.ForeignKey{}, false
}

func fromParsedForeignKey(name string, def *sqlparser.ForeignKeyDefinition) catalog.ForeignKey {
	actions := map[sqlparser.ReferenceAction]string{sqlparser.Restrict: "RESTRICT", sqlparser.Cascade: "CASCADE",
		sqlparser.NoAction: "NO ACTION", sqlparser.SetNull: "SET NULL", sqlparser.SetDefault: "SET DEFAULT"}
	fk := catalog.ForeignKey{Name: name, ParentTable: def.ReferencedTable.Name.String(),
		OnDelete: actions[def.OnDelete], OnUpdate: actions[def.OnUpdate]}
	if !def.ReferencedTable.DbQualifier.IsEmpty() {
		fk.ParentDB = def.ReferencedTable.DbQualifier.String()
	}
	for _, c := range def.Source {
		fk.Columns = append(fk.Columns, c.String())
	}
	for _, c := range def.ReferencedColumns {
		fk.ParentColumns = append(fk.ParentColumns, c.String())
	}
	return fk
}

// StatementForeignKey is the foreign key an ALTER TABLE statement on a
// table of database db adds, with the name go-mysql-server gives an
// unnamed one.
func (e *Engine) StatementForeignKey(db, query string) (catalog.ForeignKey, bool) {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return catalog.ForeignKey{}, false
	}
	alter, ok := stmt.(*sqlparser.AlterTable)
	if !ok {
		return catalog.ForeignKey{}, false
	}
	for _, d := range alter.Statements {
		if d.TableSpec == nil {
			continue
		}
		for _, c := range d.TableSpec.Constraints {
			if def, ok := c.Details.(*sqlparser.ForeignKeyDefinition); ok {
				fk := fromParsedForeignKey(c.Name, def)
				if fk.Name == "" {
					fk.Name = e.nextForeignKeyName(db, alter.Table)
				}
				return fk, true
			}
		}
	}
	return catalog.ForeignKey{}, false
}

// nextForeignKeyName is the name go-mysql-server gives the next unnamed
// foreign key of a table: <table>_ibfk_<highest + 1>.
func (e *Engine) nextForeignKeyName(db string, tn sqlparser.TableName) string {
	if !tn.DbQualifier.IsEmpty() {
		db = tn.DbQualifier.String()
	}
	name := tn.Name.String()
	prefix := strings.ToLower(name) + "_ibfk_"
	highest := 0
	s := e.cat.Current()
	if d, ok := s.Database(db); ok {
		if t, ok := s.Table(d.ID, name); ok {
			for _, fk := range t.ForeignKeys {
				var n int
				if _, err := fmt.Sscanf(strings.TrimPrefix(fk.Name, prefix), "%d", &n); err == nil && strings.HasPrefix(fk.Name, prefix) && n > highest {
					highest = n
				}
			}
		}
	}
	return fmt.Sprintf("%s%d", prefix, highest+1)
}

// ForeignKeyOfColumn is the foreign key that holds column col of the
// table an ALTER TABLE statement changes, as child or parent.
func (e *Engine) ForeignKeyOfColumn(db, query, col string) (catalog.ForeignKey, bool) {
	stmt, err := sqlparser.Parse(query)
	alter, ok := stmt.(*sqlparser.AlterTable)
	if err != nil || !ok {
		return catalog.ForeignKey{}, false
	}
	if !alter.Table.DbQualifier.IsEmpty() {
		db = alter.Table.DbQualifier.String()
	}
	table := alter.Table.Name.String()
	s := e.cat.Current()
	d, ok := s.Database(db)
	if !ok {
		return catalog.ForeignKey{}, false
	}
	holds := func(cols []string) bool {
		return slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, col) })
	}
	if t, ok := s.Table(d.ID, table); ok {
		for _, fk := range t.ForeignKeys {
			if holds(fk.Columns) {
				return fk, true
			}
		}
	}
	for _, c := range s.ChildTables(db, table) {
		for _, fk := range c.ForeignKeys {
			if strings.EqualFold(fk.ParentTable, table) && holds(fk.ParentColumns) {
				return fk, true
			}
		}
	}
	return catalog.ForeignKey{}, false
}

// IncompatibleKeyError is MySQL's error 3780 for foreign key fk.
func IncompatibleKeyError(fk catalog.ForeignKey) error { return errIncompatibleKey(fk) }

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
	if check.Enforced {
		if err := checkRows(ctx, alterable, check.Name, expr); err != nil {
			return nil, err
		}
	}
	def, err := plan.NewCheckDefinition(ctx, &check)
	if err != nil {
		return nil, err
	}
	if err := alterable.CreateCheck(ctx, def); err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
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
