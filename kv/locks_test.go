package kv

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// A second writer of a locked key waits for the owner's commit, then reads
// the owner's write and commits on top of it: no lost update, no conflict.
func TestLockSerialisesWriters(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0")
	ctx := context.Background()
	a, b := s.Begin(), s.Begin()
	if fresh, err := a.Lock(ctx, []byte("k"), time.Second); err != nil || !fresh {
		t.Fatalf("a.Lock: fresh=%v err=%v", fresh, err)
	}
	if fresh, err := a.Lock(ctx, []byte("k"), time.Second); err != nil || fresh {
		t.Fatalf("a.Lock again: fresh=%v err=%v, want held already", fresh, err)
	}
	must(t, a.Set([]byte("k"), []byte("1")))
	got := make(chan string, 1)
	go func() {
		if _, err := b.Lock(ctx, []byte("k"), 10*time.Second); err != nil {
			got <- "lock: " + err.Error()
			return
		}
		v, _, err := b.GetLatest([]byte("k"))
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		if err := b.Set([]byte("k"), append(v, '+')); err != nil {
			got <- err.Error()
			return
		}
		if _, err := b.Commit(); err != nil {
			got <- "commit: " + err.Error()
			return
		}
		got <- string(v)
	}()
	select {
	case r := <-got:
		t.Fatalf("b did not wait for a's lock: %s", r)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r != "1" {
		t.Fatalf("b read %q after a's commit, want 1", r)
	}
	c := s.Begin()
	defer c.Rollback()
	wantGet(t, c, "k", "1+")
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held after both committed", n)
	}
}

// Without the lock the same interleaving is a write-write conflict: the
// check still applies to writes based on an old snapshot.
func TestUnlockedWriteStillConflicts(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0")
	a := s.Begin()
	commitWrites(t, s, "k", "1")
	must(t, a.Set([]byte("k"), []byte("2")))
	if _, err := a.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("commit over a newer version: %v, want a write conflict", err)
	}
}

// A lock taken after another transaction committed the key lets the
// writer commit on the newest version; a write made before the lock was
// based on the old snapshot and still conflicts.
func TestLockBaseIsNewestRead(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0", "j", "0")
	a := s.Begin()
	commitWrites(t, s, "k", "1", "j", "1")
	must(t, a.Set([]byte("j"), []byte("a"))) // before any lock: based on the start snapshot
	if _, err := a.Lock(context.Background(), []byte("k"), time.Second); err != nil {
		t.Fatal(err)
	}
	v, _, err := a.GetLatest([]byte("k"))
	if err != nil || string(v) != "1" {
		t.Fatalf("GetLatest = %q, %v", v, err)
	}
	must(t, a.Set([]byte("k"), []byte("2")))
	if _, err := a.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("the write to j made before the lock: %v, want a conflict", err)
	}

	b := s.Begin()
	commitWrites(t, s, "k", "3")
	if _, err := b.Lock(context.Background(), []byte("k"), time.Second); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := b.GetLatest([]byte("k")); string(v) != "3" {
		t.Fatalf("GetLatest = %q, want 3", v)
	}
	must(t, b.Set([]byte("k"), []byte("4")))
	if _, err := b.Commit(); err != nil {
		t.Fatalf("commit after a current read under the lock: %v", err)
	}
}

// Two transactions each holding what the other wants: the one that would
// close the cycle gets ErrDeadlock at once; the other gets its lock when
// the victim rolls back.
func TestLockDeadlock(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	a, b := s.Begin(), s.Begin()
	if _, err := a.Lock(ctx, []byte("x"), time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, []byte("y"), time.Second); err != nil {
		t.Fatal(err)
	}
	aGot := make(chan error, 1)
	go func() {
		_, err := a.Lock(ctx, []byte("y"), 10*time.Second)
		aGot <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.locks.mu.Lock()
		waiting := slices.Contains(s.locks.waitsFor[a], b)
		s.locks.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a never waited for b")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := b.Lock(ctx, []byte("x"), 10*time.Second); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("b.Lock(x) = %v, want ErrDeadlock", err)
	}
	b.Rollback()
	if err := <-aGot; err != nil {
		t.Fatalf("a.Lock(y) after the victim rolled back: %v", err)
	}
	a.Rollback()
}

// A wait ends with ErrLockWaitTimeout, or with the context's error, and
// leaves the owner's lock in place.
func TestLockWaitEnds(t *testing.T) {
	s := openTest(t, nil)
	a, b := s.Begin(), s.Begin()
	defer a.Rollback()
	defer b.Rollback()
	if _, err := a.Lock(context.Background(), []byte("k"), time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(context.Background(), []byte("k"), 50*time.Millisecond); !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("b.Lock = %v, want ErrLockWaitTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := b.Lock(ctx, []byte("k"), time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("b.Lock with a cancelled context = %v", err)
	}
	if n := s.LocksHeld(); n != 1 {
		t.Fatalf("%d locks held, want a's one", n)
	}
}

// SetReadTS moves a transaction's reads to a newer snapshot and back.
func TestSetReadTS(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0")
	a := s.Begin()
	defer a.Rollback()
	wantGet(t, a, "k", "0")
	commitWrites(t, s, "k", "1")
	wantGet(t, a, "k", "0")
	a.SetReadTS(s.ReadTS())
	wantGet(t, a, "k", "1")
	a.SetReadTS(a.StartTS())
	wantGet(t, a, "k", "0")
}

// Waiters get a released lock in the order they asked for it, even when a
// later waiter is ready first; one that gave up leaves the queue.
func TestLockFIFO(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	owner := s.Begin()
	if _, err := owner.Lock(ctx, []byte("k"), time.Second); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 4)
	txns := make([]*Txn, 4)
	var wg sync.WaitGroup
	for i := range txns {
		txns[i] = s.Begin()
		wait := 10 * time.Second
		if i == 1 {
			wait = 50 * time.Millisecond // gives up while queued
		}
		wg.Add(1)
		go func(i int, wait time.Duration) {
			defer wg.Done()
			if _, err := txns[i].Lock(ctx, []byte("k"), wait); err != nil {
				order <- -i
				txns[i].Rollback()
				return
			}
			order <- i
			time.Sleep(5 * time.Millisecond)
			txns[i].Rollback()
		}(i, wait)
		// each waiter queued before the next asks
		for deadline := time.Now().Add(5 * time.Second); ; {
			s.locks.mu.Lock()
			n := len(s.locks.locks["k"].waiters)
			s.locks.mu.Unlock()
			if n == i+1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if got := <-order; got != -1 {
		t.Fatalf("first to finish: %d, want waiter 1 timing out", got)
	}
	owner.Rollback()
	for _, want := range []int{0, 2, 3} {
		if got := <-order; got != want {
			t.Fatalf("lock went to waiter %d, want %d", got, want)
		}
	}
	wg.Wait()
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held at the end", n)
	}
}

// TryLock takes a free lock, never waits for a held one, and a write
// after it, based on the newest version, commits over a commit that came
// after the transaction began.
func TestTryLock(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0")
	ctx := context.Background()
	a, b := s.Begin(), s.Begin()
	if _, err := a.Lock(ctx, []byte("k"), time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if ok, err := b.TryLock([]byte("k")); err != nil || ok {
		t.Fatalf("b.TryLock of a held lock: ok=%v err=%v", ok, err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("TryLock waited %v", d)
	}
	must(t, a.Set([]byte("k"), []byte("1")))
	if _, err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, true} { // fresh, then held already
		if ok, err := b.TryLock([]byte("k")); err != nil || ok != want {
			t.Fatalf("b.TryLock: ok=%v err=%v", ok, err)
		}
	}
	v, _, err := b.GetLatest([]byte("k"))
	if err != nil || string(v) != "1" {
		t.Fatalf("GetLatest = %q, %v", v, err)
	}
	must(t, b.Set([]byte("k"), []byte("2")))
	if _, err := b.Commit(); err != nil {
		t.Fatalf("commit after TryLock: %v", err)
	}
}

// lockAsync takes key in the given mode in the background; the channel
// gets the result.
func lockAsync(tx *Txn, key string, shared bool) <-chan error {
	ch := make(chan error, 1)
	go func() {
		var err error
		if shared {
			_, err = tx.LockShared(context.Background(), []byte(key), 10*time.Second)
		} else {
			_, err = tx.Lock(context.Background(), []byte(key), 10*time.Second)
		}
		ch <- err
	}()
	return ch
}

// pending fails the test if ch has a result within a short while: the
// lock is being waited for.
func pending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s did not wait (err %v)", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

func granted(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s was never granted", what)
	}
}

// Shared locks: sharers do not wait for each other; an exclusive request
// waits for every sharer; a shared request queued behind an exclusive
// waiter waits for it (FIFO, no starvation); a sole sharer upgrades.
func TestLockShared(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	a, b, c, d := s.Begin(), s.Begin(), s.Begin(), s.Begin()
	granted(t, lockAsync(a, "k", true), "a shared")
	granted(t, lockAsync(b, "k", true), "b shared beside a")
	if fresh, err := a.LockShared(ctx, []byte("k"), time.Second); err != nil || fresh {
		t.Fatalf("a shared again: fresh=%v err=%v", fresh, err)
	}
	cx := lockAsync(c, "k", false)
	pending(t, cx, "c exclusive while a and b share")
	ds := lockAsync(d, "k", true)
	pending(t, ds, "d shared behind c's exclusive request")
	a.Rollback()
	pending(t, cx, "c exclusive while b shares")
	b.Rollback()
	granted(t, cx, "c exclusive once the sharers are gone")
	pending(t, ds, "d shared while c holds it")
	c.Rollback()
	granted(t, ds, "d shared after c")
	// d is the sole sharer: its exclusive request upgrades at once.
	if fresh, err := d.Lock(ctx, []byte("k"), time.Second); err != nil || fresh {
		t.Fatalf("d upgrade: fresh=%v err=%v", fresh, err)
	}
	e := s.Begin()
	es := lockAsync(e, "k", true)
	pending(t, es, "e shared while d holds it exclusively")
	d.Rollback()
	granted(t, es, "e shared after d")
	e.Rollback()
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held after every transaction ended", n)
	}
}

// Two sharers that both ask to upgrade wait for each other: the second is
// the deadlock's victim, and the first upgrades once it rolls back.
func TestLockSharedUpgradeDeadlock(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	a, b := s.Begin(), s.Begin()
	granted(t, lockAsync(a, "k", true), "a shared")
	granted(t, lockAsync(b, "k", true), "b shared")
	ax := lockAsync(a, "k", false)
	pending(t, ax, "a's upgrade while b shares")
	if _, err := b.Lock(ctx, []byte("k"), time.Second); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("b's upgrade = %v, want ErrDeadlock", err)
	}
	b.Rollback()
	granted(t, ax, "a's upgrade after b rolled back")
	a.Rollback()
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held after every transaction ended", n)
	}
}

// A waiter that gives up (timeout) lets the shared waiters queued behind
// it go ahead, and background TryLock never takes a shared row.
func TestLockSharedWaiterTimesOut(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	a, b, c := s.Begin(), s.Begin(), s.Begin()
	granted(t, lockAsync(a, "k", true), "a shared")
	if ok, err := b.TryLock([]byte("k")); ok || err != nil {
		t.Fatalf("TryLock of a shared key: %v %v", ok, err)
	}
	bx := make(chan error, 1)
	go func() {
		_, err := b.Lock(ctx, []byte("k"), 100*time.Millisecond)
		bx <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cs := lockAsync(c, "k", true)
	if err := <-bx; !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("b's exclusive request = %v, want a timeout", err)
	}
	granted(t, cs, "c shared once b gave up")
	a.Rollback()
	b.Rollback()
	c.Rollback()
}

// Randomized: transactions take shared and exclusive locks on a few keys
// in random orders. An exclusive holder is always alone, every wait ends
// (granted, or a deadlock for one of the cycle), and nothing stays held.
func TestLockSharedRandom(t *testing.T) {
	s := openTest(t, nil)
	var mu sync.Mutex
	holders := map[string]map[*Txn]bool{} // key -> holders, true if exclusive
	check := func(k string, tx *Txn, excl bool) error {
		mu.Lock()
		defer mu.Unlock()
		hs := holders[k]
		if hs == nil {
			hs = map[*Txn]bool{}
			holders[k] = hs
		}
		for o, oe := range hs {
			if o != tx && (excl || oe) {
				return errors.New("conflicting holders of " + k)
			}
		}
		hs[tx] = hs[tx] || excl
		return nil
	}
	forget := func(tx *Txn) {
		mu.Lock()
		defer mu.Unlock()
		for _, hs := range holders {
			delete(hs, tx)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(seed int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tx := s.Begin()
				for j := 0; j < 3; j++ {
					k := string(rune('a' + (seed*7+i*3+j*5)%4))
					excl := (seed+i+j)%3 == 0
					var err error
					if excl {
						_, err = tx.Lock(context.Background(), []byte(k), 5*time.Second)
					} else {
						_, err = tx.LockShared(context.Background(), []byte(k), 5*time.Second)
					}
					if errors.Is(err, ErrDeadlock) {
						break
					}
					if err != nil {
						errs <- err
						return
					}
					if err := check(k, tx, excl); err != nil {
						errs <- err
						return
					}
				}
				forget(tx)
				tx.Rollback()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held after every transaction ended", n)
	}
}

// LockNow grants only what Lock would grant without waiting.
func TestLockNow(t *testing.T) {
	s := openTest(t, nil)
	a, b, c := s.Begin(), s.Begin(), s.Begin()
	for _, step := range []struct {
		tx     *Txn
		key    string
		shared bool
		want   bool
	}{
		{a, "k", true, true},   // free
		{b, "k", true, true},   // shared beside a
		{c, "k", false, false}, // exclusive while shared
		{a, "k", false, false}, // upgrade while b shares
		{a, "k", true, true},   // held already
		{c, "j", false, true},  // free
		{a, "j", true, false},  // shared while c holds it
		{c, "j", true, true},   // c holds it exclusively
	} {
		ok, err := step.tx.LockNow([]byte(step.key), step.shared)
		if err != nil || ok != step.want {
			t.Fatalf("%+v: got %v, %v", step, ok, err)
		}
	}
	b.Rollback()
	if ok, _ := a.LockNow([]byte("k"), false); !ok {
		t.Fatal("a's upgrade once b is gone")
	}
	a.Rollback()
	c.Rollback()
	if n := s.LocksHeld(); n != 0 {
		t.Fatalf("%d locks held after every transaction ended", n)
	}
}
