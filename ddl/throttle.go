package ddl

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// A backfill competes with user statements for the same CPUs. While users
// are active, each backfill goroutine paces itself so that the job as a
// whole uses at most Settings.CPUShare percent of the server's CPUs; when
// nobody else runs, it goes at full speed. This keeps the workload's
// throughput within a budget without hand-tuning worker counts and batch
// sizes per table, and without knowing what the workload is: the
// goroutine measures how long it worked since it last paused and sleeps
// long enough to bring its share down.

// Users count as active while they start at least foregroundMin
// transactions per foregroundWindow; they stay active for foregroundQuiet
// after that. A monitoring query now and then is not a workload.
const (
	foregroundWindow = 100 * time.Millisecond
	foregroundMin    = 5
	foregroundQuiet  = 250 * time.Millisecond
)

// SetForeground gives the manager a count of user transactions started,
// which it watches to tell whether users are active.
func (m *Manager) SetForeground(count func() int64) {
	m.fg.mu.Lock()
	m.fg.count = count
	m.fg.mu.Unlock()
}

type foreground struct {
	mu     sync.Mutex
	count  func() int64
	base   int64     // the count when the current window began
	window time.Time // when the current window began
	busy   time.Time // when a window last had foregroundMin transactions
}

// foregroundActive says whether users are running transactions.
func (m *Manager) foregroundActive() bool {
	f := &m.fg
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		return false
	}
	now := time.Now()
	c := f.count()
	if c-f.base >= foregroundMin {
		f.busy = now
	}
	if now.Sub(f.window) >= foregroundWindow {
		f.base, f.window = c, now
	}
	return now.Sub(f.busy) < foregroundQuiet
}

// pacer paces one backfill goroutine; see above.
type pacer struct {
	m       *Manager
	workers int // goroutines of the job sharing the budget
	since   time.Time
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
}

func (m *Manager) newPacer(workers int) *pacer {
	return &pacer{m: m, workers: max(1, workers), since: time.Now(), now: time.Now, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// exclude takes d, time spent waiting rather than computing, out of the
// work measured since the last pause.
func (p *pacer) exclude(d time.Duration) { p.since = p.since.Add(d) }

// pace is called between units of work; it sleeps when the goroutine has
// used more than its share since the last pause.
func (p *pacer) pace(ctx context.Context) error {
	busy := p.now().Sub(p.since)
	if busy < 2*time.Millisecond {
		return nil
	}
	share := p.m.settings().CPUShare
	// The fraction of one CPU each goroutine may use.
	perGoroutine := float64(share) / 100 * float64(runtime.GOMAXPROCS(0)) / float64(p.workers)
	if share > 0 && share < 100 && perGoroutine < 1 && p.m.foregroundActive() {
		if err := p.sleep(ctx, time.Duration(float64(busy)*(1/perGoroutine-1))); err != nil {
			return err
		}
	}
	p.since = p.now()
	return nil
}
