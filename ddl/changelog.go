package ddl

import (
	"context"
	"errors"
	"fmt"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// The change log of an ingest build.
//
// If DML wrote the new index's entries while the build runs, the build's
// sstables would overlap them in the memtable and Pebble would put all of
// them in L0 and compact them again right after the build, under the
// workload. So from delete-only to the end of the ingest, DML writes no
// entry of the index: it records the handle of every row it changes in
// the index's change log, a key range of its own (an index ID taken from
// the table, catalog.Index.ChangeLogID), and leaves the index's range to
// the build. Then:
//
//  1. Merging: the index is marked so that DML writes its entries itself
//     again (and logs nothing); the step waits until every transaction
//     runs with that schema version.
//  2. Every logged row is brought up to date, in transactions: the
//     entries of its version at the snapshot S (what the ingest wrote) that
//     its current version no longer has are deleted (a unique entry only if
//     it still points at this row), and the current version's entries are
//     written.
//  3. Unique indexes are validated, the index goes public, and the log is
//     cleared with a range deletion.
//
// Why nothing is lost or stale: a row whose last change committed before
// S has the right entry from the ingest. A row changed after S was changed
// by a transaction that either logged it (it ran in a state before
// merging) and is fixed in step 2 from its current version, or wrote its
// entries itself (merging state), deleting the entry of the version it
// read. Step 2 also writes each row it fixes back unchanged (or its
// deletion), so a transaction that changes the row while step 2 rewrites
// it writes the same record key, and first-committer-wins makes one of
// them retry with the other's result. (The entry keys alone do not always
// collide: a transaction leaves a unique entry alone when it points at
// another row, as a snapshot entry of a row that has since moved on may.)
//
// testdata/merge walks the merge through these cases one step at a time.

// mergeChangeLogs runs steps 1 to 3 above up to the public state.
func (m *Manager) mergeChangeLogs(ctx context.Context, id int64) error {
	j, _ := m.snapshot(id)
	logged := false
	for _, spec := range j.Indexes {
		logged = logged || spec.ChangeLogID != 0
	}
	if logged {
		err := m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
			if t == nil {
				return errNoTable(j)
			}
			for _, spec := range j.Indexes {
				if _, ix := findIndex(t, spec.ID); ix != nil {
					ix.Merging = true
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		m.setPhase(id, "merge")
		if err := m.stall(ctx, id, "merge"); err != nil {
			return err
		}
		release := m.store.HoldSafePoint(j.IngestTS, fmt.Sprintf("ddl job %d merge", id))
		defer release()
		for _, spec := range j.Indexes {
			if spec.ChangeLogID == 0 {
				continue
			}
			if err := m.mergeChangeLog(ctx, j, spec); err != nil {
				return err
			}
		}
	}
	m.setPhase(id, "validate")
	ids := make([]int64, len(j.Indexes))
	for i, spec := range j.Indexes {
		ids[i] = spec.ID
	}
	err := m.validateUnique(ctx, j, ids)
	m.setPhase(id, "")
	m.update(id, func(j *Job) { j.Comment = "" })
	return err
}

// mergeChangeLog brings the entries of one index's logged rows up to date,
// a batch of rows per transaction.
func (m *Manager) mergeChangeLog(ctx context.Context, j *Job, spec IndexSpec) error {
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return errNoTable(j)
	}
	logPrefix := codec.IndexPrefix(j.TableID, spec.ChangeLogID)
	from, end := logPrefix, codec.PrefixEnd(logPrefix)
	batches := 0
	defer func() { m.log.Info("ddl change log merged", "job", j.ID, "index", spec.Name, "batches", batches) }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var next []byte
		err := kv.RetryConflicts(ctx, 0, nil, func() (err error) {
			next, err = m.mergeBatch(ctx, j, t, spec, from, end)
			return err
		})
		if err != nil || next == nil {
			return err
		}
		batches++
		from = next
	}
}

const mergeBatchRows = 256

// merging says whether the job's indexes are in the merging state, where
// transactions write their entries.
func (m *Manager) merging(j *Job) bool {
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return false
	}
	for _, spec := range j.Indexes {
		if _, ix := findIndex(t, spec.ID); ix != nil && ix.Build() == catalog.BuildMerging {
			return true
		}
	}
	return false
}

// mergeBatch merges the logged rows from key from on, up to a batch; it
// returns where the next batch starts, or nil at the end of the log. Each
// row and each unique entry is locked as DML locks it, without waiting (a
// row a transaction holds ends the batch before it), and merged from its
// newest version: the merge and DML serialize on the row, and neither
// fails the other's commit.
func (m *Manager) mergeBatch(ctx context.Context, j *Job, t *catalog.Table, spec IndexSpec, from, end []byte) ([]byte, error) {
	txn := m.store.Begin()
	defer txn.Rollback()
	snap, err := m.store.BeginAt(j.IngestTS)
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
		err := m.mergeRow(ctx, txn, snap, j, t, spec.ID, l.h, i == 0)
		if errors.Is(err, errRowBusy) && i > 0 {
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

// loggedRows reads up to mergeBatchRows change log entries in [from, end).
func loggedRows(txn *kv.Txn, from, end []byte) ([]loggedRow, error) {
	var rows []loggedRow
	it := txn.NewIter(from, end, false)
	defer it.Close()
	for ; it.Valid() && len(rows) < mergeBatchRows; it.Next() {
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

// mergeRow brings row h's entries in index id from what they were at the
// ingest snapshot snap to what the row's newest version calls for: the
// snapshot's entries the row no longer has are deleted, and its current
// entries are written.
func (m *Manager) mergeRow(ctx context.Context, txn, snap *kv.Txn, j *Job, t *catalog.Table, id int64, h int64, wait bool) error {
	key := codec.RecordKey(j.TableID, h)
	old, err := m.rowEntries(j, t, id, h, func() ([]byte, bool, error) { return snap.Get(key) })
	if err != nil {
		return err
	}
	cur, err := m.rowEntries(j, t, id, h, func() ([]byte, bool, error) { return lockLatest(ctx, txn, key, wait) })
	if err != nil {
		return err
	}
	for _, e := range old {
		if hasEntry(cur, e.Key) {
			continue
		}
		if err := deleteOwnEntry(ctx, txn, e, h); err != nil {
			return err
		}
	}
	for _, e := range cur {
		// A unique entry another row holds is written over all the same:
		// if that row still has the value, validation finds the duplicate.
		if e.Unique {
			if _, _, err := lockLatest(ctx, txn, e.Key, false); err != nil {
				return err
			}
		}
		if err := txn.Set(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// rowEntries is the entries in index id of the version of row h that read
// returns; none if the row is absent there.
func (m *Manager) rowEntries(j *Job, t *catalog.Table, id, h int64, read func() ([]byte, bool, error)) ([]Entry, error) {
	v, found, err := read()
	if err != nil || !found {
		return nil, err
	}
	return m.indexer.Entries(j.DBName, t, []int64{id}, h, v)
}

// deleteOwnEntry deletes an entry row h no longer has; a unique one only
// while it still points at h, since it may be another row's by now.
func deleteOwnEntry(ctx context.Context, txn *kv.Txn, e Entry, h int64) error {
	if e.Unique {
		v, found, err := lockLatest(ctx, txn, e.Key, false)
		if err != nil {
			return err
		}
		if other, derr := codec.DecodeHandle(v); !found || derr != nil || other != h {
			return nil
		}
	}
	return txn.Delete(e.Key)
}

func hasEntry(ents []Entry, key []byte) bool {
	for _, e := range ents {
		if string(e.Key) == string(key) {
			return true
		}
	}
	return false
}

// clearChangeLogs drops the job's change logs: no transaction writes
// them any more (the index is public, or absent, in every live schema
// version).
func (m *Manager) clearChangeLogs(j *Job) error {
	return m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ChangeLogID })
}

// clearIndexRanges drops, with range deletions, the key range of the
// index ID that id picks from each of the job's indexes (0: none).
func (m *Manager) clearIndexRanges(j *Job, id func(IndexSpec) int64) error {
	for _, spec := range j.Indexes {
		if id(spec) == 0 {
			continue
		}
		p := codec.IndexPrefix(j.TableID, id(spec))
		if err := m.store.ClearRange(p, codec.PrefixEnd(p)); err != nil {
			return err
		}
	}
	return nil
}
