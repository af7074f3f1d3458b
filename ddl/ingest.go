package ddl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/extsort"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
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
//     are stamped S, and ingested.
//  3. The change logs are merged: every row changed after S gets its
//     entries from its current version, and the entries of its version at
//     S that it no longer has are deleted (changelog.go).
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

// ingestBackfill fills the job's indexes by sorted ingestion; see above.
func (m *Manager) ingestBackfill(ctx context.Context, id int64) error {
	release, err := m.holdIngestSnapshot(id)
	if err != nil {
		return err
	}
	defer release()
	j, t, ids, err := m.prepareTasks(id)
	if err != nil {
		return err
	}
	defer m.holdMemory()()
	r := m.newIngestRun(ctx, j, t, ids)
	defer r.close()
	defer m.borrowCache(min(r.budget, m.store.CacheSize()/2))()
	if err := r.run(); err != nil {
		return err
	}
	m.setPhase(id, "")
	m.update(id, func(j *Job) { j.Comment = "" })
	return m.persist(id)
}

// holdIngestSnapshot gives the job its snapshot timestamp S (step 1),
// reserved on its first run and persisted, and holds GC at S until
// release is called.
func (m *Manager) holdIngestSnapshot(id int64) (release func(), err error) {
	for {
		j, _ := m.snapshot(id)
		if j.IngestTS == 0 {
			ts, err := m.store.ReserveTS()
			if err != nil {
				return nil, err
			}
			m.update(id, func(j *Job) { j.IngestTS = ts })
			if err := m.persist(id); err != nil {
				return nil, err
			}
			continue
		}
		release := m.store.HoldSafePoint(j.IngestTS, fmt.Sprintf("ddl job %d", id))
		probe, err := m.store.BeginAt(j.IngestTS)
		if err == nil {
			probe.Rollback()
			return release, nil
		}
		release()
		if err := m.restartIngest(j, err); err != nil {
			return nil, err
		}
	}
}

// restartIngest starts a job's ingest over at a new snapshot once history
// at its old one is gone: the server was down longer than the GC lifetime.
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

// ingestRun is one run of an ingest backfill (step 2): rounds of scanning
// into sort buffers, each spilled as sorted runs or, the last one, merged
// from memory together with the runs into sstables that are ingested.
type ingestRun struct {
	m     *Manager
	ctx   context.Context
	j     *Job
	t     *catalog.Table
	ids   []int64 // the indexes built
	dir   string  // the job's runs and sstables
	dup   func(k, v []byte) error
	quota int64 // disk quota of dir
	// budget is the memory a round's buffers fill; runs may take half the
	// quota, since the sstables merged from them share the directory.
	budget int64

	// tasks is what is checkpointed (ingested); prog is how far the scan
	// got, which runs ahead while entries wait in memory or in runs.
	tasks, prog []Task
	runs        []*extsort.Run // spilled and not yet ingested
	runSeq      int
	spilled     int64                     // bytes in runs
	pool        map[int][]*extsort.Buffer // each worker's buffers, kept from round to round
}

func (m *Manager) newIngestRun(ctx context.Context, j *Job, t *catalog.Table, ids []int64) *ingestRun {
	set := m.settings()
	budget := set.BufferBytes
	if budget <= 0 {
		budget = 256 << 20
	}
	quota := set.DiskQuota
	if quota <= 0 {
		quota = 100 << 30
	}
	return &ingestRun{
		m: m, ctx: ctx, j: j, t: t, ids: ids,
		dir:    filepath.Join(m.tempDir, fmt.Sprintf("job-%d", j.ID)),
		dup:    func(k, v []byte) error { return m.duplicateError(j, k, v) },
		quota:  quota,
		budget: min(budget, max(quota/2, 1<<16)),
		tasks:  j.Tasks,
		prog:   slices.Clone(j.Tasks),
		pool:   map[int][]*extsort.Buffer{},
	}
}

// close frees the sort buffers and removes the directory. Every goroutine
// that reads the buffers has been joined by then, whatever the path out.
func (r *ingestRun) close() {
	for _, bufs := range r.pool {
		for _, b := range bufs {
			b.Free()
		}
	}
	os.RemoveAll(r.dir)
}

func (r *ingestRun) run() error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	for {
		round := r.pending()
		if len(round) == 0 {
			break
		}
		if err := r.m.interrupted(r.j.ID); err != nil {
			return err
		}
		if r.spilled > 0 && (r.spilled+r.budget > r.quota/2 || len(r.runs) >= maxRuns) {
			// The next spill could pass the disk quota, or the runs are
			// too many to merge at once (each is an open file per merge
			// goroutine): ingest what is sorted so far first.
			if err := r.ingest(nil); err != nil {
				return err
			}
		}
		bufs, roundBytes, err := r.m.scanRound(r.ctx, r.j, r.t.Clone(), r.ids, r.prog, round, r.budget, r.pool)
		if err != nil {
			return err
		}
		if len(r.pending()) == 0 && 2*r.spilled+roundBytes <= r.quota {
			// The last round: merge it from memory together with the runs
			// spilled before, straight into the sstables.
			err = r.ingest(bufs)
		} else {
			err = r.spill(bufs)
		}
		if err != nil {
			return err
		}
	}
	if len(r.runs) > 0 {
		return r.ingest(nil)
	}
	return nil
}

// pending returns the tasks the scan has not finished.
func (r *ingestRun) pending() []int {
	var round []int
	for i := range r.prog {
		if !r.prog[i].Done {
			round = append(round, i)
		}
	}
	return round
}

// spill writes a round's buffers as sorted runs, one per key range;
// merging the workers' buffers also finds duplicates within the round.
func (r *ingestRun) spill(bufs []extsort.Source) error {
	m, id := r.m, r.j.ID
	m.setPhase(id, "spill")
	parts := m.threads()
	ws := make([]*extsort.RunWriter, 0, parts)
	for range parts {
		r.runSeq++
		w, err := extsort.CreateRun(filepath.Join(r.dir, fmt.Sprintf("run-%d.bin", r.runSeq)))
		if err != nil {
			for _, w := range ws {
				w.Close()
			}
			return err
		}
		ws = append(ws, w)
		r.runs = append(r.runs, w.Run())
	}
	err := m.stall(r.ctx, id, "spill")
	if err == nil {
		err = extsort.MergeParallel(bufs, parts, m.pacedSinks(r.ctx, parts, func(p int) func(k, v []byte) error { return ws[p].Add }), r.dup)
	}
	var written int64
	for _, w := range ws {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		written += w.Run().Bytes
	}
	if err != nil {
		return err
	}
	r.spilled += written
	m.notePeak(id, r.spilled)
	m.update(id, func(j *Job) { j.SpilledBytes += written })
	return nil
}

// ingest merges the runs and mem into non-overlapping sstables, one
// writer per key range, ingests them together, and checkpoints the scan's
// progress: every entry scanned so far was in them.
func (r *ingestRun) ingest(mem []extsort.Source) error {
	m, id := r.m, r.j.ID
	m.setPhase(id, "ingest")
	srcs := mem
	for _, run := range r.runs {
		srcs = append(srcs, run)
	}
	parts := m.threads()
	extsort.SetReadBufs(r.runs, parts)
	ins, err := r.ingesters(parts)
	if err != nil {
		return err
	}
	err = extsort.MergeParallel(srcs, parts, m.pacedSinks(r.ctx, parts, func(p int) func(k, v []byte) error { return ins[p].Add }), r.dup)
	var written int64
	for _, in := range ins {
		written += in.Bytes
	}
	if err == nil {
		m.notePeak(id, r.spilled+written)
		if err = m.stall(r.ctx, id, "ingest"); err == nil {
			err = m.store.IngestAll(r.ctx, ins...)
		}
	}
	if err != nil {
		for _, in := range ins {
			in.Abort()
		}
		return err
	}
	m.update(id, func(j *Job) { j.IngestedBytes += written })
	if err := m.stall(r.ctx, id, "ingested"); err != nil {
		return err
	}
	if err := r.checkpoint(); err != nil {
		return err
	}
	for _, run := range r.runs {
		os.Remove(run.Path())
	}
	r.runs, r.spilled = nil, 0
	return nil
}

// ingesters opens one sstable writer per key range, all stamped S.
func (r *ingestRun) ingesters(parts int) ([]*kv.Ingester, error) {
	ins := make([]*kv.Ingester, 0, parts)
	for range parts {
		in, err := r.m.store.NewIngester(r.j.IngestTS, r.dir, 0)
		if err != nil {
			for _, in := range ins {
				in.Abort()
			}
			return nil, err
		}
		ins = append(ins, in)
	}
	return ins, nil
}

// checkpoint stores the scan's progress as the tasks' checkpoints, once
// everything scanned is ingested: a resumed job scans on from there.
func (r *ingestRun) checkpoint() error {
	id := r.j.ID
	txn := r.m.store.Begin()
	for i := range r.prog {
		if r.prog[i] == r.tasks[i] {
			continue
		}
		if err := putTask(txn, id, i, r.prog[i]); err != nil {
			txn.Rollback()
			return err
		}
	}
	if _, err := txn.Commit(); err != nil {
		return err
	}
	copy(r.tasks, r.prog)
	var rows int64
	for i := range r.tasks {
		rows += r.tasks[i].Rows
	}
	r.m.update(id, func(j *Job) { j.RowCount = rows; j.Tasks = slices.Clone(r.tasks) })
	return r.m.persist(id)
}

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

// notePeak records the most temp-dir space the job used.
func (m *Manager) notePeak(id, bytes int64) {
	m.update(id, func(j *Job) { j.PeakTempBytes = max(j.PeakTempBytes, bytes) })
}

// pacedSinks wraps the sinks of a parallel merge so that each paces
// itself every few thousand entries.
func (m *Manager) pacedSinks(ctx context.Context, parts int, sink func(p int) func(k, v []byte) error) func(p int) func(k, v []byte) error {
	return func(p int) func(k, v []byte) error {
		add, pc, n := sink(p), m.newPacer(parts), 0
		return func(k, v []byte) error {
			if n++; n%2048 == 0 {
				if err := pc.Pace(ctx); err != nil {
					return err
				}
			}
			return add(k, v)
		}
	}
}

// maxRuns bounds the runs merged at once.
const maxRuns = 256

// threads is how many goroutines sort and merge (innodb_ddl_threads;
// 0 follows the worker count).
func (m *Manager) threads() int {
	set := m.settings()
	if set.Threads > 0 {
		return set.Threads
	}
	return max(1, set.Workers)
}

// scanRound scans the tasks of round, from where each got to, until the
// memory budget is used; it advances prog and returns the round's entries
// sorted, one buffer per worker and index, and their size.
func (m *Manager) scanRound(ctx context.Context, j *Job, t *catalog.Table, ids []int64, prog []Task, round []int, budget int64, pool map[int][]*extsort.Buffer) ([]extsort.Source, int64, error) {
	workers := max(1, m.settings().Workers)
	m.setPhase(j.ID, "scan")
	encs := make([]EntryEncoder, workers)
	for w := range encs {
		var err error
		if encs[w], err = m.indexer.NewEncoder(j.DBName, t, ids); err != nil {
			return nil, 0, err
		}
	}
	var (
		mu   sync.Mutex
		next int
		used atomic.Int64
	)
	// claim hands each task of the round to one worker, so prog[ti] is
	// that worker's alone until the round ends.
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(round) || used.Load() >= budget {
			return 0, false
		}
		next++
		return round[next-1], true
	}
	g, gctx := errgroup.WithContext(ctx)
	var bufs []*extsort.Buffer
	for w, enc := range encs {
		mine := workerBuffers(pool, w, j, ids)
		bufs = append(bufs, mine...)
		emit := func(ix int, k, v []byte) error {
			used.Add(mine[ix].Add(k, v))
			return nil
		}
		g.Go(func() error {
			snap, err := m.store.BeginAt(j.IngestTS)
			if err != nil {
				return err
			}
			defer snap.Rollback()
			pc := m.newPacer(workers)
			for gctx.Err() == nil {
				if err := m.interrupted(j.ID); err != nil {
					return err
				}
				ti, ok := claim()
				if !ok {
					return nil
				}
				if err := m.scanTask(gctx, snap, j, enc, emit, pc, &prog[ti], &used, budget); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.setPhase(j.ID, "sort")
	if err := m.stall(ctx, j.ID, "sort"); err != nil {
		return nil, 0, err
	}
	return m.sortBuffers(ctx, j, bufs), sumBytes(bufs), nil
}

// workerBuffers returns worker w's buffers, one per index, emptied for a
// new round. They are kept from round to round: the budget's memory is
// mapped once per job, not once per round.
func workerBuffers(pool map[int][]*extsort.Buffer, w int, j *Job, ids []int64) []*extsort.Buffer {
	mine := pool[w]
	if mine == nil {
		mine = make([]*extsort.Buffer, len(ids))
		for i, iid := range ids {
			mine[i] = extsort.NewBuffer(len(codec.IndexPrefix(j.TableID, iid)))
		}
		pool[w] = mine
	}
	for _, b := range mine {
		b.Reset()
	}
	return mine
}

func sumBytes(bufs []*extsort.Buffer) int64 {
	var n int64
	for _, b := range bufs {
		n += b.Bytes()
	}
	return n
}

// sortBuffers sorts the round's buffers, threads() of them at a time,
// each sort paced. A cancelled job's sorts end at full speed; the caller
// sees the context's error at its next step.
func (m *Manager) sortBuffers(ctx context.Context, j *Job, bufs []*extsort.Buffer) []extsort.Source {
	var g errgroup.Group
	g.SetLimit(m.threads())
	srcs := make([]extsort.Source, 0, len(bufs))
	for _, b := range bufs {
		srcs = append(srcs, b)
		g.Go(func() error {
			pc := m.newPacer(m.threads())
			b.Sort(func() { _ = pc.Pace(ctx) })
			return nil
		})
	}
	_ = g.Wait() // the sorts return no error
	sorted := sumBytes(bufs)
	m.update(j.ID, func(jj *Job) { jj.SortedBytes += sorted })
	return srcs
}

// scanTask encodes the entries of a task's rows at the snapshot, from
// where the task got to, until its end or until the round's memory budget
// is used; it advances the task.
func (m *Manager) scanTask(ctx context.Context, snap *kv.Txn, j *Job, enc EntryEncoder, emit func(int, []byte, []byte) error, pc *pace.Pacer, task *Task, used *atomic.Int64, budget int64) error {
	set := m.settings()
	batch := int64(max(1, set.BatchSize))
	start := codec.RecordKey(j.TableID, task.Next)
	end := codec.PrefixEnd(codec.RecordKey(j.TableID, task.End))
	it := snap.NewIter(start, end, false)
	defer it.Close()
	var n int64
	report := func() {
		if k := n % batch; k > 0 {
			m.update(j.ID, func(jj *Job) { jj.RowCount += k })
		}
	}
	for ; it.Valid(); it.Next() {
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		if err := enc.Encode(h, it.Value(), emit); err != nil {
			return err
		}
		n++
		task.Rows++
		task.Next = h + 1
		if n%batch == 0 {
			// Progress is shown per batch of rows; the pacer and the batch
			// delay throttle.
			m.update(j.ID, func(jj *Job) { jj.RowCount += batch })
			if err := pc.Pace(ctx); err != nil {
				return err
			}
			if err := m.stall(ctx, j.ID, "scan"); err != nil {
				return err
			}
			if set.BatchDelay > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(set.BatchDelay):
				}
				if err := m.interrupted(j.ID); err != nil {
					return err
				}
			}
		}
		if used.Load() >= budget {
			report()
			return nil // the round is full; the task goes on in the next one
		}
	}
	report()
	if err := it.Err(); err != nil {
		return err
	}
	task.Done = true
	task.Next = task.End
	return nil
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
