package ddl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/mdl"
)

// run drives one job to a final state, or until the manager stops (then
// the job resumes at the next Start from what was persisted).
func (m *Manager) run(id int64) {
	defer m.wg.Done()
	defer func() {
		m.mu.Lock()
		delete(m.running, id)
		m.mu.Unlock()
		m.kick()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	run := m.runAddIndex
	switch j, _ := m.snapshot(id); j.Type {
	case JobDropIndex:
		run = m.runDropIndex
	case JobAddColumn, JobModifyColumn, JobDropColumn:
		run = m.runAddColumn
		if j.dropsIndexes() {
			run = m.runDropIndex
		} else if j.isReorg() {
			run = m.runModifyColumn
		}
	}
	err := run(ctx, id)
	if err == nil || errors.Is(err, context.Canceled) && ctx.Err() != nil || errors.Is(err, errKilled) {
		return
	}
	m.log.Error("DDL job stopped", "job", id, "err", err)
}

// step publishes one schema change together with the job's new state,
// then waits on the metadata lock until every transaction sees it.
func (m *Manager) step(ctx context.Context, id int64, fn func(ch *catalog.Change, t *catalog.Table, j *Job) error) error {
	start := time.Now()
	defer func() { m.log.Debug("ddl step", "job", id, "took", time.Since(start)) }()
	j, _ := m.snapshot(id)
	var out *Job
	s, err := m.cat.Update(func(ch *catalog.Change, txn *kv.Txn) error {
		cur, err := getJob(txn, id)
		if err != nil {
			return err
		}
		// Requests (cancel, pause) may have been stored since we loaded.
		j.CancelRequested = cur.CancelRequested || j.CancelRequested
		t, ok := ch.Schema().TableByID(j.TableID)
		var nt *catalog.Table
		if ok {
			nt = t.Clone()
		}
		if err := fn(ch, nt, j); err != nil {
			return err
		}
		if nt != nil {
			ch.PutTable(nt)
		}
		out = j
		return putJob(txn, j)
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	if cur, ok := m.jobs[id]; ok {
		out.CancelRequested = out.CancelRequested || cur.CancelRequested
		out.PauseRequested = cur.PauseRequested
		out.RowCount = max(out.RowCount, cur.RowCount)
		*cur = *out
	}
	m.mu.Unlock()
	return m.waitMDL(ctx, id, s.Version)
}

// waitMDL waits until every transaction runs with schema version v or
// later, showing in the job's comment which connection it waits for. A
// cancel request ends the wait (errCancelRequested). While the job rolls
// back, transactions that began before the job's first step are not
// waited for: they never saw its indexes.
func (m *Manager) waitMDL(ctx context.Context, id int64, v int64) error {
	warn := m.settings().MDLWarnAfter
	if warn <= 0 {
		warn = 10 * time.Second
	}
	j, _ := m.snapshot(id)
	var lo int64
	if j.State == JobRollingBack {
		lo = j.FirstVersion
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	m.mu.Lock()
	m.stopWait[id] = stop
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.stopWait, id)
		m.mu.Unlock()
	}()
	cancellable := j.State != JobRollingBack && j.SchemaState != catalog.StatePublic
	if j.CancelRequested && cancellable {
		return errCancelRequested
	}
	start := time.Now()
	var logged time.Time
	err := m.MDL.WaitRange(wctx, lo, v, nil, time.Second, func(l *mdl.Lease) {
		msg := fmt.Sprintf("waiting for a transaction started %s ago on schema version %d (%s)",
			time.Since(l.Started).Round(time.Second), l.Version, l.Owner)
		m.update(id, func(j *Job) { j.Comment = msg })
		if time.Since(start) > warn && time.Since(logged) > warn {
			logged = time.Now()
			m.log.Warn("DDL job waits on the metadata lock", "job", id, "txn", l.Owner, "age", time.Since(l.Started).String())
		}
	})
	m.update(id, func(j *Job) {
		if strings.HasPrefix(j.Comment, "waiting for a transaction") {
			j.Comment = ""
		}
	})
	if err != nil && ctx.Err() == nil {
		if !cancellable {
			return m.waitMDL(ctx, id, v) // a late cancel request changes nothing
		}
		return errCancelRequested
	}
	return err
}

func (m *Manager) finish(id int64) {
	m.mu.Lock()
	if ch, ok := m.done[id]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	m.mu.Unlock()
}

func findIndex(t *catalog.Table, id int64) (int, *catalog.Index) {
	if t == nil {
		return -1, nil
	}
	for i, ix := range t.Indexes {
		if ix.ID == id {
			return i, ix
		}
	}
	return -1, nil
}

// holdPaused keeps a job whose pause was requested paused, and marks a
// queued or resumed one running.
func (m *Manager) holdPaused(ctx context.Context, j *Job) (bool, error) {
	if j.PauseRequested {
		if j.State != JobPaused {
			m.update(j.ID, func(j *Job) { j.State = JobPaused })
			m.persistOrLog(j.ID)
		}
		return true, sleepCtx(ctx, 20*time.Millisecond)
	}
	if j.State == JobPaused || j.State == JobQueueing {
		m.update(j.ID, func(j *Job) {
			j.State = JobRunning
			if j.Start.IsZero() {
				j.Start = time.Now()
			}
		})
	}
	return false, nil
}

func (m *Manager) runAddIndex(ctx context.Context, id int64) error {
	for {
		j, _ := m.snapshot(id)
		if j.State.Finished() {
			m.finish(id)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Once public, the indexes are in use: too late to cancel.
		if j.CancelRequested && j.State != JobRollingBack && j.SchemaState != catalog.StatePublic {
			if err := m.startRollback(ctx, id, ErrCancelled); err != nil {
				return err
			}
			continue
		}
		if j.State == JobRollingBack {
			return m.rollback(ctx, id)
		}
		if paused, err := m.holdPaused(ctx, j); paused || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		err := m.stall(ctx, id, stateName(j.SchemaState))
		switch {
		case err != nil:
		case j.SchemaState == catalog.StateAbsent:
			err = m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
				if t == nil {
					return errNoTable(j)
				}
				seen := map[string]bool{}
				for i := range j.Indexes {
					name := strings.ToLower(j.Indexes[i].Name)
					if seen[name] {
						return &Error{Code: 1061, Msg: fmt.Sprintf("Duplicate key name '%s'", j.Indexes[i].Name)}
					}
					seen[name] = true
					ix, err := m.indexer.NewIndex(t, j.Indexes[i])
					if err != nil {
						return err
					}
					ix.State = catalog.StateDeleteOnly
					t.Indexes = append(t.Indexes, ix)
					j.Indexes[i].ID = ix.ID
				}
				if j.Mode == "ingest" {
					// The logs' IDs come after all the new indexes', so that
					// the logs' key ranges, which DML writes during the
					// build, lie outside the span of the ingested sstables.
					for i := range j.Indexes {
						_, ix := findIndex(t, j.Indexes[i].ID)
						ix.ChangeLogID = t.NextIndexID
						t.NextIndexID++
						j.Indexes[i].ChangeLogID = ix.ChangeLogID
					}
				}
				j.SchemaState = catalog.StateDeleteOnly
				j.FirstVersion = ch.Schema().Version + 1 // the version this change publishes
				j.State = JobRunning
				if j.Start.IsZero() {
					j.Start = time.Now()
				}
				return nil
			})
			if err != nil && !isRetryable(err) && !errors.Is(err, errCancelRequested) && ctx.Err() == nil {
				// Nothing was written: the job fails as it stands.
				m.fail(id, err)
				continue
			}
		case j.SchemaState == catalog.StateDeleteOnly:
			err = m.setIndexState(ctx, id, catalog.StateWriteOnly)
		case j.SchemaState == catalog.StateWriteOnly:
			err = m.setIndexState(ctx, id, catalog.StateWriteReorg)
		case j.SchemaState == catalog.StateWriteReorg:
			if j.Mode == "ingest" {
				err = m.ingestBackfill(ctx, id)
				if err == nil {
					err = m.mergeChangeLogs(ctx, id)
				}
			} else {
				err = m.backfill(ctx, id)
			}
			if err == nil {
				err = m.setIndexState(ctx, id, catalog.StatePublic)
			}
		case j.SchemaState == catalog.StatePublic:
			if err = m.clearChangeLogs(j); err != nil {
				break
			}
			m.update(id, func(j *Job) { j.State = JobDone; j.End = time.Now(); j.Comment = "" })
			if err = m.persist(id); err == nil {
				m.cleanupTasks(id)
				m.finish(id)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, errKilled) {
				return err
			}
			if errors.Is(err, errPaused) {
				continue
			}
			if errors.Is(err, errCancelRequested) {
				continue
			}
			if cur, _ := m.snapshot(id); isRetryable(err) || cur.SchemaState == catalog.StatePublic {
				// Public indexes are in use: too late to roll back, so
				// what is left (clearing the change logs) is retried.
				if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
					return err
				}
				continue
			}
			if err := m.startRollback(ctx, id, err); err != nil {
				return err
			}
		}
	}
}

var (
	errPaused          = errors.New("ddl: job paused")
	errCancelRequested = errors.New("ddl: cancel requested")
	// errKilled stops a job where it stands, persisting nothing more, as
	// a crash would: tests inject it through Manager.hook.
	errKilled = errors.New("ddl: job killed")
)

// at calls the test hook, if any, at a named point of a job's life: its
// schema states, the ingest phases, and each transactional batch.
func (m *Manager) at(id int64, point string) error {
	if m.hook == nil {
		return nil
	}
	return m.hook(id, point)
}

func isRetryable(err error) bool { return errors.Is(err, kv.ErrWriteConflict) }

// setIndexState moves every index of the job to st.
func (m *Manager) setIndexState(ctx context.Context, id int64, st catalog.IndexState) error {
	return m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
		if t == nil {
			return errNoTable(j)
		}
		return setIndexStates(t, j, st)
	})
}

// setIndexStates moves every index of job j in t, and the job, to st.
func setIndexStates(t *catalog.Table, j *Job, st catalog.IndexState) error {
	for _, spec := range j.Indexes {
		if spec.ID == 0 {
			continue // an index a DROP COLUMN job drops, not replaces
		}
		_, ix := findIndex(t, spec.ID)
		if ix == nil {
			return fmt.Errorf("index %s vanished from table %s", spec.Name, j.TableName)
		}
		ix.State = st
		if st == catalog.StatePublic {
			ix.ChangeLogID, ix.Merging = 0, false
		}
	}
	syncPrimaryKey(t)
	j.SchemaState = st
	return nil
}

// syncPrimaryKey keeps the table's primary-key columns in step with a
// non-clustered primary key that a job adds or drops: the table has that
// primary key exactly while its index is public, and its columns are
// NOT NULL from then on, as MySQL makes them.
func syncPrimaryKey(t *catalog.Table) {
	if t.HandleColumn != 0 {
		return
	}
	t.PKColumns = nil
	for _, ix := range t.Indexes {
		if !ix.Primary || ix.State != catalog.StatePublic {
			continue
		}
		for _, c := range ix.Columns {
			t.PKColumns = append(t.PKColumns, c.ColumnID)
			if _, p := t.ColumnByID(c.ColumnID); p >= 0 {
				t.Columns[p].Nullable = false
			}
		}
	}
}

// persist writes the in-memory job (with progress) to kv.
func (m *Manager) persist(id int64) error {
	_, err := m.store.RunTxn(context.Background(), func(txn *kv.Txn) error {
		j, _ := m.snapshot(id)
		return putJob(txn, j)
	})
	return err
}

// persistOrLog persists a job's state where the caller cannot act on a
// failure (a later persist writes the state again, and a restart resumes
// from the last one written); the failure is logged.
func (m *Manager) persistOrLog(id int64) {
	if err := m.persist(id); err != nil {
		m.log.Warn("persist DDL job", "job", id, "err", err)
	}
}

// fail ends a job that changed nothing.
func (m *Manager) fail(id int64, cause error) {
	m.update(id, func(j *Job) {
		j.State, j.End = JobRolledBack, time.Now()
		j.Error, j.ErrCode = errText(cause)
	})
	m.persistOrLog(id)
	m.finish(id)
}

func errText(err error) (string, uint16) {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg, e.Code
	}
	var full *kv.DiskFullError
	if errors.As(err, &full) {
		return fmt.Sprintf("Disk full (%s); waiting for someone to free some space... (errno: 28 - No space left on device)", full.Path), 1021
	}
	// The sort runs and sstables of an ingest build go to the temp dir.
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Sprintf("Temporary file write failure (%v)", err), 1878
	}
	type coded interface{ SQLCode() uint16 }
	if c, ok := err.(coded); ok {
		return err.Error(), c.SQLCode()
	}
	return err.Error(), 1105
}

func (m *Manager) startRollback(ctx context.Context, id int64, cause error) error {
	msg, code := errText(cause)
	m.update(id, func(j *Job) {
		j.State = JobRollingBack
		j.Error, j.ErrCode = msg, code
		j.Comment = ""
	})
	return m.persist(id)
}

// rollback walks the job's indexes back to absent, one metadata-lock step
// at a time, then deletes every entry they got.
func (m *Manager) rollback(ctx context.Context, id int64) error {
	j, _ := m.snapshot(id)
	// A dropped table takes its indexes with it: straight to absent.
	if _, ok := m.cat.Current().TableByID(j.TableID); ok && j.SchemaState > catalog.StateDeleteOnly {
		if err := m.setIndexState(ctx, id, catalog.StateDeleteOnly); err != nil {
			return err
		}
	}
	j, _ = m.snapshot(id)
	if j.SchemaState != catalog.StateAbsent {
		err := m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
			for _, spec := range j.Indexes {
				if i, _ := findIndex(t, spec.ID); i >= 0 {
					t.Indexes = append(t.Indexes[:i], t.Indexes[i+1:]...)
				}
			}
			j.SchemaState = catalog.StateAbsent
			return nil
		})
		if err != nil {
			return err
		}
	}
	j, _ = m.snapshot(id)
	// The indexes are absent in every live schema version (the step
	// waited out older ones) and their IDs are never reused: drop their
	// entries at once, outside MVCC.
	if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err != nil {
		return err
	}
	if err := m.clearChangeLogs(j); err != nil {
		return err
	}
	m.update(id, func(j *Job) {
		j.State, j.End = JobRolledBack, time.Now()
		if j.Error == ErrCancelled.Msg {
			j.State = JobCancelled
		}
	})
	if err := m.persist(id); err != nil {
		return err
	}
	m.cleanupTasks(id)
	m.finish(id)
	return nil
}

func (m *Manager) cleanupTasks(id int64) {
	p := taskKey(id, 0)[:len(prefixReorg)+8]
	if err := deleteRange(m.store, p, codec.PrefixEnd(p)); err != nil {
		m.log.Warn("remove DDL checkpoints", "job", id, "err", err)
	}
}

// deleteRange deletes all keys in [lo, hi) in batches of transactions.
// Each batch starts after the last key of the previous one, so that no
// batch walks over the tombstones the earlier ones left.
func deleteRange(store *kv.Store, lo, hi []byte) error {
	lo = append([]byte(nil), lo...)
	for {
		var last []byte
		// A conflict means someone wrote in the range meanwhile: the batch
		// is redone from the same key.
		_, err := store.RunTxn(context.Background(), func(txn *kv.Txn) error {
			last = nil
			it := txn.NewIter(lo, hi, false)
			defer it.Close()
			for n := 0; it.Valid() && n < 4096; n++ {
				last = append(last[:0], it.Key()...)
				if err := txn.Delete(it.Key()); err != nil {
					return err
				}
				it.Next()
			}
			return it.Err()
		})
		if err != nil || last == nil {
			return err
		}
		lo = append(last, 0) // the next possible key
	}
}

// DeleteRange removes every key in [lo, hi) (dropped tables and indexes).
func DeleteRange(store *kv.Store, lo, hi []byte) error { return deleteRange(store, lo, hi) }

// planTasks splits the table's current handle range into tasks.
func (m *Manager) planTasks(j *Job) ([]Task, int64, error) {
	txn := m.store.Begin()
	defer txn.Rollback()
	p := codec.RecordPrefix(j.TableID)
	first := txn.NewIter(p, codec.PrefixEnd(p), false)
	if !first.Valid() {
		err := first.Err()
		first.Close()
		return nil, 0, err
	}
	_, lo, err := codec.DecodeRecordKey(first.Key())
	first.Close()
	if err != nil {
		return nil, 0, err
	}
	last := txn.NewIter(p, codec.PrefixEnd(p), true)
	_, hi, err := codec.DecodeRecordKey(last.Key())
	last.Close()
	if err != nil {
		return nil, 0, err
	}
	span := uint64(hi - lo)
	rows, err := m.estimateRows(txn, j.TableID)
	if err != nil {
		return nil, 0, err
	}
	n := uint64(64)
	if span+1 < n {
		n = span + 1
	}
	step := span/n + 1
	var tasks []Task
	for s := uint64(0); s <= span; s += step {
		start := lo + int64(s)
		end := lo + int64(min(s+step-1, span))
		tasks = append(tasks, Task{Start: start, End: end, Next: start})
		if s+step < s { // overflow
			break
		}
	}
	return tasks, rows, nil
}

// estimateRows estimates a table's row count for the job's progress: the
// rows themselves up to sampleRows, beyond that the sample scaled by the
// table's bytes on disk over the sample's.
func (m *Manager) estimateRows(txn *kv.Txn, tableID int64) (int64, error) {
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
	sample, err := m.store.EstimateBytes(p, it.Key())
	if err != nil {
		return 0, err
	}
	all, err := m.store.EstimateBytes(p, codec.PrefixEnd(p))
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

// prepareTasks splits the table into tasks the first time, and brings a
// resumed job's tasks up to their checkpoints. It also returns the table's
// definition and the IDs of the indexes to fill.
func (m *Manager) prepareTasks(id int64) (*Job, *catalog.Table, []int64, error) {
	j, _ := m.snapshot(id)
	if j.Tasks == nil {
		tasks, total, err := m.planTasks(j)
		if err != nil {
			return nil, nil, nil, err
		}
		if tasks == nil {
			tasks = []Task{}
		}
		m.update(id, func(j *Job) { j.Tasks, j.TotalRows = tasks, total })
		if err := m.persist(id); err != nil {
			return nil, nil, nil, err
		}
		j, _ = m.snapshot(id)
	}
	txn := m.store.Begin()
	err := loadCheckpoints(txn, j)
	txn.Rollback()
	if err != nil {
		return nil, nil, nil, err
	}
	m.update(id, func(jj *Job) { jj.Tasks, jj.RowCount = j.Tasks, j.RowCount })
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return nil, nil, nil, errNoTable(j)
	}
	ids := make([]int64, len(j.Indexes))
	for i, spec := range j.Indexes {
		ids[i] = spec.ID
	}
	return j, t, ids, nil
}

// errNoTable is a job's failure once its table is gone (dropped, or its
// database dropped, while the job was queued or running).
func errNoTable(j *Job) error {
	return &Error{Code: 1146, Msg: fmt.Sprintf("Table '%s.%s' doesn't exist", j.DBName, j.TableName)}
}

// backfill fills the job's indexes from every row that existed when the
// indexes became write-only everywhere; rows written later are indexed by
// DML itself. Workers take tasks; each batch is one transaction that
// writes the entries and the task's checkpoint, and is retried on a write
// conflict with a user transaction.
func (m *Manager) backfill(ctx context.Context, id int64) error {
	j, t, ids, err := m.prepareTasks(id)
	if err != nil {
		return err
	}

	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		next     int // next task to hand out
		firstErr error
		active   int32
		retries  atomic.Int64
	)
	tasks := j.Tasks
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		for next < len(tasks) && tasks[next].Done {
			next++
		}
		if next >= len(tasks) || firstErr != nil {
			return -1
		}
		next++
		return next - 1
	}
	setErr := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	stopOne := make(chan struct{}, 256)
	startWorker := func() {
		wg.Add(1)
		atomic.AddInt32(&active, 1)
		go func() {
			defer wg.Done()
			defer atomic.AddInt32(&active, -1)
			for {
				select {
				case <-stopOne:
					return
				default:
				}
				ti := take()
				if ti < 0 {
					return
				}
				if err := m.runTask(bctx, j, t, ids, ti, &tasks[ti], &retries); err != nil {
					if !errors.Is(err, context.Canceled) {
						setErr(err)
					}
					return
				}
			}
		}()
	}
	waitAll := func() chan struct{} {
		ch := make(chan struct{})
		go func() { wg.Wait(); close(ch) }()
		return ch
	}
	set := m.settings()
	for i := 0; i < max(1, set.Workers); i++ {
		startWorker()
	}
	done := waitAll()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPersist := time.Now()
	for {
		select {
		case <-done:
			mu.Lock()
			err := firstErr
			mu.Unlock()
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cur, _ := m.snapshot(id)
			if cur.CancelRequested {
				return errCancelRequested
			}
			if cur.PauseRequested {
				return errPaused
			}
			allDone := true
			for i := range tasks {
				allDone = allDone && tasks[i].Done
			}
			if allDone {
				m.update(id, func(j *Job) { j.Tasks = append([]Task(nil), tasks...); j.Comment = "" })
				return m.persist(id)
			}
			// Every worker was scaled away while tasks remain.
			mu.Lock()
			next = 0
			mu.Unlock()
			startWorker()
			done = waitAll()
		case <-tick.C:
			cur, _ := m.snapshot(id)
			if cur.CancelRequested || cur.PauseRequested {
				cancel()
				continue
			}
			if cur.isReorg() {
				if err := m.firstDoom(cur); err != nil {
					setErr(err)
					continue
				}
			}
			set = m.settings()
			want := max(1, set.Workers)
			n := int(atomic.LoadInt32(&active))
			if n < want {
				for k := n; k < want; k++ {
					startWorker()
				}
			} else if pending := len(stopOne); n-pending > want {
				for k := want; k < n-pending; k++ {
					select {
					case stopOne <- struct{}{}:
					default:
					}
				}
			}
			comment := fmt.Sprintf("mode=txn workers=%d batch_size=%d conflicts_retried=%d", want, set.BatchSize, retries.Load())
			m.update(id, func(j *Job) { j.Comment = comment })
			if time.Since(lastPersist) > 2*time.Second {
				lastPersist = time.Now()
				m.persistOrLog(id)
			}
		}
	}
}

// runTask backfills one task batch by batch.
func (m *Manager) runTask(ctx context.Context, j *Job, t *catalog.Table, ids []int64, ti int, task *Task, retries *atomic.Int64) error {
	pc := m.newPacer(m.settings().Workers)
	batchFn := m.backfillBatch
	if j.isReorg() {
		batchFn = m.convertBatch
	}
	retried := func(backoff time.Duration) { retries.Add(1); pc.exclude(backoff) }
	for !task.Done {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.stall(ctx, j.ID, "backfill"); err != nil {
			return err
		}
		batch := max(1, m.settings().BatchSize)
		var n int64
		var nextTask Task
		if err := kv.RetryConflicts(ctx, 0, retried, func() (err error) {
			n, nextTask, err = batchFn(ctx, j, t, ids, ti, *task, batch, pc)
			return err
		}); err != nil {
			return err
		}
		*task = nextTask
		m.update(j.ID, func(jj *Job) { jj.RowCount += n })
		if err := pc.pace(ctx); err != nil {
			return err
		}
		if d := m.settings().BatchDelay; d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
	}
	return nil
}

// backfillBatch indexes up to batch rows of a task in one transaction,
// together with the task's new checkpoint. Each row is locked as DML
// locks it, without waiting (a row a transaction holds ends the batch
// before it), and indexed from its newest version: so the batch and DML
// serialize on the row, and neither fails the other's commit.
func (m *Manager) backfillBatch(ctx context.Context, j *Job, t *catalog.Table, ids []int64, ti int, task Task, batch int, pc *pacer) (int64, Task, error) {
	txn := m.store.Begin()
	defer txn.Rollback()
	it := txn.NewIter(codec.RecordKey(j.TableID, task.Next), codec.PrefixEnd(codec.RecordKey(j.TableID, task.End)), false)
	var n int64
	last := task.Next - 1
	for ; it.Valid() && n < int64(batch); it.Next() {
		h, ents, err := m.lockedRowEntries(ctx, txn, j, t, ids, it.Key(), n == 0)
		if errors.Is(err, errRowBusy) && last >= task.Next {
			break // the rows before it are done
		}
		if err == nil {
			err = putEntries(ctx, txn, j, h, ents)
		}
		if err != nil {
			it.Close()
			return 0, task, err
		}
		last = h
		n++
	}
	more := it.Valid()
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, task, err
	}
	task.Rows += n
	if !more {
		task.Done = true
		task.Next = task.End
	} else {
		task.Next = last + 1
	}
	if err := putTask(txn, j.ID, ti, task); err != nil {
		return 0, task, err
	}
	// The commit mostly waits for the log to be synced: not CPU the
	// pacer should account for.
	commitStart := time.Now()
	_, cerr := txn.Commit()
	if pc != nil {
		pc.exclude(time.Since(commitStart))
	}
	if cerr != nil {
		return 0, task, cerr
	}
	return n, task, nil
}

// lockedRowEntries locks the row at key without waiting and returns its
// handle and the entries its newest version has in the indexes ids (none
// when it is gone).
func (m *Manager) lockedRowEntries(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64, key []byte, wait bool) (int64, []Entry, error) {
	_, h, err := codec.DecodeRecordKey(key)
	if err != nil {
		return 0, nil, err
	}
	v, found, err := lockLatest(ctx, txn, key, wait)
	if err != nil || !found {
		return h, nil, err
	}
	ents, err := m.indexer.Entries(j.DBName, t, ids, h, v)
	return h, ents, err
}
