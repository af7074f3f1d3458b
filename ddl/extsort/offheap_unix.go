//go:build linux || darwin || freebsd

package extsort

import "golang.org/x/sys/unix"

// mapAnon returns n bytes of zeroed memory outside the Go heap. Sort
// buffers live there: the garbage collector neither scans them nor counts
// them towards its next target (a heap of 256 MiB of buffers at GOGC=50
// would let 128 MiB of garbage pile up besides), and unmapping gives the
// pages back to the OS at once when a build ends.
func mapAnon(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// unmapAnon releases memory from mapAnon; nothing may use it afterwards.
func unmapAnon(b []byte) { _ = unix.Munmap(b) }
