package ddl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/pace"
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
	ctx := m.ctx
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
// cancel request (ctx's cause) ends the wait with errCancelRequested while
// the job can still be cancelled; a pause, or a cancel too late to
// matter, does not: the step has been published, and the next one must
// not be before every transaction has seen it. While the job rolls back,
// transactions that began before the job's first step are not waited
// for: they never saw its indexes.
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
	start := time.Now()
	var logged time.Time
	report := func(l *mdl.Lease) {
		msg := fmt.Sprintf("waiting for a transaction started %s ago on schema version %d (%s)",
			time.Since(l.Started).Round(time.Second), l.Version, l.Owner)
		m.update(id, func(j *Job) { j.Comment = msg })
		if time.Since(start) > warn && time.Since(logged) > warn {
			logged = time.Now()
			m.log.Warn("DDL job waits on the metadata lock", "job", id, "txn", l.Owner, "age", time.Since(l.Started).String())
		}
	}
	err := m.MDL.WaitRange(ctx, lo, v, nil, time.Second, report)
	if err != nil && ctx.Err() != nil && m.ctx.Err() == nil {
		if j, _ := m.snapshot(id); errors.Is(context.Cause(ctx), errCancelRequested) && j.cancelRefusal() == nil {
			err = errCancelRequested
		} else {
			err = m.MDL.WaitRange(m.ctx, lo, v, nil, time.Second, report)
		}
	}
	m.update(id, func(j *Job) {
		if strings.HasPrefix(j.Comment, "waiting for a transaction") {
			j.Comment = ""
		}
	})
	return err
}

func (m *Manager) finish(id int64) {
	m.releaseSnapshot(id)
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
		return true, pace.Sleep(ctx, 20*time.Millisecond)
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

// runAddIndex drives an ADD INDEX through its schema states until it is
// done, rolled back, or the server stops.
func (m *Manager) runAddIndex(ctx context.Context, id int64) error {
	return m.drive(ctx, id, m.addIndexStep, m.rollback)
}

// drive runs a job that rolls back on failure (ADD INDEX, a MODIFY or DROP
// COLUMN that rewrites rows) until it ends: step takes it from its schema
// state to the next, rollback undoes it. Before each step a cancel
// request starts the rollback, unless the job is public (its definitions
// are in use: too late to cancel), and a paused job waits; a failed step
// is handled by afterStepError.
func (m *Manager) drive(ctx context.Context, id int64, step func(context.Context, *Job) error, rollback func(context.Context, int64) error) error {
	for {
		j, _ := m.snapshot(id)
		if j.State.Finished() {
			m.finish(id)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if j.CancelRequested && j.State != JobRollingBack && j.SchemaState != catalog.StatePublic {
			if err := m.startRollback(ctx, id, ErrCancelled); err != nil {
				return err
			}
			continue
		}
		if j.State == JobRollingBack {
			return rollback(ctx, id)
		}
		paused, err := m.holdPaused(ctx, j)
		if err != nil {
			return err
		}
		if paused {
			continue
		}
		err = m.interruptible(ctx, id, func(ctx context.Context) error {
			if err := m.stall(ctx, id, stateName(j.SchemaState)); err != nil {
				return err
			}
			return step(ctx, j)
		})
		if err != nil {
			if err := m.afterStepError(ctx, id, err); err != nil {
				return err
			}
		}
	}
}

// afterStepError decides what a failed step leads to. The runner stops
// (non-nil) when the server stops or a test kills the job; after a pause
// or cancel request it looks at the job again; a write conflict is
// retried, and so is any failure once the job is public (it only goes
// forward from there); a job that has written nothing fails as it stands;
// anything else rolls the job back.
func (m *Manager) afterStepError(ctx context.Context, id int64, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, errKilled):
		return err
	case errors.Is(err, errPaused), errors.Is(err, errCancelRequested):
		return nil
	}
	cur, _ := m.snapshot(id)
	switch {
	case isRetryable(err) || cur.SchemaState == catalog.StatePublic:
		return pace.Sleep(ctx, 10*time.Millisecond)
	case cur.SchemaState == catalog.StateAbsent:
		m.fail(id, err)
		return nil
	}
	return m.startRollback(ctx, id, err)
}

// addIndexStep takes an ADD INDEX from its schema state to the next.
func (m *Manager) addIndexStep(ctx context.Context, j *Job) error {
	id := j.ID
	switch j.SchemaState {
	case catalog.StateAbsent:
		return m.step(ctx, id, m.addIndexDefinitions)
	case catalog.StateDeleteOnly:
		return m.setIndexState(ctx, id, catalog.StateWriteOnly)
	case catalog.StateWriteOnly:
		return m.setIndexState(ctx, id, catalog.StateWriteReorg)
	case catalog.StateWriteReorg:
		if err := m.fillIndexes(ctx, id, j); err != nil {
			return err
		}
		return m.setIndexState(ctx, id, catalog.StatePublic)
	case catalog.StatePublic:
		if err := m.clearChangeLogs(j); err != nil {
			return err
		}
		m.update(id, func(j *Job) { j.State = JobDone; j.End = time.Now(); j.Comment = "" })
		if err := m.persist(id); err != nil {
			return err
		}
		m.cleanupTasks(id)
		m.finish(id)
	}
	return nil
}

// addIndexDefinitions adds the job's indexes to the table, delete-only,
// with their change logs for an ingest build.
func (m *Manager) addIndexDefinitions(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	seen := map[string]bool{}
	for i := range j.Indexes {
		name := strings.ToLower(j.Indexes[i].Name)
		if seen[name] {
			return &DuplicateIndexError{Index: j.Indexes[i].Name}
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
		// The logs' IDs come after all the new indexes', so that the
		// logs' key ranges, which DML writes during the build, lie
		// outside the span of the ingested sstables.
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
}

// fillIndexes gives the write-reorganization indexes the entries of the
// table's rows, by the job's backfill mode.
func (m *Manager) fillIndexes(ctx context.Context, id int64, j *Job) error {
	if j.Mode != "ingest" {
		return m.backfill(ctx, id)
	}
	if err := m.holdIngestSnapshot(id); err != nil {
		return err
	}
	if err := m.ingestBackfill(ctx, id); err != nil {
		return err
	}
	return m.mergeChangeLogs(ctx, id)
}

var (
	errPaused          = errors.New("ddl: job paused")
	errCancelRequested = errors.New("ddl: cancel requested")
	// errKilled stops a job where it stands, persisting nothing more, as
	// a crash would: tests inject it through Manager.hook.
	errKilled = errors.New("ddl: job killed")
)

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
		if err := pace.Sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

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
		j.ErrCode, j.Error = m.indexer.Describe(cause)
	})
	m.persistOrLog(id)
	m.finish(id)
}

func (m *Manager) startRollback(ctx context.Context, id int64, cause error) error {
	code, msg := m.indexer.Describe(cause)
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
		if j.Error == ErrCancelled.Error() {
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
