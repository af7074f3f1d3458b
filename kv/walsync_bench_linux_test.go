package kv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkWALSync is a 300-byte write and fdatasync into a file's
// existing blocks (what a zeroed or recycled WAL gets, walzero.go) and at
// its end (what a growing file gets): the floor of a durable commit on
// this disk, and why the WAL is zeroed ahead of its appends.
func BenchmarkWALSync(b *testing.B) {
	rec := make([]byte, 300)
	for _, mode := range []string{"in-place", "append"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "wal"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if mode == "in-place" {
				must(b, f.Truncate(int64(b.N)*int64(len(rec))))
				if _, err := f.WriteAt(make([]byte, b.N*len(rec)), 0); err != nil {
					b.Fatal(err)
				}
				must(b, f.Sync())
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.WriteAt(rec, int64(i*len(rec))); err != nil {
					b.Fatal(err)
				}
				must(b, unix.Fdatasync(int(f.Fd())))
			}
		})
	}
}
