package workload

import (
	"math"
	"sync"
	"time"
)

// Histogram buckets latencies on a log scale from 1 µs to 100 s, like
// sysbench's 1024-bucket histogram, so percentiles over any window can be
// merged from per-phase counts without keeping every latency.
type Histogram struct {
	counts [histBuckets]int64
	total  int64
}

const (
	histBuckets = 1024
	histMinMs   = 0.001
	histMaxMs   = 100000.0
)

var (
	histLogMin = math.Log(histMinMs)
	histMult   = (histBuckets - 1) / (math.Log(histMaxMs) - histLogMin)
)

// Add records one latency.
func (h *Histogram) Add(d time.Duration) {
	ms := float64(d) / float64(time.Millisecond)
	i := 0
	if ms > histMinMs {
		i = int((math.Log(ms) - histLogMin) * histMult)
	}
	h.counts[min(i, histBuckets-1)]++
	h.total++
}

// Merge adds o's counts.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
}

// Percentile returns the latency in milliseconds below which pct percent
// of the recorded ones fall (the bucket's upper bound, rounding up as
// sysbench does); 0 when empty.
func (h *Histogram) Percentile(pct float64) float64 {
	if h.total == 0 {
		return 0
	}
	want := int64(math.Ceil(float64(h.total) * pct / 100))
	var n int64
	for i, c := range h.counts {
		n += c
		if n >= want {
			return math.Exp(float64(i+1)/histMult + histLogMin)
		}
	}
	return histMaxMs
}

// Summary is the workload over an interval: a sample or a whole phase.
type Summary struct {
	Seconds float64 `json:"seconds"`
	Tx      int64   `json:"transactions"`
	Queries int64   `json:"queries"`
	Errors  int64   `json:"errors"`
	TPS     float64 `json:"tps"`
	QPS     float64 `json:"qps"`
	P50     float64 `json:"p50_ms"`
	P95     float64 `json:"p95_ms"`
	P99     float64 `json:"p99_ms"`
}

// Sample is the workload over one interval (a second, or the part of a
// second before a phase change).
type Sample struct {
	Phase string  `json:"phase"`
	Start float64 `json:"start_s"` // since the recorder started
	Summary
}

type counters struct {
	tx, queries, errors int64
	hist                Histogram
}

func (c *counters) summary(seconds float64) Summary {
	s := Summary{Seconds: seconds, Tx: c.tx, Queries: c.queries, Errors: c.errors,
		P50: c.hist.Percentile(50), P95: c.hist.Percentile(95), P99: c.hist.Percentile(99)}
	if seconds > 0 {
		s.TPS, s.QPS = float64(c.tx)/seconds, float64(c.queries)/seconds
	}
	return s
}

// Recorder collects what the threads of a run do, per second and per
// phase (warm-up, baseline, DDL...). It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	start   time.Time
	from    time.Time // start of the current sample
	phase   string
	cur     counters
	samples []Sample
	phases  map[string]*phaseTotals
}

type phaseTotals struct {
	counters
	seconds float64
}

// NewRecorder starts recording in phase.
func NewRecorder(phase string) *Recorder {
	now := time.Now()
	return &Recorder{start: now, from: now, phase: phase, phases: map[string]*phaseTotals{}}
}

// Started is when recording began; sample times are relative to it.
func (r *Recorder) Started() time.Time { return r.start }

// Since is t in seconds since the recorder started.
func (r *Recorder) Since(t time.Time) float64 { return t.Sub(r.start).Seconds() }

// Done records a committed transaction of queries statements.
func (r *Recorder) Done(lat time.Duration, queries int) {
	r.mu.Lock()
	r.cur.tx++
	r.cur.queries += int64(queries)
	r.cur.hist.Add(lat)
	r.mu.Unlock()
}

// Failed records a transaction abandoned on an ignored error after
// queries statements had run.
func (r *Recorder) Failed(queries int) {
	r.mu.Lock()
	r.cur.errors++
	r.cur.queries += int64(queries)
	r.mu.Unlock()
}

// Tick closes the current sample; the runner calls it every second.
func (r *Recorder) Tick() {
	r.mu.Lock()
	r.flush(time.Now())
	r.mu.Unlock()
}

// SetPhase closes the current sample and starts phase.
func (r *Recorder) SetPhase(phase string) {
	r.mu.Lock()
	r.flush(time.Now())
	r.phase = phase
	r.mu.Unlock()
}

func (r *Recorder) flush(now time.Time) {
	secs := now.Sub(r.from).Seconds()
	if secs < 0.001 {
		return
	}
	c := &r.cur
	r.samples = append(r.samples, Sample{Phase: r.phase, Start: r.Since(r.from), Summary: c.summary(secs)})
	p := r.phases[r.phase]
	if p == nil {
		p = &phaseTotals{}
		r.phases[r.phase] = p
	}
	p.tx += c.tx
	p.queries += c.queries
	p.errors += c.errors
	p.hist.Merge(&c.hist)
	p.seconds += secs
	r.cur = counters{}
	r.from = now
}

// Samples returns the closed samples so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sample(nil), r.samples...)
}

// Last returns the latest closed sample of at least half a second (the
// short ones at phase changes are noisy), and whether there is one.
func (r *Recorder) Last() (Sample, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.samples) - 1; i >= 0; i-- {
		if r.samples[i].Seconds >= 0.5 {
			return r.samples[i], true
		}
	}
	return Sample{}, false
}

// Summary totals the closed samples of phase.
func (r *Recorder) Summary(phase string) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.phases[phase]
	if p == nil {
		return Summary{}
	}
	return p.summary(p.seconds)
}
