package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

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

// build runs one change of plan p under setting s: the workload's
// warm-up and baseline windows, the DDL while the workload runs, the
// checks, and the undo that leaves the table as it was.
func (b *bench) build(ctx context.Context, p Plan, c Change, s report.Setting) (report.Result, error) {
	b.runs++
	table := p.Table.Name
	res := report.Result{Plan: p.Name, Title: p.Title, Workload: p.Workload, Table: table, Index: c.Name,
		Kind: c.Kind(), DDL: c.SQL(table, b.cfg.DDLSuffix), Setting: s}
	st := &status{label: fmt.Sprintf("[%d/%d] %s %s %s", b.runs, b.total, p.Name, c.Name, s), verb: "ADD INDEX"}
	if c.Index == "" {
		st.verb = "ALTER TABLE"
	}
	stopStatus := b.showStatus(st)
	defer stopStatus()

	st.set(nil, "setup", 0)
	before, err := b.prepare(ctx, c, table)
	if err != nil {
		return res, err
	}
	var rec *workload.Recorder
	var run *workload.Running
	if p.Workload != "" {
		if rec, run, err = b.startWorkload(ctx, p, c.Index == "", st); run != nil {
			defer run.Stop()
		}
		if err != nil {
			return res, err
		}
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
	failed, err := c.outcome(err)
	if rec != nil {
		rec.SetPhase(phaseAfter)
		if werr := run.Stop(); werr != nil && err == nil {
			err = fmt.Errorf("workload: %w", werr)
		}
		res.DDLStart, res.DDLEnd = rec.Since(start), rec.Since(end)
		res.Baseline, res.During = rec.Summary(phaseBaseline), rec.Summary(phaseDDL)
		res.Samples = rec.Samples()
		if c.Index == "" {
			res.ServerErrors = run.Counted()
		}
		if res.Baseline.TPS > 0 {
			res.KeptPct = 100 * res.During.TPS / res.Baseline.TPS
		}
	}
	if err != nil {
		return res, err
	}
	st.set(rec, "check", 0)
	if res.Check, err = b.check(ctx, c, table, before, failed); err != nil {
		return res, err
	}
	if failed == "" {
		if err := b.exec(ctx, c.UndoSQL(table)); err != nil {
			return res, err
		}
	}
	stopStatus()
	b.printResult(st.label, res)
	return res, nil
}

// startWorkload starts p's workload and runs its warm-up and baseline
// windows; the recorder is then in the DDL phase. With countAll, a server
// error counts as a foreground error instead of stopping the run: a
// server that rejects writes during a change is measured, not aborted.
func (b *bench) startWorkload(ctx context.Context, p Plan, countAll bool, st *status) (*workload.Recorder, *workload.Running, error) {
	w, err := workload.Lookup(p.Workload)
	if err != nil {
		return nil, nil, err
	}
	rec := workload.NewRecorder(phaseWarmup)
	runner := &workload.Runner{DB: b.t.db, Workload: w, Threads: b.cfg.Threads, Dist: b.dist,
		Options: workload.Options{Tables: b.cfg.Tables, TableSize: int(b.cfg.Rows), RangeSize: 100},
		Seed:    b.cfg.Seed + uint64(b.runs), Ignored: b.cfg.Ignored, CountAll: countAll, Rec: rec}
	run, err := runner.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	st.set(rec, phaseWarmup, b.cfg.Warmup)
	if err := waitRunning(ctx, run, b.cfg.Warmup); err != nil {
		return rec, run, err
	}
	rec.SetPhase(phaseBaseline)
	st.set(rec, phaseBaseline, b.cfg.Baseline)
	if err := waitRunning(ctx, run, b.cfg.Baseline); err != nil {
		return rec, run, err
	}
	rec.SetPhase(phaseDDL)
	return rec, run, nil
}

func (b *bench) printResult(label string, res report.Result) {
	for _, e := range res.ServerErrors {
		b.line.Printf("%s: the workload met error %d %d times: %s", label, e.Number, e.Count, e.Message)
	}
	if res.Workload == "" {
		b.line.Printf("%s: %.2f s", label, res.DurationS)
		return
	}
	b.line.Printf("%s: %.2f s, TPS %.1f (baseline %.1f, %.0f%% kept), p95 %.2f ms", label, res.DurationS,
		res.During.TPS, res.Baseline.TPS, res.KeptPct, res.During.P95)
}

// tableState is what a change is checked against: the table before it.
type tableState struct {
	shape string
	rows  int64
}

// prepare undoes a change an interrupted run left on the table, runs the
// change's setup and, for changes other than index builds, records the
// table's state.
func (b *bench) prepare(ctx context.Context, c Change, table string) (tableState, error) {
	var st tableState
	if c.Undo != "" {
		applied, err := c.Applied(ctx, b.t, table)
		if err != nil {
			return st, err
		}
		if applied {
			if err := b.exec(ctx, c.UndoSQL(table)); err != nil {
				return st, err
			}
		}
	}
	for _, setup := range c.Setup {
		if err := setup(ctx, b, table); err != nil {
			return st, err
		}
	}
	if c.Index != "" {
		return st, nil
	}
	var err error
	if st.shape, err = b.t.shape(ctx, table); err != nil {
		return st, err
	}
	st.rows, err = b.t.count(ctx, table)
	return st, err
}

// check verifies the table after the change: the index checks for an
// index build; otherwise the table check, the row count the workload
// keeps, and either the change's effect or, after the expected failure,
// the table as it was. It returns the result's check cell.
func (b *bench) check(ctx context.Context, c Change, table string, before tableState, failed string) (string, error) {
	if c.Index != "" {
		return "ok", b.t.checkIndex(ctx, table, c.Index)
	}
	if err := b.t.checkWhole(ctx, table); err != nil {
		return "", err
	}
	if n, err := b.t.count(ctx, table); err != nil {
		return "", err
	} else if n != before.rows {
		return "", fmt.Errorf("%s has %d rows after %s, %d before", table, n, c.Name, before.rows)
	}
	if failed != "" {
		shape, err := b.t.shape(ctx, table)
		if err != nil {
			return "", err
		}
		if shape != before.shape {
			return "", fmt.Errorf("%s failed with %s but changed %s:\n%s\nwas\n%s", c.Name, failed, table, shape, before.shape)
		}
		return failed + " as expected, table unchanged", nil
	}
	applied, err := c.Applied(ctx, b.t, table)
	if err != nil {
		return "", err
	}
	if !applied {
		return "", fmt.Errorf("%s succeeded but %s does not show it", c.Name, table)
	}
	return "ok", nil
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

// exec runs a statement of the bench's own; "" does nothing.
func (b *bench) exec(ctx context.Context, q string) error {
	if q == "" {
		return nil
	}
	if _, err := b.t.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// status is what the live line shows about the build in progress.
type status struct {
	label      string
	verb       string // what the DDL phase is called
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
		s += st.verb
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
