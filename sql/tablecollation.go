package sql

import (
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

var _ gms.CollationAlterableTable = (*Table)(nil)

// convertTo finds ALTER TABLE ... CONVERT TO CHARACTER SET, which
// go-mysql-server plans as the table option CHARACTER SET alone.
var convertTo = regexp.MustCompile(`(?i)\bCONVERT\s+TO\s+(CHARACTER\s+SET|CHARSET)\b`)

// ModifyDefaultCollation implements sql.CollationAlterableTable: ALTER
// TABLE ... [DEFAULT] CHARACTER SET / COLLATE sets the collation that
// columns added later get, and changes no column, as in MySQL. With
// CONVERT TO it is ModifyStoredCollation.
func (t *Table) ModifyDefaultCollation(ctx *gms.Context, collation gms.CollationID) error {
	if convertTo.MatchString(ctx.Query()) {
		return t.ModifyStoredCollation(ctx, collation)
	}
	return t.setDefaultCollation(ctx, collation)
}

// ModifyStoredCollation implements sql.CollationAlterableTable: ALTER
// TABLE ... CONVERT TO CHARACTER SET converts every character column (CHAR,
// VARCHAR, TEXT, ENUM, SET) to the collation, one MODIFY COLUMN each
// (online, rebuilding the indexes that hold it), then sets the table's
// default. Binary strings keep their type.
func (t *Table) ModifyStoredCollation(ctx *gms.Context, collation gms.CollationID) error {
	if err := t.checkConvertKeys(ctx, collation); err != nil {
		return err
	}
	for _, c := range t.Schema() {
		typ, err := converted(c.Type, collation)
		if err != nil {
			return err
		}
		if typ == nil {
			continue
		}
		nc := *c
		nc.Type = typ
		if err := t.ModifyColumn(ctx, c.Name, &nc, nil); err != nil {
			return err
		}
	}
	return t.setDefaultCollation(ctx, collation)
}

// converted is character type typ in collation, or nil when typ is not a
// character type (binary strings included) or has that collation already.
// As in MySQL, a TEXT type, or a VARCHAR that would pass 65,535 bytes,
// becomes the smallest TEXT type that holds as many characters as before
// in the new character set (latin1 TEXT becomes utf8mb4 MEDIUMTEXT).
func converted(typ gms.Type, collation gms.CollationID) (gms.Type, error) {
	tc, ok := typ.(gms.TypeWithCollation)
	if !ok || tc.Collation() == collation || types.IsBinaryType(typ) || tc.Collation() == gms.Collation_binary {
		return nil, nil
	}
	if st, ok := typ.(gms.StringType); ok && (typ.Type() == sqltypes.Text || typ.Type() == sqltypes.VarChar) {
		need := st.MaxCharacterLength() * collation.CharacterSet().MaxLength()
		if typ.Type() == sqltypes.Text || need > types.TextBlobMax {
			return textHolding(need, collation), nil
		}
	}
	return tc.WithNewCollation(collation)
}

// textHolding is the smallest TEXT type in collation holding need bytes.
func textHolding(need int64, collation gms.CollationID) gms.Type {
	switch {
	case need <= types.TinyTextBlobMax:
		return types.CreateTinyText(collation)
	case need <= types.TextBlobMax:
		return types.CreateText(collation)
	case need <= types.MediumTextBlobMax:
		return types.CreateMediumText(collation)
	}
	return types.CreateLongText(collation)
}

// checkConvertKeys refuses, as MySQL does while foreign_key_checks is on,
// a conversion after which a foreign key of the table, or one that
// references it, would join columns of different collations (3780).
func (t *Table) checkConvertKeys(ctx *gms.Context, collation gms.CollationID) error {
	cur, ok := t.latestDef(ctx)
	if !ok || !foreignKeyChecks(ctx) || t.IsTemporary() {
		return nil
	}
	after := cur.Clone()
	for i, c := range after.Columns {
		typ, err := parseType(c.Type)
		if err == nil {
			typ, err = converted(typ, collation)
		}
		if err != nil {
			return err
		}
		if typ != nil {
			after.Columns[i].Type = typ.String()
		}
	}
	s := t.db.e.schemaFor(ctx)
	db := t.db.def.Name
	for _, fk := range after.ForeignKeys {
		parent, _, ok := t.db.parentOf(s, fk, after)
		if !ok {
			continue
		}
		if err := checkKeyTypes(ctx, after, parent, fk); err != nil {
			return err
		}
	}
	for _, child := range s.ChildTables(db, after.Name) {
		if child.ID == after.ID {
			continue // its own keys, checked above
		}
		for _, fk := range child.ForeignKeys {
			if strings.EqualFold(fk.ParentTable, after.Name) && (fk.ParentDB == "" || strings.EqualFold(fk.ParentDB, db)) {
				if err := checkKeyTypes(ctx, child, after, fk); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// setDefaultCollation records the table's default collation: a change of
// the catalog alone, which no stored value or index key depends on.
func (t *Table) setDefaultCollation(ctx *gms.Context, collation gms.CollationID) error {
	return t.alterDef(ctx, func(def *catalog.Table) { def.Collation = collation.Name() })
}

// alterDef applies change to a copy of the table's definition and makes it
// current: for a change of the catalog alone (a default, a comment), which
// no stored value or index key depends on, so it needs no job.
func (t *Table) alterDef(ctx *gms.Context, change func(*catalog.Table)) error {
	if t.IsTemporary() {
		def, ok := t.latestDef(ctx)
		if !ok {
			return gms.ErrTableNotFound.New(t.m.def.Name)
		}
		def = def.Clone()
		change(def)
		return t.alterTemp(ctx, def)
	}
	id := t.m.def.ID
	return t.db.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().TableByID(id)
		if !ok {
			return gms.ErrTableNotFound.New(t.m.def.Name)
		}
		nt := cur.Clone()
		change(nt)
		ch.PutTable(nt)
		return nil
	})
}
