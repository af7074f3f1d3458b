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
	"sync/atomic"
	"time"
)

// shardCount spreads the leases over that many mutexes. Every autocommit
// statement takes and releases a lease, so with one mutex the sessions
// queue on it; once a waiter has waited a millisecond (a holder's thread
// descheduled on a busy machine), Go's mutex hands it over directly and
// the releasing session yields its processor, which shows in the tail
// latency of short statements.
const shardCount = 32

// Lock is the metadata lock: the set of live leases, in shards.
//
// Sharding keeps the rule that a publish is either seen or waited for: a
// schema change publishes its version before it waits, and the wait reads
// each shard under that shard's mutex. An Acquire on a shard either
// registered its lease before the wait read the shard (the wait sees it) or
// calls current after (it sees the publish).
type Lock struct {
	shards [shardCount]shard
	next   atomic.Uint32
}

type shard struct {
	mu     sync.Mutex
	leases map[*Lease]struct{}
	_      [64]byte // one cache line per shard's hot fields
}

// Lease is one transaction's hold on a schema version.
type Lease struct {
	s       *shard
	Version int64
	Started time.Time
	Owner   string // shown when the lease holds up a schema change
}

// New returns a lock with no lease.
func New() *Lock {
	m := &Lock{}
	for i := range m.shards {
		m.shards[i].leases = map[*Lease]struct{}{}
	}
	return m
}

// Acquire registers a lease on the version that current returns; current is
// called under the lease's shard mutex so that a concurrent publish is
// either seen or waited for. Successive leases go to successive shards.
func (m *Lock) Acquire(current func() int64, owner string) *Lease {
	s := &m.shards[m.next.Add(1)%shardCount]
	s.mu.Lock()
	l := &Lease{s: s, Version: current(), Started: time.Now(), Owner: owner}
	s.leases[l] = struct{}{}
	s.mu.Unlock()
	return l
}

// Release ends the lease; it is idempotent.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.s.mu.Lock()
	delete(l.s.leases, l)
	l.s.mu.Unlock()
}

// Renew moves the lease to the version current returns (a transaction that
// issued DDL sees the new schema, as MySQL's implicit commit does).
func (l *Lease) Renew(v int64) {
	l.s.mu.Lock()
	l.Version = v
	l.s.mu.Unlock()
}

// Oldest returns the oldest lease on a version in [lo, v), other than
// except, or nil.
func (m *Lock) Oldest(lo, v int64, except *Lease) *Lease {
	var oldest *Lease
	m.eachShard(func(s *shard) {
		for l := range s.leases {
			if l != except && l.Version >= lo && l.Version < v && (oldest == nil || l.Started.Before(oldest.Started)) {
				oldest = l
			}
		}
	})
	return oldest
}

// eachShard runs f on every shard in turn, under that shard's mutex.
func (m *Lock) eachShard(f func(*shard)) {
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		f(s)
		s.mu.Unlock()
	}
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
	n := 0
	m.eachShard(func(s *shard) { n += len(s.leases) })
	return n
}
