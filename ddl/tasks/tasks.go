// Package tasks divides a table into the units both backfills work in: a
// Task is a range of row handles with a checkpoint of how far a backfill
// got in it.
//
// Invariants:
//   - The tasks of a table are disjoint and together cover every handle
//     from the first row's to the last row's at planning time; rows
//     inserted later, beyond them, are written by DML itself (the index is
//     write-only by then).
//   - A task's checkpoint (Next, Done, Rows) only moves forward, and only
//     once what it covers is durable: the transactional backfill writes it
//     in the batch's own transaction, the ingest backfill after the ingest.
package tasks

import (
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// Task is a range of a table's handles a worker fills, with how far it
// got; tasks are stored with their job.
type Task struct {
	Start int64 `json:"start"` // first handle
	End   int64 `json:"end"`   // last handle, inclusive
	Next  int64 `json:"next"`  // first handle not yet backfilled
	Done  bool  `json:"done,omitempty"`
	Rows  int64 `json:"rows,omitempty"`
}

// planned is how many tasks a table is divided into: enough for every
// worker to find work and for checkpoints to be frequent, few enough to
// store with the job.
const planned = 64

// Plan divides the table's current handle range into tasks, and estimates
// its row count for the job's progress. An empty table has no tasks.
func Plan(store *kv.Store, txn *kv.Txn, tableID int64) ([]Task, int64, error) {
	lo, hi, ok, err := handleRange(txn, tableID)
	if err != nil || !ok {
		return nil, 0, err
	}
	rows, err := EstimateRows(store, txn, tableID)
	if err != nil {
		return nil, 0, err
	}
	span := uint64(hi - lo)
	n := min(uint64(planned), span+1)
	step := span/n + 1
	var out []Task
	for s := uint64(0); s <= span; s += step {
		start := lo + int64(s)
		end := lo + int64(min(s+step-1, span))
		out = append(out, Task{Start: start, End: end, Next: start})
		if s+step < s { // overflow
			break
		}
	}
	return out, rows, nil
}

// handleRange returns the first and last handles of the table's rows.
func handleRange(txn *kv.Txn, tableID int64) (lo, hi int64, ok bool, err error) {
	p := codec.RecordPrefix(tableID)
	first := txn.NewIter(p, codec.PrefixEnd(p), false)
	if !first.Valid() {
		err := first.Err()
		first.Close()
		return 0, 0, false, err
	}
	_, lo, err = codec.DecodeRecordKey(first.Key())
	first.Close()
	if err != nil {
		return 0, 0, false, err
	}
	last := txn.NewIter(p, codec.PrefixEnd(p), true)
	_, hi, err = codec.DecodeRecordKey(last.Key())
	last.Close()
	return lo, hi, err == nil, err
}

// EstimateRows estimates a table's row count: the rows themselves up to
// sampleRows, beyond that the sample scaled by the table's bytes on disk
// over the sample's.
func EstimateRows(store *kv.Store, txn *kv.Txn, tableID int64) (int64, error) {
	const sampleRows = 100_000
	p := codec.RecordPrefix(tableID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	var n, raw int64
	for ; it.Valid() && n < sampleRows; it.Next() {
		n++
		raw += int64(len(it.Key()) + len(it.Value()))
	}
	if err := it.Err(); err != nil || !it.Valid() {
		return n, err
	}
	sample, err := store.EstimateBytes(p, it.Key())
	if err != nil {
		return 0, err
	}
	all, err := store.EstimateBytes(p, codec.PrefixEnd(p))
	if err != nil {
		return 0, err
	}
	if sample == 0 {
		// The sample is still in the memtables: scale by its raw size
		// instead, which the on-disk size (compressed) may undercut.
		return n + int64(float64(all)/float64(raw)*float64(n)), nil
	}
	return int64(float64(n) * float64(all) / float64(sample)), nil
}
