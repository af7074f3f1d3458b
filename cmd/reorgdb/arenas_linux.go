//go:build linux

package main

import (
	"os"
	"syscall"
)

// limitMallocArenas restarts the process with MALLOC_ARENA_MAX=1 unless
// the variable is set. Pebble's block cache and memtables live in C
// memory (with cgo), and glibc gives threads that allocate and free there
// arenas of their own: with Go's many threads filling and evicting cache
// blocks, memory is left stranded in them and the server's resident
// memory under an OLTP workload grows (docs/benchmarks.md, "Memory").
// glibc reads the variable only at process start, and mallopt from init
// comes too late to help as much.
func limitMallocArenas() {
	if os.Getenv("MALLOC_ARENA_MAX") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), "MALLOC_ARENA_MAX=1")
	syscall.Exec(exe, os.Args, env) // returns only on failure: run as we are
}
