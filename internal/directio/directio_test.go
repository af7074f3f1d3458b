package directio

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Files of every shape (empty, under a block, whole blocks, across several
// buffers, odd tails), written in writes of random sizes, read back
// exactly, whether or not the file system takes direct I/O.
func TestWriterContents(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 100, blockSize - 1, blockSize, blockSize + 1, bufferSize - 1, bufferSize, bufferSize + 1,
		3*bufferSize + 12345}
	for i := 0; i < 5; i++ {
		sizes = append(sizes, rng.IntN(4*bufferSize))
	}
	for i, size := range sizes {
		want := randBytes(rng, size)
		path := filepath.Join(dir, "f")
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Logf("direct I/O in %s: %v", dir, w.Direct())
		}
		for p := want; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(3*blockSize))
			if rng.IntN(20) == 0 {
				n = min(len(p), 2*bufferSize)
			}
			if k, err := w.Write(p[:n]); err != nil || k != n {
				t.Fatalf("write: %d, %v", k, err)
			}
			p = p[n:]
		}
		if w.Size() != int64(size) {
			t.Fatalf("Size %d, want %d", w.Size(), size)
		}
		if i%2 == 0 {
			err = w.Sync()
		} else {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("size %d: read back %d bytes that differ", size, len(got))
		}
	}
}

func TestWriterClosedTwice(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
}

func TestAlignedBuf(t *testing.T) {
	for _, n := range []int{blockSize, bufferSize} {
		if b := alignedBuf(n); uintptrOf(b)%blockSize != 0 || len(b) != n {
			t.Fatalf("alignedBuf(%d): address %% %d = %d, len %d", n, blockSize, uintptrOf(b)%blockSize, len(b))
		}
	}
}

// A Reader gives a file's bytes from any offset to its end, in reads and
// single bytes of random sizes, with buffers smaller and larger than the
// file; on a file system with direct I/O and on one without (tmpfs, where
// the test machine has one), and when closed before the end.
func TestReaderContents(t *testing.T) {
	dirs := []string{t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "directio")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			dirs = append(dirs, d)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dir := range dirs {
		for _, size := range []int{0, 1, blockSize - 1, blockSize, 3*bufferSize + 12345, rng.IntN(4 * bufferSize)} {
			want := randBytes(rng, size)
			path := filepath.Join(dir, "f")
			w, err := Create(path)
			if err == nil {
				_, err = w.Write(want)
			}
			if err == nil {
				err = w.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				off := 0
				if size > 0 {
					off = rng.IntN(size + 1)
				}
				bufSize := []int{1, blockSize, 5000, bufferSize}[rng.IntN(4)]
				r, err := Open(path, int64(off), bufSize)
				if err != nil {
					t.Fatal(err)
				}
				var got []byte
				for {
					if rng.IntN(2) == 0 {
						b, err := r.ReadByte()
						if err == io.EOF {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, b)
						continue
					}
					p := make([]byte, 1+rng.IntN(3*blockSize))
					n, err := r.Read(p)
					got = append(got, p[:n]...)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(got, want[off:]) {
					t.Fatalf("%s: %d-byte file from %d with %d-byte buffers: read %d bytes, not the %d written", dir, size, off, bufSize, len(got), size-off)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			// Closed before the end, with the read-ahead goroutine blocked.
			r, err := Open(path, 0, blockSize)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
