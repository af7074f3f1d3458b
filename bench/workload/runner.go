package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/bench/sysrand"
)

// DefaultIgnored are the error numbers after which a transaction is rolled
// back and the thread goes on, as sysbench's --mysql-ignore-errors default
// (deadlock, lock wait timeout, record changed) plus TiDB's write conflict
// and schema-changed errors.
var DefaultIgnored = []uint16{1213, 1205, 1020, 9007, 8028}

// Runner runs a workload on Threads connections.
type Runner struct {
	DB       *sql.DB
	Workload Workload
	Options  Options
	Threads  int
	Dist     sysrand.Dist
	Seed     uint64
	Ignored  []uint16 // DefaultIgnored when nil
	// CountAll treats every server error as an ignored one (counted,
	// rolled back, the thread goes on) instead of stopping the thread.
	CountAll bool
	Rec      *Recorder
}

// ErrorCount is how often the workload met one server error number, with
// the first message seen.
type ErrorCount struct {
	Number  uint16 `json:"number"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// Running is a started run.
type Running struct {
	stop     atomic.Bool
	stopOnce sync.Once
	wg       sync.WaitGroup
	ticker   *time.Ticker
	tickDone chan struct{}
	rec      *Recorder
	mu       sync.Mutex
	err      error
	counted  map[uint16]*ErrorCount
}

// Start opens the threads' connections and starts the workload; it runs
// until Stop (or ctx ends, which also interrupts statements).
func (r *Runner) Start(ctx context.Context) (*Running, error) {
	if r.Threads < 1 {
		return nil, fmt.Errorf("threads must be at least 1, got %d", r.Threads)
	}
	if r.Options.Tables < 1 || r.Options.TableSize < 1 {
		return nil, fmt.Errorf("tables and table size must be positive, got %d and %d", r.Options.Tables, r.Options.TableSize)
	}
	ignored := r.Ignored
	if ignored == nil {
		ignored = DefaultIgnored
	}
	conns := make([]*sql.Conn, r.Threads)
	for i := range conns {
		c, err := r.DB.Conn(ctx)
		if err != nil {
			for _, o := range conns[:i] {
				o.Close()
			}
			return nil, fmt.Errorf("connect thread %d: %w", i, err)
		}
		conns[i] = c
	}
	run := &Running{ticker: time.NewTicker(time.Second), tickDone: make(chan struct{}), rec: r.Rec,
		counted: map[uint16]*ErrorCount{}}
	go func() {
		for {
			select {
			case <-run.ticker.C:
				r.Rec.Tick()
			case <-run.tickDone:
				return
			}
		}
	}()
	for i, c := range conns {
		t := &thread{
			conn: c, stmts: map[stmtKey]*sql.Stmt{}, ignored: ignored,
			rng: sysrand.New(r.Seed*1000003+uint64(i)+1, r.Dist), countAll: r.CountAll,
		}
		run.wg.Add(1)
		go func() {
			defer run.wg.Done()
			defer t.close()
			if err := t.loop(ctx, r, run); err != nil && ctx.Err() == nil {
				run.fail(fmt.Errorf("thread %d: %w", i, err))
			}
		}()
	}
	return run, nil
}

func (run *Running) fail(err error) {
	run.mu.Lock()
	if run.err == nil {
		run.err = err
	}
	run.mu.Unlock()
	run.stop.Store(true)
}

func (run *Running) count(me *mysql.MySQLError) {
	run.mu.Lock()
	defer run.mu.Unlock()
	c := run.counted[me.Number]
	if c == nil {
		c = &ErrorCount{Number: me.Number, Message: me.Message}
		run.counted[me.Number] = c
	}
	c.Count++
}

// Counted are the server errors the threads counted and went on after,
// by number.
func (run *Running) Counted() []ErrorCount {
	run.mu.Lock()
	defer run.mu.Unlock()
	var out []ErrorCount
	for _, c := range run.counted {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ErrorCount) int { return int(a.Number) - int(b.Number) })
	return out
}

// Err is the first error that stopped a thread, if any, so far.
func (run *Running) Err() error {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.err
}

// Stop lets every thread finish its transaction, closes the last sample
// and returns the first error that stopped a thread. Calls after the first
// only return that error.
func (run *Running) Stop() error {
	run.stopOnce.Do(func() {
		run.stop.Store(true)
		run.wg.Wait()
		run.ticker.Stop()
		close(run.tickDone)
		run.rec.Tick()
	})
	return run.Err()
}

type stmtKey struct {
	kind  Kind
	table int
}

type thread struct {
	conn     *sql.Conn
	stmts    map[stmtKey]*sql.Stmt
	rng      *sysrand.Rand
	ignored  []uint16
	countAll bool
}

func (t *thread) close() {
	for _, s := range t.stmts {
		s.Close()
	}
	t.conn.Close()
}

func (t *thread) loop(ctx context.Context, r *Runner, run *Running) error {
	for !run.stop.Load() {
		txn := r.Workload.Transaction(t.rng, r.Options)
		start := time.Now()
		n, err := t.exec(ctx, txn)
		switch {
		case err == nil:
			r.Rec.Done(time.Since(start), n)
		case t.ignorable(err):
			var me *mysql.MySQLError
			errors.As(err, &me)
			run.count(me)
			r.Rec.Failed(n)
			// A failed COMMIT has ended the transaction already; after a
			// failed statement, sysbench's driver rolls back too.
			if _, err := t.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				return fmt.Errorf("ROLLBACK after an ignored error: %w", err)
			}
		default:
			// The connection goes back to the pool: a transaction left
			// open there would hold its metadata lock and stall the DDL.
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			t.conn.ExecContext(rctx, "ROLLBACK")
			cancel()
			return err
		}
	}
	return nil
}

func (t *thread) ignorable(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	if t.countAll {
		return true
	}
	for _, n := range t.ignored {
		if me.Number == n {
			return true
		}
	}
	return false
}

// exec runs one transaction's statements and returns how many succeeded.
func (t *thread) exec(ctx context.Context, txn []Stmt) (int, error) {
	for i, s := range txn {
		if err := t.execOne(ctx, s); err != nil {
			return i, fmt.Errorf("%s: %w", s.Kind.SQL(s.Table), err)
		}
	}
	return len(txn), nil
}

func (t *thread) execOne(ctx context.Context, s Stmt) error {
	if s.Kind == Begin || s.Kind == Commit {
		_, err := t.conn.ExecContext(ctx, s.Kind.SQL(0))
		return err
	}
	key := stmtKey{s.Kind, s.Table}
	st := t.stmts[key]
	if st == nil {
		var err error
		if st, err = t.conn.PrepareContext(ctx, s.Kind.SQL(s.Table)); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		t.stmts[key] = st
	}
	if !s.Kind.IsSelect() {
		_, err := st.ExecContext(ctx, s.Args...)
		return err
	}
	rows, err := st.QueryContext(ctx, s.Args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}
