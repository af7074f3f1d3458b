package ddl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reorgdb/reorgdb/ddl/ingest"
	"github.com/reorgdb/reorgdb/ddl/pace"
)

// The ingest backfill (TiDB's "fast reorg", MySQL's sort-based build).
//
// Once the job's indexes are write-only in every transaction (the metadata
// lock guarantees it), every transaction records the rows it changes in
// the indexes' change logs (see changelog.go). The backfill then only has
// to add the entries of the rows as they were at one snapshot, and it does
// so without transactions:
//
//  1. S = kv.ReserveTS(): a timestamp no commit uses, with every commit
//     below it applied. GC is held at S for the life of the job, and S is
//     stored in the job so that a resumed job scans and writes at the same S.
//  2. Workers scan the table at snapshot S, decode only the indexed
//     columns, and collect the entries; within the memory budget each
//     worker's entries are sorted, then merged into sstables whose versions
//     are stamped S, and ingested (package ingest).
//  3. The change logs are merged: every row changed after S gets its
//     entries from its current version, and the entries of its version at
//     S that it no longer has are deleted (package merge).
//  4. Unique indexes are validated.
//
// Why the result is exact: a commit below S is in the snapshot, so its
// rows get the entries DML would have given them. A row changed after S
// was changed by a transaction that logged it (step 3 fixes it from its
// current version) or, once the indexes are merging, that wrote their
// entries itself above S. Versions written after S, puts or tombstones,
// are newer than the ingested ones and stay visible; S is used by no
// commit, so an ingested version never replaces a transaction's version
// at the same timestamp, and a resumed job that ingests a range again
// writes the same versions. What the ordering cannot settle is uniqueness
// between a snapshot row and a row changed after S: step 3 writes the
// newer row's entry over the older one's, and the validation pass, at a
// timestamp after the merge, checks that every row's unique entries point
// at it; a row whose entry points elsewhere is such a duplicate, and the
// job fails with 1062.

// ingestBackfill fills the job's indexes by sorted ingestion (package
// ingest), with GC held at the job's snapshot; see above.
func (m *Manager) ingestBackfill(ctx context.Context, id int64) error {
	j, t, ids, err := m.prepareTasks(id)
	if err != nil {
		return err
	}
	defer m.holdMemory()()
	spec := ingest.Spec{
		Store: m.store, Snapshot: j.IngestTS, TableID: j.TableID, IndexIDs: ids, Tasks: j.Tasks,
		Dir:        filepath.Join(m.tempDir, fmt.Sprintf("job-%d", j.ID)),
		NewEncoder: func() (ingest.Encoder, error) { return m.indexer.NewEncoder(j.DBName, t.Clone(), ids) },
		Config:     m.ingestConfig,
	}
	for _, ix := range j.Indexes {
		spec.Filters = spec.Filters || ix.Unique || ix.Primary
	}
	defer m.borrowCache(min(ingest.Budget(m.ingestConfig()), m.store.CacheSize()/2))()
	if err := ingest.Build(ctx, spec, ingestHost{m, j}); err != nil {
		return err
	}
	m.setPhase(id, "")
	m.update(id, func(j *Job) { j.Comment = "" })
	return m.persist(id)
}

func (m *Manager) ingestConfig() ingest.Config {
	s := m.settings()
	return ingest.Config{Workers: s.Workers, Threads: s.Threads, BatchSize: s.BatchSize, BatchDelay: s.BatchDelay,
		BufferBytes: s.BufferBytes, DiskQuota: s.DiskQuota, Compress: s.CompressIngest}
}

// ingestHost is a job as its ingest run sees it.
type ingestHost struct {
	m *Manager
	j *Job
}

func (h ingestHost) At(ctx context.Context, point string) error { return h.m.stall(ctx, h.j.ID, point) }
func (h ingestHost) Phase(name string)                          { h.m.setPhase(h.j.ID, name) }
func (h ingestHost) NewPacer(workers int) *pace.Pacer           { return h.m.newPacer(workers) }
func (h ingestHost) Duplicate(key, value []byte) error          { return h.m.duplicateError(h.j, key, value) }

func (h ingestHost) Add(s ingest.Stats, peakTemp int64) {
	h.m.update(h.j.ID, func(j *Job) {
		j.RowCount += s.Rows
		j.SortedBytes += s.Sorted
		j.SpilledBytes += s.Spilled
		j.IngestedBytes += s.Ingested
		j.PeakTempBytes = max(j.PeakTempBytes, peakTemp)
	})
}

// Checkpoint stores the tasks that moved, then the job with its row count.
func (h ingestHost) Checkpoint(tasks []ingest.Task, rows int64) error {
	id := h.j.ID
	cur, _ := h.m.snapshot(id)
	txn := h.m.store.Begin()
	for i := range tasks {
		if i < len(cur.Tasks) && tasks[i] == cur.Tasks[i] {
			continue
		}
		if err := putTask(txn, id, i, tasks[i]); err != nil {
			txn.Rollback()
			return err
		}
	}
	if _, err := txn.Commit(); err != nil {
		return err
	}
	h.m.update(id, func(j *Job) { j.RowCount = rows; j.Tasks = tasks })
	return h.m.persist(id)
}

// holdIngestSnapshot gives the job its snapshot timestamp S (step 1),
// reserved on its first run and persisted, and holds GC at S until the job
// finishes: through pauses, and from the restart of a server that stopped
// it (Load). A job that finds the history at S gone starts over.
func (m *Manager) holdIngestSnapshot(id int64) error {
	for {
		j, _ := m.snapshot(id)
		if j.IngestTS == 0 {
			ts, release, err := m.store.ReserveHeldTS(fmt.Sprintf("ddl job %d", id))
			if err != nil {
				return err
			}
			m.update(id, func(j *Job) { j.IngestTS = ts })
			if err := m.persist(id); err != nil {
				release()
				return err
			}
			m.keepSnapshot(id, ts, release)
			return nil
		}
		m.holdSnapshot(id, j.IngestTS)
		probe, err := m.store.BeginAt(j.IngestTS)
		if err == nil {
			probe.Rollback()
			return nil
		}
		if err := m.restartIngest(j, err); err != nil {
			return err
		}
	}
}

// holdSnapshot holds GC at ts for job id, unless it already does.
func (m *Manager) holdSnapshot(id int64, ts uint64) {
	m.mu.Lock()
	h, ok := m.snapHolds[id]
	m.mu.Unlock()
	if ok && h.ts == ts {
		return
	}
	m.keepSnapshot(id, ts, m.store.HoldSafePoint(ts, fmt.Sprintf("ddl job %d", id)))
}

// keepSnapshot records job id's hold at ts, releasing any earlier one.
func (m *Manager) keepSnapshot(id int64, ts uint64, release func()) {
	m.mu.Lock()
	old, ok := m.snapHolds[id]
	m.snapHolds[id] = snapshotHold{ts: ts, release: release}
	m.mu.Unlock()
	if ok {
		old.release()
	}
}

// releaseSnapshot lets GC pass job id's snapshot.
func (m *Manager) releaseSnapshot(id int64) {
	m.mu.Lock()
	h, ok := m.snapHolds[id]
	delete(m.snapHolds, id)
	m.mu.Unlock()
	if ok {
		h.release()
	}
}

type snapshotHold struct {
	ts      uint64
	release func()
}

// restartIngest starts a job's ingest over at a new snapshot once history
// at its old one is gone (GC passed it after a restart, before the job
// held it again).
// The change-log merge needs the rows as they were at the snapshot of
// everything ingested, so what was ingested at the old S goes. Until the
// indexes are merging no transaction writes their key ranges, so clearing
// them loses nothing; once merging, transactions do, and the job can only
// fail.
func (m *Manager) restartIngest(j *Job, cause error) error {
	if m.merging(j) {
		return &SnapshotLostError{Job: j.ID}
	}
	m.log.Warn("DDL job restarts its ingest at a new snapshot", "job", j.ID, "err", cause)
	if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err != nil {
		return err
	}
	m.update(j.ID, func(j *Job) { j.IngestTS, j.Tasks, j.RowCount = 0, nil, 0 })
	m.cleanupTasks(j.ID)
	return m.persist(j.ID)
}

// setPhase records what the job's ingest does now, in its comment.
func (m *Manager) setPhase(id int64, phase string) {
	m.mu.Lock()
	prev, since := m.phase[id], m.phaseSince[id]
	now := time.Now()
	m.phase[id], m.phaseSince[id] = phase, now
	if phase == "" {
		delete(m.phase, id)
		delete(m.phaseSince, id)
	}
	m.mu.Unlock()
	if prev != "" {
		m.log.Info("ddl ingest phase done", "job", id, "phase", prev, "took", now.Sub(since))
	}
	if phase == "" {
		return
	}
	set := m.settings()
	m.update(id, func(j *Job) {
		j.Comment = fmt.Sprintf("mode=ingest phase=%s workers=%d buffer=%dMiB sorted=%dMiB spilled=%dMiB ingested=%dMiB",
			phase, set.Workers, set.BufferBytes>>20, j.SortedBytes>>20, j.SpilledBytes>>20, j.IngestedBytes>>20)
	})
}

// removeTempDir empties the ingest temp dir (files of a job that crashed).
// The dir itself stays: it may be a mount point of its own.
func (m *Manager) removeTempDir() error {
	if m.tempDir == "" {
		return nil
	}
	ents, err := os.ReadDir(m.tempDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(m.tempDir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
