package sql

import (
	"bytes"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/codec"
)

// cardinalityScanLimit bounds the entries SHOW INDEX (and
// information_schema.statistics, which tools read for whole databases)
// reads per index.
const cardinalityScanLimit = 1000

// cardinality returns, for each column k of the index, the number of
// distinct values of its first k+1 columns (MySQL's Cardinality of key
// part k+1), or nil when that is not cheap to know. It reads the index up
// to cardinalityScanLimit entries: a smaller index is counted exactly; a
// larger one is estimated from the part read, scaled by the disk size of
// the whole index over that of the part (nil when the sizes are not known
// yet, as for data still in the memtable).
func cardinality(ctx *gms.Context, t *Table, ix *indexMeta) []int64 {
	tx, err := txnFrom(ctx)
	if err != nil {
		return nil
	}
	tid := t.m.def.ID
	var lo, hi []byte
	if ix.isHandleIndex() {
		lo = codec.RecordPrefix(tid)
	} else {
		lo = codec.IndexPrefix(tid, ix.def.ID)
	}
	hi = codec.PrefixEnd(lo)
	it := tx.txn.NewIter(lo, hi, false)
	defer it.Close()
	ncols := len(ix.pos)
	distinct := make([]int64, ncols)
	prev := make([][]byte, ncols)
	var cur [][]byte
	n := 0
	var last []byte
	for ; it.Valid(); it.Next() {
		if n == cardinalityScanLimit {
			break
		}
		n++
		key := it.Key()
		last = append(last[:0], key...)
		if ix.isHandleIndex() {
			distinct[0]++
			continue
		}
		vals, _, _, err := codec.DecodeIndexKey(key, ncols)
		if err != nil {
			return nil
		}
		cur = cur[:0]
		var enc []byte
		for _, v := range vals {
			enc, _ = codec.EncodeKey(enc, v)
			cur = append(cur, enc)
		}
		for k := range cur {
			if prev[k] == nil || !bytes.Equal(prev[k], cur[k]) {
				distinct[k]++
				prev[k] = append(prev[k][:0], cur[k]...)
			}
		}
	}
	if it.Err() != nil {
		return nil
	}
	if !it.Valid() {
		return distinct // the whole index was read
	}
	store := t.db.e.store
	whole, err1 := store.EstimateBytes(lo, hi)
	part, err2 := store.EstimateBytes(lo, codec.PrefixEnd(last))
	if err1 != nil || err2 != nil || part == 0 || whole < part {
		return nil
	}
	scale := float64(whole) / float64(part)
	for k := range distinct {
		distinct[k] = int64(float64(distinct[k]) * scale)
	}
	return distinct
}

// tableEstimate is information_schema.tables' TABLE_ROWS, DATA_LENGTH and
// INDEX_LENGTH for t, estimated as cardinality estimates: up to
// cardinalityScanLimit rows are counted, a larger table is scaled by the
// disk size of its rows over that of the part read (when the sizes are
// not known yet, as for data still in the memtable, the count read is
// given: a lower bound). The lengths are Pebble's compressed bytes on
// disk, 0 while everything is in the memtable.
func tableEstimate(ctx *gms.Context, t *Table) (rows, dataLen, indexLen uint64, ok bool) {
	tx, err := txnFrom(ctx)
	if err != nil {
		return 0, 0, 0, false
	}
	tid := t.m.def.ID
	lo := codec.RecordPrefix(tid)
	hi := codec.PrefixEnd(lo)
	store := t.db.e.store
	it := tx.txn.NewIter(lo, hi, false)
	defer it.Close()
	var last []byte
	for ; it.Valid() && rows < cardinalityScanLimit; it.Next() {
		rows++
		last = append(last[:0], it.Key()...)
	}
	if it.Err() != nil {
		return 0, 0, 0, false
	}
	dataLen, _ = store.EstimateBytes(lo, hi)
	if it.Valid() {
		part, err := store.EstimateBytes(lo, codec.PrefixEnd(last))
		if err == nil && part > 0 && dataLen >= part {
			rows = uint64(float64(rows) * float64(dataLen) / float64(part))
		}
	}
	for _, ix := range t.m.indexes {
		if ix.isHandleIndex() {
			continue
		}
		p := codec.IndexPrefix(tid, ix.def.ID)
		if n, err := store.EstimateBytes(p, codec.PrefixEnd(p)); err == nil {
			indexLen += n
		}
	}
	return rows, dataLen, indexLen, true
}
