package kv

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestNoSyncDefersWALFsync checks that relaxed mode really reaches the WAL
// files (Pebble creates them with the category walSyncFS looks for), turns
// the commits' fsyncs into background ones, and that these happen.
func TestNoSyncDefersWALFsync(t *testing.T) {
	s := openTest(t, nil) // NoSync
	if s.walSync == nil {
		t.Fatal("NoSync store without walSyncFS")
	}
	base := s.walSync.deferred.Load()
	for i := range 20 {
		commitWrites(t, s, "k", string(rune('a'+i)))
	}
	if d := s.walSync.deferred.Load() - base; d < 20 {
		t.Fatalf("%d WAL syncs deferred for 20 commits: the WAL files are not wrapped", d)
	}
	synced := s.walSync.synced.Load()
	waitFor(t, 3*walSyncInterval, func() bool { return s.walSync.synced.Load() > synced })

	durable := openTest(t, func(o *Options) { o.NoSync = false })
	if durable.walSync != nil {
		t.Fatal("durable store with deferred WAL fsyncs")
	}
}

// failSyncFS fails every file's fsync once fail is set.
type failSyncFS struct {
	vfs.FS
	fail  atomic.Bool
	syncs atomic.Int64
}

type failSyncFile struct {
	vfs.File
	fs *failSyncFS
}

func (fs *failSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return failSyncFile{f, fs}, nil
}

func (f failSyncFile) Sync() error { return f.SyncData() }

func (f failSyncFile) SyncData() error {
	f.fs.syncs.Add(1)
	if f.fs.fail.Load() {
		return errors.New("injected fsync failure")
	}
	return f.File.SyncData()
}

func TestWALSyncFile(t *testing.T) {
	under := &failSyncFS{FS: vfs.NewMem()}
	w := newWALSyncFS(under, slog.Default(), 10*time.Millisecond)
	defer w.Close()

	other, err := w.Create("000001.sst", "other")
	must(t, err)
	must(t, other.Sync())
	if under.syncs.Load() != 1 {
		t.Fatal("a file other than the WAL did not fsync at once")
	}
	must(t, other.Close())

	f, err := w.Create("000002.log", walCategory)
	must(t, err)
	under.syncs.Store(0)
	_, err = f.Write([]byte("record"))
	must(t, err)
	must(t, f.Sync())
	if under.syncs.Load() != 0 {
		t.Fatal("WAL Sync fsynced at once")
	}
	waitFor(t, 2*time.Second, func() bool { return under.syncs.Load() == 1 })
	time.Sleep(30 * time.Millisecond)
	if n := under.syncs.Load(); n != 1 {
		t.Fatalf("%d background fsyncs without a write in between, want 1", n)
	}

	must(t, f.Close())

	// Close fsyncs what was written since the last fsync. A loop that
	// would not tick for an hour cannot get to it first.
	slow := newWALSyncFS(under, slog.Default(), time.Hour)
	defer slow.Close()
	h, err := slow.Create("000004.log", walCategory)
	must(t, err)
	_, err = h.Write([]byte("eof"))
	must(t, err)
	must(t, h.Sync())
	syncs := under.syncs.Load()
	must(t, h.Close())
	if under.syncs.Load() != syncs+1 {
		t.Fatal("closing a written WAL file did not fsync it")
	}

	// A failed background fsync fails every later Sync.
	g, err := w.Create("000003.log", walCategory)
	must(t, err)
	under.fail.Store(true)
	_, err = g.Write([]byte("record"))
	must(t, err)
	must(t, g.Sync())
	waitFor(t, 2*time.Second, func() bool { return g.Sync() != nil })
	if err := g.SyncData(); err == nil {
		t.Fatal("SyncData after a failed background fsync succeeded")
	}
}
