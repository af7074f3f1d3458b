package directio

import (
	"errors"
	"os"
)

// appendChunk bounds the bytes one Appender write system call moves, so a
// large append does not grow the buffer without limit.
const appendChunk = 1 << 20

// Appender writes a file from its start through direct I/O, each Write
// reaching the device before it returns; a later fdatasync of the file
// then only has to flush the device's cache. For a log synced after nearly
// every write this saves the kernel's work of copying each append into a
// page cache page and writing that page back from inside the fdatasync.
//
// Direct writes move whole aligned blocks, so an append that ends inside
// a block writes that block padded with zeros, and the next append
// rewrites it with the same leading bytes: a crash in the middle of the
// rewrite can tear only the new bytes, never ones an earlier Write
// returned. The padding leaves zeros past the logical end of the file,
// which log readers that stop at zeros take as its end.
//
// Appender is not safe for concurrent use.
type Appender struct {
	f   *os.File
	off int64  // the logical end: where the next Write's bytes go
	buf []byte // aligned; buf[:tail] are the bytes of the block holding off
	// tail is off's distance into its block.
	tail int
}

// ErrNoDirectIO is OpenAppender's error where the OS or file system does
// not do direct I/O.
var ErrNoDirectIO = errors.New("directio: direct I/O not supported")

// OpenAppender opens the existing file at path for direct appends from
// offset 0. Where direct I/O is not available it returns ErrNoDirectIO.
func OpenAppender(path string) (*Appender, error) {
	f, err := openDirect(path)
	if err != nil {
		return nil, err
	}
	return &Appender{f: f, buf: alignedBuf(4 * blockSize)}, nil
}

// Write appends p, in writes of up to appendChunk. On an error the bytes
// it reports written stay written, and the rest of p may be written again.
func (a *Appender) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		c := min(len(p), appendChunk)
		if err := a.write(p[:c]); err != nil {
			return written, err
		}
		written += c
		p = p[c:]
	}
	return written, nil
}

func (a *Appender) write(p []byte) error {
	start := a.off - int64(a.tail)
	end := a.tail + len(p)
	n := (end + blockSize - 1) / blockSize * blockSize
	if n > len(a.buf) {
		nb := alignedBuf(max(n, 2*len(a.buf)))
		copy(nb, a.buf[:a.tail])
		a.buf = nb
	}
	copy(a.buf[a.tail:], p)
	clear(a.buf[end:n])
	if _, err := a.f.WriteAt(a.buf[:n], start); err != nil {
		return err
	}
	a.off += int64(len(p))
	whole := end / blockSize * blockSize
	a.tail = copy(a.buf, a.buf[whole:end])
	return nil
}

// Offset is the logical end: the bytes written so far.
func (a *Appender) Offset() int64 { return a.off }

// End is where the written blocks end: Offset rounded up to a block.
func (a *Appender) End() int64 {
	return (a.off + blockSize - 1) / blockSize * blockSize
}

// Close closes the appender's descriptor; it neither syncs nor cuts the
// padding off.
func (a *Appender) Close() error { return a.f.Close() }
