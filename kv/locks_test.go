package kv

import (
	"context"
	"errors"
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
		waiting := s.locks.waitsFor[a] == b
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
