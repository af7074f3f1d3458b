package ddl

// What an ingest build does with the process's memory while it runs.

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/internal/malloctrim"
)

// While ingest builds run and no user workload does, the garbage
// collector runs at a lower target than the server's default (the sort
// buffers are outside the Go heap, but the scan's and merge's short-lived
// garbage is not). While users are active the server's own target stays:
// the target is process-wide, so a lower one also collects the users'
// garbage more often, and that costs their throughput more than the
// memory is worth (docs/benchmarks.md, "Memory"). The C
// heap is trimmed every second while builds run; when the last build
// ends, the memory goes back to the OS.
var memHolds struct {
	sync.Mutex
	n                int
	stopGC, stopTrim func()
}

const buildGCPercent = 50

func (m *Manager) holdMemory() (release func()) {
	memHolds.Lock()
	if memHolds.n == 0 {
		memHolds.stopGC = pace.WhileIdle(m.fg.Active, lowerGCPercent, pace.Window)
		// The snapshot scan churns Pebble's block cache, whose C memory
		// glibc would keep resident in holes: trim it while builds run.
		stop := make(chan struct{})
		go malloctrim.Every(time.Second, stop)
		memHolds.stopTrim = func() { close(stop) }
	}
	memHolds.n++
	memHolds.Unlock()
	return func() {
		memHolds.Lock()
		defer memHolds.Unlock()
		if memHolds.n--; memHolds.n == 0 {
			memHolds.stopGC()
			memHolds.stopTrim()
			go func() {
				debug.FreeOSMemory()
				malloctrim.Trim()
			}()
		}
	}
}

// lowerGCPercent sets the garbage collector's target to buildGCPercent
// (unless it is lower already) and returns what restores it.
func lowerGCPercent() (restore func()) {
	old := debug.SetGCPercent(buildGCPercent)
	if old >= 0 && old < buildGCPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	// Start from the live heap, not from the garbage the old target let
	// pile up.
	runtime.GC()
	return func() { debug.SetGCPercent(old) }
}

// borrowCache lets the build's sort buffers displace n bytes of Pebble's
// block cache while no user workload is running, so that the server's
// memory grows by the budget minus n: the build's own scan reads each
// block once and gains nothing from the cache. As soon as users are
// active the cache gets its room back, since their reads do depend on it.
func (m *Manager) borrowCache(n int64) (stop func()) {
	return pace.WhileIdle(m.fg.Active, func() func() { return m.store.ChargeCache(n) }, pace.Window)
}
