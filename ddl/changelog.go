package ddl

import (
	"context"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/merge"
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
//  2. Every logged row is brought up to date (package merge says how, and
//     why that leaves the index exact).
//  3. Unique indexes are validated, the index goes public, and the log is
//     cleared with a range deletion.
//
// testdata/merge walks the merge through its cases one step at a time.

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

// mergeChangeLog brings the entries of one index's logged rows up to date.
func (m *Manager) mergeChangeLog(ctx context.Context, j *Job, spec IndexSpec) error {
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return errNoTable(j)
	}
	batches, err := merge.Log(ctx, merge.Spec{
		Store: m.store, Snapshot: j.IngestTS, TableID: j.TableID, LogID: spec.ChangeLogID,
		Entries: func(h int64, row []byte) ([]Entry, error) {
			return m.indexer.Entries(j.DBName, t, []int64{spec.ID}, h, row)
		},
	})
	m.log.Info("ddl change log merged", "job", j.ID, "index", spec.Name, "batches", batches)
	return err
}

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
