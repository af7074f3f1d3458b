// Package pace keeps background work within a share of the CPUs while
// users are active, and lets it borrow resources while they are idle.
//
// A backfill competes with user statements for the same CPUs. While users
// are active, each of a job's goroutines paces itself so that the job as
// a whole uses at most its share of the server's CPUs; when nobody else
// runs, it goes at full speed. This keeps the workload's throughput within
// a budget without hand-tuning worker counts and batch sizes per table,
// and without knowing what the workload is: a goroutine measures how long
// it worked since it last paused and sleeps long enough to bring its share
// down.
//
// Invariants:
//   - A Pacer never sleeps while Foreground says users are idle, nor with
//     a share of 100 or more (or 0: unset).
//   - Time a goroutine spends waiting (Exclude) never counts as work.
//   - WhileIdle holds what it takes only while users are idle, and always
//     gives it back when stopped.
package pace

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Users count as active while they start at least Min transactions per
// Window; they stay active for Quiet after that. A monitoring query now
// and then is not a workload.
const (
	Window = 100 * time.Millisecond
	Min    = 5
	Quiet  = 250 * time.Millisecond
)

// Foreground tells whether users are running transactions, from a count
// of the transactions they started. The zero value has no count and says
// users are idle.
type Foreground struct {
	mu     sync.Mutex
	count  func() int64
	base   int64     // the count when the current window began
	window time.Time // when the current window began
	busy   time.Time // when a window last had Min transactions
}

// SetCount gives f the count of user transactions started.
func (f *Foreground) SetCount(count func() int64) {
	f.mu.Lock()
	f.count = count
	f.mu.Unlock()
}

// Active says whether users are running transactions.
func (f *Foreground) Active() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		return false
	}
	now := time.Now()
	c := f.count()
	if c-f.base >= Min {
		f.busy = now
	}
	if now.Sub(f.window) >= Window {
		f.base, f.window = c, now
	}
	return now.Sub(f.busy) < Quiet
}

// Pacer paces one goroutine of a job whose goroutines share a CPU budget.
type Pacer struct {
	share   func() int  // the job's percent of the CPUs, read at each pause
	active  func() bool // whether users are active
	workers int         // goroutines of the job sharing the budget
	since   time.Time
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
}

// New returns the Pacer of one of workers goroutines.
func New(share func() int, active func() bool, workers int) *Pacer {
	return &Pacer{share: share, active: active, workers: max(1, workers), since: time.Now(), now: time.Now, sleep: Sleep}
}

// Sleep waits for d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Exclude takes d, time spent waiting rather than computing, out of the
// work measured since the last pause.
func (p *Pacer) Exclude(d time.Duration) { p.since = p.since.Add(d) }

// Pace is called between units of work; it sleeps when the goroutine has
// used more than its share since the last pause.
func (p *Pacer) Pace(ctx context.Context) error {
	busy := p.now().Sub(p.since)
	if busy < 2*time.Millisecond {
		return nil
	}
	share := p.share()
	// The fraction of one CPU each goroutine may use.
	perGoroutine := float64(share) / 100 * float64(cpus()) / float64(p.workers)
	if share > 0 && share < 100 && perGoroutine < 1 && p.active() {
		if err := p.sleep(ctx, time.Duration(float64(busy)*(1/perGoroutine-1))); err != nil {
			return err
		}
	}
	p.since = p.now()
	return nil
}

// cpus is how many CPUs the process can run on at once, which a share is
// of: GOMAXPROCS (which follows a container's CPU limit), but no more than
// the machine's CPUs, since GOMAXPROCS set above them (for scheduling
// latency) adds threads, not CPU time.
func cpus() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// WhileIdle holds what take returns whenever active says no, gives it back
// (calls it) whenever active says yes, checking every period, until stop.
func WhileIdle(active func() bool, take func() (giveBack func()), period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var giveBack func()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			switch a := active(); {
			case a && giveBack != nil:
				giveBack()
				giveBack = nil
			case !a && giveBack == nil:
				giveBack = take()
			}
			select {
			case <-done:
				if giveBack != nil {
					giveBack()
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
