package directio

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Appends of random sizes (within a block, across blocks, past a chunk)
// into a file that holds older bytes, as a recycled log does: after each
// one the file reads back as every byte appended so far, then zeros to the
// end of the block, then the older bytes.
func TestAppenderContents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	rng := rand.New(rand.NewPCG(3, 4))
	old := bytes.Repeat([]byte{0xee}, 3*appendChunk)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAppender(path)
	if errors.Is(err, ErrNoDirectIO) {
		t.Skipf("no direct I/O in %s", path) // tmpfs; CI's disk has it
	}
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var want []byte
	for i := 0; i < 60; i++ {
		n := rng.IntN(300)
		switch rng.IntN(6) {
		case 0:
			n = rng.IntN(3 * blockSize)
		case 1:
			n = appendChunk + rng.IntN(blockSize)
		case 2:
			n = 0
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(1 + rng.IntN(255))
		}
		if k, err := a.Write(p); err != nil || k != n {
			t.Fatalf("write %d: %d, %v", n, k, err)
		}
		want = append(want, p...)
		if a.Offset() != int64(len(want)) || a.End()%blockSize != 0 || a.End()-a.Offset() >= blockSize {
			t.Fatalf("Offset %d End %d after %d bytes", a.Offset(), a.End(), len(want))
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("after %d appends the file differs from what was appended", i+1)
		}
		if pad := got[len(want):a.End()]; !bytes.Equal(pad, make([]byte, len(pad))) {
			t.Fatalf("padding after %d bytes is not zeros", len(want))
		}
		if end := a.End(); end < int64(len(old)) && !bytes.Equal(got[end:], old[end:]) {
			t.Fatalf("bytes past the last block changed")
		}
	}
}
