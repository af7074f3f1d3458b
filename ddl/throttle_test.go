package ddl

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// TestPacerShare: while users are active a goroutine sleeps so that its
// work is its share of the CPUs; with no users, or no limit, it never
// sleeps.
func TestPacerShare(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		share, workers int
		active         bool
		wantSleep      time.Duration // per 10ms of work
	}{
		{share: 25, workers: 1, active: false, wantSleep: 0},
		{share: 100, workers: 4, active: true, wantSleep: 0},
		{share: 25, workers: 1, active: true},
		{share: 25, workers: 4, active: true},
		{share: 10, workers: 2, active: true},
	} {
		per := float64(tc.share) / 100 * float64(procs) / float64(tc.workers)
		want := tc.wantSleep
		if tc.active && tc.share < 100 && per < 1 {
			want = time.Duration(float64(10*time.Millisecond) * (1/per - 1))
		}
		m := &Manager{settings: func() Settings { return Settings{CPUShare: tc.share} }}
		var users int64
		m.SetForeground(func() int64 { return users })
		clock := time.Unix(0, 0)
		var slept []time.Duration
		p := m.newPacer(tc.workers)
		p.now = func() time.Time { return clock }
		p.since = clock
		p.sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			clock = clock.Add(d)
			return nil
		}
		if tc.active {
			users += foregroundMin
		}
		for i := 0; i < 5; i++ {
			if tc.active {
				users += foregroundMin
			}
			clock = clock.Add(10 * time.Millisecond) // work
			if err := p.pace(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		for i, d := range slept {
			if diff := d - want; diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("%+v: sleep %d was %v, want %v", tc, i, d, want)
			}
		}
		if want > 0 && len(slept) != 5 || want == 0 && len(slept) != 0 {
			t.Errorf("%+v: slept %d times (%v), want %d times %v", tc, len(slept), slept, 5, want)
		}
	}
}

// TestForegroundNeedsAWorkload: a few transactions (a monitoring query) do
// not make users active; a steady stream does.
func TestForegroundNeedsAWorkload(t *testing.T) {
	m := &Manager{}
	var n int64
	m.SetForeground(func() int64 { return n })
	m.foregroundActive()
	for i := 0; i < foregroundMin-1; i++ {
		n++
		if m.foregroundActive() {
			t.Fatalf("active after %d transactions", n)
		}
	}
	n++
	if !m.foregroundActive() {
		t.Fatalf("not active after %d transactions in one window", n)
	}
}

// TestWhileIdle checks that the cache is borrowed only while users are
// idle, given back as soon as they are active, and always given back.
func TestWhileIdle(t *testing.T) {
	var active atomic.Bool
	var held atomic.Int32
	take := func() func() {
		if held.Add(1) != 1 {
			t.Error("taken twice")
		}
		return func() { held.Add(-1) }
	}
	waitHeld := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for held.Load() != want {
			if time.Now().After(deadline) {
				t.Fatalf("held %d, want %d", held.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	stop := whileIdle(active.Load, take, time.Millisecond)
	waitHeld(1)
	active.Store(true)
	waitHeld(0)
	active.Store(false)
	waitHeld(1)
	stop()
	if held.Load() != 0 {
		t.Fatal("still held after stop")
	}

	active.Store(true)
	stop = whileIdle(active.Load, take, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if held.Load() != 0 {
		t.Fatal("taken while users were active")
	}
	stop()
}

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
				users.Add(foregroundMin)
			}
		}
	}()
	for !m.foregroundActive() {
		time.Sleep(time.Millisecond)
	}
	release := m.holdMemory()
	time.Sleep(5 * foregroundWindow)
	if got := gogc(); got != 300 {
		t.Fatalf("GC target %d while users are active, want the server's 300", got)
	}
	close(stopUsers)
	<-usersDone
	waitGOGC(buildGCPercent)
	release()
	waitGOGC(300)
}
