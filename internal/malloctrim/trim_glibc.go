//go:build linux && cgo

// Package malloctrim gives freed C memory back to the OS.
//
// Pebble keeps its block cache and memtables in C memory. glibc returns
// freed memory to the OS only from the top of its heap, so the holes a
// churning cache leaves stay resident; malloc_trim releases every free
// page wherever it is.
package malloctrim

// #include <malloc.h>
import "C"

// Trim releases the free pages of the C heap.
func Trim() { C.malloc_trim(0) }
