package sql

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
)

// tableMeta is everything the adapter derives from one immutable catalog
// table definition: the go-mysql-server schema, parsed types, and the index
// layouts. It is built once per definition and shared by all statements.
type tableMeta struct {
	def    *catalog.Table
	dbName string
	// hasVirtual: a virtual generated column needs the full row to be
	// computed, so the table returns full rows (no projections).
	hasVirtual bool
	schema     gms.Schema
	pkSchema   gms.PrimaryKeySchema
	kinds      []valueKind
	colls      []gms.CollationID // per column: a string's collation, else 0
	colIDs     []int64
	// missing holds, per column, the canonical value that a stored row
	// lacking the column (written before ADD COLUMN added it) reads: the
	// column's catalog.Column.Origin. Nil when no column has one.
	missing   []any
	handlePos int    // position of the integer PK column used as handle, -1 if hidden
	autoPos   int    // position of the AUTO_INCREMENT column, -1 if none
	autoMax   uint64 // the AUTO_INCREMENT column's largest value (0: none known)
	decoder   *codec.RowDecoder
	allPos    []int        // 0..n-1: every column, in schema order
	padChars  []int        // positions of CHAR columns (not BINARY): see trimChars
	indexes   []*indexMeta // all indexes, in any state; the PK index first when present
	// shadows are the hidden columns of a MODIFY COLUMN job
	// (catalog.Table.Changing) that DML writes after the visible ones.
	shadows   []shadowMeta
	shadowDec *codec.RowDecoder // the shadows' stored values

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
	for _, ix := range m.indexes {
		if ix.isHandleIndex() || !want(ix) {
			continue
		}
		for _, p := range ix.pos {
			if !seen[p] {
				seen[p] = true
				pos = append(pos, p)
			}
		}
	}
	x := &ixDecoder{dec: m.newDecoder(pos), pos: pos}
	m.ixDecoders.Store(key, x)
	return x.dec, x.pos
}

// newDecoder returns a decoder of the columns at the schema positions pos,
// in that order, that gives a column missing from a stored row the value
// of m.missing (its ADD COLUMN origin default) instead of NULL.
func (m *tableMeta) newDecoder(pos []int) *codec.RowDecoder {
	ids := make([]int64, len(pos))
	var defaults []any
	for i, p := range pos {
		ids[i] = m.colIDs[p]
		if m.missing != nil && m.missing[p] != nil {
			if defaults == nil {
				defaults = make([]any, len(pos))
			}
			defaults[i] = m.missing[p]
		}
	}
	return codec.NewRowDecoderWithDefaults(ids, defaults)
}

type indexMeta struct {
	def      *catalog.Index
	pos      []int   // column positions in the table schema
	prefix   []int64 // prefix length per column, 0 = whole value
	gmsIndex *Index
}

// hasPrefix reports whether a column of the index is cut to a prefix.
func (ix *indexMeta) hasPrefix() bool {
	for _, p := range ix.prefix {
		if p > 0 {
			return true
		}
	}
	return false
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
		if c.OnUpdate != "" {
			col.OnUpdate = columnDefault(ctx, c.OnUpdate, typ, c.Nullable)
		}
		if c.Generated != "" {
			col.Generated = columnDefault(ctx, c.Generated, typ, c.Nullable)
			col.Virtual = c.Virtual
			m.hasVirtual = m.hasVirtual || c.Virtual
		}
		if p, ok := pkPos[c.ID]; ok {
			col.PrimaryKey = true
			pkOrdinals[p] = i
		}
		if c.AutoIncrement {
			m.autoPos = i
			if _, hi, ok := intRange(typ); ok && hi.IsUint64() {
				m.autoMax = hi.Uint64()
			}
		}
		col.Extra = columnExtra(c, col.Default)
		if c.ID == def.HandleColumn {
			m.handlePos = i
		}
		m.schema = append(m.schema, col)
		m.kinds = append(m.kinds, kindOf(typ))
		m.colls = append(m.colls, stringCollation(typ))
		m.colIDs = append(m.colIDs, c.ID)
		if isPaddedChar(typ) {
			m.padChars = append(m.padChars, i)
		}
	}
	m.pkSchema = gms.NewPrimaryKeySchema(m.schema, pkOrdinals...)
	for i, c := range def.Columns {
		if len(c.Origin) == 0 {
			continue
		}
		v := make([]any, 1)
		if err := codec.NewRowDecoder([]int64{0}).Decode(c.Origin, v); err != nil {
			return nil, fmt.Errorf("column %s: origin default: %w", c.Name, err)
		}
		if m.missing == nil {
			m.missing = make([]any, len(def.Columns))
		}
		m.missing[i] = v[0]
	}
	if err := m.buildShadows(def); err != nil {
		return nil, err
	}
	all := make([]int, len(m.colIDs))
	for i := range all {
		all[i] = i
	}
	m.allPos = all
	m.decoder = m.newDecoder(all)
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
				p = m.shadowPos(ic.ColumnID)
			}
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

// dml is the index-state protocol's rule for the index (catalog.Index.DML);
// the handle index is always public.
func (ix *indexMeta) dml() catalog.DMLRule {
	if ix.def == nil {
		return handleIndexRule
	}
	return ix.def.DML()
}

var handleIndexRule = (&catalog.Index{State: catalog.StatePublic}).DML()

// writable reports whether DML must add entries to the index (or log them).
func (ix *indexMeta) writable() bool { return ix.dml().Add }

// deletable reports whether DML must remove entries from the index (or log
// them).
func (ix *indexMeta) deletable() bool { return ix.dml().Remove }

// keyValues extracts the index's key values from a row; sk is keyValue's
// scratch for sort keys (nil: fresh memory, for values that are kept).
func (m *tableMeta) keyValues(ix *indexMeta, row gms.Row, dst []any, sk *[]byte) ([]any, bool, error) {
	dst = dst[:0]
	hasNull := false
	for i, p := range ix.pos {
		kind, coll := m.keyKind(p)
		v, err := keyValue(kind, coll, row[p], ix.prefix[i], sk)
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

// isPaddedChar reports whether values of typ are CHAR values, whose
// trailing spaces MySQL removes when they are read (PAD_CHAR_TO_FULL_LENGTH
// aside).
func isPaddedChar(typ gms.Type) bool {
	st, ok := typ.(types.StringType)
	return ok && st.Type() == sqltypes.Char && !types.IsBinaryType(st)
}

// trimChars returns row with the trailing spaces of its CHAR values
// removed (a copy when one changes). Rows are stored so, which makes
// reads, comparisons and index keys see the value MySQL shows.
func (m *tableMeta) trimChars(row gms.Row) gms.Row {
	copied := false
	for _, p := range m.padChars {
		s, ok := row[p].(string)
		if !ok || !strings.HasSuffix(s, " ") {
			continue
		}
		if !copied {
			row, copied = slices.Clone(row), true
		}
		row[p] = strings.TrimRight(s, " ")
	}
	return row
}

// columnExtra is column c's EXTRA in SHOW COLUMNS and
// information_schema.columns, as MySQL shows it; def is its default.
func columnExtra(c catalog.Column, def *gms.ColumnDefaultValue) string {
	switch {
	case c.AutoIncrement:
		return "auto_increment"
	case c.Generated != "" && c.Virtual:
		return "VIRTUAL GENERATED"
	case c.Generated != "":
		return "STORED GENERATED"
	}
	var parts []string
	if def != nil && !def.IsLiteral() {
		parts = append(parts, "DEFAULT_GENERATED")
	}
	if c.OnUpdate != "" {
		parts = append(parts, "on update "+c.OnUpdate)
	}
	return strings.Join(parts, " ")
}
