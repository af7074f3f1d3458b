package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
)

const (
	tableID = 10
	indexID = 2
)

// testHost records what a run reports, and fails at a chosen point.
type testHost struct {
	mu          sync.Mutex
	phases      map[string]int
	failAt      string
	stats       Stats
	peak        int64
	checkpoints [][]Task
}

var errFailed = errors.New("failed at the chosen point")

func (h *testHost) At(_ context.Context, point string) error {
	if point == h.failAt {
		return errFailed
	}
	return nil
}
func (h *testHost) Phase(p string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.phases == nil {
		h.phases = map[string]int{}
	}
	h.phases[p]++
}
func (h *testHost) Add(s Stats, peak int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.Rows += s.Rows
	h.stats.Sorted += s.Sorted
	h.stats.Spilled += s.Spilled
	h.stats.Ingested += s.Ingested
	h.peak = max(h.peak, peak)
}
func (h *testHost) Checkpoint(tasks []Task, rows int64) error {
	h.checkpoints = append(h.checkpoints, tasks)
	return nil
}
func (h *testHost) Duplicate(key, _ []byte) error { return fmt.Errorf("duplicate %x", key) }
func (h *testHost) NewPacer(workers int) *pace.Pacer {
	return pace.New(func() int { return 100 }, nil, workers)
}

// encoder indexes a row's bytes: with unique, keyed by the value alone,
// else by value and handle.
type encoder struct{ unique bool }

func (e encoder) Encode(h int64, row []byte, emit func(int, []byte, []byte) error) error {
	if e.unique {
		k, err := codec.IndexKey(nil, tableID, indexID, []any{row}, nil)
		if err != nil {
			return err
		}
		return emit(0, k, codec.EncodeHandle(nil, h))
	}
	k, err := codec.IndexKey(nil, tableID, indexID, []any{row}, &h)
	if err != nil {
		return err
	}
	return emit(0, k, []byte{})
}

// setup stores rows 1..n with values value(h) and returns the snapshot S.
func setup(t *testing.T, n int64, value func(int64) string) (*kv.Store, uint64) {
	s, err := kv.Open(kv.Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	txn := s.Begin()
	for h := int64(1); h <= n; h++ {
		if err := txn.Set(codec.RecordKey(tableID, h), []byte(value(h))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	ts, err := s.ReserveTS()
	if err != nil {
		t.Fatal(err)
	}
	return s, ts
}

func spec(s *kv.Store, ts uint64, dir string, tasks []Task, unique bool) Spec {
	return Spec{
		Store: s, Snapshot: ts, Dir: dir, TableID: tableID, IndexIDs: []int64{indexID}, Tasks: tasks,
		NewEncoder: func() (Encoder, error) { return encoder{unique}, nil },
		// The smallest budget, so that the rows take several rounds.
		Config: func() Config {
			return Config{Workers: 2, Threads: 2, BatchSize: 64, BufferBytes: 1 << 16, DiskQuota: 1 << 30}
		},
	}
}

func splitTasks(n, parts int64) []Task {
	var out []Task
	for i := int64(0); i < parts; i++ {
		lo, hi := i*n/parts+1, (i+1)*n/parts
		out = append(out, Task{Start: lo, End: hi, Next: lo})
	}
	return out
}

// index returns the index's keys at a fresh read.
func index(t *testing.T, s *kv.Store) [][]byte {
	txn := s.Begin()
	defer txn.Rollback()
	p := codec.IndexPrefix(tableID, indexID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	var keys [][]byte
	for ; it.Valid(); it.Next() {
		keys = append(keys, slices.Clone(it.Key()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func wantIndex(t *testing.T, n int64, value func(int64) string) [][]byte {
	var keys [][]byte
	for h := int64(1); h <= n; h++ {
		k, err := codec.IndexKey(nil, tableID, indexID, []any{[]byte(value(h))}, &h)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b []byte) int { return slices.Compare(a, b) })
	return keys
}

// TestBuildSpillsAndIngests: a build in many rounds spills runs, ingests
// every entry, counts every row, checkpoints every task done, and leaves
// no files.
func TestBuildSpillsAndIngests(t *testing.T) {
	const n = 20000
	value := func(h int64) string { return fmt.Sprintf("v%06d-padding-to-fill-buffers", (h*7919)%n) }
	s, ts := setup(t, n, value)
	dir := t.TempDir() + "/job"
	h := &testHost{}
	if err := Build(context.Background(), spec(s, ts, dir, splitTasks(n, 5), false), h); err != nil {
		t.Fatal(err)
	}
	if got, want := index(t, s), wantIndex(t, n, value); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("index has %d entries, want %d", len(got), len(want))
	}
	if h.stats.Rows != n || h.stats.Spilled == 0 || h.stats.Ingested == 0 {
		t.Fatalf("stats %+v: want %d rows, some spilled and ingested", h.stats, n)
	}
	last := h.checkpoints[len(h.checkpoints)-1]
	for _, task := range last {
		if !task.Done || task.Next != task.End {
			t.Fatalf("last checkpoint %+v: not done", last)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the run's directory is still there: %v", err)
	}
}

// TestBuildResumes: a run that stops after an ingest but before its
// checkpoint, resumed from the last checkpoint, ends with the same index.
func TestBuildResumes(t *testing.T) {
	const n = 20000
	value := func(h int64) string { return fmt.Sprintf("r%06d-padding-to-fill-buffers", h%997) }
	s, ts := setup(t, n, value)
	start := splitTasks(n, 3)
	h := &testHost{failAt: "ingested"}
	if err := Build(context.Background(), spec(s, ts, t.TempDir()+"/job", start, false), h); !errors.Is(err, errFailed) {
		t.Fatalf("got %v, want the failure", err)
	}
	if len(index(t, s)) == 0 {
		t.Fatal("nothing was ingested before the failure")
	}
	h2 := &testHost{}
	if err := Build(context.Background(), spec(s, ts, t.TempDir()+"/job", start, false), h2); err != nil {
		t.Fatal(err)
	}
	if got, want := index(t, s), wantIndex(t, n, value); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("index has %d entries, want %d", len(got), len(want))
	}
}

// TestBuildFindsDuplicates: two rows with one value in a unique index fail
// the build with the host's duplicate error, whether the two land in one
// round or in different rounds merged into one ingest.
func TestBuildFindsDuplicates(t *testing.T) {
	for _, dup := range []int64{2, 19999} {
		const n = 20000
		value := func(h int64) string {
			if h == dup {
				h = 1
			}
			return fmt.Sprintf("u%06d-padding-to-fill-buffers", h)
		}
		s, ts := setup(t, n, value)
		err := Build(context.Background(), spec(s, ts, t.TempDir()+"/job", splitTasks(n, 4), true), &testHost{})
		if err == nil || !strings.HasPrefix(err.Error(), "duplicate") {
			t.Fatalf("rows 1 and %d: got %v, want a duplicate", dup, err)
		}
	}
}

// TestBuildKeepsToDiskQuota: with a disk quota a few budgets large, the
// build ingests whenever the next spill could pass it, so its runs and
// sstables never take more than the quota, and the index is complete.
func TestBuildKeepsToDiskQuota(t *testing.T) {
	const n, quota = 20000, 256 << 10
	value := func(h int64) string { return fmt.Sprintf("q%06d-padding-to-fill-buffers", (h*31)%n) }
	s, ts := setup(t, n, value)
	sp := spec(s, ts, t.TempDir()+"/job", splitTasks(n, 4), false)
	sp.Config = func() Config {
		return Config{Workers: 2, Threads: 2, BatchSize: 64, BufferBytes: 1 << 16, DiskQuota: quota}
	}
	h := &testHost{}
	if err := Build(context.Background(), sp, h); err != nil {
		t.Fatal(err)
	}
	if h.phases["ingest"] < 2 || h.peak > quota {
		t.Fatalf("%d ingests, peak %d bytes: want several, within %d", h.phases["ingest"], h.peak, quota)
	}
	if got, want := index(t, s), wantIndex(t, n, value); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("index has %d entries, want %d", len(got), len(want))
	}
}
