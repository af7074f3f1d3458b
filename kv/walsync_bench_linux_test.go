package kv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

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

// BenchmarkWALSyncSplit is the in-place case of BenchmarkWALSync taken
// apart: an O_DIRECT write of the record's 4 KiB block, which returns once
// the device has the data, then an fdatasync, which then only flushes the
// device's cache. It reports each step's median: how much of a durable
// commit's sync is moving the data and how much is the flush.
func BenchmarkWALSyncSplit(b *testing.B) {
	const block = 4096
	path := filepath.Join(b.TempDir(), "wal")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	size := int64(b.N+1) * block
	if _, err := f.WriteAt(make([]byte, size), 0); err != nil {
		b.Fatal(err)
	}
	must(b, f.Sync())
	d, err := os.OpenFile(path, os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Skipf("this file system refuses O_DIRECT: %v", err)
	}
	defer d.Close()
	raw := make([]byte, 2*block)
	buf := raw[block-int(uintptr(unsafe.Pointer(&raw[0]))%block):][:block]
	writes := make([]time.Duration, 0, b.N)
	syncs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := d.WriteAt(buf, int64(i)*block); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		must(b, unix.Fdatasync(int(d.Fd())))
		writes = append(writes, t1.Sub(t0))
		syncs = append(syncs, time.Since(t1))
	}
	b.StopTimer()
	b.ReportMetric(median(writes), "write-µs")
	b.ReportMetric(median(syncs), "flush-µs")
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds()) / 1e3
}

// BenchmarkWALSyncCPU is the CPU, user and system, one durable append
// costs the process (cpu-µs/op, from getrusage), three ways: a 4 KiB
// O_DIRECT write then an fdatasync (what the WAL does), a buffered
// 300-byte write then an fdatasync, and one pwritev2 with RWF_DSYNC on
// the direct file. On a disk without FUA the kernel turns the last into a
// write and a flush as well.
//
//	go test ./kv -run '^$' -bench WALSyncCPU -benchtime 5000x
func BenchmarkWALSyncCPU(b *testing.B) {
	const block = 4096
	raw := make([]byte, 2*block)
	buf := raw[block-int(uintptr(unsafe.Pointer(&raw[0]))%block):][:block]
	for _, mode := range []string{"direct+fdatasync", "buffered+fdatasync", "direct-RWF_DSYNC"} {
		b.Run(mode, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "wal")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(make([]byte, int64(b.N+1)*block), 0); err != nil {
				b.Fatal(err)
			}
			must(b, f.Sync())
			w := f
			if mode != "buffered+fdatasync" {
				if w, err = os.OpenFile(path, os.O_WRONLY|unix.O_DIRECT, 0); err != nil {
					b.Skipf("this file system refuses O_DIRECT: %v", err)
				}
				defer w.Close()
			}
			c0 := processCPU()
			b.ResetTimer()
			for i := range b.N {
				switch mode {
				case "direct+fdatasync":
					_, err = w.WriteAt(buf, int64(i)*block)
					if err == nil {
						err = unix.Fdatasync(int(w.Fd()))
					}
				case "buffered+fdatasync":
					_, err = w.WriteAt(buf[:300], int64(i)*300)
					if err == nil {
						err = unix.Fdatasync(int(w.Fd()))
					}
				default:
					_, err = unix.Pwritev2(int(w.Fd()), [][]byte{buf}, int64(i)*block, unix.RWF_DSYNC)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var r unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
