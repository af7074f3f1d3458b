package kv

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
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

// walFile is a WAL file whose preallocated space is zeroed ahead of
// Pebble's appends.
type walFile struct {
	*diskFile
	mu sync.Mutex
	// size is the file's size: every byte below it has been written, by
	// Pebble or with zeros; appended is where Pebble's next append goes.
	size, appended int64
	target         int64 // the end of the space Pebble preallocated
	closed         bool
	wake           chan struct{}
	done           chan struct{}
}

func newWALFile(f *diskFile) *walFile {
	w := &walFile{diskFile: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if st, err := f.File.Stat(); err == nil {
		w.size = st.Size()
	}
	go w.zero()
	return w
}

// Write appends p. It excludes the zeroer, which writes only at or above
// size, that is above every append.
func (w *walFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.diskFile.Write(p)
	w.appended += int64(n)
	w.size = max(w.size, w.appended)
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
	return w.diskFile.Close()
}

var _ vfs.File = (*walFile)(nil)
