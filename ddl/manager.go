// Package ddl owns online schema changes: the persistent job queue, the
// schema-state machine an index walks through (absent -> delete-only ->
// write-only -> write-reorganization -> public for ADD INDEX, and back on
// failure; public -> write-only -> delete-only -> absent for DROP INDEX),
// separated by waits on the metadata lock (package mdl), and the backfill that fills
// a new index from the table's rows, or converts a column's values for a
// MODIFY COLUMN (modifycolumn.go), with checkpoints that survive a crash.
//
// Invariants:
//   - Every live transaction runs with one of at most two adjacent schema
//     versions: a step is published, then waited for (mdl.Lock.Wait). A job
//     that is rolling back waits only for transactions that saw its
//     indexes (Job.FirstVersion), so a transaction older than the job
//     never holds up its cancellation.
//   - A job ends in a final state with nothing of its own left in kv when
//     it is rolled back: no index definition, entry, change log or
//     checkpoint (the data-driven runner test checks this at every point);
//     a MODIFY COLUMN's converted values stay in the rows, under a column
//     ID that no definition has any more.
//     Once an ADD INDEX is public, or a DROP INDEX has taken its first
//     step, it only goes forward.
//   - A job whose table is gone (dropped, its database dropped) ends
//     instead of waiting for it; statements that drop or empty a table
//     first end its jobs (EndTableJobs).
//   - Under an ingest build, the index's entries are those of the rows at
//     the snapshot S plus those the change-log merge and merging DML write
//     (package merge says why that is exact); the merge locks each row it
//     fixes as DML does, so the two serialize on the row.
//   - Each step of a job runs under one context (interruptible), ended by
//     the server's shutdown or, with the request as its cause, by ADMIN
//     PAUSE and by ADMIN CANCEL, KILL or a lost client while the job can
//     still be cancelled. Whatever a step was doing stops at once and
//     resumes from its last checkpoint; only the wait after a published
//     step outlasts a pause or a late cancel, since the next step may
//     not be published before it ends.
//
// Where each part of a job's life lives:
//   - manager.go, job.go: the job queue, its persisted form, and the
//     requests users make of a job (cancel, pause, resume, wait).
//   - run.go: the runner that walks an ADD INDEX through its states, its
//     schema steps and metadata-lock waits, rollback, and the test points
//     (stall, at).
//   - package tasks: the handle ranges both backfills divide a table into,
//     with their checkpoints.
//   - backfill.go (the batches: which rows, locked how, write what) and
//     package txnfill (workers, one transaction per batch with its
//     checkpoint, retries): the transactional backfill.
//   - ingest.go (the snapshot, and the job as package ingest sees it),
//     package ingest (scan, sort, spill, ingest, checkpoints), package
//     extsort (sort buffers, runs and their merge), validate.go (unique
//     validation) and memory.go: the ingest backfill.
//   - changelog.go: the change log DML writes during an ingest build, and
//     the steps around its merge; package merge: the merge itself.
//   - drop.go, addcolumn.go, dropcolumn.go, modifycolumn.go, doom.go: DROP
//     INDEX and the column changes, which reuse the states and backfills.
//   - package pace: the pacing that keeps a build from starving user
//     transactions.
//   - errors.go: the typed errors a job fails with.
//
// The package does not know SQL types or MySQL's error numbers: the layer
// above supplies an Indexer that validates index definitions and turns
// stored rows into index entries, so that DML and backfill produce
// byte-identical entries, converts a column's values (ColumnConverter) as
// DML does, and gives a failed job's error the code it records.
package ddl

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/ingest"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/mdl"
)

// Entry is one index entry of a row.
type Entry = codec.Entry

// Indexer is what the SQL layer supplies.
type Indexer interface {
	// NewIndex validates spec against t and returns the index definition
	// (its ID taken from t.NextIndexID, which it advances).
	NewIndex(t *catalog.Table, spec IndexSpec) (*catalog.Index, error)
	// Entries returns the entries of the given indexes for a stored row.
	Entries(dbName string, t *catalog.Table, indexIDs []int64, handle int64, row []byte) ([]Entry, error)
	// NewEncoder returns an EntryEncoder of the given indexes, for one
	// goroutine: the bulk form of Entries.
	NewEncoder(dbName string, t *catalog.Table, indexIDs []int64) (EntryEncoder, error)
	// Describe gives a job's error the MySQL code and message a job
	// records (see errors.go).
	Describe(err error) (code uint16, msg string)
}

// EntryEncoder turns stored rows into index entries without allocating
// per row: the bulk form of Indexer.Entries.
type EntryEncoder = ingest.Encoder

// Settings are the knobs a running job reads before every batch.
type Settings struct {
	Workers     int           // backfill workers (tidb_ddl_reorg_worker_cnt)
	Threads     int           // ingest sort and merge goroutines (innodb_ddl_threads; 0: Workers)
	CPUShare    int           // percent of the CPUs a backfill uses while users are active (100: no limit)
	StallPhase  string        // for crash tests: an ingest build stops at this phase
	BatchSize   int           // rows per backfill transaction (tidb_ddl_reorg_batch_size)
	BatchDelay  time.Duration // pause after each batch (a write-speed limit)
	FastReorg   bool          // ingest backfill (tidb_ddl_enable_fast_reorg)
	BufferBytes int64         // ingest sort buffer shared by a job's workers (innodb_ddl_buffer_size)
	DiskQuota   int64         // most temp-dir bytes one ingest job may use (tidb_ddl_disk_quota)
	// CompressIngest compresses the sstables an ingest build writes
	// (reorgdb_ddl_ingest_compression).
	CompressIngest bool
	MDLWarnAfter   time.Duration // report a transaction that holds a step up for longer
}

// Manager runs schema-change jobs.
type Manager struct {
	store    *kv.Store
	cat      *catalog.Catalog
	MDL      *mdl.Lock
	indexer  Indexer
	settings func() Settings
	log      *slog.Logger

	mu      sync.Mutex
	jobs    map[int64]*Job          // every job known in this process, latest state
	done    map[int64]chan struct{} // closed when the job finishes
	running map[int64]bool
	// interrupt ends the context of a job's running step when the job is
	// asked to pause or cancel (see interruptible).
	interrupt map[int64]context.CancelCauseFunc
	fg        pace.Foreground // whether users are active, for pacing and memory
	// snapHolds hold GC at each unfinished ingest job's snapshot.
	snapHolds map[int64]snapshotHold
	loaded    bool // Load has run
	// The ingest phase each job is in, and since when (for the log).
	phase      map[int64]string
	phaseSince map[int64]time.Time
	// hook, set by tests only, runs at named points of every job (see at).
	hook func(jobID int64, point string) error
	wake chan struct{}
	// ctx is the manager's lifetime: Close ends it, and with it every
	// running job, which resumes at the next Start.
	ctx      context.Context
	shutdown context.CancelFunc
	wg       sync.WaitGroup
	nextID   int64
	tempDir  string
}

// NewManager creates a manager; Start runs it.
// tempDir holds the ingest backfill's sstables while they are written.
func NewManager(store *kv.Store, cat *catalog.Catalog, lock *mdl.Lock, indexer Indexer, settings func() Settings, tempDir string, log *slog.Logger) *Manager {
	m := &Manager{
		store: store, cat: cat, MDL: lock, indexer: indexer, settings: settings, log: log, tempDir: tempDir,
		jobs: map[int64]*Job{}, done: map[int64]chan struct{}{}, running: map[int64]bool{}, interrupt: map[int64]context.CancelCauseFunc{},
		phase: map[int64]string{}, phaseSince: map[int64]time.Time{}, snapHolds: map[int64]snapshotHold{},
		wake: make(chan struct{}, 1),
	}
	m.ctx, m.shutdown = context.WithCancel(context.Background())
	return m
}

// SetForeground gives the manager a count of user transactions started,
// which it watches to tell whether users are active.
func (m *Manager) SetForeground(count func() int64) { m.fg.SetCount(count) }

// newPacer paces one of a job's workers goroutines to the job's CPU share
// (Settings.CPUShare) while users are active.
func (m *Manager) newPacer(workers int) *pace.Pacer {
	return pace.New(func() int { return m.settings().CPUShare }, m.fg.Active, workers)
}

// Load reads the stored jobs and holds GC at the snapshot of every
// unfinished ingest build. Called before anything else in the process
// writes, it keeps a purge from passing such a snapshot before the build
// resumes; Start calls it if nobody did.
func (m *Manager) Load() error {
	if m.loaded {
		return nil
	}
	// Files of an ingest that a crash interrupted are useless: the job
	// redoes the unfinished part of its scan.
	if err := m.removeTempDir(); err != nil {
		return err
	}
	txn := m.store.Begin()
	defer txn.Rollback()
	upper := append(append([]byte(nil), prefixJob[:len(prefixJob)-1]...), prefixJob[len(prefixJob)-1]+1)
	it := txn.NewIter(prefixJob, upper, false)
	for ; it.Valid(); it.Next() {
		var j Job
		if err := json.Unmarshal(it.Value(), &j); err != nil {
			it.Close()
			return fmt.Errorf("ddl: load job: %w", err)
		}
		if !j.State.Finished() && j.Tasks != nil {
			// Progress is checkpointed per task, more often than the job
			// record: show it from there at once.
			if err := loadCheckpoints(txn, &j); err != nil {
				it.Close()
				return err
			}
			j.ResumedRows = j.RowCount
		}
		m.jobs[j.ID] = &j
		ch := make(chan struct{})
		if j.State.Finished() {
			close(ch)
		} else {
			if j.IngestTS != 0 {
				// Before any commit can queue a purge past it.
				m.holdSnapshot(j.ID, j.IngestTS)
			}
			m.log.Info("resuming DDL job", "job", j.ID, "query", j.Query, "schema_state", j.SchemaState.String())
		}
		m.done[j.ID] = ch
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	if v, ok, err := txn.Get(keyNextJobID); err != nil {
		return err
	} else if ok {
		m.nextID = int64(binary.BigEndian.Uint64(v))
	}
	m.loaded = true
	return nil
}

// Start loads the stored jobs (see Load) and resumes the unfinished ones.
func (m *Manager) Start() error {
	if err := m.Load(); err != nil {
		return err
	}
	m.wg.Add(1)
	go m.scheduler()
	m.kick()
	return nil
}

// Close stops the scheduler and waits for running jobs to reach a
// checkpoint; they resume at the next Start.
func (m *Manager) Close() {
	m.shutdown()
	m.wg.Wait()
}

func (m *Manager) kick() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// scheduler starts every runnable job: jobs on one table run in ID order,
// jobs on different tables run at the same time.
func (m *Manager) scheduler() {
	defer m.wg.Done()
	for {
		m.mu.Lock()
		ids := make([]int64, 0, len(m.jobs))
		for id, j := range m.jobs {
			if !j.State.Finished() {
				ids = append(ids, id)
			}
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		busy := map[int64]bool{}
		for _, id := range ids {
			j := m.jobs[id]
			if busy[j.TableID] {
				continue
			}
			busy[j.TableID] = true
			if !m.running[id] {
				m.running[id] = true
				m.wg.Add(1)
				go m.run(id)
			}
		}
		m.mu.Unlock()
		select {
		case <-m.ctx.Done():
			return
		case <-m.wake:
		case <-time.After(time.Second):
		}
	}
}

// snapshot returns a copy of a job's latest state.
func (m *Manager) snapshot(id int64) (*Job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return nil, false
	}
	cp := *j
	cp.Indexes = append([]IndexSpec(nil), j.Indexes...)
	cp.Columns = append([]ColumnSpec(nil), j.Columns...)
	cp.Tasks = append([]Task(nil), j.Tasks...)
	return &cp, true
}

// update changes the in-memory job under the lock.
func (m *Manager) update(id int64, fn func(j *Job)) {
	m.mu.Lock()
	if j, ok := m.jobs[id]; ok {
		fn(j)
	}
	m.mu.Unlock()
}

// SubmitAddIndex queues an ADD INDEX job for one or more indexes of a
// table, all built from one scan and made public together.
func (m *Manager) SubmitAddIndex(dbName, tableName string, tableID int64, query string, specs []IndexSpec) (int64, error) {
	j := &Job{
		Type: JobAddIndex, DBName: dbName, TableName: tableName, TableID: tableID,
		Query: query, State: JobQueueing, SchemaState: catalog.StateAbsent, Indexes: specs,
		Mode: "txn",
	}
	if m.settings().FastReorg {
		j.Mode = "ingest"
	}
	return m.submit(j)
}

// submit stores a new job and wakes the scheduler.
func (m *Manager) submit(j *Job) (int64, error) {
	m.mu.Lock()
	m.nextID++
	id := m.nextID
	m.mu.Unlock()
	j.ID, j.Created = id, time.Now()
	txn := m.store.Begin()
	if err := putJob(txn, j); err != nil {
		txn.Rollback()
		return 0, err
	}
	if err := txn.Set(keyNextJobID, binary.BigEndian.AppendUint64(nil, uint64(id))); err != nil {
		txn.Rollback()
		return 0, err
	}
	if _, err := txn.Commit(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.jobs[id] = j
	m.done[id] = make(chan struct{})
	m.mu.Unlock()
	m.kick()
	return id, nil
}

// Wait blocks until the job finishes and returns its error. If ctx ends
// first (KILL QUERY, client gone), the job is cancelled, as MySQL does
// for a killed ALTER.
func (m *Manager) Wait(ctx context.Context, id int64) error {
	m.mu.Lock()
	ch := m.done[id]
	m.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("ddl job %d not found", id)
	}
	select {
	case <-ch:
	case <-ctx.Done():
		m.Cancel(id)
		<-ch
	}
	j, _ := m.snapshot(id)
	if j.State == JobDone {
		return nil
	}
	return &RecordedError{Code: j.ErrCode, Msg: j.Error}
}

// Cancel asks a job to stop and roll back.
func (m *Manager) Cancel(id int64) error {
	return m.request(id, func(j *Job) error {
		if err := j.cancelRefusal(); err != nil {
			return err
		}
		j.CancelRequested = true
		j.PauseRequested = false
		return nil
	})
}

// cancelRefusal says why the job cannot be cancelled in its current
// state, or nil if it can: a rollback, a drop that has begun, or a change
// whose definitions are public (in use) only go forward.
func (j *Job) cancelRefusal() error {
	if j.State == JobRollingBack {
		return fmt.Errorf("job %d is already rolling back", j.ID)
	}
	if j.dropsIndexes() {
		if j.SchemaState != catalog.StatePublic {
			return fmt.Errorf("job %d has started dropping its index and can't be cancelled", j.ID)
		}
	} else if (j.Type == JobAddIndex || j.Type == JobAddColumn || j.Type == JobModifyColumn || j.Type == JobDropColumn) && j.SchemaState == catalog.StatePublic {
		return fmt.Errorf("job %d is almost done and can't be cancelled now", j.ID)
	}
	return nil
}

// interruption is what the job's requests make of its running step:
// errCancelRequested while a cancel is requested and still possible,
// errPaused while a pause is requested, nil otherwise.
func (j *Job) interruption() error {
	switch {
	case j.CancelRequested && j.cancelRefusal() == nil:
		return errCancelRequested
	case j.PauseRequested:
		return errPaused
	}
	return nil
}

// interruptible runs fn, one step of a job, with a context that ends as
// soon as the job is asked to pause or cancel, with the request
// (errPaused, errCancelRequested) as its cause; fn's error is then that
// cause. ctx is the job's run: it ends only when the server stops.
func (m *Manager) interruptible(ctx context.Context, id int64, fn func(context.Context) error) error {
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	m.mu.Lock()
	m.interrupt[id] = cancel
	if j, ok := m.jobs[id]; ok {
		if cause := j.interruption(); cause != nil {
			cancel(cause)
		}
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.interrupt, id)
		m.mu.Unlock()
	}()
	err := fn(ictx)
	if err != nil && ictx.Err() != nil && ctx.Err() == nil {
		return context.Cause(ictx)
	}
	return err
}

// EndTableJobs cancels every unfinished job on the given tables and waits
// until each has reached a final state, with its index data, change logs,
// checkpoints and temp files gone: what DROP TABLE, TRUNCATE TABLE and
// DROP DATABASE do before they touch the table. A job too far along to be
// cancelled (its indexes already public) is waited for instead.
func (m *Manager) EndTableJobs(ctx context.Context, tableIDs ...int64) error {
	ids := m.tableJobs(tableIDs)
	for _, id := range ids {
		m.Cancel(id) // refused only when the job is finished or nearly so
	}
	return m.waitJobs(ctx, ids)
}

// WaitTableJobs waits until every job on the given tables that is not
// finished has finished, as a statement that needs the table to itself
// (RENAME TABLE) waits for an ALTER in MySQL.
func (m *Manager) WaitTableJobs(ctx context.Context, tableIDs ...int64) error {
	return m.waitJobs(ctx, m.tableJobs(tableIDs))
}

// tableJobs lists the unfinished jobs on the given tables.
func (m *Manager) tableJobs(tableIDs []int64) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []int64
	for id, j := range m.jobs {
		if slices.Contains(tableIDs, j.TableID) && !j.State.Finished() {
			ids = append(ids, id)
		}
	}
	return ids
}

func (m *Manager) waitJobs(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		m.mu.Lock()
		ch := m.done[id]
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Pause asks a running job to stop at its next checkpoint.
func (m *Manager) Pause(id int64) error {
	return m.request(id, func(j *Job) error {
		if j.State == JobRollingBack || j.CancelRequested {
			return fmt.Errorf("job %d is rolling back and can't be paused", id)
		}
		if j.dropsIndexes() {
			return fmt.Errorf("job %d drops an index and can't be paused", id)
		}
		if (j.Type == JobAddColumn || j.Type == JobModifyColumn || j.Type == JobDropColumn) && !j.isReorg() {
			return fmt.Errorf("job %d changes a column instantly and can't be paused", id)
		}
		if j.State == JobPaused || j.PauseRequested {
			return fmt.Errorf("job %d is already paused", id)
		}
		j.PauseRequested = true
		return nil
	})
}

// Resume continues a paused job.
func (m *Manager) Resume(id int64) error {
	return m.request(id, func(j *Job) error {
		if j.State != JobPaused && !j.PauseRequested {
			return fmt.Errorf("job %d is not paused", id)
		}
		j.PauseRequested = false
		return nil
	})
}

func (m *Manager) request(id int64, fn func(j *Job) error) error {
	m.mu.Lock()
	j, ok := m.jobs[id]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("DDL Job:%d not found", id)
	}
	if j.State.Finished() {
		m.mu.Unlock()
		return fmt.Errorf("job %d is already finished (%s)", id, j.State)
	}
	err := fn(j)
	cp := *j
	if cancel := m.interrupt[id]; err == nil && cancel != nil {
		if cause := j.interruption(); cause != nil {
			cancel(cause)
		}
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	// Persist the request so that it survives a restart; the job acts on
	// it in memory either way.
	_, err = m.store.RunTxn(context.Background(), func(txn *kv.Txn) error {
		stored, err := getJob(txn, id)
		if err != nil {
			return err
		}
		stored.CancelRequested, stored.PauseRequested = cp.CancelRequested, cp.PauseRequested
		return putJob(txn, stored)
	})
	if err != nil {
		m.log.Warn("persist a DDL job request", "job", id, "err", err)
	}
	return nil
}

// Jobs returns up to n jobs, unfinished ones first, then the most recent.
func (m *Manager) Jobs(n int) []*Job {
	m.mu.Lock()
	var out []*Job
	for _, j := range m.jobs {
		cp := *j
		out = append(out, &cp)
	}
	m.mu.Unlock()
	sort.Slice(out, func(a, b int) bool {
		fa, fb := out[a].State.Finished(), out[b].State.Finished()
		if fa != fb {
			return !fa
		}
		return out[a].ID > out[b].ID
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// Job returns one job.
func (m *Manager) Job(id int64) (*Job, bool) { return m.snapshot(id) }

// Checkpoints counts a job's stored task checkpoints (none once the job
// has finished).
func (m *Manager) Checkpoints(id int64) int {
	txn := m.store.Begin()
	defer txn.Rollback()
	p := taskKey(id, 0)[:len(prefixReorg)+8]
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}
