// Package merge brings an index that an ingest build filled from a
// snapshot S up to date with the rows DML changed meanwhile, which DML
// recorded in the index's change log instead of writing the index (so
// that the build's sstables do not overlap DML's entries in the memtable).
//
// The caller first publishes the merging state, in which DML writes the
// index's entries itself again and logs nothing, and waits until every
// transaction uses it; then Log brings every logged row up to date, in
// transactions of up to BatchRows rows: the entries of the row's version
// at S (what the ingest wrote) that its newest version no longer has are
// deleted (a unique entry only while it still points at this row), and
// the newest version's entries are written.
//
// Invariants (why nothing is lost or stale afterwards):
//   - A row whose last change committed before S has the right entries
//     from the ingest. A row changed after S was changed by a transaction
//     that either logged it (it ran before the merging state), and Log
//     fixes it from its newest version, or wrote its entries itself
//     (merging state), deleting the entries of the version it read.
//   - Log locks each row it fixes as DML does (txnfill.LockLatest), so a
//     transaction that changes the row meanwhile either commits first, and
//     the merge reads its version, or waits for the merge and reads the
//     merged entries. (The entry keys alone do not always collide: DML
//     leaves a unique entry alone when it points at another row, as a
//     snapshot entry of a row that has since moved on may.)
//   - A unique entry another row holds is written over all the same: if
//     that row still has the value, the caller's validation finds the
//     duplicate.
//   - Merging a row twice writes the same result, so a batch retried after
//     a conflict, or a merge resumed after a crash, is harmless.
package merge

import (
	"context"
	"errors"
	"slices"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/txnfill"
	"github.com/reorgdb/reorgdb/kv"
)

// BatchRows is the most logged rows merged in one transaction.
const BatchRows = 256

// Spec says what to merge.
type Spec struct {
	Store    *kv.Store
	Snapshot uint64 // S, the ingest's snapshot: it must not be collected
	TableID  int64
	LogID    int64 // the change log's index ID
	// Entries returns the entries in the index being merged of a row's
	// stored version.
	Entries func(h int64, row []byte) ([]codec.Entry, error)
}

// Log merges every logged row, and returns how many transactions it took.
func Log(ctx context.Context, s Spec) (batches int, err error) {
	p := codec.IndexPrefix(s.TableID, s.LogID)
	from, end := p, codec.PrefixEnd(p)
	for {
		if err := ctx.Err(); err != nil {
			return batches, err
		}
		var next []byte
		err := kv.RetryConflicts(ctx, 0, nil, func() (err error) {
			next, err = s.batch(ctx, from, end)
			return err
		})
		if err != nil || next == nil {
			return batches, err
		}
		batches++
		from = next
	}
}

// batch merges the logged rows from key from on, up to BatchRows; it
// returns where the next batch starts, or nil at the end of the log. Only
// the first row is waited for: a later one a transaction holds ends the
// batch before it.
func (s Spec) batch(ctx context.Context, from, end []byte) ([]byte, error) {
	txn := s.Store.Begin()
	defer txn.Rollback()
	snap, err := s.Store.BeginAt(s.Snapshot)
	if err != nil {
		return nil, err
	}
	defer snap.Rollback()
	logged, err := loggedRows(txn, from, end)
	if err != nil || len(logged) == 0 {
		return nil, err
	}
	next := append(logged[len(logged)-1].key, 0)
	for i, l := range logged {
		err := s.row(ctx, txn, snap, l.h, i == 0)
		if errors.Is(err, txnfill.ErrRowBusy) && i > 0 {
			next = l.key // the rows before it are done
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := txn.Commit(); err != nil {
		return nil, err
	}
	return next, nil
}

// loggedRow is a change log entry: the row with handle h changed.
type loggedRow struct {
	key []byte
	h   int64
}

// loggedRows reads up to BatchRows change log entries in [from, end).
func loggedRows(txn *kv.Txn, from, end []byte) ([]loggedRow, error) {
	var rows []loggedRow
	it := txn.NewIter(from, end, false)
	defer it.Close()
	for ; it.Valid() && len(rows) < BatchRows; it.Next() {
		_, _, rest, err := codec.DecodeIndexPrefix(it.Key())
		if err != nil {
			return nil, err
		}
		h, err := codec.DecodeHandle(rest)
		if err != nil {
			return nil, err
		}
		rows = append(rows, loggedRow{append([]byte(nil), it.Key()...), h})
	}
	return rows, it.Err()
}

// row brings row h's entries from what they were at the snapshot snap to
// what the row's newest version calls for.
func (s Spec) row(ctx context.Context, txn, snap *kv.Txn, h int64, wait bool) error {
	key := codec.RecordKey(s.TableID, h)
	old, err := s.entries(h, func() ([]byte, bool, error) { return snap.Get(key) })
	if err != nil {
		return err
	}
	cur, err := s.entries(h, func() ([]byte, bool, error) { return txnfill.LockLatest(ctx, txn, key, wait) })
	if err != nil {
		return err
	}
	for _, e := range old {
		if slices.ContainsFunc(cur, func(c codec.Entry) bool { return string(c.Key) == string(e.Key) }) {
			continue
		}
		if err := deleteOwnEntry(ctx, txn, e, h); err != nil {
			return err
		}
	}
	for _, e := range cur {
		if e.Unique {
			if _, _, err := txnfill.LockLatest(ctx, txn, e.Key, false); err != nil {
				return err
			}
		}
		if err := txn.Set(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// entries is the entries of the version of row h that read returns; none
// if the row is absent there.
func (s Spec) entries(h int64, read func() ([]byte, bool, error)) ([]codec.Entry, error) {
	v, found, err := read()
	if err != nil || !found {
		return nil, err
	}
	return s.Entries(h, v)
}

// deleteOwnEntry deletes an entry row h no longer has; a unique one only
// while it still points at h, since it may be another row's by now.
func deleteOwnEntry(ctx context.Context, txn *kv.Txn, e codec.Entry, h int64) error {
	if e.Unique {
		v, found, err := txnfill.LockLatest(ctx, txn, e.Key, false)
		if err != nil {
			return err
		}
		if other, derr := codec.DecodeHandle(v); !found || derr != nil || other != h {
			return nil
		}
	}
	return txn.Delete(e.Key)
}
