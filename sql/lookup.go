package sql

import (
	"bytes"
	"io"
	"slices"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// kvSpan is a range of raw kv keys [start, end), or one key when point is set.
type kvSpan struct{ start, end, point []byte }

func (s kvSpan) first() []byte {
	if s.point != nil {
		return s.point
	}
	return s.start
}

// lookupRows serves an index lookup: record-key ranges for the clustered
// integer PK, index-key ranges followed by record point reads otherwise.
func (t *Table) lookupRows(ctx *gms.Context, tx *Transaction, lookup gms.IndexLookup) (gms.RowIter, error) {
	txn := tx.txn
	// A foreign key's parent lookup locks in DML, not in the scan of
	// ALTER TABLE ADD FOREIGN KEY, which would lock every parent.
	lock := tx.stmt.locks(t.Name()) || t.refCheck && tx.stmt.writes
	// A parent row is only read: children of one parent do not wait for
	// each other, only for a writer of the parent (InnoDB's S lock).
	shared := t.refCheck || tx.stmt.share
	gi, ok := lookup.Index.(*Index)
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	ranges, ok := lookup.Ranges.(gms.MySQLRangeCollection)
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	if lookup.IsEmptyRange {
		return gms.RowsToRowIter(), nil
	}
	tid := t.m.def.ID
	var spans []kvSpan
	if gi.ix.isHandleIndex() {
		for _, r := range ranges {
			lo, hi, empty := gi.handleBounds(ctx, r)
			if empty {
				continue
			}
			if lo == hi {
				spans = append(spans, kvSpan{point: codec.RecordKey(tid, lo)})
				continue
			}
			spans = append(spans, kvSpan{start: codec.RecordKey(tid, lo), end: codec.PrefixEnd(codec.RecordKey(tid, hi))})
		}
		spans = mergeKVSpans(spans)
		if lookup.IsReverse {
			slices.Reverse(spans) // descending across the ranges too
		}
		return &spanIter{t: t, tx: tx, txn: txn, spans: spans, reverse: lookup.IsReverse, records: true, lock: lock, shared: shared}, nil
	}
	keySpans, err := gi.spansFor(ctx, ranges)
	if err != nil {
		return nil, err
	}
	prefix := codec.IndexPrefix(tid, gi.ix.def.ID)
	for _, ks := range keySpans {
		start := append(append([]byte(nil), prefix...), ks.start...)
		var end []byte
		if ks.end == nil {
			end = codec.PrefixEnd(prefix)
		} else {
			end = append(append([]byte(nil), prefix...), ks.end...)
		}
		spans = append(spans, kvSpan{start: start, end: end})
	}
	if lookup.IsReverse {
		slices.Reverse(spans) // spansFor sorts them ascending
	}
	it := &spanIter{t: t, tx: tx, txn: txn, spans: spans, reverse: lookup.IsReverse, ix: gi.ix, lock: lock, shared: shared}
	if gi.ix.hasPrefix() {
		it.fullRows = true
		return &groupSortIter{spanIter: it}, nil
	}
	return it, nil
}

// mergeKVSpans sorts spans and joins the ones that overlap, so that no
// row is read twice: the planner's ranges are disjoint, but an inexact
// bound widens a span (handleBounds), and LookupForExpressions lists
// its values as they come, repeats included.
func mergeKVSpans(spans []kvSpan) []kvSpan {
	slices.SortFunc(spans, func(a, b kvSpan) int { return bytes.Compare(a.first(), b.first()) })
	end := func(s kvSpan) []byte {
		if s.point != nil {
			return append(append([]byte(nil), s.point...), 0)
		}
		return s.end
	}
	out := spans[:0]
	for _, sp := range spans {
		if len(out) > 0 {
			last := &out[len(out)-1]
			le := end(*last)
			if le == nil || bytes.Compare(sp.first(), le) < 0 {
				if last.point != nil && sp.point != nil && bytes.Equal(last.point, sp.point) {
					continue
				}
				if se := end(sp); le != nil && (se == nil || bytes.Compare(se, le) > 0) {
					le = se
				}
				*last = kvSpan{start: last.first(), end: le}
				continue
			}
		}
		out = append(out, sp)
	}
	return out
}

// handleSuffixLen is how many bytes the handle adds to an index key.
var handleSuffixLen = func() int {
	h := int64(1)
	with, _ := codec.IndexKey(nil, 1, 1, nil, &h)
	without, _ := codec.IndexKey(nil, 1, 1, nil, nil)
	return len(with) - len(without)
}()

// groupSortIter puts the rows of a prefix index in the order of their
// whole values. go-mysql-server drops an ORDER BY on the index's columns
// when it reads through the index (without asking Order()), but the keys
// hold only the first characters: rows sharing a key are read in handle
// order. Those rows are contiguous, so sorting each such group is enough.
type groupSortIter struct {
	*spanIter
	pending []gms.Row // the current group, sorted
	ahead   gms.Row   // the first row of the next group
	aheadG  []byte
	done    bool
}

func (g *groupSortIter) Next(ctx *gms.Context) (gms.Row, error) {
	for len(g.pending) == 0 {
		if g.done {
			return nil, io.EOF
		}
		if err := g.fill(ctx); err != nil {
			return nil, err
		}
	}
	r := g.pending[0]
	g.pending = g.pending[1:]
	if pos := g.t.projPos; pos != nil { // the rows are whole: project them
		out := make(gms.Row, len(pos))
		for i, p := range pos {
			out[i] = r[p]
		}
		return out, nil
	}
	return r, nil
}

func (g *groupSortIter) fill(ctx *gms.Context) error {
	group := g.aheadG
	rows := g.pending[:0]
	if g.ahead != nil {
		rows = append(rows, g.ahead)
		g.ahead = nil
	}
	for {
		row, err := g.spanIter.Next(ctx)
		if err == io.EOF {
			g.done = true
			break
		}
		if err != nil {
			return err
		}
		if len(rows) > 0 && !bytes.Equal(g.lastGroup, group) {
			g.ahead, g.aheadG = row, append([]byte(nil), g.lastGroup...)
			break
		}
		group = append(group[:0], g.lastGroup...)
		rows = append(rows, row)
	}
	if len(rows) > 1 {
		m, ix := g.t.m, g.ix
		slices.SortStableFunc(rows, func(a, b gms.Row) int {
			for _, p := range ix.pos {
				c, err := m.schema[p].Type.Compare(ctx, a[p], b[p])
				if err == nil && c != 0 {
					if g.reverse {
						return -c
					}
					return c
				}
			}
			return 0
		})
	}
	g.pending = rows
	return nil
}

// spanIter walks spans in order, yielding rows.
type spanIter struct {
	t       *Table
	txn     *kv.Txn
	spans   []kvSpan
	reverse bool
	records bool       // spans are record keys; else index keys of ix
	ix      *indexMeta // the index, when !records
	cur     kv.Iterator
	n       int
	tx      *Transaction
	lock    bool // lock and current-read the rows read (locking.go)
	shared  bool // ... under shared locks

	lastGroup []byte // the key of the last index entry read, without its handle
	fullRows  bool   // decode every column, whatever the projection

	// Handler_read_key and Handler_read_next, added to the session's
	// status at Close: the spans started (seeks or point reads) and the
	// entries read after each seek.
	seeks, nexts int
}

func (s *spanIter) Next(ctx *gms.Context) (gms.Row, error) {
	for {
		if s.n++; s.n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if s.cur == nil {
			if len(s.spans) == 0 {
				return nil, io.EOF
			}
			sp := s.spans[0]
			s.spans = s.spans[1:]
			s.seeks++
			if sp.point != nil {
				// A single key: a point read is much cheaper than an iterator.
				row, err := s.pointRow(ctx, sp.point)
				if err != nil || row != nil {
					return row, err
				}
				continue
			}
			s.cur = s.txn.NewIter(sp.start, sp.end, s.reverse)
		}
		if !s.cur.Valid() {
			err := s.cur.Err()
			s.cur.Close()
			s.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		key, val := s.cur.Key(), s.cur.Value()
		s.nexts++
		var row gms.Row
		var err error
		if s.records {
			var h int64
			if _, h, err = codec.DecodeRecordKey(key); err == nil && s.lock {
				var found bool
				if val, found, err = s.tx.lockedRead(ctx, key, s.shared); err == nil && !found {
					s.cur.Next() // deleted since the snapshot
					continue
				}
			}
			if err == nil {
				row, err = s.t.decodeRow(h, val, false)
			}
		} else {
			row, err = s.rowFromIndexEntry(ctx, key, val)
		}
		s.cur.Next()
		if err != nil {
			return nil, err
		}
		if row == nil {
			continue
		}
		return row, nil
	}
}

func (s *spanIter) rowFromIndexEntry(ctx *gms.Context, key, val []byte) (gms.Row, error) {
	_, h, hasHandle, err := codec.DecodeIndexKey(key, len(s.ix.pos))
	if err != nil {
		return nil, err
	}
	group := key
	if hasHandle {
		group = key[:len(key)-handleSuffixLen]
	} else if h, err = codec.DecodeHandle(val); err != nil {
		return nil, err
	}
	s.lastGroup = append(s.lastGroup[:0], group...)
	recKey := codec.RecordKey(s.t.m.def.ID, h)
	if s.lock {
		return s.lockedRowFromIndex(ctx, recKey, h, group)
	}
	rec, found, err := s.txn.Get(recKey)
	if err != nil {
		return nil, err
	}
	if !found {
		// An index entry must always have its row; surface corruption
		// instead of hiding it.
		return nil, errIndexInconsistent(s.t.m.def.Name, s.ix.name(), h)
	}
	return s.t.decodeRow(h, rec, s.fullRows)
}

// lockedRowFromIndex is the current read of the row an index entry of
// the snapshot points at: the row as it is now, or nil when it is gone
// or no longer has the entry's key (it then no longer matches the range
// the entry was found in; go-mysql-server may not filter it again).
func (s *spanIter) lockedRowFromIndex(ctx *gms.Context, recKey []byte, h int64, group []byte) (gms.Row, error) {
	rec, found, err := s.tx.lockedRead(ctx, recKey, s.shared)
	if err != nil {
		return nil, err
	}
	if !found {
		// Gone since the snapshot, unless the snapshot lacks it too: an
		// entry without its row is corruption, not a concurrent delete.
		if _, had, err := s.txn.Get(recKey); err != nil || had {
			return nil, err
		}
		return nil, errIndexInconsistent(s.t.m.def.Name, s.ix.name(), h)
	}
	full, err := s.t.decodeRow(h, rec, true)
	if err != nil {
		return nil, err
	}
	key, _, _, _, err := s.t.m.appendEntry(s.ix, full, h, nil, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(key, group) {
		return nil, nil
	}
	if s.fullRows {
		return full, nil
	}
	return s.t.decodeRow(h, rec, false)
}

// pointRow reads one record by key; nil when it does not exist.
func (s *spanIter) pointRow(ctx *gms.Context, key []byte) (gms.Row, error) {
	var val []byte
	var found bool
	var err error
	if s.lock {
		val, found, err = s.tx.lockedRead(ctx, key, s.shared)
	} else {
		val, found, err = s.txn.Get(key)
	}
	if err != nil || !found {
		return nil, err
	}
	_, h, err := codec.DecodeRecordKey(key)
	if err != nil {
		return nil, err
	}
	return s.t.decodeRow(h, val, false)
}

func handleFromIndexEntry(key, val []byte, ncols int) (int64, error) {
	_, h, hasHandle, err := codec.DecodeIndexKey(key, ncols)
	if err != nil {
		return 0, err
	}
	if hasHandle {
		return h, nil
	}
	return codec.DecodeHandle(val)
}

func (s *spanIter) Close(ctx *gms.Context) error {
	addStatus(ctx, "Handler_read_key", s.seeks)
	addStatus(ctx, "Handler_read_next", s.nexts)
	s.seeks, s.nexts = 0, 0
	if s.cur != nil {
		err := s.cur.Close()
		s.cur = nil
		return err
	}
	return nil
}

// addStatus adds n to a status variable of the session and the server
// (SHOW STATUS), as MySQL's handler counters do.
func addStatus(ctx *gms.Context, name string, n int) {
	if n == 0 || ctx == nil || ctx.Session == nil || gms.StatusVariables == nil {
		return
	}
	gms.IncrementStatusVariable(ctx, name, n)
}
