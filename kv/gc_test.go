package kv

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// gcOpts makes every version older than "now" eligible, so only live
// transactions and holds protect history.
func gcOpts(o *Options) { o.GCLifetime = time.Nanosecond }

func TestGCRespectsLiveTxnAndHold(t *testing.T) {
	s := openTest(t, gcOpts)
	commitWrites(t, s, "k", "v1", "other", "x")
	old := s.Begin()
	ts2 := commitWrites(t, s, "k", "v2")
	release := s.HoldSafePoint(ts2, "test")
	commitWrites(t, s, "k", "v3")
	commitWrites(t, s, "k", "v4")

	removed, err := s.RunGC()
	must(t, err)
	if removed != 0 || rawVersions(t, s)["k"] != 4 {
		t.Fatalf("GC removed %d with a live snapshot at v1; k has %d versions", removed, rawVersions(t, s)["k"])
	}
	if sp := s.SafePoint(); sp > old.StartTS() {
		t.Fatalf("safe point %d above live snapshot %d", sp, old.StartTS())
	}
	wantGet(t, old, "k", "v1")
	old.Rollback()

	// The hold at v2 now bounds GC: v1 goes, v2 stays readable at ts2.
	removed, err = s.RunGC()
	must(t, err)
	if removed != 1 || rawVersions(t, s)["k"] != 3 {
		t.Fatalf("removed %d, k has %d versions; want 1 and 3", removed, rawVersions(t, s)["k"])
	}
	atHold := s.beginAt(ts2)
	wantGet(t, atHold, "k", "v2")
	wantGet(t, atHold, "other", "x")
	atHold.Rollback()

	release()
	release() // idempotent
	removed, err = s.RunGC()
	must(t, err)
	if removed != 2 {
		t.Fatalf("removed %d after release, want 2", removed)
	}
	if v := rawVersions(t, s); v["k"] != 1 || v["other"] != 1 {
		t.Fatalf("versions after GC: %v", v)
	}
	txn := s.Begin()
	wantGet(t, txn, "k", "v4")
	wantGet(t, txn, "other", "x")
	txn.Rollback()
	if sp := s.SafePoint(); sp < ts2 {
		t.Fatalf("safe point %d did not advance past %d", sp, ts2)
	}
}

func TestGCLifetimeKeepsRecentHistory(t *testing.T) {
	s := openTest(t, func(o *Options) { o.GCLifetime = time.Hour })
	for i := range 5 {
		commitWrites(t, s, "k", strconv.Itoa(i))
	}
	removed, err := s.RunGC()
	must(t, err)
	if removed != 0 || rawVersions(t, s)["k"] != 5 {
		t.Fatalf("GC removed %d versions younger than the lifetime", removed)
	}
}

func TestGCDropsDeletedKeys(t *testing.T) {
	s := openTest(t, gcOpts)
	// One long history crossing several GC batches, ending in a tombstone.
	n := 2*gcBatchSize + 100
	for i := range n {
		commitWrites(t, s, "big", strconv.Itoa(i), fmt.Sprintf("k%04d", i%50), "x")
	}
	commitWrites(t, s, "big", "<del>", "k0001", "<del>")
	removed, err := s.RunGC()
	must(t, err)
	// All of big, and of k0001 including its tombstone; all but the newest
	// version of the other 49 keys.
	if want := (n + 1) + (n - 49 + 1); removed != want {
		t.Fatalf("removed %d, want %d", removed, want)
	}
	v := rawVersions(t, s)
	if v["big"] != 0 || v["k0001"] != 0 || v["k0002"] != 1 || len(v) != 49 {
		t.Fatalf("versions after GC: big=%d k0001=%d k0002=%d keys=%d", v["big"], v["k0001"], v["k0002"], len(v))
	}
	txn := s.Begin()
	defer txn.Rollback()
	wantGet(t, txn, "big", "<none>")
	if got := len(scanTxn(t, txn, nil, nil, false)); got != 49 {
		t.Fatalf("scan after GC: %d keys", got)
	}
}

// TestGCRandomized compares reads at several timestamps at or above the
// safe point before and after GC, and checks that GC leaves exactly the
// versions such readers can need.
func TestGCRandomized(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			if seed%2 == 1 {
				// Tiny batches and frequent iterator refreshes.
				defer func(b, r int) { gcBatchSize, gcRefreshKeys = b, r }(gcBatchSize, gcRefreshKeys)
				gcBatchSize, gcRefreshKeys = 3, 7
			}
			s := openTest(t, gcOpts)
			rng := rand.New(rand.NewPCG(seed, 99))
			keys := keyPool(rng, 20)
			m, stamps := randomHistory(t, s, rng, keys, 250)
			sp := stamps[len(stamps)/3+rng.IntN(len(stamps)/2)]
			release := s.HoldSafePoint(sp, "test")
			defer release()

			views := randomViews(rng, stamps, sp)
			checkViews(t, s, m, keys, rng, views)

			if seed%2 == 1 {
				// Readers must be unaffected at every step of the pass, not
				// just at its end.
				flushes := 0
				gcFlushHook = func() {
					flushes++
					checkViews(t, s, m, keys, rng, views[:2])
				}
				defer func() {
					gcFlushHook = nil
					if flushes < 10 {
						t.Errorf("only %d GC batches", flushes)
					}
				}()
			}
			removed, err := s.RunGC()
			must(t, err)
			if got := s.SafePoint(); got != sp {
				t.Fatalf("safe point %d, want the hold at %d", got, sp)
			}
			// Per key: everything newer than sp, plus the version visible
			// at sp unless it is a tombstone.
			checkKept(t, s, m, sp, true, removed)
			checkViews(t, s, m, keys, rng, views)
		})
	}
}

func TestGCConcurrentWithTraffic(t *testing.T) {
	s := openTest(t, func(o *Options) {
		o.GCLifetime = time.Nanosecond
		o.GCInterval = 5 * time.Millisecond
	})
	const accounts = 8
	for i := range accounts {
		commitWrites(t, s, fmt.Sprintf("acct%02d", i), "100")
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	done := make(chan struct{})
	defer func() { <-done }()
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(3, 4))
		for time.Now().Before(deadline) {
			txn := s.Begin()
			err := transfer(txn, rng.IntN(accounts), rng.IntN(accounts), rng.IntN(5))
			if err == nil {
				_, err = txn.Commit()
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for time.Now().Before(deadline) {
		txn := s.Begin()
		reverse := time.Now().UnixNano()%2 == 0
		first := sumAccounts(t, scanTxn(t, txn, nil, nil, reverse))
		// Let background GC run while this snapshot stays open.
		time.Sleep(time.Millisecond)
		second := sumAccounts(t, scanTxn(t, txn, nil, nil, !reverse))
		txn.Rollback()
		if first != accounts*100 || second != first {
			t.Fatalf("sums %d and %d, want %d", first, second, accounts*100)
		}
	}
	// Background GC eventually trims every account to a single version.
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range rawVersions(t, s) {
			if n != 1 {
				return false
			}
		}
		return true
	})
}

func sumAccounts(t testing.TB, pairs []kvPair) int {
	t.Helper()
	sum := 0
	for _, p := range pairs {
		n, err := strconv.Atoi(p.v)
		must(t, err)
		sum += n
	}
	return sum
}

// TestGCPassRests checks the background pass's pacing: it rests pace times
// the work done since it last rested, and stops resting when the store
// closes.
func TestGCPassRests(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	g := gcPass{s: s, pace: 2, mark: time.Now().Add(-50 * time.Millisecond)}
	start := time.Now()
	if err := g.rest(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("rested %v after 50ms of work at pace 2", d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	g.mark = time.Now().Add(-time.Hour)
	done := make(chan error, 1)
	go func() { done <- g.rest() }()
	select {
	case err := <-done:
		if err != errClosed {
			t.Fatalf("rest on a closed store: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rest kept sleeping after the store closed")
	}
}

// TestGCLoopRestsWhenIdle checks that background passes stop once a pass
// has cleaned everything written, and start again with the next write.
func TestGCLoopRestsWhenIdle(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), NoSync: true, GCInterval: 5 * time.Millisecond, GCLifetime: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func() {
		tx := s.Begin()
		if err := tx.Set([]byte("k"), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	settle := func() int64 {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s.mu.Lock()
			clean := s.last <= s.gcCleanTo
			s.mu.Unlock()
			if clean {
				return s.gcPasses.Load()
			}
			if time.Now().After(deadline) {
				t.Fatal("no GC pass caught up with the last write")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	write()
	n := settle()
	time.Sleep(100 * time.Millisecond) // twenty intervals
	if got := s.gcPasses.Load(); got > n+1 {
		t.Fatalf("%d passes ran on an idle store after it was clean", got-n)
	}
	write()
	if settle() <= n {
		t.Fatal("no pass ran after a new write")
	}
}
