package ddl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/internal/malloctrim"
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
	j, _ := m.snapshot(id)
	if j.IngestTS == 0 {
		ts, err := m.store.ReserveTS()
		if err != nil {
			return err
		}
		m.update(id, func(j *Job) { j.IngestTS = ts })
		if err := m.persist(id); err != nil {
			return err
		}
		j, _ = m.snapshot(id)
	}
	release := m.store.HoldSafePoint(j.IngestTS, fmt.Sprintf("ddl job %d", id))
	defer release()
	probe, err := m.store.BeginAt(j.IngestTS)
	if err != nil {
		// The server was down longer than the GC lifetime and history at
		// S is gone. The change-log merge needs the rows as they were at
		// the snapshot of everything ingested, so what was ingested at the
		// old S goes, and the ingest starts over at a new S. Until the
		// indexes are merging no transaction writes their key ranges, so
		// clearing them loses nothing; once merging, transactions do, and
		// the job can only fail.
		if m.merging(j) {
			return &Error{Code: 1105, Msg: fmt.Sprintf("the snapshot of DDL job %d was garbage-collected while the server was down; the job is rolled back, run it again", id)}
		}
		m.log.Warn("DDL job restarts its ingest at a new snapshot", "job", id, "err", err)
		if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err != nil {
			return err
		}
		m.update(id, func(j *Job) { j.IngestTS, j.Tasks, j.RowCount = 0, nil, 0 })
		m.cleanupTasks(id)
		if err := m.persist(id); err != nil {
			return err
		}
		return m.ingestBackfill(ctx, id)
	}
	probe.Rollback()

	j, t, ids, err := m.prepareTasks(id)
	if err != nil {
		return err
	}
	defer m.holdMemory()()
	dir := filepath.Join(m.tempDir, fmt.Sprintf("job-%d", id))
	defer os.RemoveAll(dir)

	set := m.settings()
	budget := set.BufferBytes
	if budget <= 0 {
		budget = 256 << 20
	}
	quota := set.DiskQuota
	if quota <= 0 {
		quota = 100 << 30
	}
	// Spilled runs and the sstables merged from them share the temp dir, so
	// runs may fill half the quota; a round never spills more than that.
	budget = min(budget, max(quota/2, 1<<16))
	defer m.borrowCache(min(budget, m.store.CacheSize()/2))()

	// tasks is what is checkpointed (ingested); prog is how far the scan
	// got, which runs ahead while entries wait in memory or in runs.
	tasks := j.Tasks
	prog := append([]Task(nil), tasks...)
	var (
		runs    []*runFile
		runSeq  int
		spilled int64
		pool    = map[int][]*sortBuf{} // each worker's buffers, kept from round to round
	)
	// Every goroutine that reads the buffers has been joined by the time
	// this returns, whatever the path out.
	defer func() {
		for _, bufs := range pool {
			for _, b := range bufs {
				b.free()
			}
		}
	}()
	dup := func(k, v []byte) error { return m.duplicateError(j, k, v) }
	// flush merges the sources (runs and/or in-memory buffers) into
	// non-overlapping sstables, one writer per key range, ingests them
	// together, and checkpoints the scan progress: every entry scanned so
	// far is in the sources.
	flush := func(mem []rangeSource) error {
		m.setPhase(id, "ingest")
		srcs := mem
		for _, r := range runs {
			srcs = append(srcs, r)
		}
		parts := m.threads()
		setReadBufs(runs, parts)
		ins := make([]*kv.Ingester, parts)
		for p := range ins {
			in, err := m.store.NewIngester(j.IngestTS, dir, 0)
			if err != nil {
				return err
			}
			ins[p] = in
		}
		err := mergeParallel(srcs, parts, m.pacedSinks(ctx, parts, func(p int) func(k, v []byte) error { return ins[p].Add }), dup)
		var written int64
		for _, in := range ins {
			written += in.Bytes
		}
		if err == nil {
			m.notePeak(id, spilled+written)
			if err = m.stall(ctx, id, "ingest"); err == nil {
				err = m.store.IngestAll(ctx, ins...)
			}
		}
		if err != nil {
			for _, in := range ins {
				in.Abort()
			}
			return err
		}
		m.update(id, func(jj *Job) { jj.IngestedBytes += written })
		if err := m.stall(ctx, id, "ingested"); err != nil {
			return err
		}
		txn := m.store.Begin()
		for i := range prog {
			if prog[i] == tasks[i] {
				continue
			}
			if err := putTask(txn, id, i, prog[i]); err != nil {
				txn.Rollback()
				return err
			}
		}
		if _, err := txn.Commit(); err != nil {
			return err
		}
		copy(tasks, prog)
		var rows int64
		for i := range tasks {
			rows += tasks[i].Rows
		}
		m.update(id, func(j *Job) { j.RowCount = rows; j.Tasks = append([]Task(nil), tasks...) })
		if err := m.persist(id); err != nil {
			return err
		}
		for _, r := range runs {
			os.Remove(r.path)
		}
		runs, spilled = nil, 0
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for {
		var round []int
		for i := range prog {
			if !prog[i].Done {
				round = append(round, i)
			}
		}
		if len(round) == 0 {
			break
		}
		cur, _ := m.snapshot(id)
		if cur.CancelRequested {
			return errCancelRequested
		}
		if cur.PauseRequested {
			return errPaused
		}
		if spilled > 0 && (spilled+budget > quota/2 || len(runs) >= maxRuns) {
			// The next spill could pass the disk quota, or the runs are
			// too many to merge at once (each is an open file per merge
			// goroutine): ingest what is sorted so far first.
			if err := flush(nil); err != nil {
				return err
			}
		}
		bufs, roundBytes, err := m.scanRound(ctx, j, t.Clone(), ids, prog, round, budget, pool)
		if err != nil {
			return err
		}
		last := true
		for i := range prog {
			last = last && prog[i].Done
		}
		if last && 2*spilled+roundBytes <= quota {
			// The last round: merge it from memory together with the runs
			// spilled before, straight into the sstables.
			if err := flush(bufs); err != nil {
				return err
			}
			continue
		}
		// Spill the round as sorted runs, one per key range, merging the
		// workers' buffers (which also finds duplicates within the round).
		m.setPhase(id, "spill")
		parts := m.threads()
		ws := make([]*runWriter, parts)
		for p := range ws {
			runSeq++
			if ws[p], err = createRun(filepath.Join(dir, fmt.Sprintf("run-%d.bin", runSeq))); err != nil {
				for _, w := range ws[:p] {
					w.close()
				}
				return err
			}
			runs = append(runs, ws[p].rf)
		}
		err = m.stall(ctx, id, "spill")
		if err == nil {
			err = mergeParallel(bufs, parts, m.pacedSinks(ctx, parts, func(p int) func(k, v []byte) error { return ws[p].add }), dup)
		}
		var written int64
		for _, w := range ws {
			if cerr := w.close(); err == nil {
				err = cerr
			}
			written += w.rf.Bytes
		}
		if err != nil {
			return err
		}
		spilled += written
		m.notePeak(id, spilled)
		m.update(id, func(jj *Job) { jj.SpilledBytes += written })
	}
	if len(runs) > 0 {
		if err := flush(nil); err != nil {
			return err
		}
	}
	m.setPhase(id, "")
	m.update(id, func(j *Job) { j.Comment = "" })
	return m.persist(id)
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
				if err := pc.pace(ctx); err != nil {
					return err
				}
			}
			return add(k, v)
		}
	}
}

// stall is a point of a job's life where tests act: the hook (see at)
// runs, and a job stops while Settings.StallPhase names the point, until
// the setting changes or the job's context ends, for crash tests to kill
// the server there. The points are the schema states ("none",
// "delete-only", ..., "public"), "backfill" (each transactional batch),
// the ingest phases ("scan", "sort", "spill", "ingest", "ingested",
// "merge") and a DROP INDEX's states ("drop-public", ...). The ingest
// phases stop only once something has been ingested, so that a resumed
// build has progress to resume from.
func (m *Manager) stall(ctx context.Context, id int64, phase string) error {
	if err := m.at(id, phase); err != nil {
		return err
	}
	if m.settings().StallPhase != phase {
		return nil
	}
	switch phase {
	case "scan", "sort", "spill", "ingest":
		if j, _ := m.snapshot(id); j.IngestedBytes == 0 {
			return nil
		}
	}
	m.update(id, func(j *Job) { j.Comment += " stalled=" + phase })
	defer m.update(id, func(j *Job) { j.Comment = strings.ReplaceAll(j.Comment, " stalled="+phase, "") })
	for m.settings().StallPhase == phase {
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// While ingest builds run and no user workload does, the garbage
// collector runs at a lower target than the server's default (the sort
// buffers are outside the Go heap, but the scan's and merge's short-lived
// garbage is not). While users are active the server's own target stays:
// the target is process-wide, so a lower one also collects the users'
// garbage more often, and that cost them more than the memory is worth
// (plan 1 kept 58-66% of its TPS during the build at 50%, against 77-85%
// at the server's 300%, for 630 instead of 520 MiB of peak RSS). The C
// heap is trimmed every second while builds run; when the last build
// ends, the memory goes back to the OS.
var memHolds struct {
	sync.Mutex
	n                int
	stopGC, stopTrim func()
}

const buildGCPercent = 50

func (m *Manager) holdMemory() (release func()) {
	memHolds.Lock()
	if memHolds.n == 0 {
		memHolds.stopGC = whileIdle(m.foregroundActive, lowerGCPercent, foregroundWindow)
		// The snapshot scan churns Pebble's block cache, whose C memory
		// glibc would keep resident in holes: trim it while builds run.
		stop := make(chan struct{})
		go malloctrim.Every(time.Second, stop)
		memHolds.stopTrim = func() { close(stop) }
	}
	memHolds.n++
	memHolds.Unlock()
	return func() {
		memHolds.Lock()
		defer memHolds.Unlock()
		if memHolds.n--; memHolds.n == 0 {
			memHolds.stopGC()
			memHolds.stopTrim()
			go func() {
				debug.FreeOSMemory()
				malloctrim.Trim()
			}()
		}
	}
}

// lowerGCPercent sets the garbage collector's target to buildGCPercent
// (unless it is lower already) and returns what restores it.
func lowerGCPercent() (restore func()) {
	old := debug.SetGCPercent(buildGCPercent)
	if old >= 0 && old < buildGCPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	// Start from the live heap, not from the garbage the old target let
	// pile up.
	runtime.GC()
	return func() { debug.SetGCPercent(old) }
}

// borrowCache lets the build's sort buffers displace n bytes of Pebble's
// block cache while no user workload is running, so that the server's
// memory grows by the budget minus n: the build's own scan reads each
// block once and gains nothing from the cache. As soon as users are
// active the cache gets its room back, since their reads do depend on it
// (plan 1 kept 44% of its TPS with the cache shrunk for the whole build,
// against 59% without).
func (m *Manager) borrowCache(n int64) (stop func()) {
	return whileIdle(m.foregroundActive, func() func() { return m.store.ChargeCache(n) }, foregroundWindow)
}

// whileIdle holds what take returns whenever active says no, gives it back
// (calls it) whenever active says yes, checking every period, until stop.
func whileIdle(active func() bool, take func() (giveBack func()), period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var giveBack func()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			switch a := active(); {
			case a && giveBack != nil:
				giveBack()
				giveBack = nil
			case !a && giveBack == nil:
				giveBack = take()
			}
			select {
			case <-done:
				if giveBack != nil {
					giveBack()
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
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
func (m *Manager) scanRound(ctx context.Context, j *Job, t *catalog.Table, ids []int64, prog []Task, round []int, budget int64, pool map[int][]*sortBuf) ([]rangeSource, int64, error) {
	set := m.settings()
	workers := max(1, set.Workers)
	m.setPhase(j.ID, "scan")
	var (
		mu      sync.Mutex
		next    int
		used    atomic.Int64
		firstEr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstEr == nil {
			firstEr = err
		}
		mu.Unlock()
	}
	var bufs []*sortBuf
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		enc, err := m.indexer.NewEncoder(j.DBName, t, ids)
		if err != nil {
			return nil, 0, err
		}
		mine := pool[w]
		if mine == nil {
			mine = make([]*sortBuf, len(ids))
			for i, iid := range ids {
				mine[i] = newSortBuf(len(codec.IndexPrefix(j.TableID, iid)))
			}
			pool[w] = mine
		}
		for _, b := range mine {
			b.reset()
		}
		bufs = append(bufs, mine...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := m.store.BeginAt(j.IngestTS)
			if err != nil {
				fail(err)
				return
			}
			defer snap.Rollback()
			pc := m.newPacer(workers)
			emit := func(ix int, k, v []byte) error {
				used.Add(mine[ix].add(k, v))
				return nil
			}
			for {
				if cur, _ := m.snapshot(j.ID); cur.CancelRequested || cur.PauseRequested {
					if cur.CancelRequested {
						fail(errCancelRequested)
					}
					fail(errPaused)
					return
				}
				mu.Lock()
				if firstEr != nil || next >= len(round) || used.Load() >= budget || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				ti := round[next]
				next++
				mu.Unlock()
				// Each task index is handed to one worker per round, so
				// prog[ti] is this worker's alone until the round ends.
				if err := m.scanTask(ctx, snap, j, enc, emit, pc, &prog[ti], &used, budget); err != nil {
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return nil, 0, firstEr
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.setPhase(j.ID, "sort")
	if err := m.stall(ctx, j.ID, "sort"); err != nil {
		return nil, 0, err
	}
	sem := make(chan struct{}, m.threads())
	var swg sync.WaitGroup
	var sorted int64
	srcs := make([]rangeSource, 0, len(bufs))
	for _, b := range bufs {
		sorted += b.bytes
		srcs = append(srcs, b)
		swg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; swg.Done() }()
			// A cancelled job's sort ends at full speed; the caller sees the
			// context's error next.
			pc := m.newPacer(m.threads())
			b.sort(func() { _ = pc.pace(ctx) })
		}()
	}
	swg.Wait()
	m.update(j.ID, func(jj *Job) { jj.SortedBytes += sorted })
	return srcs, sorted, nil
}

// scanTask encodes the entries of a task's rows at the snapshot, from
// where the task got to, until its end or until the round's memory budget
// is used; it advances the task.
func (m *Manager) scanTask(ctx context.Context, snap *kv.Txn, j *Job, enc EntryEncoder, emit func(int, []byte, []byte) error, pc *pacer, task *Task, used *atomic.Int64, budget int64) error {
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
			if err := pc.pace(ctx); err != nil {
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
				if cur, _ := m.snapshot(j.ID); cur.CancelRequested || cur.PauseRequested {
					return errPaused
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

// duplicateError names the duplicate value of a unique key found twice in
// the snapshot; val is the value of one of the two entries (its handle).
func (m *Manager) duplicateError(j *Job, key, val []byte) error {
	_, indexID, _, err := codec.DecodeIndexPrefix(key)
	name, shown := "", "?"
	for _, spec := range j.Indexes {
		if spec.ID == indexID {
			name = spec.Name
			if s, ok := m.displayOfRow(j, indexID, key, val); ok {
				shown = s
			} else if vals, _, _, derr := codec.DecodeIndexKey(key, len(spec.Columns)); derr == nil && err == nil {
				shown = displayVals(vals)
			}
		}
	}
	return errDuplicate(shown, j.TableName, name)
}

// displayOfRow renders a unique entry's values from its row, read again by
// the handle in val: a key holds a string's collation sort key, not the
// string. It reports false when the row no longer makes that entry.
func (m *Manager) displayOfRow(j *Job, indexID int64, key, val []byte) (string, bool) {
	h, err := codec.DecodeHandle(val)
	if err != nil {
		return "", false
	}
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return "", false
	}
	txn := m.store.Begin()
	defer txn.Rollback()
	rec, found, err := txn.Get(codec.RecordKey(j.TableID, h))
	if err != nil || !found {
		return "", false
	}
	ents, err := m.indexer.Entries(j.DBName, t, []int64{indexID}, h, rec)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if e.IndexID == indexID && bytes.Equal(e.Key, key) {
			return e.Display, true
		}
	}
	return "", false
}

func displayVals(vals []any) string {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('-')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case []byte:
			b.Write(x)
		case time.Time:
			b.WriteString(x.Format("2006-01-02 15:04:05.999999"))
		default:
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}

// validateUnique checks, at one timestamp after the ingest, that every
// row has its own entry in each unique index of the job: an entry that
// belongs to another row is a duplicate between a snapshot row and a row
// a transaction inserted before the snapshot's entries were visible.
//
// A first pass compares, per unique index, the number and a sum of hashes
// of the entries the rows call for with those the index holds, in two
// sequential scans: equal, there is no duplicate (two rows calling for one
// key cannot both be matched). Only otherwise does the second pass look up
// each row's entries, which reads the index in random order, to name the
// duplicate.
func (m *Manager) validateUnique(ctx context.Context, j *Job, ids []int64) error {
	var uniqueIDs []int64
	for _, spec := range j.Indexes {
		if spec.Unique {
			uniqueIDs = append(uniqueIDs, spec.ID)
		}
	}
	if len(uniqueIDs) == 0 {
		return nil
	}
	s := m.cat.Current()
	t, ok := s.TableByID(j.TableID)
	if !ok {
		return errNoTable(j)
	}
	txn := m.store.Begin()
	defer txn.Rollback()
	if same, err := m.sameEntrySums(ctx, txn, j, t, uniqueIDs); err != nil || same {
		return err
	}
	if err := m.findDuplicate(ctx, txn, j, t, ids); err != nil {
		return err
	}
	return m.findStaleEntry(ctx, txn, j, t, uniqueIDs)
}

// findDuplicate returns 1062 for the first row whose unique entry points at
// another row.
func (m *Manager) findDuplicate(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) error {
	return forEachRecord(ctx, txn, j.TableID, func(h int64, value []byte) error {
		ents, err := m.indexer.Entries(j.DBName, t, ids, h, value)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.Unique {
				continue
			}
			v, found, err := txn.Get(e.Key)
			if err != nil {
				return err
			}
			if other, derr := codec.DecodeHandle(v); !found || derr != nil || other != h {
				name := ""
				for _, spec := range j.Indexes {
					if spec.ID == e.IndexID {
						name = spec.Name
					}
				}
				return errDuplicate(e.Display, j.TableName, name)
			}
		}
		return nil
	})
}

// findStaleEntry fails the job when a unique index holds an entry that no
// row calls for: the merge must have deleted every entry of the snapshot
// that its row lost, and an index that went public with such an entry
// would answer queries with a row that does not match.
func (m *Manager) findStaleEntry(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) error {
	for _, id := range ids {
		ip := codec.IndexPrefix(j.TableID, id)
		it := txn.NewIter(ip, codec.PrefixEnd(ip), false)
		for ; it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				it.Close()
				return err
			}
			h, err := entryHandle(j, id, it.Key(), it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if ok, err := m.rowHasEntry(txn, j, t, id, h, it.Key()); err != nil || !ok {
				it.Close()
				if err == nil {
					err = &Error{Code: 1712, Msg: fmt.Sprintf("Index %s is corrupted: an entry has no matching row (handle %d)", indexName(j, id), h)}
				}
				return err
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// rowHasEntry says whether row h exists and calls for key in index id.
func (m *Manager) rowHasEntry(txn *kv.Txn, j *Job, t *catalog.Table, id, h int64, key []byte) (bool, error) {
	v, found, err := txn.Get(codec.RecordKey(j.TableID, h))
	if err != nil || !found {
		return false, err
	}
	ents, err := m.indexer.Entries(j.DBName, t, []int64{id}, h, v)
	if err != nil {
		return false, err
	}
	return hasEntry(ents, key), nil
}

// entryHandle returns the row an index entry points at: a unique entry's
// value, or, for an entry with a NULL part, the handle in its key.
func entryHandle(j *Job, id int64, key, value []byte) (int64, error) {
	if len(value) > 0 {
		return codec.DecodeHandle(value)
	}
	ncols := 0
	for _, spec := range j.Indexes {
		if spec.ID == id {
			ncols = len(spec.Columns)
		}
	}
	_, h, _, err := codec.DecodeIndexKey(key, ncols)
	return h, err
}

func indexName(j *Job, id int64) string {
	for _, spec := range j.Indexes {
		if spec.ID == id {
			return spec.Name
		}
	}
	return fmt.Sprint(id)
}

// sameEntrySums says whether the indexes ids hold exactly the entries the
// table's rows call for, at txn's snapshot (see codec.EntrySum).
func (m *Manager) sameEntrySums(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) (bool, error) {
	want := make([]codec.EntrySum, len(ids))
	enc, err := m.indexer.NewEncoder(j.DBName, t, ids)
	if err != nil {
		return false, err
	}
	emit := func(ix int, k, v []byte) error {
		want[ix].Add(k, v)
		return nil
	}
	err = forEachRecord(ctx, txn, j.TableID, func(h int64, value []byte) error { return enc.Encode(h, value, emit) })
	if err != nil {
		return false, err
	}
	for i, id := range ids {
		var got codec.EntrySum
		ip := codec.IndexPrefix(j.TableID, id)
		iit := txn.NewIter(ip, codec.PrefixEnd(ip), false)
		for ; iit.Valid(); iit.Next() {
			got.Add(iit.Key(), iit.Value())
		}
		err := iit.Err()
		iit.Close()
		if err != nil || got != want[i] {
			return false, err
		}
	}
	return true, nil
}

// forEachRecord calls fn with the handle and value of every row of a
// table at txn's snapshot, and stops early when ctx ends.
func forEachRecord(ctx context.Context, txn *kv.Txn, tableID int64, fn func(h int64, value []byte) error) error {
	p := codec.RecordPrefix(tableID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	for n := 0; it.Valid(); it.Next() {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		if err := fn(h, it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
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
