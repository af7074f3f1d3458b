// Package bench is `reorgdb bench`: the seeds' online-DDL interaction
// experiment as one command. It owns the plans, the settings matrix, the
// run of each setting (warm-up, baseline, the schema change under load,
// checks, undo) and the live status; the subpackages load tables
// (loader), drive sysbench's workloads (workload, sysrand), write results
// (report, chart) and draw the status line (progress).
package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reorgdb/reorgdb/bench/loader"
	"github.com/reorgdb/reorgdb/bench/progress"
	"github.com/reorgdb/reorgdb/bench/report"
	"github.com/reorgdb/reorgdb/bench/sysrand"
)

type bench struct {
	cfg   Config
	t     *target
	line  *progress.Line
	dist  sysrand.Dist
	runs  int // builds done so far
	total int // builds planned
}

// Run runs the configured plans over the settings matrix, prints the
// Markdown tables to cfg.Out and, with cfg.OutDir, writes the results
// directory. On an error the results so far are still written.
func Run(ctx context.Context, cfg Config) (*report.Report, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dist, _ := sysrand.ParseDist(cfg.RandType)
	var line *progress.Line
	if cfg.Status != nil {
		line = progress.New(cfg.Status)
	}
	t, err := openTarget(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	line.Printf("target: %s", t.name)
	b := &bench{cfg: cfg, t: t, line: line, dist: dist}

	var plans []Plan
	for _, name := range cfg.Plans {
		p, _ := LookupPlan(name)
		plans = append(plans, p)
	}
	settings, swept, dropped, restore, err := b.matrix(ctx)
	if err != nil {
		return nil, err
	}
	defer restore()
	rep := &report.Report{Target: t.name, Started: time.Now(), Rows: cfg.Rows, Threads: cfg.Threads,
		RandType: cfg.RandType, Swept: swept, Unsupported: dropped}
	if err := b.load(ctx, plans); err != nil {
		return nil, err
	}
	for _, p := range plans {
		b.total += len(settings) * len(p.Changes)
	}
	runErr := b.runAll(ctx, plans, settings, rep)
	line.Clear()
	if len(rep.Results) > 0 {
		if err := report.Markdown(cfg.Out, rep); err != nil {
			return rep, err
		}
		if cfg.OutDir != "" {
			if err := report.WriteDir(cfg.OutDir, rep); err != nil {
				return rep, errors.Join(runErr, err)
			}
			line.Printf("results in %s", cfg.OutDir)
		}
	}
	return rep, runErr
}

func (b *bench) runAll(ctx context.Context, plans []Plan, settings []report.Setting, rep *report.Report) error {
	for _, p := range plans {
		for _, s := range settings {
			for _, v := range s {
				if err := b.t.setVariable(ctx, v.Name, v.Value); err != nil {
					return err
				}
			}
			for _, c := range p.Changes {
				res, err := b.build(ctx, p, c, s)
				if err != nil {
					return fmt.Errorf("%s, %s, %s: %w", p.Name, s, c.Name, err)
				}
				rep.Results = append(rep.Results, res)
			}
		}
	}
	return nil
}

// matrix keeps the --set variables the target has, remembers their values
// for restore, and returns every combination (one empty setting when
// nothing is swept), the last variable changing fastest.
func (b *bench) matrix(ctx context.Context) (settings []report.Setting, swept, dropped []string, restore func(), err error) {
	original := map[string]string{}
	var kept []Sweep
	for _, sw := range b.cfg.Sets {
		v, ok, err := b.t.variable(ctx, sw.Name)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if !ok {
			dropped = append(dropped, sw.Name)
			b.line.Printf("note: %s has no variable %s; it is left out of the matrix", b.t.name, sw.Name)
			continue
		}
		original[sw.Name] = v
		kept = append(kept, sw)
		swept = append(swept, sw.Name)
	}
	settings = []report.Setting{nil}
	for _, sw := range kept {
		var next []report.Setting
		for _, s := range settings {
			for _, v := range sw.Values {
				next = append(next, append(slices.Clip(s), report.Var{Name: sw.Name, Value: v}))
			}
		}
		settings = next
	}
	restore = func() {
		for _, name := range swept {
			if err := b.t.setVariable(context.Background(), name, original[name]); err != nil {
				b.line.Printf("note: could not restore %s: %v", name, err)
			}
		}
	}
	return settings, swept, dropped, restore, nil
}

// load fills the tables the plans use.
func (b *bench) load(ctx context.Context, plans []Plan) error {
	type job struct {
		t    loader.Table
		rows int64
	}
	var jobs []job
	add := func(t loader.Table, rows int64) {
		if !slices.ContainsFunc(jobs, func(j job) bool { return j.t.Name == t.Name }) {
			jobs = append(jobs, job{t, rows})
		}
	}
	for _, p := range plans {
		if p.Table.Name == loader.Sysbench(1).Name {
			for i := 1; i <= b.cfg.Tables; i++ {
				add(loader.Sysbench(i), b.cfg.Rows)
			}
		} else {
			add(p.Table, b.cfg.WideRows)
		}
	}
	var start time.Time
	ld := &loader.Loader{DB: b.t.db, Threads: b.cfg.LoadThreads, Seed: b.cfg.Seed, Dist: b.dist,
		Progress: func(table string, done, total int64) {
			if done == total {
				// The loader goes on with the table's After statements.
				b.line.Set("loading %s: %d rows in, building its secondary index", table, total)
				return
			}
			f := float64(done) / float64(total)
			b.line.Set("loading %s %s %d/%d rows, ETA %s", table, progress.Bar(f, 30), done, total,
				progress.ETA(time.Since(start), f))
		}}
	for _, j := range jobs {
		start = time.Now()
		loaded, err := ld.Load(ctx, j.t, j.rows)
		if err != nil {
			return err
		}
		if loaded {
			b.line.Printf("%s: loaded %d rows in %.1f s", j.t.Name, j.rows, time.Since(start).Seconds())
		} else {
			b.line.Printf("%s: already holds %d rows, kept", j.t.Name, j.rows)
		}
	}
	return nil
}
