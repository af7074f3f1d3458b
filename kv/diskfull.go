package kv

import (
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A full disk must make writes fail, not hang, and must not take the rest
// of the store down with it. Left alone, Pebble copes badly: a memtable
// flush that fails is retried at once, forever (a core spinning and the log
// flooded), the memtables waiting for it pile up until commits stall with no
// timeout, and a commit whose WAL write fails is fatal to the process.
//
// So the store watches every file operation Pebble makes (diskFS), and
// keeps a reserve: a file (reserveFile, as large as the WAL Pebble
// preallocates plus the flush of as many memtables as may be queued) set aside in the data
// directory at Open. The first ENOSPC or EDQUOT puts the store in the
// disk-full state:
//
//   - the reserve is deleted at once, which gives the WAL room for the
//     commits already on their way into it (a WAL write or preallocation
//     that hit the full disk is retried once, into that room), and a
//     flush room for the memtable they filled, so that a commit admitted
//     just before the disk filled does not wait in Pebble's write stall;
//   - commits, GC passes and ingestions fail at once with a *DiskFullError
//     (errors.Is ErrDiskFull) without reaching Pebble, so no memtable grows
//     toward a stall and no further WAL write is made;
//   - reads go on as usual;
//   - Pebble's retries of failed flushes and compactions are paced to one a
//     second (diskFS delays creating their files), and Close does not wait
//     for them;
//   - once a second the free space is checked, and when there is room for
//     resumeBytes besides a new reserve, the reserve is set aside again and
//     writes are accepted again.
//
// A store opened where the reserve cannot be set aside starts in the
// disk-full state.
//
// Every commit acknowledged before stays durable: it was fsynced (or, with
// NoSync, written to the operating system) before the disk filled, and
// Pebble replays it from the WAL after a restart.

// ErrDiskFull is matched (errors.Is) by the errors of writes refused because
// the data directory's file system is full.
var ErrDiskFull = errors.New("kv: disk full")

// DiskFullError is the error of a write refused because the file system is
// full.
type DiskFullError struct {
	Path string // the file whose write hit the full disk, else the directory
	Err  error  // that write's error
}

// Error reads "kv: disk full (path): ...".
func (e *DiskFullError) Error() string {
	return ErrDiskFull.Error() + " (" + e.Path + "): writes fail until space is freed: " + e.Err.Error()
}

// Is makes errors.Is(err, ErrDiskFull) true.
func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

func (e *DiskFullError) Unwrap() error { return e.Err }

// isNoSpace reports whether err means the file system (or the user's quota)
// is full.
func isNoSpace(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT))
}

// reserveFile is the name of the reserve in the data directory. Pebble
// ignores files it does not know.
const reserveFile = "REORGDB-DISK-RESERVE"

// diskRetryInterval paces Pebble's retries of background work while the
// disk is full, and how often free space is checked.
const diskRetryInterval = time.Second

// diskFS is a vfs.FS that notices a full disk; see above.
type diskFS struct {
	vfs.FS
	dir string
	log *slog.Logger
	// reserveBytes is the reserve's size; the disk-full state ends once
	// resumeBytes are free besides a new reserve.
	reserveBytes, resumeBytes int64
	// backlog says whether memtables wait to be flushed; writes resume only
	// once they are flushed, so that the reserve, if the disk fills again,
	// is enough for the flush that ends Pebble's write stall.
	backlog func() bool
	// directWAL asks for direct appends to WAL files (walzero.go).
	directWAL bool
	// directWALs counts the WAL files that got them, for tests.
	directWALs atomic.Int64

	mu       sync.Mutex
	full     *DiskFullError // nil unless the disk is full
	reserved bool           // the reserve is set aside
	lastHit  time.Time      // of the latest ENOSPC

	started bool // the monitor runs
	stop    chan struct{}
	done    chan struct{}
}

func newDiskFS(inner vfs.FS, dir string, log *slog.Logger, reserveBytes, resumeBytes int64) *diskFS {
	return &diskFS{
		FS:           inner,
		dir:          dir,
		log:          log,
		reserveBytes: reserveBytes,
		resumeBytes:  resumeBytes,
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
	}
}

// start sets the reserve aside (or enters the disk-full state if it cannot)
// and starts the monitor. The directory must exist.
func (d *diskFS) start() {
	if err := d.setReserve(); err != nil {
		if !isNoSpace(err) {
			d.log.Warn("kv: cannot set aside the disk reserve", "err", err)
		}
		d.check(err)
	}
	d.started = true
	go d.monitor()
}

// setReserve (re)creates the reserve file.
func (d *diskFS) setReserve() error {
	path := d.FS.PathJoin(d.dir, reserveFile)
	f, err := d.FS.Create(path, "reorgdb-reserve")
	if err != nil {
		return err
	}
	// Preallocated (fallocate, keeping the file's size 0: du shows the
	// space, ls does not); written where the file system cannot
	// preallocate.
	if err = f.Preallocate(0, d.reserveBytes); err != nil && !isNoSpace(err) {
		buf := make([]byte, 1<<20)
		err = nil
		for n := int64(0); n < d.reserveBytes && err == nil; n += int64(len(buf)) {
			_, err = f.Write(buf[:min(int64(len(buf)), d.reserveBytes-n)])
		}
	}
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		_ = d.FS.Remove(path)
		return err
	}
	d.mu.Lock()
	d.reserved = true
	d.mu.Unlock()
	return nil
}

// Close stops the monitor and releases anything waiting in pace.
func (d *diskFS) Close() {
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	if d.started {
		<-d.done
	}
}

// Err returns the disk-full error while the disk is full, else nil.
func (d *diskFS) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.full == nil {
		return nil // not a typed nil
	}
	return d.full
}

// check notes err if it means the disk is full, and returns it unchanged.
// Entering the disk-full state releases the reserve.
func (d *diskFS) check(err error) error {
	if !isNoSpace(err) {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastHit = time.Now()
	if d.reserved {
		if rerr := d.FS.Remove(d.FS.PathJoin(d.dir, reserveFile)); rerr != nil {
			d.log.Error("kv: cannot release the disk reserve", "err", rerr)
		}
		d.reserved = false
	}
	if d.full == nil {
		full := &DiskFullError{Path: d.dir, Err: err}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			full.Path = pe.Path
		}
		d.full = full
		d.log.Error("kv: disk full; writes fail until space is freed, reads go on", "dir", d.dir, "err", err)
	}
	return err
}

// pace delays the creation of a file for background work (a flush or
// compaction output) while the disk is full, so that Pebble's immediate
// retries of failed background work run about once per diskRetryInterval
// instead of spinning.
func (d *diskFS) pace() {
	d.mu.Lock()
	wait := time.Duration(0)
	if d.full != nil {
		wait = diskRetryInterval - time.Since(d.lastHit)
	}
	d.mu.Unlock()
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.stop:
	}
}

// monitor polls the free space.
func (d *diskFS) monitor() {
	defer close(d.done)
	t := time.NewTicker(diskRetryInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.poll()
		}
	}
}

// poll ends the disk-full state once there is room again.
func (d *diskFS) poll() {
	if d.Err() == nil {
		return
	}
	u, err := d.FS.GetDiskUsage(d.dir)
	if err != nil || u.AvailBytes < uint64(d.resumeBytes+d.reserveBytes) {
		return
	}
	if d.backlog != nil && d.backlog() {
		return
	}
	if err := d.setReserve(); err != nil {
		if !isNoSpace(err) {
			d.log.Warn("kv: cannot set aside the disk reserve", "err", err)
		}
		return
	}
	d.mu.Lock()
	d.full = nil
	d.mu.Unlock()
	d.log.Warn("kv: disk space available again; accepting writes", "dir", d.dir, "avail_bytes", u.AvailBytes)
}

func (d *diskFS) wrap(f vfs.File, err error, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil {
		return f, d.check(err)
	}
	return &diskFile{File: f, fs: d, wal: category == walCategory}, nil
}

// Create implements vfs.FS.
func (d *diskFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if category != walCategory {
		d.pace()
	}
	f, err := d.FS.Create(name, category)
	f, err = d.wrap(f, err, category)
	return d.wrapWAL(name, f, err)
}

// ReuseForWrite implements vfs.FS.
func (d *diskFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.ReuseForWrite(oldname, newname, category)
	f, err = d.wrap(f, err, category)
	return d.wrapWAL(newname, f, err)
}

// wrapWAL has the preallocated space of the new or recycled WAL at path
// zeroed, and its appends written directly if directWAL (walzero.go).
func (d *diskFS) wrapWAL(path string, f vfs.File, err error) (vfs.File, error) {
	if df, ok := f.(*diskFile); ok && err == nil && df.wal {
		return newWALFile(df, path, d.directWAL), nil
	}
	return f, err
}

// OpenReadWrite implements vfs.FS.
func (d *diskFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := d.FS.OpenReadWrite(name, category, opts...)
	return d.wrap(f, err, category)
}

// Link implements vfs.FS.
func (d *diskFS) Link(oldname, newname string) error {
	return d.check(d.FS.Link(oldname, newname))
}

// Rename implements vfs.FS.
func (d *diskFS) Rename(oldname, newname string) error {
	return d.check(d.FS.Rename(oldname, newname))
}

// MkdirAll implements vfs.FS.
func (d *diskFS) MkdirAll(dir string, perm fs.FileMode) error {
	return d.check(d.FS.MkdirAll(dir, perm))
}

// Unwrap implements vfs.FS.
func (d *diskFS) Unwrap() vfs.FS { return d.FS }

// diskFile reports the errors of its writes to its diskFS. A WAL file
// retries a write or preallocation that hit the full disk once, into the
// room the reserve left.
type diskFile struct {
	vfs.File
	fs  *diskFS
	wal bool
}

func (f *diskFile) Write(p []byte) (int, error) {
	if f.wal {
		return f.fs.writeWAL(f.File.Write, p)
	}
	n, err := f.File.Write(p)
	return n, f.fs.check(err)
}

// writeWAL appends p to a WAL file with write, which may have written
// part of p on an error. An append that hit the full disk is retried once,
// into the room the reserve left.
func (d *diskFS) writeWAL(write func([]byte) (int, error), p []byte) (int, error) {
	n, err := write(p)
	if isNoSpace(err) {
		d.check(err)
		var m int
		m, err = write(p[n:])
		n += m
	}
	return n, d.check(err)
}

func (f *diskFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.fs.check(err)
}

func (f *diskFile) Preallocate(off, n int64) error {
	err := f.File.Preallocate(off, n)
	if isNoSpace(err) && f.wal {
		f.fs.check(err)
		err = f.File.Preallocate(off, n)
	}
	return f.fs.check(err)
}

func (f *diskFile) Sync() error     { return f.fs.check(f.File.Sync()) }
func (f *diskFile) SyncData() error { return f.fs.check(f.File.SyncData()) }
func (f *diskFile) Close() error    { return f.fs.check(f.File.Close()) }

func (f *diskFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.fs.check(err)
}
