package ddl

import (
	"context"
	"sync"
	"time"
)

// MDL is the metadata lock. Every transaction holds a lease on the schema
// version it started under; a schema change publishes version v and then
// waits until no lease on a version below v is left. Two transactions can
// therefore never disagree by more than one schema step about an index's
// state, which is what makes the delete-only / write-only / public
// sequence safe: no DML can skip an index that a concurrent backfill
// assumes is maintained.
type MDL struct {
	mu     sync.Mutex
	leases map[*Lease]struct{}
}

// Lease is one transaction's hold on a schema version.
type Lease struct {
	m       *MDL
	Version int64
	Started time.Time
	Owner   string // shown when the lease holds up a schema change
}

// NewMDL returns an empty metadata lock.
func NewMDL() *MDL { return &MDL{leases: map[*Lease]struct{}{}} }

// Acquire registers a lease on the version that current returns; current is
// called under the lock so that a concurrent publish is either seen or
// waited for.
func (m *MDL) Acquire(current func() int64, owner string) *Lease {
	m.mu.Lock()
	l := &Lease{m: m, Version: current(), Started: time.Now(), Owner: owner}
	m.leases[l] = struct{}{}
	m.mu.Unlock()
	return l
}

// Release ends the lease; it is idempotent.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.m.mu.Lock()
	delete(l.m.leases, l)
	l.m.mu.Unlock()
}

// Renew moves the lease to the version current returns (a transaction that
// issued DDL sees the new schema, as MySQL's implicit commit does).
func (l *Lease) Renew(v int64) {
	l.m.mu.Lock()
	l.Version = v
	l.m.mu.Unlock()
}

// Oldest returns the oldest lease on a version in [lo, v), other than
// except, or nil.
func (m *MDL) Oldest(lo, v int64, except *Lease) *Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	var oldest *Lease
	for l := range m.leases {
		if l != except && l.Version >= lo && l.Version < v && (oldest == nil || l.Started.Before(oldest.Started)) {
			oldest = l
		}
	}
	return oldest
}

// Wait blocks until no lease below version v remains (except one, the
// issuing session's own). report is called, at most once per interval,
// with the lease that holds the change up for longer than warnAfter.
func (m *MDL) Wait(ctx context.Context, v int64, except *Lease, warnAfter time.Duration, report func(*Lease)) error {
	return m.WaitRange(ctx, 0, v, except, warnAfter, report)
}

// WaitRange is Wait for the leases on versions in [lo, v) only: a schema
// change that is being undone need not wait for transactions that began
// before it started, since they never saw it.
func (m *MDL) WaitRange(ctx context.Context, lo, v int64, except *Lease, warnAfter time.Duration, report func(*Lease)) error {
	start := time.Now()
	lastReport := time.Time{}
	sleep := 200 * time.Microsecond
	for {
		l := m.Oldest(lo, v, except)
		if l == nil {
			return nil
		}
		if report != nil && time.Since(start) > warnAfter && time.Since(lastReport) > warnAfter {
			lastReport = time.Now()
			report(l)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		if sleep < 20*time.Millisecond {
			sleep *= 2
		}
	}
}

// Count returns the number of live leases.
func (m *MDL) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.leases)
}
