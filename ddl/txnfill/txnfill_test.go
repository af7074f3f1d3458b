package txnfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
)

// testHost records what a run reports.
type testHost struct {
	cfg      atomic.Pointer[Config]
	added    atomic.Int64
	puts     atomic.Int64
	retried  atomic.Int64
	watchErr atomic.Pointer[error]
	failAt   string
}

func newHost(cfg Config) *testHost {
	h := &testHost{}
	h.cfg.Store(&cfg)
	return h
}

func (h *testHost) Config() Config { return *h.cfg.Load() }
func (h *testHost) At(_ context.Context, point string) error {
	if point == h.failAt {
		return errFailed
	}
	return nil
}
func (h *testHost) PutTask(txn *kv.Txn, i int, t Task) error {
	h.puts.Add(1)
	return txn.Set(fmt.Appendf(nil, "task/%03d", i), fmt.Appendf(nil, "%d %d %t", t.Next, t.Rows, t.Done))
}
func (h *testHost) Added(rows int64) { h.added.Add(rows) }
func (h *testHost) Watch(retried int64) error {
	h.retried.Store(retried)
	if err := h.watchErr.Load(); err != nil {
		return *err
	}
	return nil
}
func (h *testHost) NewPacer(workers int) *pace.Pacer {
	return pace.New(func() int { return 100 }, func() bool { return false }, workers)
}

var errFailed = errors.New("failed at the chosen point")

func openStore(t *testing.T) *kv.Store {
	s, err := kv.Open(kv.Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func rowKey(h int64) []byte { return fmt.Appendf(nil, "row/%06d", h) }

// copyFill writes, for every handle of the batch, the key row/<handle>:
// a table whose handles are every integer of the tasks.
func copyFill(ctx context.Context, txn *kv.Txn, task Task, limit int) (Batch, error) {
	b := Batch{Last: task.Next - 1}
	for h := task.Next; h <= task.End && b.Rows < int64(limit); h++ {
		if err := txn.Set(rowKey(h), []byte("x")); err != nil {
			return b, err
		}
		b.Rows, b.Last = b.Rows+1, h
	}
	b.More = b.Last < task.End
	return b, nil
}

func split(n, parts int64) []Task {
	var out []Task
	for i := range parts {
		lo, hi := i*n/parts+1, (i+1)*n/parts
		out = append(out, Task{Start: lo, End: hi, Next: lo})
	}
	return out
}

func count(t *testing.T, s *kv.Store, prefix string) int {
	txn := s.Begin()
	defer txn.Rollback()
	it := txn.NewIter([]byte(prefix), []byte(prefix+"\xff"), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}

func TestRunFillsEveryTask(t *testing.T) {
	s := openStore(t)
	h := newHost(Config{Workers: 3, BatchSize: 7})
	const n = 1000
	done, err := Run(context.Background(), s, split(n, 9), copyFill, h)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for i, task := range done {
		if !task.Done || task.Next != task.End {
			t.Errorf("task %d not done: %+v", i, task)
		}
		rows += task.Rows
	}
	if rows != n || h.added.Load() != n {
		t.Errorf("rows %d, added %d, want %d", rows, h.added.Load(), n)
	}
	if got := count(t, s, "row/"); got != n {
		t.Errorf("%d rows written, want %d", got, n)
	}
	// One checkpoint per batch, committed with it.
	if want := int64(9 * (n/9/7 + 1)); h.puts.Load() < want-9 || h.puts.Load() > want+9 {
		t.Errorf("%d checkpoints stored, want about %d", h.puts.Load(), want)
	}
}

// A resumed run starts each task at its checkpoint and skips done tasks.
func TestRunResumesFromCheckpoints(t *testing.T) {
	s := openStore(t)
	ts := split(100, 4)
	ts[0].Done, ts[0].Next, ts[0].Rows = true, ts[0].End, 25
	ts[1].Next, ts[1].Rows = 40, 14
	h := newHost(Config{Workers: 0, BatchSize: 10}) // 0 workers: one
	done, err := Run(context.Background(), s, ts, copyFill, h)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := count(t, s, "row/"), 100-25-14; got != want {
		t.Errorf("%d rows written, want %d", got, want)
	}
	if done[1].Rows != 25 || !done[1].Done {
		t.Errorf("resumed task: %+v", done[1])
	}
}

// A batch that loses a write conflict is rolled back whole and redone
// from the same checkpoint.
func TestRunRetriesConflicts(t *testing.T) {
	s := openStore(t)
	var conflicts atomic.Int32
	fill := func(ctx context.Context, txn *kv.Txn, task Task, limit int) (Batch, error) {
		b, err := copyFill(ctx, txn, task, limit)
		if err == nil && conflicts.Add(1) <= 3 {
			// A user transaction commits a row of this batch first.
			user := s.Begin()
			user.Set(rowKey(task.Next), []byte("user"))
			if _, err := user.Commit(); err != nil {
				return b, err
			}
		}
		return b, err
	}
	h := newHost(Config{Workers: 1, BatchSize: 10})
	if _, err := Run(context.Background(), s, split(50, 1), fill, h); err != nil {
		t.Fatal(err)
	}
	if got := conflicts.Load(); got != 5+3 {
		t.Errorf("%d fills for 5 batches that lost 3 conflicts", got)
	}
	if h.added.Load() != 50 || count(t, s, "row/") != 50 {
		t.Errorf("added %d, written %d, want 50", h.added.Load(), count(t, s, "row/"))
	}
	txn := s.Begin()
	defer txn.Rollback()
	if v, _, _ := txn.Get(rowKey(1)); string(v) != "x" {
		t.Errorf("row 1 is %q: the retried batch did not rewrite it", v)
	}
}

// The first error stops every worker and is the run's error: a failure
// at a test point, an error from Watch, or the end of ctx.
func TestRunStops(t *testing.T) {
	s := openStore(t)
	h := newHost(Config{Workers: 2, BatchSize: 5})
	h.failAt = "backfill"
	if _, err := Run(context.Background(), s, split(100, 4), copyFill, h); !errors.Is(err, errFailed) {
		t.Fatalf("run failing at a point: %v", err)
	}

	errDoomed := errors.New("doomed")
	h = newHost(Config{Workers: 2, BatchSize: 1})
	h.watchErr.Store(&errDoomed)
	slow := func(ctx context.Context, txn *kv.Txn, task Task, limit int) (Batch, error) {
		if err := pace.Sleep(ctx, 5*time.Millisecond); err != nil {
			return Batch{}, err
		}
		return copyFill(ctx, txn, task, limit)
	}
	if _, err := Run(context.Background(), s, split(10_000, 4), slow, h); !errors.Is(err, errDoomed) {
		t.Fatalf("run stopped by Watch: %v", err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	paused := errors.New("paused")
	h = newHost(Config{Workers: 2, BatchSize: 1})
	stopping := func(c context.Context, txn *kv.Txn, task Task, limit int) (Batch, error) {
		if task.Next > task.Start+3 {
			cancel(paused)
		}
		return slow(c, txn, task, limit)
	}
	if _, err := Run(ctx, s, split(10_000, 4), stopping, h); !errors.Is(err, context.Canceled) || !errors.Is(context.Cause(ctx), paused) {
		t.Fatalf("run whose context ended: %v", err)
	}
}

// The workers follow Config.Workers while the run goes on, retired ones
// are replaced when tasks remain, and the run ends once with every task
// done however the changes fall against the workers' exits.
func TestRunFollowsWorkerChanges(t *testing.T) {
	s := openStore(t)
	h := newHost(Config{Workers: 1, BatchSize: 1})
	var running, peak atomic.Int32
	fill := func(ctx context.Context, txn *kv.Txn, task Task, limit int) (Batch, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if err := pace.Sleep(ctx, time.Millisecond); err != nil {
			return Batch{}, err
		}
		return copyFill(ctx, txn, task, limit)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // 1, 4, 2, 1, 4, ... workers, changing faster than the tick
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(37 * time.Millisecond):
			}
			h.cfg.Store(&Config{Workers: []int{1, 4, 2}[i%3], BatchSize: 1})
		}
	}()
	const n = 1500
	done, err := Run(context.Background(), s, split(n, 40), fill, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range done {
		if !task.Done {
			t.Errorf("task %d not done: %+v", i, task)
		}
	}
	if got := count(t, s, "row/"); got != n {
		t.Errorf("%d rows written, want %d", got, n)
	}
	if peak.Load() < 3 {
		t.Errorf("at most %d workers ran at once, want up to 4", peak.Load())
	}
}
