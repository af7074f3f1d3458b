package sql

import (
	"fmt"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// What MySQL's foreign-key errors say about a key: go-mysql-server's
// errors name the key and its tables only, MySQL's print the whole
// definition. The server's error mapping asks for it here.

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
