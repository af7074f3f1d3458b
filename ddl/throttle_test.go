package ddl

import (
	"context"
	"runtime"
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
