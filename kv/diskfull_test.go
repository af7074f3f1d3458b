package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
)

// fullFS is an in-memory file system of limited size: writes and
// preallocations that would take more space than is left fail with ENOSPC,
// as on a real full disk (space preallocated for a file is its own).
type fullFS struct {
	vfs.FS
	mu    sync.Mutex
	limit int64
	used  int64
	// freeShown: GetDiskUsage reports the free space, else none.
	freeShown bool
	alloc     map[string]int64 // bytes allocated to each file
}

func newFullFS(limit int64) *fullFS {
	return &fullFS{FS: vfs.NewMem(), limit: limit, alloc: map[string]int64{}}
}

// setLimit sets the size. Once a write found the disk full, the free space
// reported (GetDiskUsage) is zero until the size is raised, as when
// something else keeps the disk full.
func (f *fullFS) setLimit(n int64) {
	f.mu.Lock()
	f.freeShown = n > f.limit
	f.limit = n
	f.mu.Unlock()
}

// fill takes all free space, as another writer to the disk would.
func (f *fullFS) fill() {
	f.mu.Lock()
	f.limit = f.used
	f.freeShown = false
	f.mu.Unlock()
}

// grow makes name at least end bytes large, if there is room.
func (f *fullFS) grow(op, name string, end int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	need := end - f.alloc[name]
	if need <= 0 {
		return nil
	}
	if f.used+need > f.limit {
		f.freeShown = false
		return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
	}
	f.used += need
	f.alloc[name] += need
	return nil
}

func (f *fullFS) forget(name string) {
	f.mu.Lock()
	f.used -= f.alloc[name]
	delete(f.alloc, name)
	f.mu.Unlock()
}

func (f *fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	f.forget(name) // truncated
	return &fullFile{File: file, fs: f, name: name}, nil
}

func (f *fullFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f, name: name}, nil
}

func (f *fullFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.Rename(oldname, newname); err != nil {
		return nil, err
	}
	return f.OpenReadWrite(newname, c)
}

func (f *fullFS) Rename(oldname, newname string) error {
	if err := f.FS.Rename(oldname, newname); err != nil {
		return err
	}
	f.forget(newname)
	f.mu.Lock()
	f.alloc[newname] = f.alloc[oldname]
	delete(f.alloc, oldname)
	f.mu.Unlock()
	return nil
}

func (f *fullFS) Remove(name string) error {
	if err := f.FS.Remove(name); err != nil {
		return err
	}
	f.forget(name)
	return nil
}

func (f *fullFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	avail := max(f.limit-f.used, 0)
	if !f.freeShown {
		avail = 0
	}
	return vfs.DiskUsage{AvailBytes: uint64(avail), TotalBytes: uint64(f.limit), UsedBytes: uint64(f.used)}, nil
}

type fullFile struct {
	vfs.File
	fs   *fullFS
	name string
	off  int64
}

func (f *fullFile) Write(p []byte) (int, error) {
	if err := f.fs.grow("write", f.name, f.off+int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.File.Write(p)
	f.off += int64(n)
	return n, err
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.grow("write", f.name, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *fullFile) Preallocate(off, n int64) error {
	return f.fs.grow("fallocate", f.name, off+n)
}

// TestDiskFull fills a store's file system: commits fail at once with
// ErrDiskFull (neither stalling nor crashing), reads work, Close is prompt,
// writes resume once space is freed, and a reopened store has every
// acknowledged commit.
func TestDiskFull(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoSync=%v", noSync), func(t *testing.T) { testDiskFull(t, noSync) })
	}
}

func testDiskFull(t *testing.T, noSync bool) {
	ffs := newFullFS(16 << 20)
	ffs.freeShown = true
	open := func() *Store {
		s, err := Open(Options{Dir: "/db", fs: ffs, NoSync: noSync, MemTableSize: 1 << 20, CacheSize: 8 << 20, GCInterval: -1})
		must(t, err)
		return s
	}
	value := func(i int) []byte {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		v := make([]byte, 16<<10)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		return v
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
	commit := func(s *Store, i int) (time.Duration, error) {
		start := time.Now()
		txn := s.Begin()
		must(t, txn.Set(key(i), value(i)))
		_, err := txn.Commit()
		return time.Since(start), err
	}
	checkAcked := func(s *Store, acked int) {
		t.Helper()
		txn := s.Begin()
		defer txn.Rollback()
		for i := range acked {
			v, ok, err := txn.Get(key(i))
			must(t, err)
			if !ok || string(v) != string(value(i)) {
				t.Fatalf("acknowledged commit %d lost", i)
			}
		}
	}

	s := open()
	acked := 0
	for ; ; acked++ {
		took, err := commit(s, acked)
		if err == nil {
			continue
		}
		var full *DiskFullError
		if !errors.Is(err, ErrDiskFull) || !errors.As(err, &full) || full.Path == "" {
			t.Fatalf("commit %d: %v, want a DiskFullError", acked, err)
		}
		if took > time.Second {
			t.Fatalf("commit %d took %v to fail", acked, took)
		}
		t.Logf("commit %d failed after %v: %v", acked, took, err)
		break
	}
	if acked < 100 {
		t.Fatalf("disk full after %d commits", acked)
	}
	if took, err := commit(s, acked); !errors.Is(err, ErrDiskFull) || took > 100*time.Millisecond {
		t.Fatalf("second commit on a full disk: %v after %v", err, took)
	}
	if _, err := s.RunGC(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("GC on a full disk: %v", err)
	}
	checkAcked(s, acked)
	if s.DiskFull() == nil {
		t.Fatal("DiskFull() is nil on a full disk")
	}
	cs := s.Collectors()
	gauge := cs[len(cs)-1].(prometheus.Metric)
	if v := metricValue(t, gauge); v != 1 {
		t.Fatalf("kv_disk_full is %v on a full disk", v)
	}

	// Freeing space ends the state without a restart.
	ffs.setLimit(64 << 20)
	waitFor(t, 5*time.Second, func() bool { return s.DiskFull() == nil })
	if v := metricValue(t, gauge); v != 0 {
		t.Fatalf("kv_disk_full is %v after space was freed", v)
	}
	if _, err := commit(s, acked); err != nil {
		t.Fatalf("commit after freeing space: %v", err)
	}
	acked++

	// Filled by someone else: the WAL writes on their way when a commit
	// first hits the full disk go into the reserve instead of failing
	// (Pebble would treat that as fatal). Then Close: prompt, despite Pebble
	// retrying its flush.
	ffs.fill()
	for i := acked; ; i++ {
		if _, err := commit(s, i); err != nil {
			break
		}
		acked++
	}
	start := time.Now()
	must(t, s.Close())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close on a full disk took %v", took)
	}

	ffs.setLimit(64 << 20)
	s = open()
	defer s.Close()
	checkAcked(s, acked)
	if _, err := commit(s, acked); err != nil {
		t.Fatalf("commit after reopening: %v", err)
	}
	t.Logf("%d acknowledged commits kept", acked)
}
