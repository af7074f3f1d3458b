package mdl

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestMDLWaitsForOlderLeasesOnly(t *testing.T) {
	m := New()
	version := int64(5)
	cur := func() int64 { return version }
	old := m.Acquire(cur, "old")
	version = 6
	fresh := m.Acquire(cur, "fresh")
	self := m.Acquire(func() int64 { return 5 }, "self")

	// A lease on the new version does not hold the change up; one on the
	// old version does, unless it is the issuer's own.
	if l := m.Oldest(0, 6, self); l != old {
		t.Fatalf("oldest blocking lease = %v, want old", l)
	}
	var reported []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := m.Wait(ctx, 6, self, time.Millisecond, func(l *Lease) { reported = append(reported, l.Owner) })
	if err == nil {
		t.Fatal("Wait returned while an old lease was held")
	}
	if len(reported) == 0 || reported[0] != "old" {
		t.Fatalf("reported %v, want the old lease", reported)
	}
	done := make(chan error, 1)
	go func() { done <- m.Wait(context.Background(), 6, self, time.Hour, nil) }()
	time.Sleep(5 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Wait returned early")
	default:
	}
	old.Release()
	old.Release() // idempotent
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fresh.Release()
	self.Release()
	if n := m.Count(); n != 0 {
		t.Fatalf("%d leases left", n)
	}
}

func TestLeaseRenew(t *testing.T) {
	m := New()
	l := m.Acquire(func() int64 { return 1 }, "x")
	if m.Oldest(0, 2, nil) != l {
		t.Fatal("lease on version 1 does not block version 2")
	}
	l.Renew(2)
	if m.Oldest(0, 2, nil) != nil {
		t.Fatal("renewed lease still blocks")
	}
}

// TestPublishSeenOrWaited: sessions take and drop leases on every shard
// while versions are published; once Wait for a version returns, no lease
// on an older one is left, however the acquires interleave with the wait's
// reading of the shards.
func TestPublishSeenOrWaited(t *testing.T) {
	m := New()
	var version atomic.Int64
	cur := func() int64 { return version.Load() }
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l := m.Acquire(cur, "session")
				runtime.Gosched()
				l.Release()
			}
		}()
	}
	for v := int64(1); v <= 300; v++ {
		version.Store(v)
		if err := m.Wait(context.Background(), v, nil, time.Hour, nil); err != nil {
			t.Fatal(err)
		}
		if l := m.Oldest(0, v, nil); l != nil {
			t.Fatalf("a lease on version %d after the wait for %d", l.Version, v)
		}
	}
	cancel()
	wg.Wait()
	if n := m.Count(); n != 0 {
		t.Fatalf("%d leases left", n)
	}
}
