package kv

import (
	"errors"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/reorgdb/reorgdb/internal/directio"
)

// A commit waits for its WAL fsync, so the fsync's latency is the commit's.
// An fdatasync is one write of the new data only when the file's size and
// block map stay as they are; when the WAL grows past its size, or into
// space fallocate reserved but never wrote (Pebble preallocates with
// FALLOC_FL_KEEP_SIZE), the file system must also write the inode or the
// extent tree, and every commit pays for two writes. A recycled WAL
// (Pebble reuses obsolete ones) is free of that up to its old size; a new
// one is not.
//
// So a WAL file's preallocated space is filled with zeros in the
// background, ahead of Pebble's appends, and synced: Pebble then writes
// into blocks that exist within the file's size. Pebble's WAL reader
// treats a zeroed tail as the end of the log, as it does the preallocated
// or recycled tails it leaves itself.

// zeroChunk is how much a zeroer writes, then syncs, at a time: small
// enough that an append waiting for it waits little.
const zeroChunk = 256 << 10

var zeros = make([]byte, zeroChunk)

// Where commits are durable, every WAL append is fsynced at once, so
// passing it through the page cache only costs CPU: the kernel copies it
// into a page, and the fdatasync writes that page back before it flushes
// the device's cache. So there a WAL file's appends are direct writes
// (directio.Appender) and the fdatasync only flushes; where the file
// system refuses direct I/O they go through the page cache. Relaxed
// durability keeps the page cache: there a commit waits for its write
// but not for an fsync, and a buffered write returns sooner.

// walFile is a WAL file whose preallocated space is zeroed ahead of
// Pebble's appends, and whose appends may be direct writes.
type walFile struct {
	*diskFile
	direct *directio.Appender // nil: appends go through the page cache
	mu     sync.Mutex
	// size is the file's size: every byte below it has been written, by
	// Pebble or with zeros; appended is where Pebble's next append goes.
	size, appended int64
	target         int64 // the end of the space Pebble preallocated
	closed         bool
	wake           chan struct{}
	done           chan struct{}
}

// newWALFile wraps a WAL file Pebble just created or recycled at path;
// direct asks for direct appends.
func newWALFile(f *diskFile, path string, direct bool) *walFile {
	w := &walFile{diskFile: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if st, err := f.File.Stat(); err == nil {
		w.size = st.Size()
	}
	if direct {
		a, err := directio.OpenAppender(path)
		if err == nil {
			w.direct = a
			f.fs.directWALs.Add(1)
		} else if !errors.Is(err, directio.ErrNoDirectIO) {
			f.fs.log.Warn("kv: WAL appends go through the page cache", "path", path, "err", err)
		}
	}
	go w.zero()
	return w
}

// Write appends p. It excludes the zeroer, which writes only at or above
// size, that is above every append.
func (w *walFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.direct != nil {
		return w.writeDirect(p)
	}
	n, err := w.diskFile.Write(p)
	w.appended += int64(n)
	w.size = max(w.size, w.appended)
	return n, err
}

// writeDirect appends p with a direct write, retried like any WAL append
// when the disk is full. A file system that took the direct open but
// refuses the first direct write gets the page cache instead.
func (w *walFile) writeDirect(p []byte) (int, error) {
	n, err := w.fs.writeWAL(w.direct.Write, p)
	if errors.Is(err, syscall.EINVAL) && w.appended == 0 && n == 0 {
		w.fs.log.Warn("kv: WAL appends go through the page cache", "err", err)
		w.direct.Close()
		w.direct = nil
		n, err = w.diskFile.Write(p)
	}
	w.appended += int64(n)
	w.size = max(w.size, w.appended)
	if w.direct != nil {
		w.size = max(w.size, w.direct.End())
	}
	return n, err
}

// Preallocate reserves the space as Pebble asks, then has it zeroed.
func (w *walFile) Preallocate(off, n int64) error {
	if err := w.diskFile.Preallocate(off, n); err != nil {
		return err
	}
	w.mu.Lock()
	w.target = max(w.target, off+n)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// zero writes zeros from size up to target, a chunk at a time, each chunk
// synced so that Pebble's next fsync does not carry it. It gives up on
// the first error: Pebble's own appends then extend the file as usual.
func (w *walFile) zero() {
	defer close(w.done)
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		start, end := w.size, min(w.size+zeroChunk, w.target)
		if start >= end {
			w.mu.Unlock()
			<-w.wake
			continue
		}
		_, err := w.File.WriteAt(zeros[:end-start], start)
		if err == nil {
			w.size = end
		}
		w.mu.Unlock()
		if err == nil {
			err = w.File.SyncData()
		}
		if err != nil {
			return
		}
	}
}

// Close stops the zeroer before the file goes.
func (w *walFile) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	var err error
	if w.direct != nil {
		err = w.direct.Close()
	}
	return errors.Join(w.diskFile.Close(), err)
}

var _ vfs.File = (*walFile)(nil)
