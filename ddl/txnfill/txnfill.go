// Package txnfill is the transactional backfill (TiDB's reorg workers,
// tidb_ddl_reorg_worker_cnt x tidb_ddl_reorg_batch_size): workers take a
// job's tasks one at a time and fill each batch by batch, every batch one
// kv transaction that writes what the caller's Fill puts in it together
// with the task's new checkpoint.
//
// Invariants:
//   - A task's checkpoint moves only in the transaction that writes the
//     batch it covers: after a crash, a resumed run starts each task where
//     the last committed batch ended, and no batch is lost or written
//     twice over a committed one.
//   - A batch that loses a write conflict to a user transaction is rolled
//     back whole and retried from the same checkpoint after a backoff; the
//     time spent backing off and waiting for the commit's sync is not
//     counted as the run's CPU by its pacer.
//   - The number of workers follows Config.Workers as it changes; a
//     retired worker ends after its current task, and a run whose workers
//     were all retired while tasks remain starts one again.
//   - The run ends when every task is done, at the first error (the
//     others stop at once), when Host.Watch reports one, or when ctx ends.
//
// What a batch writes (index entries, converted rows) is the caller's
// Fill; it reads each row with LockLatest, which serializes it with DML
// on the row without ever taking part in a deadlock.
package txnfill

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/ddl/tasks"
	"github.com/reorgdb/reorgdb/kv"
)

// Task is a range of a table's handles, with its checkpoint.
type Task = tasks.Task

// Batch is what one Fill covered.
type Batch struct {
	Rows int64 // rows written
	Last int64 // handle of the last row covered
	More bool  // whether rows of the task follow Last
}

// Fill writes into txn one batch of task, from task.Next on, of at most
// limit rows. It may wait for a lock only on the batch's first row: a
// later row held by a user transaction ends the batch before it.
type Fill func(ctx context.Context, txn *kv.Txn, task Task, limit int) (Batch, error)

// Config are the knobs a run reads as it goes.
type Config struct {
	Workers    int           // goroutines filling tasks
	BatchSize  int           // rows per batch
	BatchDelay time.Duration // pause after each batch (a write-speed limit)
}

// Host is the job a run fills for.
type Host interface {
	Config() Config
	// At is called before each batch ("backfill"), where tests stop or
	// fail a job.
	At(ctx context.Context, point string) error
	// PutTask stores task i's checkpoint in txn, the batch's transaction.
	PutTask(txn *kv.Txn, i int, t Task) error
	// Added adds rows to the job's progress.
	Added(rows int64)
	// Watch is called every tick while workers run, with the number of
	// conflicts retried so far; an error stops the run with it.
	Watch(retried int64) error
	// NewPacer paces one of workers goroutines.
	NewPacer(workers int) *pace.Pacer
}

// tick is how often a run looks at its Config and calls Host.Watch.
const tick = 100 * time.Millisecond

// Run fills the unfinished tasks of ts and returns them all done, or
// fails.
func Run(ctx context.Context, store *kv.Store, ts []Task, fill Fill, host Host) ([]Task, error) {
	r := &run{store: store, fill: fill, host: host, tasks: slices.Clone(ts), stopOne: make(chan struct{}, 256), exited: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	defer r.cancel(nil)
	r.resize(max(1, host.Config().Workers))
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-r.exited:
			if r.live--; r.live > 0 {
				continue
			}
			finished, err := r.finished(ctx)
			if err != nil || finished {
				return r.tasks, err
			}
			// Every worker was retired while tasks remain.
			r.restart()
		case <-t.C:
			if err := host.Watch(r.retries.Load()); err != nil {
				r.cancel(err)
			}
			r.resize(max(1, host.Config().Workers))
		}
	}
}

type run struct {
	store  *kv.Store
	fill   Fill
	host   Host
	ctx    context.Context // the workers'; cancel stops them all
	cancel context.CancelCauseFunc
	tasks  []Task // tasks[i] is written only by the worker that took it

	mu   sync.Mutex
	next int // next task to hand out

	// live counts the workers started and not yet seen to exit; only
	// Run's loop touches it, so starting a worker never races with
	// noticing that the last one ended.
	live    int
	exited  chan struct{} // each worker's last act
	stopOne chan struct{} // each token retires one worker
	retries atomic.Int64  // write conflicts retried
}

// take hands out the next unfinished task, or -1 when none is left or the
// run is stopping.
func (r *run) take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.next < len(r.tasks) && r.tasks[r.next].Done {
		r.next++
	}
	if r.next >= len(r.tasks) || r.ctx.Err() != nil {
		return -1
	}
	r.next++
	return r.next - 1
}

func (r *run) startWorker() {
	r.live++
	go func() {
		defer func() { r.exited <- struct{}{} }()
		for {
			select {
			case <-r.stopOne:
				return
			default:
			}
			ti := r.take()
			if ti < 0 {
				return
			}
			if err := r.runTask(ti); err != nil {
				r.cancel(err) // the first cause is kept
				return
			}
		}
	}()
}

// resize starts or retires workers until want are running; a retired
// worker ends after its current task.
func (r *run) resize(want int) {
	n := r.live
	if n < want {
		for range want - n {
			r.startWorker()
		}
		return
	}
	for range n - len(r.stopOne) - want {
		select {
		case r.stopOne <- struct{}{}:
		default:
		}
	}
}

// restart hands out the tasks again from the first to one new worker.
func (r *run) restart() {
	r.mu.Lock()
	r.next = 0
	r.mu.Unlock()
	r.startWorker()
}

// finished says, once every worker has returned, whether every task is
// done; err is why the workers stopped otherwise.
func (r *run) finished(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if r.ctx.Err() != nil {
		return false, context.Cause(r.ctx)
	}
	for i := range r.tasks {
		if !r.tasks[i].Done {
			return false, nil
		}
	}
	return true, nil
}

// runTask fills task ti batch by batch.
func (r *run) runTask(ti int) error {
	ctx, task := r.ctx, &r.tasks[ti]
	pc := r.host.NewPacer(r.host.Config().Workers)
	retried := func(backoff time.Duration) { r.retries.Add(1); pc.Exclude(backoff) }
	for !task.Done {
		if err := r.host.At(ctx, "backfill"); err != nil {
			return err
		}
		cfg := r.host.Config()
		var next Task
		var rows int64
		err := kv.RetryConflicts(ctx, 0, retried, func() (err error) {
			next, rows, err = r.batch(ti, *task, max(1, cfg.BatchSize), pc)
			return err
		})
		if err != nil {
			return err
		}
		*task = next
		r.host.Added(rows)
		if err := pc.Pace(ctx); err != nil {
			return err
		}
		if cfg.BatchDelay > 0 {
			if err := pace.Sleep(ctx, cfg.BatchDelay); err != nil {
				return err
			}
		}
	}
	return nil
}

// batch fills one batch of task ti and commits it with the task's new
// checkpoint.
func (r *run) batch(ti int, task Task, limit int, pc *pace.Pacer) (Task, int64, error) {
	txn := r.store.Begin()
	defer txn.Rollback()
	b, err := r.fill(r.ctx, txn, task, limit)
	if err != nil {
		return task, 0, err
	}
	task.Rows += b.Rows
	if b.More {
		task.Next = b.Last + 1
	} else {
		task.Done, task.Next = true, task.End
	}
	if err := r.host.PutTask(txn, ti, task); err != nil {
		return task, 0, err
	}
	// The commit mostly waits for the log to be synced: not CPU the
	// pacer should account for.
	start := time.Now()
	_, err = txn.Commit()
	pc.Exclude(time.Since(start))
	if err != nil {
		return task, 0, err
	}
	return task, b.Rows, nil
}
