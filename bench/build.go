package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/reorgdb/reorgdb/bench/loader"
	"github.com/reorgdb/reorgdb/bench/progress"
	"github.com/reorgdb/reorgdb/bench/report"
	"github.com/reorgdb/reorgdb/bench/workload"
)

// Recorder phases of a build under load.
const (
	phaseWarmup   = "warmup"
	phaseBaseline = "baseline"
	phaseDDL      = "ddl"
	phaseAfter    = "after"
)

// build runs one index build of plan p under setting s: the workload's
// warm-up and baseline windows, the DDL while the workload runs, the
// checks, and the DROP INDEX that leaves the table as it was.
func (b *bench) build(ctx context.Context, p Plan, ix Index, s report.Setting) (report.Result, error) {
	b.runs++
	table := p.Table.Name
	res := report.Result{Plan: p.Name, Title: p.Title, Workload: p.Workload, Table: table, Index: ix.Name,
		DDL: ix.AddSQL(table, b.cfg.DDLSuffix), Setting: s}
	st := &status{label: fmt.Sprintf("[%d/%d] %s %s %s", b.runs, b.total, p.Name, ix.Name, s)}
	stopStatus := b.showStatus(st)
	defer stopStatus()

	// A build interrupted earlier may have left the index behind.
	if err := b.dropIndex(ctx, table, ix.Name, true); err != nil {
		return res, err
	}
	var rec *workload.Recorder
	var run *workload.Running
	if p.Workload != "" {
		w, err := workload.Lookup(p.Workload)
		if err != nil {
			return res, err
		}
		rec = workload.NewRecorder(phaseWarmup)
		runner := &workload.Runner{DB: b.t.db, Workload: w, Threads: b.cfg.Threads, Dist: b.dist,
			Options: workload.Options{Tables: b.cfg.Tables, TableSize: int(b.cfg.Rows), RangeSize: 100},
			Seed:    b.cfg.Seed + uint64(b.runs), Ignored: b.cfg.Ignored, Rec: rec}
		if run, err = runner.Start(ctx); err != nil {
			return res, err
		}
		defer run.Stop()
		st.set(rec, phaseWarmup, b.cfg.Warmup)
		if err := waitRunning(ctx, run, b.cfg.Warmup); err != nil {
			return res, err
		}
		rec.SetPhase(phaseBaseline)
		st.set(rec, phaseBaseline, b.cfg.Baseline)
		if err := waitRunning(ctx, run, b.cfg.Baseline); err != nil {
			return res, err
		}
		rec.SetPhase(phaseDDL)
	}
	mark, err := b.t.ddlMark(ctx)
	if err != nil {
		return res, err
	}
	st.set(rec, phaseDDL, 0)
	start := time.Now()
	err = b.execDDL(ctx, res.DDL, table, mark, st)
	end := time.Now()
	res.DurationS = end.Sub(start).Seconds()
	if rec != nil {
		rec.SetPhase(phaseAfter)
		if werr := run.Stop(); werr != nil && err == nil {
			err = fmt.Errorf("workload: %w", werr)
		}
		res.DDLStart, res.DDLEnd = rec.Since(start), rec.Since(end)
		res.Baseline, res.During = rec.Summary(phaseBaseline), rec.Summary(phaseDDL)
		res.Samples = rec.Samples()
		if res.Baseline.TPS > 0 {
			res.KeptPct = 100 * res.During.TPS / res.Baseline.TPS
		}
	}
	if err != nil {
		return res, err
	}
	st.set(rec, "check", 0)
	if err := b.t.checkIndex(ctx, table, ix.Name); err != nil {
		return res, err
	}
	res.Check = "ok"
	if err := b.dropIndex(ctx, table, ix.Name, false); err != nil {
		return res, err
	}
	stopStatus()
	if rec != nil {
		b.line.Printf("%s: %.2f s, TPS %.1f (baseline %.1f, %.0f%% kept), p95 %.2f ms", st.label, res.DurationS,
			res.During.TPS, res.Baseline.TPS, res.KeptPct, res.During.P95)
	} else {
		b.line.Printf("%s: %.2f s", st.label, res.DurationS)
	}
	return res, nil
}

// waitRunning waits d while the workload runs, returning early if a
// workload thread fails or ctx ends.
func waitRunning(ctx context.Context, run *workload.Running, d time.Duration) error {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if err := run.Err(); err != nil {
			return fmt.Errorf("workload: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return run.Err()
}

// execDDL runs the build, polling the server for its progress meanwhile.
func (b *bench) execDDL(ctx context.Context, ddl, table string, mark int64, st *status) error {
	stop := every(250*time.Millisecond, func() { st.setDDL(b.t.ddlProgress(ctx, table, mark)) })
	_, err := b.t.db.ExecContext(ctx, ddl)
	stop()
	if err != nil {
		return fmt.Errorf("%s: %w", ddl, err)
	}
	return nil
}

// dropIndex drops index of table; with ifExists, only if it is there.
func (b *bench) dropIndex(ctx context.Context, table, index string, ifExists bool) error {
	if ifExists {
		have, err := loader.IndexNames(ctx, b.t.db, table)
		if err != nil || !slices.Contains(have, index) {
			return err
		}
	}
	q := fmt.Sprintf("ALTER TABLE %s DROP INDEX %s", table, index)
	if _, err := b.t.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// status is what the live line shows about the build in progress.
type status struct {
	label      string
	mu         sync.Mutex
	rec        *workload.Recorder
	phase      string
	phaseStart time.Time
	phaseLen   time.Duration // 0 when open-ended
	ddl        ddlProgress
}

func (st *status) set(rec *workload.Recorder, phase string, d time.Duration) {
	st.mu.Lock()
	st.rec, st.phase, st.phaseStart, st.phaseLen = rec, phase, time.Now(), d
	st.ddl = ddlProgress{Fraction: -1}
	st.mu.Unlock()
}

func (st *status) setDDL(p ddlProgress) {
	st.mu.Lock()
	st.ddl = p
	st.mu.Unlock()
}

func (st *status) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := time.Since(st.phaseStart)
	s := st.label + " | "
	switch {
	case st.phase == phaseDDL:
		s += "ADD INDEX"
		if st.ddl.Phase != "" {
			s += " " + st.ddl.Phase
		}
		s += fmt.Sprintf(" %.0fs", elapsed.Seconds())
		if f := st.ddl.Fraction; f >= 0 {
			s += fmt.Sprintf(" %s %.0f%% ETA %s", progress.Bar(f, 20), 100*f, progress.ETA(elapsed, f))
		}
	case st.phaseLen > 0:
		s += fmt.Sprintf("%s %.0f/%.0fs", st.phase, elapsed.Seconds(), st.phaseLen.Seconds())
	default:
		s += st.phase
	}
	if st.rec != nil {
		if last, ok := st.rec.Last(); ok {
			s += fmt.Sprintf(" | TPS %.0f QPS %.0f p95 %.1fms", last.TPS, last.QPS, last.P95)
		}
	}
	return s
}

// showStatus redraws the status line twice a second until the returned
// function is called (more calls do nothing).
func (b *bench) showStatus(st *status) func() {
	if b.line == nil {
		return func() {}
	}
	return every(500*time.Millisecond, func() { b.line.Set("%s", st.String()) })
}

// every calls fn every interval until the returned stop is called; stop
// waits for a call in progress and may be called more than once.
func every(interval time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var once sync.Once
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}
