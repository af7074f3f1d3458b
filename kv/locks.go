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
// exclusive, or shared (Txn.LockShared) among transactions that only need
// the row to stay as it is (SELECT ... FOR SHARE, a foreign key's check of
// its parent row); it is held until the transaction commits or rolls
// back, taken again by its owner at no cost, and a sole sharer may
// upgrade it to exclusive. Locks live only in memory: uncommitted
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
// FIFO grant). A waiter records whom it waits for (the holders, and the
// waiters ahead of it); a transaction about to wait that can reach itself
// along those edges would wait forever and gets ErrDeadlock instead (the caller rolls its whole transaction back, as
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
	mu    sync.Mutex
	locks map[string]*lockEntry
	// waitsFor maps a waiting transaction to those it waits for: the
	// holders of the lock it wants, and the waiters queued before it.
	waitsFor map[*Txn][]*Txn
}

// lockEntry is one key's lock: held exclusively by owner, or shared by
// the transactions in shared (never both).
type lockEntry struct {
	owner  *Txn
	shared []*Txn
	since  time.Time
	// waiters get the lock in the order they asked for it, as InnoDB
	// grants them: a release hands it to the first (and to the shared
	// waiters right behind a shared one), so that no waiter loses every
	// race to newcomers until its timeout.
	waiters []*lockWaiter
}

type lockWaiter struct {
	t       *Txn
	shared  bool
	granted chan struct{} // closed when the lock is handed to t
	ok      bool          // set, under the table's mutex, with granted
}

func (lt *lockTable) init() {
	lt.locks = map[string]*lockEntry{}
	lt.waitsFor = map[*Txn][]*Txn{}
}

// reaches reports whether following wait-for edges from any of from leads
// to target.
func (lt *lockTable) reaches(from []*Txn, target *Txn) bool {
	seen := map[*Txn]bool{}
	stack := slices.Clone(from)
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t == target {
			return true
		}
		if !seen[t] {
			seen[t] = true
			stack = append(stack, lt.waitsFor[t]...)
		}
	}
	return false
}

// holds reports whether t holds e, exclusively or shared.
func (e *lockEntry) holds(t *Txn) bool {
	return e.owner == t || slices.Contains(e.shared, t)
}

// grantable says whether t may take e in the given mode now, ahead of
// nobody: no other transaction holds it in a conflicting mode.
func (e *lockEntry) grantable(t *Txn, shared bool) bool {
	if e.owner != nil {
		return e.owner == t
	}
	if shared {
		return true
	}
	return len(e.shared) == 0 || len(e.shared) == 1 && e.shared[0] == t
}

// grant makes t a holder of e in the given mode; an exclusive grant to a
// shared holder upgrades its lock.
func (e *lockEntry) grant(t *Txn, shared bool) {
	e.since = time.Now()
	if shared {
		e.shared = append(e.shared, t)
		return
	}
	e.shared = slices.DeleteFunc(e.shared, func(o *Txn) bool { return o == t })
	e.owner = t
}

// blockers is what a waiter at position i of e's queue (len(e.waiters) for
// a newcomer) waits for: the holders other than t, and the waiters ahead.
func (e *lockEntry) blockers(t *Txn, i int) []*Txn {
	var out []*Txn
	if e.owner != nil && e.owner != t {
		out = append(out, e.owner)
	}
	for _, o := range e.shared {
		if o != t {
			out = append(out, o)
		}
	}
	for _, w := range e.waiters[:i] {
		out = append(out, w.t)
	}
	return out
}

// Lock takes the exclusive lock on key for the transaction, waiting at
// most wait for other holders to let go. It reports whether the lock is
// new to the transaction (false: it held it already; a shared lock it
// held is upgraded, which is also not fresh).
func (t *Txn) Lock(ctx context.Context, key []byte, wait time.Duration) (fresh bool, err error) {
	return t.lock(ctx, key, wait, false)
}

// LockShared takes a shared lock on key (SELECT ... FOR SHARE, a foreign
// key's check of its parent row): other transactions may share it, none
// may take it exclusively until every sharer lets go.
func (t *Txn) LockShared(ctx context.Context, key []byte, wait time.Duration) (fresh bool, err error) {
	return t.lock(ctx, key, wait, true)
}

func (t *Txn) lock(ctx context.Context, key []byte, wait time.Duration, shared bool) (fresh bool, err error) {
	if t.done {
		return false, ErrTxnDone
	}
	lt := &t.s.locks
	k := string(key)
	lt.mu.Lock()
	e, ok, fresh := lt.grantNow(t, k, shared)
	if ok {
		lt.mu.Unlock()
		if fresh {
			t.took(k)
		}
		return fresh, nil
	}
	blockers := e.blockers(t, len(e.waiters))
	if lt.reaches(blockers, t) {
		lt.mu.Unlock()
		t.s.metrics.deadlocks.Inc()
		return false, ErrDeadlock
	}
	held := e.holds(t)
	w := &lockWaiter{t: t, shared: shared, granted: make(chan struct{})}
	e.waiters = append(e.waiters, w)
	lt.waitsFor[t] = blockers
	holder, since := blockers[0].owner, e.since
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
		lt.handOn(k, e) // those queued behind may go now
	}
	lt.mu.Unlock()
	if err != nil || held {
		return false, err
	}
	t.took(k)
	return true, nil
}

// handOn grants e to the waiters at the head of its queue that it can be
// granted to (the first, and the shared ones right behind a shared one),
// and points the remaining waiters at what they now wait for. It drops
// an entry nobody holds or waits for.
func (lt *lockTable) handOn(k string, e *lockEntry) {
	for len(e.waiters) > 0 {
		w := e.waiters[0]
		if !e.grantable(w.t, w.shared) {
			break
		}
		e.waiters = e.waiters[1:]
		e.grant(w.t, w.shared)
		w.ok = true
		close(w.granted)
		delete(lt.waitsFor, w.t)
	}
	for i, w := range e.waiters {
		lt.waitsFor[w.t] = e.blockers(w.t, i)
	}
	if e.owner == nil && len(e.shared) == 0 && len(e.waiters) == 0 {
		delete(lt.locks, k)
	}
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
	e := &lockEntry{}
	e.grant(t, false)
	lt.locks[k] = e
	lt.mu.Unlock()
	t.took(k)
	return true, nil
}

// LockNow takes key in the given mode only if it can be granted at once
// (no conflicting holder, nobody queued before): SELECT ... SKIP LOCKED.
// It reports whether the transaction holds the lock.
func (t *Txn) LockNow(key []byte, shared bool) (bool, error) {
	if t.done {
		return false, ErrTxnDone
	}
	lt := &t.s.locks
	k := string(key)
	lt.mu.Lock()
	_, ok, fresh := lt.grantNow(t, k, shared)
	lt.mu.Unlock()
	if fresh {
		t.took(k)
	}
	return ok, nil
}

// grantNow gives t the lock on k in the given mode if that needs no wait
// (lt.mu held). ok says whether t holds it now, fresh whether it did not
// hold it before; e is the key's entry.
func (lt *lockTable) grantNow(t *Txn, k string, shared bool) (e *lockEntry, ok, fresh bool) {
	e = lt.locks[k]
	switch {
	case e == nil:
		e = &lockEntry{}
		e.grant(t, shared)
		lt.locks[k] = e
		return e, true, true
	case e.owner == t || shared && e.holds(t):
		return e, true, false
	case e.grantable(t, shared) && (len(e.waiters) == 0 || e.holds(t)):
		held := e.holds(t)
		e.grant(t, shared)
		return e, true, !held
	}
	return e, false, false
}

// SetOwner names who runs the transaction (a connection), for the
// messages about the locks it holds.
func (t *Txn) SetOwner(owner string) { t.owner = owner }

// Locked returns the keys the transaction holds locks on.
func (t *Txn) Locked() []string { return t.locked }

// releaseLocks lets go of every lock the transaction holds, handing each
// on to its waiters.
func (t *Txn) releaseLocks() {
	if len(t.locked) == 0 {
		return
	}
	lt := &t.s.locks
	lt.mu.Lock()
	for _, k := range t.locked {
		e := lt.locks[k]
		if e == nil || !e.holds(t) {
			continue
		}
		if e.owner == t {
			e.owner = nil
		} else {
			e.shared = slices.DeleteFunc(e.shared, func(o *Txn) bool { return o == t })
		}
		lt.handOn(k, e)
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
