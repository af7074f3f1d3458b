package workload

import (
	"math"
	"testing"
	"time"
)

func TestHistogramPercentiles(t *testing.T) {
	var h Histogram
	if h.Percentile(95) != 0 {
		t.Fatal("empty histogram has a percentile")
	}
	for i := 1; i <= 100; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct{ pct, want float64 }{{50, 50}, {95, 95}, {99, 99}} {
		// Buckets are 1.8% wide; the bound reported is the bucket's top.
		if got := h.Percentile(c.pct); got < c.want || got > c.want*1.04 {
			t.Fatalf("p%.0f = %.3f ms, want about %.0f", c.pct, got, c.want)
		}
	}
	var m Histogram
	m.Add(time.Second)
	m.Merge(&h)
	if got := m.Percentile(100); math.Abs(got-1000) > 20 {
		t.Fatalf("max after merge %.1f", got)
	}
}

func TestRecorderPhases(t *testing.T) {
	r := NewRecorder("baseline")
	r.Done(2*time.Millisecond, 20)
	r.Done(4*time.Millisecond, 20)
	r.Failed(3)
	time.Sleep(20 * time.Millisecond)
	r.SetPhase("ddl")
	r.Done(8*time.Millisecond, 20)
	time.Sleep(20 * time.Millisecond)
	r.Tick()
	base, ddl := r.Summary("baseline"), r.Summary("ddl")
	if base.Tx != 2 || base.Queries != 43 || base.Errors != 1 || ddl.Tx != 1 || ddl.Queries != 20 {
		t.Fatalf("baseline %+v, ddl %+v", base, ddl)
	}
	if base.TPS <= 0 || base.TPS != float64(base.Tx)/base.Seconds || base.P99 < 4 || base.P99 > 4.2 {
		t.Fatalf("baseline rates %+v", base)
	}
	s := r.Samples()
	if len(s) != 2 || s[0].Phase != "baseline" || s[1].Phase != "ddl" || s[1].Start < s[0].Start+s[0].Seconds-1e-9 {
		t.Fatalf("samples %+v", s)
	}
	if (r.Summary("none") != Summary{}) {
		t.Fatal("a phase never entered has a summary")
	}
}
