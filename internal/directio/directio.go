// Package directio writes and reads files around the page cache: files
// written once, in one pass, and read back at most once (an index build's
// spilled runs and sstables; Writer, and Reader for the runs), and logs
// synced after nearly every append (the WAL; Appender).
// Through the page cache such bytes cost the CPU twice, once copying them
// into cache pages and once when the kernel writes those pages back;
// direct I/O skips both copies. The CPU a build saves is CPU that users'
// transactions keep.
//
// Writer's writes go through an aligned buffer in whole blocks; the last, partial
// block is written padded and the file is cut to its length. Where the OS
// or file system refuses direct I/O (tmpfs, or no O_DIRECT at all), the
// same code writes (and Reader reads) through the page cache.
package directio

import (
	"errors"
	"os"
	"unsafe"
)

// blockSize is the alignment of direct writes: of the buffer's address, of
// the file offset and of the length. 4 KiB covers the logical block size
// of every disk in use (512 bytes or 4 KiB).
const blockSize = 4096

// bufferSize is the writer's buffer: each write system call moves this
// much.
const bufferSize = 1 << 20

// Writer writes a new file. It is not safe for concurrent use.
type Writer struct {
	f      *os.File
	direct bool
	buf    []byte // aligned; buf[:n] is pending
	n      int
	size   int64 // bytes written by the caller
	wrote  bool  // whether anything reached the file
	err    error
}

// Create creates (or truncates) the file at path for writing.
func Create(path string) (*Writer, error) {
	f, direct, err := create(path)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, direct: direct, buf: alignedBuf(bufferSize)}, nil
}

// Direct says whether the writes bypass the page cache.
func (w *Writer) Direct() bool { return w.direct }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.size }

// Write buffers p, writing out full buffers.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	written := len(p)
	for len(p) > 0 {
		c := copy(w.buf[w.n:], p)
		w.n += c
		p = p[c:]
		if w.n == len(w.buf) {
			if err := w.flush(w.n); err != nil {
				return written - len(p), err
			}
		}
	}
	w.size += int64(written)
	return written, nil
}

// flush writes buf[:n] (n a multiple of blockSize unless not direct).
func (w *Writer) flush(n int) error {
	_, err := w.f.Write(w.buf[:n])
	if err != nil && w.direct && !w.wrote && dropDirect(w.f, err) {
		// The file system took the open but not the first write.
		w.direct = false
		_, err = w.f.Write(w.buf[:w.n])
	}
	if err != nil {
		w.err = err
		return err
	}
	w.wrote, w.n = true, 0
	return nil
}

// Sync writes what is buffered, makes the file durable and closes it.
func (w *Writer) Sync() error { return w.finish(true) }

// Close writes what is buffered and closes the file, without making it
// durable (for temporary files).
func (w *Writer) Close() error { return w.finish(false) }

func (w *Writer) finish(sync bool) error {
	if w.f == nil {
		return errors.New("directio: file already closed")
	}
	err := w.err
	if err == nil && w.n > 0 {
		n := w.n
		if w.direct {
			// Pad the last block; the truncate below cuts the padding off.
			n = (n + blockSize - 1) / blockSize * blockSize
			clear(w.buf[w.n:n])
		}
		err = w.flush(n)
	}
	if err == nil && w.direct {
		err = w.f.Truncate(w.size)
	}
	if err == nil && sync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// Abort closes the file without writing what is buffered; the caller
// removes it.
func (w *Writer) Abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// alignedBuf returns n bytes starting on a blockSize boundary.
func alignedBuf(n int) []byte {
	b := make([]byte, n+blockSize)
	off := 0
	if r := int(uintptrOf(b) % blockSize); r != 0 {
		off = blockSize - r
	}
	return b[off : off+n : off+n]
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
