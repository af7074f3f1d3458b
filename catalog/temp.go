package catalog

import (
	"encoding/binary"
	"math"

	"github.com/reorgdb/reorgdb/codec"
)

// TempIDBase is the first table ID of temporary tables (CREATE TEMPORARY
// TABLE). Their definitions live only in the memory of the session that
// made them and are never stored here, but their rows, index entries and
// counters are ordinary kv keys, so that they behave like any table's.
// Keeping their IDs in a range of their own lets a restart remove whatever
// a crash left of them with two range deletions.
const TempIDBase int64 = 1 << 62

// NewTempID returns a table ID for a temporary table that no table, live
// or left over, has.
func (c *Catalog) NewTempID() int64 { return c.tempID.Add(1) }

// DropTempKeys removes every key of a temporary table that is gone: rows,
// index entries and counters. No statement can reach them any more (only
// its session knew the table), which is what kv.Store.ClearRange needs.
// An empty range is left alone: a range deletion costs reads until it is
// compacted away, and most temporary tables hold no counter.
func (c *Catalog) DropTempKeys(id int64) error {
	c.autoMu.Lock()
	delete(c.autoID, autoKey{id, AutoIncrement})
	delete(c.autoID, autoKey{id, RowHandle})
	c.autoMu.Unlock()
	p, a := codec.TablePrefix(id), idKey(prefixAutoI, id)
	if err := c.clearRange(p, codec.PrefixEnd(p)); err != nil {
		return err
	}
	return c.clearRange(a, codec.PrefixEnd(a))
}

// clearRange deletes [lo, hi) with a range deletion if it has any key.
func (c *Catalog) clearRange(lo, hi []byte) error {
	txn := c.store.Begin()
	it := txn.NewIter(lo, hi, false)
	empty, err := !it.Valid(), it.Err()
	it.Close()
	txn.Rollback()
	if err != nil || empty {
		return err
	}
	return c.store.ClearRange(lo, hi)
}

// tempRanges are the key ranges of all temporary tables: their data and
// their counters.
func tempRanges() [][2][]byte {
	return [][2][]byte{
		{codec.TablePrefix(TempIDBase), codec.PrefixEnd(codec.TablePrefix(math.MaxInt64))},
		{idKey(prefixAutoI, TempIDBase), codec.PrefixEnd(idKey(prefixAutoI, math.MaxInt64))},
	}
}

// ClearTemporary removes what temporary tables of an earlier run left (the
// server stopped or crashed with sessions open). Whether or not that
// succeeds (a full disk refuses it), temporary IDs handed out afterwards
// are above any left over, so that no new table sees old rows.
func (c *Catalog) ClearTemporary() error {
	var clearErr error
	for _, r := range tempRanges() {
		if err := c.clearRange(r[0], r[1]); err != nil && clearErr == nil {
			clearErr = err
		}
	}
	last, err := c.lastTempID()
	if err != nil {
		return err
	}
	c.tempID.Store(max(TempIDBase, last))
	return clearErr
}

// lastTempID is the highest temporary table ID that still has keys.
func (c *Catalog) lastTempID() (int64, error) {
	txn := c.store.Begin()
	defer txn.Rollback()
	var last int64
	for i, r := range tempRanges() {
		it := txn.NewIter(r[0], r[1], true)
		if it.Valid() {
			k := it.Key()
			var id int64
			if i == 0 {
				id, _ = codec.DecodeHandle(k[1:9])
			} else {
				id = int64(binary.BigEndian.Uint64(k[len(prefixAutoI):]))
			}
			last = max(last, id)
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return 0, err
		}
	}
	return last, nil
}
