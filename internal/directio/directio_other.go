//go:build !linux

package directio

import (
	"os"
)

func create(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	return f, false, err
}

func dropDirect(*os.File, error) bool { return false }

func openDirect(string) (*os.File, error) { return nil, ErrNoDirectIO }

func openRead(path string) (*os.File, bool, error) {
	f, err := os.Open(path)
	return f, false, err
}

func pread(f *os.File, b []byte, off int64) (int, error) { return f.ReadAt(b, off) }
