package sql

import (
	"io"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// kvSpan is a range of raw kv keys [start, end), or one key when point is set.
type kvSpan struct{ start, end, point []byte }

// lookupRows serves an index lookup: record-key ranges for the clustered
// integer PK, index-key ranges followed by record point reads otherwise.
func (t *Table) lookupRows(ctx *gms.Context, tx *Transaction, lookup gms.IndexLookup) (gms.RowIter, error) {
	txn := tx.txn
	lock := lockingRead(ctx, tx)
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
		return &spanIter{t: t, txn: txn, spans: spans, reverse: lookup.IsReverse, records: true, lock: lock}, nil
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
	return &spanIter{t: t, txn: txn, spans: spans, reverse: lookup.IsReverse, ix: gi.ix, lock: lock}, nil
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
	lock    bool // SELECT ... FOR UPDATE: lock the rows read
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
			if sp.point != nil {
				// A single key: a point read is much cheaper than an iterator.
				row, err := s.pointRow(sp.point)
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
		var row gms.Row
		var err error
		if s.records {
			var h int64
			if _, h, err = codec.DecodeRecordKey(key); err == nil {
				row, err = s.t.decodeRow(h, val, false)
			}
			if err == nil && s.lock {
				err = lockRow(s.txn, key, val)
			}
		} else {
			row, err = s.rowFromIndexEntry(key, val)
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

func (s *spanIter) rowFromIndexEntry(key, val []byte) (gms.Row, error) {
	h, err := handleFromIndexEntry(key, val, len(s.ix.pos))
	if err != nil {
		return nil, err
	}
	recKey := codec.RecordKey(s.t.m.def.ID, h)
	rec, found, err := s.txn.Get(recKey)
	if err != nil {
		return nil, err
	}
	if !found {
		// An index entry must always have its row; surface corruption
		// instead of hiding it.
		return nil, errIndexInconsistent(s.t.m.def.Name, s.ix.name(), h)
	}
	if s.lock {
		if err := lockRow(s.txn, recKey, rec); err != nil {
			return nil, err
		}
	}
	return s.t.decodeRow(h, rec, false)
}

// pointRow reads one record by key; nil when it does not exist.
func (s *spanIter) pointRow(key []byte) (gms.Row, error) {
	val, found, err := s.txn.Get(key)
	if err != nil || !found {
		return nil, err
	}
	_, h, err := codec.DecodeRecordKey(key)
	if err != nil {
		return nil, err
	}
	if s.lock {
		if err := lockRow(s.txn, key, val); err != nil {
			return nil, err
		}
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

func (s *spanIter) Close(*gms.Context) error {
	if s.cur != nil {
		return s.cur.Close()
	}
	return nil
}
