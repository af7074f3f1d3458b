package ddl

// The transactional backfill, and the tasks both backfills divide a
// table into.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
)

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
	return &NoSuchTableError{DB: j.DBName, Table: j.TableName}
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
	b := newTxnBackfill(ctx, m, j, t, ids)
	defer b.cancel()
	b.resize(max(1, m.settings().Workers))
	done := b.waitAll()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPersist := time.Now()
	for {
		select {
		case <-done:
			finished, err := b.finished(ctx)
			if err != nil || finished {
				return err
			}
			// Every worker was scaled away while tasks remain.
			b.restart()
			done = b.waitAll()
		case <-tick.C:
			b.watch()
			if time.Since(lastPersist) > 2*time.Second {
				lastPersist = time.Now()
				m.persistOrLog(id)
			}
		}
	}
}

// txnBackfill is one run of the transactional backfill: workers take the
// job's unfinished tasks one at a time and fill each batch by batch
// (runTask), while the job's runner watches (watch): it follows the
// worker setting as it changes, stops the workers on a cancel or pause
// request or a doomed conversion, and shows progress.
type txnBackfill struct {
	m      *Manager
	ctx    context.Context // the workers'; cancel stops them all
	cancel context.CancelFunc
	j      *Job
	t      *catalog.Table
	ids    []int64
	tasks  []Task // tasks[i] is written only by the worker that took it

	mu       sync.Mutex
	next     int // next task to hand out
	firstErr error

	wg      sync.WaitGroup
	active  atomic.Int32
	stopOne chan struct{} // each token retires one worker
	retries atomic.Int64  // write conflicts retried, shown in the job
}

func newTxnBackfill(ctx context.Context, m *Manager, j *Job, t *catalog.Table, ids []int64) *txnBackfill {
	b := &txnBackfill{m: m, j: j, t: t, ids: ids, tasks: j.Tasks, stopOne: make(chan struct{}, 256)}
	b.ctx, b.cancel = context.WithCancel(ctx)
	return b
}

// take hands out the next unfinished task, or -1 when none is left or a
// worker has failed.
func (b *txnBackfill) take() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.next < len(b.tasks) && b.tasks[b.next].Done {
		b.next++
	}
	if b.next >= len(b.tasks) || b.firstErr != nil {
		return -1
	}
	b.next++
	return b.next - 1
}

// fail records the first error and stops every worker.
func (b *txnBackfill) fail(err error) {
	b.mu.Lock()
	if b.firstErr == nil {
		b.firstErr = err
	}
	b.mu.Unlock()
	b.cancel()
}

func (b *txnBackfill) startWorker() {
	b.wg.Add(1)
	b.active.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.active.Add(-1)
		for {
			select {
			case <-b.stopOne:
				return
			default:
			}
			ti := b.take()
			if ti < 0 {
				return
			}
			if err := b.m.runTask(b.ctx, b.j, b.t, b.ids, ti, &b.tasks[ti], &b.retries); err != nil {
				if !errors.Is(err, context.Canceled) {
					b.fail(err)
				}
				return
			}
		}
	}()
}

// resize starts or retires workers until want are running; a retired
// worker ends after its current task.
func (b *txnBackfill) resize(want int) {
	n := int(b.active.Load())
	if n < want {
		for range want - n {
			b.startWorker()
		}
		return
	}
	for range n - len(b.stopOne) - want {
		select {
		case b.stopOne <- struct{}{}:
		default:
		}
	}
}

// restart hands out the tasks again from the first to one new worker.
func (b *txnBackfill) restart() {
	b.mu.Lock()
	b.next = 0
	b.mu.Unlock()
	b.startWorker()
}

// waitAll is closed once every worker started so far has returned.
func (b *txnBackfill) waitAll() <-chan struct{} {
	ch := make(chan struct{})
	go func() { b.wg.Wait(); close(ch) }()
	return ch
}

// finished says, once every worker has returned, whether every task is
// done (and then records it); err is why the workers stopped otherwise.
func (b *txnBackfill) finished(ctx context.Context) (bool, error) {
	b.mu.Lock()
	err := b.firstErr
	b.mu.Unlock()
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	for i := range b.tasks {
		if !b.tasks[i].Done {
			return false, nil
		}
	}
	b.m.update(b.j.ID, func(j *Job) { j.Tasks = slices.Clone(b.tasks); j.Comment = "" })
	return true, b.m.persist(b.j.ID)
}

// watch runs every tick of the job's runner while the workers run.
func (b *txnBackfill) watch() {
	cur, _ := b.m.snapshot(b.j.ID)
	if cur.isReorg() {
		if err := b.m.firstDoom(cur); err != nil {
			b.fail(err)
			return
		}
	}
	set := b.m.settings()
	want := max(1, set.Workers)
	b.resize(want)
	comment := fmt.Sprintf("mode=txn workers=%d batch_size=%d conflicts_retried=%d", want, set.BatchSize, b.retries.Load())
	b.m.update(b.j.ID, func(j *Job) { j.Comment = comment })
}

// runTask backfills one task batch by batch.
func (m *Manager) runTask(ctx context.Context, j *Job, t *catalog.Table, ids []int64, ti int, task *Task, retries *atomic.Int64) error {
	pc := m.newPacer(m.settings().Workers)
	batchFn := m.backfillBatch
	if j.isReorg() {
		batchFn = m.convertBatch
	}
	retried := func(backoff time.Duration) { retries.Add(1); pc.Exclude(backoff) }
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
		if err := pc.Pace(ctx); err != nil {
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
func (m *Manager) backfillBatch(ctx context.Context, j *Job, t *catalog.Table, ids []int64, ti int, task Task, batch int, pc *pace.Pacer) (int64, Task, error) {
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
	return commitBatch(txn, j, ti, task, n, last, more, pc)
}

// commitBatch commits a batch of n rows of task ti, the last with handle
// last, together with the task's new checkpoint (done unless more rows
// follow).
func commitBatch(txn *kv.Txn, j *Job, ti int, task Task, n, last int64, more bool, pc *pace.Pacer) (int64, Task, error) {
	task.Rows += n
	if !more {
		task.Done, task.Next = true, task.End
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
		pc.Exclude(time.Since(commitStart))
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
