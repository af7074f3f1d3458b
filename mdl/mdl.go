// Package mdl is the metadata lock: the rule that lets a schema change
// move an index or column through its states while transactions run.
//
// Every transaction holds a Lease on the schema version it started under
// (taken in package sql when the transaction begins, released when it
// ends). A schema change publishes version v, then waits (Lock.Wait) until
// no lease on a version below v is left. Invariant: at any moment the live
// transactions use at most two adjacent schema versions, so no DML can
// skip a state that a concurrent backfill or merge relies on (package ddl
// states which DML writes what in each state).
//
// The lock knows nothing of schemas or jobs; it only counts leases by
// version, below both ddl, which waits on it, and sql, which takes leases.
package mdl

import (
	"context"
	"sync"
	"time"
)

// Lock is the metadata lock: the set of live leases.
type Lock struct {
	mu     sync.Mutex
	leases map[*Lease]struct{}
}

// Lease is one transaction's hold on a schema version.
type Lease struct {
	m       *Lock
	Version int64
	Started time.Time
	Owner   string // shown when the lease holds up a schema change
}

// New returns a lock with no lease.
func New() *Lock { return &Lock{leases: map[*Lease]struct{}{}} }

// Acquire registers a lease on the version that current returns; current is
// called under the lock so that a concurrent publish is either seen or
// waited for.
func (m *Lock) Acquire(current func() int64, owner string) *Lease {
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
func (m *Lock) Oldest(lo, v int64, except *Lease) *Lease {
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
func (m *Lock) Wait(ctx context.Context, v int64, except *Lease, warnAfter time.Duration, report func(*Lease)) error {
	return m.WaitRange(ctx, 0, v, except, warnAfter, report)
}

// WaitRange is Wait for the leases on versions in [lo, v) only: a schema
// change that is being undone need not wait for transactions that began
// before it started, since they never saw it.
func (m *Lock) WaitRange(ctx context.Context, lo, v int64, except *Lease, warnAfter time.Duration, report func(*Lease)) error {
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
func (m *Lock) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.leases)
}
