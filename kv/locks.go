package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Pessimistic row locks, as InnoDB and TiDB's pessimistic mode take them.
//
// A transaction may lock keys before it writes them (Txn.Lock). A lock is
// exclusive, held until the transaction commits or rolls back, and taken
// again by its owner at no cost. Locks live only in memory: uncommitted
// writes never leave the transaction's buffer, so snapshot readers neither
// take nor wait for locks, and a crash loses no lock that matters.
//
// The contract with commit: a transaction that locked a key reads it after
// the lock (Txn.GetLatest, a "current read"), and its writes are checked
// for conflicts against the newest timestamp its reads could have seen
// (write.base) rather than its start. So two writers of a locked row
// serialise on the lock instead of one failing at commit; writers that
// take no locks (the catalog) keep first-committer-wins against everyone. Locks are released only after the commit is applied
// and visible to new reads (after endCommit), so a waiter that gets the
// lock and reads at a fresh timestamp sees the previous owner's write.
//
// Waiters queue, and a release hands the lock to the first (InnoDB's
// FIFO grant). A waiter records whom it waits for; a transaction about to
// wait that finds itself at the end of that chain would wait forever and
// gets ErrDeadlock instead (the caller rolls its whole transaction back, as
// InnoDB does with the victim). A wait also ends on its timeout
// (ErrLockWaitTimeout; the caller rolls back only the statement) or on
// its context (KILL).

// ErrLockWaitTimeout is returned by Txn.Lock when the key stayed locked by
// another transaction for the whole wait.
var ErrLockWaitTimeout = errors.New("kv: lock wait timeout")

// ErrDeadlock is returned by Txn.Lock when waiting would close a cycle of
// transactions waiting for each other.
var ErrDeadlock = errors.New("kv: deadlock")

type lockTable struct {
	mu       sync.Mutex
	locks    map[string]*lockEntry
	waitsFor map[*Txn]*Txn // a waiting transaction -> the owner it waits for
}

type lockEntry struct {
	owner *Txn
	since time.Time
	// waiters get the lock in the order they asked for it, as InnoDB
	// grants them: a release hands it to the first, so that no waiter
	// loses every race to newcomers until its timeout.
	waiters []*lockWaiter
}

type lockWaiter struct {
	t       *Txn
	granted chan struct{} // closed when the lock is handed to t
	ok      bool          // set, under the table's mutex, with granted
}

func (lt *lockTable) init() {
	lt.locks = map[string]*lockEntry{}
	lt.waitsFor = map[*Txn]*Txn{}
}

// reaches reports whether following the wait-for chain from t leads to
// target. Each transaction waits for at most one other, so the chain is a
// path; its length is bounded by the number of waiters, which also stops
// the walk on a cycle that does not include target.
func (lt *lockTable) reaches(t, target *Txn) bool {
	for n := 0; t != nil && n <= len(lt.waitsFor); n++ {
		if t == target {
			return true
		}
		t = lt.waitsFor[t]
	}
	return false
}

// Lock takes the exclusive lock on key for the transaction, waiting at
// most wait for another owner to let go. It reports whether the lock is
// new to the transaction (false: it held it already).
func (t *Txn) Lock(ctx context.Context, key []byte, wait time.Duration) (fresh bool, err error) {
	if t.done {
		return false, ErrTxnDone
	}
	lt := &t.s.locks
	k := string(key)
	lt.mu.Lock()
	e := lt.locks[k]
	switch {
	case e == nil:
		lt.locks[k] = &lockEntry{owner: t, since: time.Now()}
		lt.mu.Unlock()
		t.took(k)
		return true, nil
	case e.owner == t:
		lt.mu.Unlock()
		return false, nil
	case lt.reaches(e.owner, t):
		lt.mu.Unlock()
		t.s.metrics.deadlocks.Inc()
		return false, ErrDeadlock
	}
	w := &lockWaiter{t: t, granted: make(chan struct{})}
	e.waiters = append(e.waiters, w)
	lt.waitsFor[t] = e.owner
	holder, since := e.owner.owner, e.since
	lt.mu.Unlock()
	t.s.metrics.lockWaits.Inc()
	tm := time.NewTimer(wait)
	select {
	case <-w.granted:
	case <-tm.C:
		err = fmt.Errorf("%w on key %q, held by %s for %v", ErrLockWaitTimeout, key, holder, time.Since(since).Round(time.Millisecond))
	case <-ctx.Done():
		err = ctx.Err()
	}
	tm.Stop()
	lt.mu.Lock()
	delete(lt.waitsFor, t)
	if w.ok {
		err = nil // handed over meanwhile: the lock is ours
	} else {
		e.waiters = slices.DeleteFunc(e.waiters, func(o *lockWaiter) bool { return o == w })
	}
	lt.mu.Unlock()
	if err != nil {
		return false, err
	}
	t.took(k)
	return true, nil
}

// took records a lock the transaction got.
func (t *Txn) took(k string) {
	t.locked = append(t.locked, k)
	// Every commit of the previous owner is visible at this timestamp: it
	// let go only after its commit was applied.
	if ts := t.s.ReadTS(); ts > t.lockTS {
		t.lockTS = ts
	}
	t.s.metrics.locks.Inc()
}

// TryLock takes the exclusive lock on key when no other transaction
// holds it, and never waits: for background work that must neither hold
// up nor deadlock with the transactions of users. It reports whether the
// transaction holds the lock.
func (t *Txn) TryLock(key []byte) (bool, error) {
	if t.done {
		return false, ErrTxnDone
	}
	lt := &t.s.locks
	k := string(key)
	lt.mu.Lock()
	if e := lt.locks[k]; e != nil {
		lt.mu.Unlock()
		return e.owner == t, nil
	}
	lt.locks[k] = &lockEntry{owner: t, since: time.Now()}
	lt.mu.Unlock()
	t.took(k)
	return true, nil
}

// SetOwner names who runs the transaction (a connection), for the
// messages about the locks it holds.
func (t *Txn) SetOwner(owner string) { t.owner = owner }

// Locked returns the keys the transaction holds locks on.
func (t *Txn) Locked() []string { return t.locked }

// releaseLocks lets go of every lock the transaction holds, handing each
// to its first waiter.
func (t *Txn) releaseLocks() {
	if len(t.locked) == 0 {
		return
	}
	lt := &t.s.locks
	lt.mu.Lock()
	for _, k := range t.locked {
		e := lt.locks[k]
		if e == nil || e.owner != t {
			continue
		}
		if len(e.waiters) == 0 {
			delete(lt.locks, k)
			continue
		}
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		e.owner, e.since = w.t, time.Now()
		w.ok = true
		close(w.granted)
		delete(lt.waitsFor, w.t)
		for _, o := range e.waiters {
			lt.waitsFor[o.t] = w.t
		}
	}
	lt.mu.Unlock()
	t.locked = nil
}

// LocksHeld is the number of keys locked by open transactions.
func (s *Store) LocksHeld() int {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	return len(s.locks.locks)
}
