//go:build !linux

package directio

import (
	"os"
	"unsafe"
)

func create(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	return f, false, err
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func dropDirect(*os.File, error) bool { return false }
