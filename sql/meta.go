package sql

import (
	"fmt"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
)

// tableMeta is everything the adapter derives from one immutable catalog
// table definition: the go-mysql-server schema, parsed types, and the index
// layouts. It is built once per definition and shared by all statements.
type tableMeta struct {
	def       *catalog.Table
	dbName    string
	schema    gms.Schema
	pkSchema  gms.PrimaryKeySchema
	kinds     []valueKind
	colIDs    []int64
	handlePos int // position of the integer PK column used as handle, -1 if hidden
	autoPos   int // position of the AUTO_INCREMENT column, -1 if none
	decoder   *codec.RowDecoder
	indexes   []*indexMeta // all indexes, in any state; the PK index first when present

	ixDecoders sync.Map // fmt of index IDs -> *ixDecoder
}

type ixDecoder struct {
	dec *codec.RowDecoder
	pos []int
}

// indexColumnsDecoder returns a decoder of just the columns of the
// selected indexes, and their positions in the schema.
func (m *tableMeta) indexColumnsDecoder(ids []int64, want func(*indexMeta) bool) (*codec.RowDecoder, []int) {
	key := fmt.Sprint(ids)
	if d, ok := m.ixDecoders.Load(key); ok {
		x := d.(*ixDecoder)
		return x.dec, x.pos
	}
	seen := map[int]bool{}
	var pos []int
	var colIDs []int64
	for _, ix := range m.indexes {
		if ix.isHandleIndex() || !want(ix) {
			continue
		}
		for _, p := range ix.pos {
			if !seen[p] {
				seen[p] = true
				pos = append(pos, p)
				colIDs = append(colIDs, m.colIDs[p])
			}
		}
	}
	x := &ixDecoder{dec: codec.NewRowDecoder(colIDs), pos: pos}
	m.ixDecoders.Store(key, x)
	return x.dec, x.pos
}

type indexMeta struct {
	def      *catalog.Index
	pos      []int   // column positions in the table schema
	prefix   []int64 // prefix length per column, 0 = whole value
	gmsIndex *Index
}

// isPrimaryHandle reports whether the index is the clustered integer PK.
func (ix *indexMeta) isHandleIndex() bool { return ix.def == nil }

var metaCache sync.Map // *catalog.Table -> *tableMeta

func metaFor(dbName string, def *catalog.Table) (*tableMeta, error) {
	if m, ok := metaCache.Load(def); ok {
		return m.(*tableMeta), nil
	}
	m, err := buildMeta(dbName, def)
	if err != nil {
		return nil, err
	}
	metaCache.Store(def, m)
	return m, nil
}

func buildMeta(dbName string, def *catalog.Table) (*tableMeta, error) {
	m := &tableMeta{def: def, dbName: dbName, handlePos: -1, autoPos: -1}
	ctx := gms.NewEmptyContext()
	pkPos := map[int64]int{}
	for i, id := range def.PKColumns {
		pkPos[id] = i
	}
	pkOrdinals := make([]int, len(def.PKColumns))
	for i, c := range def.Columns {
		typ, err := parseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: type %q: %w", c.Name, c.Type, err)
		}
		col := &gms.Column{
			Name:           c.Name,
			Type:           typ,
			Nullable:       c.Nullable,
			Source:         def.Name,
			DatabaseSource: dbName,
			AutoIncrement:  c.AutoIncrement,
			Comment:        c.Comment,
		}
		if c.HasDefault {
			col.Default = columnDefault(ctx, c.Default, typ, c.Nullable)
		}
		if p, ok := pkPos[c.ID]; ok {
			col.PrimaryKey = true
			pkOrdinals[p] = i
		}
		if c.AutoIncrement {
			m.autoPos = i
		}
		if c.ID == def.HandleColumn {
			m.handlePos = i
		}
		m.schema = append(m.schema, col)
		m.kinds = append(m.kinds, kindOf(typ))
		m.colIDs = append(m.colIDs, c.ID)
	}
	m.pkSchema = gms.NewPrimaryKeySchema(m.schema, pkOrdinals...)
	m.decoder = codec.NewRowDecoder(m.colIDs)
	if m.handlePos >= 0 {
		pk := &indexMeta{pos: []int{m.handlePos}, prefix: []int64{0}}
		pk.gmsIndex = newIndex(m, pk)
		m.indexes = append(m.indexes, pk)
	}
	for _, ix := range def.Indexes {
		im := &indexMeta{def: ix}
		for _, ic := range ix.Columns {
			_, p := def.ColumnByID(ic.ColumnID)
			if p < 0 {
				return nil, fmt.Errorf("index %s: unknown column id %d", ix.Name, ic.ColumnID)
			}
			im.pos = append(im.pos, p)
			im.prefix = append(im.prefix, ic.Length)
		}
		im.gmsIndex = newIndex(m, im)
		if ix.Primary {
			m.indexes = append([]*indexMeta{im}, m.indexes...)
		} else {
			m.indexes = append(m.indexes, im)
		}
	}
	return m, nil
}

// indexName is the MySQL name of an index.
func (ix *indexMeta) name() string {
	if ix.def == nil || ix.def.Primary {
		return "PRIMARY"
	}
	return ix.def.Name
}

func (ix *indexMeta) unique() bool { return ix.def == nil || ix.def.Unique || ix.def.Primary }

func (ix *indexMeta) state() catalog.IndexState {
	if ix.def == nil {
		return catalog.StatePublic
	}
	return ix.def.State
}

// writable reports whether DML must add entries to the index.
func (ix *indexMeta) writable() bool { return ix.state() >= catalog.StateWriteOnly }

// deletable reports whether DML must remove entries from the index.
func (ix *indexMeta) deletable() bool { return ix.state() >= catalog.StateDeleteOnly }

// keyValues extracts the index's key values from a row.
func (m *tableMeta) keyValues(ix *indexMeta, row gms.Row, dst []any) ([]any, bool, error) {
	dst = dst[:0]
	hasNull := false
	for i, p := range ix.pos {
		v, err := keyValue(m.kinds[p], row[p], ix.prefix[i])
		if err != nil {
			return nil, false, err
		}
		if v == nil {
			hasNull = true
		}
		dst = append(dst, v)
	}
	return dst, hasNull, nil
}

// dupKeyString renders the MySQL "Duplicate entry" value: the key columns
// joined with '-'.
func dupKeyString(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case []byte:
			parts[i] = string(x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, "-")
}

// columnDefault rebuilds a stored default. Literals are resolved here once;
// expressions (NOW(), ...) are left for the planner to resolve.
func columnDefault(ctx *gms.Context, s string, typ gms.Type, nullable bool) *gms.ColumnDefaultValue {
	d, err := planbuilder.StringToColumnDefaultValue(ctx, s)
	if err == nil && d.Literal {
		d.OutType, d.ReturnNil = typ, nullable
		if d.Resolved() {
			return d
		}
	}
	return gms.NewUnresolvedColumnDefaultValue(s)
}
