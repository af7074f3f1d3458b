package pace

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// A share is of the CPUs, however many threads GOMAXPROCS allows above them.
func TestCPUsIgnoresExtraProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2 * runtime.NumCPU()))
	if got := cpus(); got != runtime.NumCPU() {
		t.Fatalf("cpus() = %d with GOMAXPROCS %d on %d CPUs", got, runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	runtime.GOMAXPROCS(1)
	if got := cpus(); got != 1 {
		t.Fatalf("cpus() = %d with GOMAXPROCS 1", got)
	}
}

// TestPacerShare: while users are active a goroutine sleeps so that its
// work is its share of the CPUs; with no users, or no limit, it never
// sleeps.
func TestPacerShare(t *testing.T) {
	procs := cpus()
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
		var fg Foreground
		var users int64
		fg.SetCount(func() int64 { return users })
		clock := time.Unix(0, 0)
		var slept []time.Duration
		p := New(func() int { return tc.share }, fg.Active, tc.workers)
		p.now = func() time.Time { return clock }
		p.since = clock
		p.sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			clock = clock.Add(d)
			return nil
		}
		if tc.active {
			users += Min
		}
		for i := 0; i < 5; i++ {
			if tc.active {
				users += Min
			}
			clock = clock.Add(10 * time.Millisecond) // work
			if err := p.Pace(context.Background()); err != nil {
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
	var fg Foreground
	var n int64
	fg.SetCount(func() int64 { return n })
	fg.Active()
	for i := 0; i < Min-1; i++ {
		n++
		if fg.Active() {
			t.Fatalf("active after %d transactions", n)
		}
	}
	n++
	if !fg.Active() {
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
	stop := WhileIdle(active.Load, take, time.Millisecond)
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
	stop = WhileIdle(active.Load, take, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if held.Load() != 0 {
		t.Fatal("taken while users were active")
	}
	stop()
}
