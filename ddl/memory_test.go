package ddl

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/ddl/pace"
)

func TestLowerGCPercent(t *testing.T) {
	old := debug.SetGCPercent(300)
	defer debug.SetGCPercent(old)
	restore := lowerGCPercent()
	if got := debug.SetGCPercent(buildGCPercent); got != buildGCPercent {
		t.Fatalf("GC percent %d during the hold, want %d", got, buildGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(20); got != 300 {
		t.Fatalf("GC percent %d after the hold, want 300 back", got)
	}
	// A target already lower than the build's stays.
	restore = lowerGCPercent()
	if got := debug.SetGCPercent(20); got != 20 {
		t.Fatalf("GC percent %d during the hold, want the lower 20 kept", got)
	}
	restore()
	if got := debug.SetGCPercent(20); got != 20 {
		t.Fatalf("GC percent %d after the hold, want 20", got)
	}
}

// TestHoldMemoryFollowsWorkload: a build lowers the GC target only while
// no user workload runs, and gives the server's target back at the end.
func TestHoldMemoryFollowsWorkload(t *testing.T) {
	old := debug.SetGCPercent(300)
	defer debug.SetGCPercent(old)
	gogc := func() int64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	waitGOGC := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for gogc() != want {
			if time.Now().After(deadline) {
				t.Fatalf("GC target %d, want %d", gogc(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	m := &Manager{}
	var users atomic.Int64
	m.SetForeground(users.Load)
	stopUsers := make(chan struct{})
	usersDone := make(chan struct{})
	go func() {
		defer close(usersDone)
		for {
			select {
			case <-stopUsers:
				return
			case <-time.After(5 * time.Millisecond):
				users.Add(pace.Min)
			}
		}
	}()
	for !m.fg.Active() {
		time.Sleep(time.Millisecond)
	}
	release := m.holdMemory()
	time.Sleep(5 * pace.Window)
	if got := gogc(); got != 300 {
		t.Fatalf("GC target %d while users are active, want the server's 300", got)
	}
	close(stopUsers)
	<-usersDone
	waitGOGC(buildGCPercent)
	release()
	waitGOGC(300)
}
