package directio

import (
	"io"
	"os"
)

// Reader reads a file from an offset to its end around the page cache, one
// buffer ahead of its caller: a goroutine reads the next buffer while the
// caller consumes the current one, which is what the kernel's read-ahead
// does for reads through the page cache. It is meant for files a Writer
// wrote, which are not in the page cache: read through it they would cost
// the CPU a copy into cache pages and one out of them. Not safe for
// concurrent use; Close stops the goroutine.
type Reader struct {
	f      *os.File
	full   chan chunk  // buffers read, in file order
	free   chan []byte // buffers consumed, for the goroutine to refill
	stop   chan struct{}
	exited chan struct{}

	cur  chunk  // the buffer being consumed
	data []byte // its unread bytes
	err  error  // the error after data (io.EOF at the end)
}

type chunk struct {
	buf  []byte // the whole aligned buffer
	data []byte // what was read into it
	err  error
}

// Open starts reading the file at path from off, with two buffers of
// about size bytes each.
func Open(path string, off int64, size int) (*Reader, error) {
	f, direct, err := openRead(path)
	if err != nil {
		return nil, err
	}
	size = max(blockSize, (size+blockSize-1)/blockSize*blockSize)
	r := &Reader{f: f, full: make(chan chunk, 1), free: make(chan []byte, 2),
		stop: make(chan struct{}), exited: make(chan struct{})}
	r.free <- alignedBuf(size)
	r.free <- alignedBuf(size)
	go r.readAhead(off, direct)
	return r, nil
}

// readAhead fills free buffers from the file in order until its end, an
// error or Close. Direct reads start on a block boundary; the bytes before
// off are dropped.
func (r *Reader) readAhead(off int64, direct bool) {
	defer close(r.exited)
	pos, skip := off, 0
	if direct {
		pos = off &^ (blockSize - 1)
		skip = int(off - pos)
	}
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.stop:
			return
		}
		n, err := readFull(r.f, buf, pos, direct)
		if err != nil && direct && pos <= off && dropDirect(r.f, err) {
			// The file system took the direct open but not the read.
			direct, pos, skip = false, off, 0
			n, err = readFull(r.f, buf, pos, direct)
		}
		pos += int64(n)
		c := chunk{buf: buf, data: buf[min(skip, n):n], err: err}
		skip = max(0, skip-n)
		select {
		case r.full <- c:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// readFull reads buf from pos on. A direct read that comes back short has
// met the end of the file, and could not go on from an unaligned offset.
func readFull(f *os.File, buf []byte, pos int64, direct bool) (int, error) {
	if !direct {
		return f.ReadAt(buf, pos)
	}
	n := 0
	for n < len(buf) {
		m, err := pread(f, buf[n:], pos+int64(n))
		n += m
		if err != nil {
			return n, err
		}
		if m%blockSize != 0 || m == 0 {
			return n, io.EOF
		}
	}
	return n, nil
}

// next makes the next chunk the current one, giving the consumed buffer
// back for refilling.
func (r *Reader) next() bool {
	if r.err != nil {
		return false
	}
	if r.cur.buf != nil {
		r.free <- r.cur.buf
	}
	r.cur = <-r.full
	r.data, r.err = r.cur.data, r.cur.err
	return true
}

// Read copies the file's next bytes into p.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.data) == 0 {
		if !r.next() {
			return 0, r.err
		}
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// ReadByte returns the file's next byte.
func (r *Reader) ReadByte() (byte, error) {
	for len(r.data) == 0 {
		if !r.next() {
			return 0, r.err
		}
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b, nil
}

// Close stops the read-ahead and closes the file.
func (r *Reader) Close() error {
	close(r.stop)
	<-r.exited
	return r.f.Close()
}
