package sql

import (
	"regexp"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

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
	for _, c := range t.Schema() {
		tc, ok := c.Type.(gms.TypeWithCollation)
		if !ok || tc.Collation() == collation || types.IsBinaryType(c.Type) || tc.Collation() == gms.Collation_binary {
			continue
		}
		typ, err := tc.WithNewCollation(collation)
		if err != nil {
			return err
		}
		nc := *c
		nc.Type = typ
		if err := t.ModifyColumn(ctx, c.Name, &nc, nil); err != nil {
			return err
		}
	}
	return t.setDefaultCollation(ctx, collation)
}

// setDefaultCollation records the table's default collation: a change of
// the catalog alone, which no stored value or index key depends on.
func (t *Table) setDefaultCollation(ctx *gms.Context, collation gms.CollationID) error {
	if t.IsTemporary() {
		def, ok := t.latestDef(ctx)
		if !ok {
			return gms.ErrTableNotFound.New(t.m.def.Name)
		}
		def = def.Clone()
		def.Collation = collation.Name()
		return t.alterTemp(ctx, def)
	}
	id := t.m.def.ID
	return t.db.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().TableByID(id)
		if !ok {
			return gms.ErrTableNotFound.New(t.m.def.Name)
		}
		nt := cur.Clone()
		nt.Collation = collation.Name()
		ch.PutTable(nt)
		return nil
	})
}
