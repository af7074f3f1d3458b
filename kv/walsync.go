package kv

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Relaxed durability (Options.NoSync) must still survive a crash of the
// process, like InnoDB's innodb_flush_log_at_trx_commit=2: a commit is
// acknowledged only once its WAL record has been written to the operating
// system, and the WAL is fsynced about once a second.
//
// Committing with pebble.NoSync does not give that: Pebble's LogWriter only
// queues the record in its own buffer and its flush loop writes it out
// later, so a commit acknowledged just before a SIGKILL is lost. Instead,
// relaxed commits are pebble.Sync commits, so a committer waits until the
// flush loop has written its record, and the WAL files' Sync is what is
// relaxed: walSyncFS hands Pebble WAL files whose Sync only marks them dirty,
// and a background loop fsyncs dirty WAL files every walSyncInterval. A WAL
// file being closed (rotation, shutdown) is fsynced at once: Pebble closes
// the previous WAL before it creates the next one so that, after a machine
// crash, only the newest WAL can have a torn tail. Every other file
// (sstables, MANIFEST, directories) keeps real fsyncs.

// walSyncInterval is how often relaxed mode fsyncs the WAL: the most an
// operating system crash or power loss can lose.
const walSyncInterval = time.Second

// walCategory is the write category Pebble creates WAL files with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// walSyncFS is a vfs.FS whose WAL files defer their fsyncs to a background
// loop; see above.
type walSyncFS struct {
	vfs.FS
	log *slog.Logger

	mu    sync.Mutex
	files map[*walSyncFile]struct{}
	// err is the first failed background fsync. Once one failed, the data
	// written since the previous fsync may never reach the disk (Linux drops
	// the dirty pages), so every later Sync fails with it: Pebble treats a
	// failed WAL sync as fatal.
	err error

	deferred atomic.Int64 // Syncs turned into background fsyncs, for tests
	synced   atomic.Int64 // background fsyncs done, for tests

	stop chan struct{}
	done chan struct{}
}

func newWALSyncFS(fs vfs.FS, log *slog.Logger, interval time.Duration) *walSyncFS {
	w := &walSyncFS{
		FS:    fs,
		log:   log,
		files: make(map[*walSyncFile]struct{}),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go w.loop(interval)
	return w
}

// Close stops the background loop after a last round of fsyncs. Pebble must
// be closed first (which fsyncs and closes the WAL anyway).
func (w *walSyncFS) Close() {
	close(w.stop)
	<-w.done
}

func (w *walSyncFS) loop(interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = w.syncAll()
		case <-w.stop:
			_ = w.syncAll()
			return
		}
	}
}

// syncAll fsyncs every open WAL file written since its last fsync.
func (w *walSyncFS) syncAll() error {
	w.mu.Lock()
	files := make([]*walSyncFile, 0, len(w.files))
	for f := range w.files {
		files = append(files, f)
	}
	w.mu.Unlock()
	for _, f := range files {
		if err := f.syncNow(); err != nil {
			w.fail(err)
		}
	}
	return w.failed()
}

func (w *walSyncFS) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
		w.log.Error("kv: WAL fsync failed; commits fail from now on", "err", err)
	}
}

func (w *walSyncFS) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *walSyncFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	wf := &walSyncFile{File: f, fs: w}
	w.mu.Lock()
	w.files[wf] = struct{}{}
	w.mu.Unlock()
	return wf, nil
}

// Create implements vfs.FS.
func (w *walSyncFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.Create(name, category)
	if category != walCategory {
		return f, err
	}
	return w.wrap(f, err)
}

// ReuseForWrite implements vfs.FS; Pebble recycles old WAL files with it.
func (w *walSyncFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.ReuseForWrite(oldname, newname, category)
	if category != walCategory {
		return f, err
	}
	return w.wrap(f, err)
}

// Unwrap implements vfs.FS.
func (w *walSyncFS) Unwrap() vfs.FS { return w.FS }

// walSyncFile is a WAL file whose Sync returns at once, the data being
// written already (Pebble's LogWriter writes, then syncs), and leaves the
// fsync to the background loop.
type walSyncFile struct {
	vfs.File
	fs    *walSyncFS
	dirty atomic.Bool
	// mu serializes the background fsync with Close.
	mu     sync.Mutex
	closed bool
}

// Write implements vfs.File.
func (f *walSyncFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if n > 0 {
		f.dirty.Store(true)
	}
	return n, err
}

// Sync implements vfs.File.
func (f *walSyncFile) Sync() error { return f.deferSync() }

// SyncData implements vfs.File; vfs.NewSyncingFile, which Pebble wraps WAL
// files in, turns Sync into SyncData.
func (f *walSyncFile) SyncData() error { return f.deferSync() }

func (f *walSyncFile) deferSync() error {
	if err := f.fs.failed(); err != nil {
		return err
	}
	f.fs.deferred.Add(1)
	return nil
}

// syncNow fsyncs the file if anything was written since the last fsync.
func (f *walSyncFile) syncNow() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || !f.dirty.Swap(false) {
		return nil
	}
	f.fs.synced.Add(1)
	return f.File.SyncData()
}

// Close implements vfs.File: it fsyncs what the loop has not yet.
func (f *walSyncFile) Close() error {
	err := f.syncNow()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.fs.mu.Lock()
	delete(f.fs.files, f)
	f.fs.mu.Unlock()
	if err != nil {
		f.fs.fail(err)
	}
	return errors.Join(err, f.File.Close())
}
