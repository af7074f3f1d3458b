package sql

import (
	"fmt"
	"io"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// Table is one table as seen by one statement.
type Table struct {
	db      *Database
	m       *tableMeta
	proj    []string // projected column names, nil = all
	projPos []int    // positions of the projected columns
	projDec *codec.RowDecoder
	lookup  *gms.IndexLookup
	hint    *indexHint // the statement's USE / IGNORE / FORCE INDEX for this table
	// refCheck: the table serves a foreign key's lookup of parent rows,
	// which locks and current-reads them (SetReferenceCheck).
	refCheck bool
	// tempParent: the table is a temporary table asked for as a foreign
	// key's parent (GetForeignKeyEditor).
	tempParent bool
}

var (
	_ gms.Table                 = (*Table)(nil)
	_ gms.InsertableTable       = (*Table)(nil)
	_ gms.UpdatableTable        = (*Table)(nil)
	_ gms.DeletableTable        = (*Table)(nil)
	_ gms.ReplaceableTable      = (*Table)(nil)
	_ gms.TruncateableTable     = (*Table)(nil)
	_ gms.AutoIncrementTable    = (*Table)(nil)
	_ gms.IndexAddressableTable = (*Table)(nil)
	_ gms.IndexedTable          = (*Table)(nil)
	_ gms.IndexAlterableTable   = (*Table)(nil)
	_ gms.ProjectedTable        = (*Table)(nil)
	_ gms.PrimaryKeyTable       = (*Table)(nil)
	_ gms.CommentedTable        = (*Table)(nil)
	_ gms.TemporaryTable        = (*Table)(nil)
)

func (t *Table) Name() string   { return t.m.def.Name }
func (t *Table) String() string { return t.m.def.Name }
func (t *Table) Comment() string {
	return t.m.def.Comment
}

func (t *Table) Schema() gms.Schema {
	if t.projPos == nil {
		return t.m.schema
	}
	out := make(gms.Schema, len(t.projPos))
	for i, p := range t.projPos {
		out[i] = t.m.schema[p]
	}
	return out
}

func (t *Table) PrimaryKeySchema() gms.PrimaryKeySchema { return t.m.pkSchema }

func (t *Table) Collation() gms.CollationID {
	if t.m.def.Collation != "" {
		if id, err := gms.ParseCollation("", t.m.def.Collation, false); err == nil {
			return id
		}
	}
	return defaultCollation
}

// WithProjections implements sql.ProjectedTable.
func (t *Table) WithProjections(cols []string) gms.Table {
	nt := *t
	if cols == nil || t.m.hasVirtual {
		// go-mysql-server computes a virtual column over the table's full
		// row, so a table that has one always returns full rows.
		nt.proj, nt.projPos = nil, nil
		return &nt
	}
	nt.proj = cols
	nt.projPos = make([]int, 0, len(cols))
	for _, c := range cols {
		for i, col := range t.m.schema {
			if strings.EqualFold(col.Name, c) {
				nt.projPos = append(nt.projPos, i)
				break
			}
		}
	}
	nt.projDec = t.m.newDecoder(nt.projPos)
	return &nt
}

// Projections implements sql.ProjectedTable.
func (t *Table) Projections() []string { return t.proj }

// partition is the only partition of a table (or of an index lookup).
type partition struct{}

func (partition) Key() []byte { return []byte("p") }

type singlePartitionIter struct{ done bool }

func (p *singlePartitionIter) Next(*gms.Context) (gms.Partition, error) {
	if p.done {
		return nil, io.EOF
	}
	p.done = true
	return partition{}, nil
}
func (p *singlePartitionIter) Close(*gms.Context) error { return nil }

func (t *Table) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return &singlePartitionIter{}, nil
}

// PartitionRows implements sql.Table: a full scan, or the index lookup this
// table was made for.
func (t *Table) PartitionRows(ctx *gms.Context, _ gms.Partition) (gms.RowIter, error) {
	tx, err := txnFrom(ctx)
	if err != nil {
		return nil, err
	}
	if t.lookup != nil {
		return t.lookupRows(ctx, tx, *t.lookup)
	}
	prefix := codec.RecordPrefix(t.m.def.ID)
	return &recordIter{t: t, ctx: ctx, it: tx.txn.NewIter(prefix, codec.PrefixEnd(prefix), false), tx: tx, lock: tx.stmt.locks(t.Name())}, nil
}

// GetIndexes implements sql.IndexAddressable: only public indexes serve
// reads, and of those only the visible ones the statement's index hint
// allows (a catalog view sees the invisible ones too: visibility.go).
func (t *Table) GetIndexes(ctx *gms.Context) ([]gms.Index, error) {
	out := make([]gms.Index, 0, len(t.m.indexes))
	for _, ix := range t.m.indexes {
		if ix.state() == catalog.StatePublic && (ix.visible() && t.hint.allows(ix.name()) || !ix.visible() && showingAllIndexes(ctx)) {
			out = append(out, ix.gmsIndex)
		}
	}
	return out, nil
}

// PreciseMatch implements sql.IndexAddressable. Spans can be wider than
// the ranges (inexact bound conversions, prefix indexes), so
// go-mysql-server keeps its filters.
func (t *Table) PreciseMatch() bool { return false }

// IndexedAccess implements sql.IndexAddressable.
func (t *Table) IndexedAccess(_ *gms.Context, lookup gms.IndexLookup) gms.IndexedTable {
	nt := *t
	nt.lookup = &lookup
	return &nt
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

// decodeRow decodes a stored row into the (projected) output row.
func (t *Table) decodeRow(handle int64, val []byte, full bool) (gms.Row, error) {
	return t.decodeRowIn(nil, val, full)
}

// decodeRowIn is decodeRow with the row and its strings taken from a (nil:
// allocated one by one).
func (t *Table) decodeRowIn(a *rowAlloc, val []byte, full bool) (gms.Row, error) {
	m := t.m
	pos, dec := m.allPos, m.decoder
	if !full && t.projPos != nil {
		pos, dec = t.projPos, t.projDec
	}
	var scratch [16]codec.Raw
	raw := scratch[:]
	if len(pos) > len(scratch) {
		raw = make([]codec.Raw, len(pos))
	}
	if err := dec.DecodeRaw(val, raw); err != nil {
		return nil, err
	}
	row := a.row(len(pos))
	for i, p := range pos {
		v, err := fromRaw(m.kinds[p], m.schema[p].Type, raw[i], a)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// recordIter streams the rows of a record-key range.
type recordIter struct {
	t    *Table
	ctx  *gms.Context
	tx   *Transaction
	it   kv.Iterator
	n    int
	rows int  // rows read, for Handler_read_rnd_next
	lock bool // lock and current-read the rows read (locking.go)
	// keyRange: the rows are a primary-key range, which the status
	// counters count as a lookup does (one Handler_read_key, then
	// Handler_read_next per row), not as a scan.
	keyRange bool
	alloc    *rowAlloc // where rows come from; nil: allocated one by one
	onRow    bool      // the kv iterator is on the row advance returned last
}

func (r *recordIter) Next(ctx *gms.Context) (gms.Row, error) {
	val, err := r.advance(ctx)
	if err != nil {
		return nil, err
	}
	return r.t.decodeRowIn(r.alloc, val, false)
}

// advance returns the stored value of the next row, valid until the next
// call: the kv iterator moves past it only then, since its value is valid
// only until it moves.
func (r *recordIter) advance(ctx *gms.Context) ([]byte, error) {
	if r.onRow {
		r.it.Next()
		r.onRow = false
	}
	if r.n++; r.n&1023 == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for {
		if !r.it.Valid() {
			if err := r.it.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		key, val := r.it.Key(), r.it.Value()
		if r.lock {
			var found bool
			var err error
			if val, found, err = r.tx.lockedRead(ctx, key, r.tx.stmt.share); err != nil {
				return nil, err
			}
			if !found { // deleted since the snapshot
				r.it.Next()
				continue
			}
		}
		r.onRow = true
		r.rows++
		return val, nil
	}
}

func (r *recordIter) Close(ctx *gms.Context) error {
	if r.keyRange {
		addStatus(ctx, "Handler_read_key", 1)
		addStatus(ctx, "Handler_read_next", r.rows)
		r.keyRange = false
	} else {
		// Handler_read_rnd_next counts the rows of a table scan.
		addStatus(ctx, "Handler_read_rnd_next", r.rows)
	}
	r.rows = 0
	return r.it.Close()
}
