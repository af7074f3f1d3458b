package directio

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func create(path string) (*os.File, bool, error) {
	return openMaybeDirect(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// openRead opens path for reading, around the page cache if the file
// system takes it.
func openRead(path string) (*os.File, bool, error) {
	return openMaybeDirect(path, os.O_RDONLY, 0)
}

// openMaybeDirect opens path with flag and O_DIRECT, or without O_DIRECT
// where the file system does not do direct I/O; it says which.
func openMaybeDirect(path string, flag int, perm os.FileMode) (*os.File, bool, error) {
	f, err := os.OpenFile(path, flag|syscall.O_DIRECT, perm)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, syscall.EINVAL) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, flag, perm)
	return f, false, err
}

// dropDirect turns direct I/O off on f after a write or read failed with
// err, if err says the file system does not take direct I/O.
func dropDirect(f *os.File, err error) bool {
	if !errors.Is(err, syscall.EINVAL) {
		return false
	}
	fl, ferr := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if ferr != nil {
		return false
	}
	_, ferr = unix.FcntlInt(f.Fd(), unix.F_SETFL, fl&^unix.O_DIRECT)
	return ferr == nil
}

func openDirect(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
	if errors.Is(err, syscall.EINVAL) {
		return nil, ErrNoDirectIO
	}
	return f, err
}

// pread is one pread(2): direct reads must not be split or continued at
// an unaligned offset, as os.File.ReadAt would after a short read.
func pread(f *os.File, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(int(f.Fd()), b, off)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}
