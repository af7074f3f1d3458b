//go:build !(linux && cgo)

// Package malloctrim gives freed C memory back to the OS.
package malloctrim

// Trim does nothing where the C heap is not glibc's.
func Trim() {}
