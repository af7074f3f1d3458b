package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// cachedScan scans [lo, hi) and reports whether the range cache answered.
func cachedScan(t testing.TB, txn *Txn, lo, hi string) ([]kvPair, bool) {
	t.Helper()
	it := txn.NewIter([]byte(lo), []byte(hi), false)
	hit := it.(*txnIter).snap.cached
	return collect(t, it), hit
}

// TestRangeCacheServesAfterFill: a forward scan fills the cache; the next
// scan inside the range is answered from it, one that leaves the range is
// not, and commits keep the answers right.
func TestRangeCacheServesAfterFill(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1", "b", "2", "c", "3", "d", "4", "f", "6")

	scan := func(lo, hi string, wantHit bool, want ...string) {
		t.Helper()
		txn := s.Begin()
		defer txn.Rollback()
		got, hit := cachedScan(t, txn, lo, hi)
		if hit != wantHit {
			t.Fatalf("scan [%s, %s): cache hit %v, want %v", lo, hi, hit, wantHit)
		}
		wantScan(t, got, want...)
	}
	scan("b", "e", false, "b", "2", "c", "3", "d", "4")
	scan("b", "e", true, "b", "2", "c", "3", "d", "4")
	scan("c", "d", true, "c", "3")
	scan("a", "c", false, "a", "1", "b", "2")
	// [a, c) and [b, e) now cover [a, e) together.
	scan("a", "e", true, "a", "1", "b", "2", "c", "3", "d", "4")
	scan("a", "g", false, "a", "1", "b", "2", "c", "3", "d", "4", "f", "6")

	commitWrites(t, s, "b", "2b", "bb", "new", "c", "<del>")
	scan("a", "g", true, "a", "1", "b", "2b", "bb", "new", "d", "4", "f", "6")

	// A snapshot from before those commits must not see them, nor miss the
	// deleted key: the cache cannot tell, and Pebble answers.
	old := s.beginAt(s.ReadTS() - 1)
	defer old.Rollback()
	got, hit := cachedScan(t, old, "a", "g")
	if hit {
		t.Fatal("a snapshot older than the cached versions was answered from the cache")
	}
	wantScan(t, got, "a", "1", "b", "2", "c", "3", "d", "4", "f", "6")
}

// TestRangeCacheFillVoided: a fill is not kept when a commit to its range
// lands while it scans, when the scan sees a version newer than its
// snapshot, or when versions bypass commits.
func TestRangeCacheFillVoided(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during func(s *Store)
	}{
		{"commit in range", func(s *Store) { commitWrites(t, s, "c", "new") }},
		{"clear", func(s *Store) { s.clearRanges() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, nil)
			commitWrites(t, s, "a", "1", "b", "2", "c", "3")
			txn := s.Begin()
			defer txn.Rollback()
			it := txn.NewIter([]byte("a"), []byte("z"), false)
			tc.during(s)
			collect(t, it)
			again := s.Begin()
			defer again.Rollback()
			if _, hit := cachedScan(t, again, "a", "z"); hit {
				t.Fatal("a voided fill answered a scan")
			}
			if _, hit := cachedScan(t, again, "a", "z"); !hit {
				t.Fatal("a clean fill did not answer the next scan")
			}
		})
	}
	t.Run("newer version", func(t *testing.T) {
		s := openTest(t, nil)
		commitWrites(t, s, "a", "1", "b", "2")
		old := s.Begin()
		defer old.Rollback()
		commitWrites(t, s, "b", "2b")
		wantScan(t, scanTxn(t, old, []byte("a"), []byte("z"), false), "a", "1", "b", "2")
		txn := s.Begin()
		defer txn.Rollback()
		got, hit := cachedScan(t, txn, "a", "z")
		if hit {
			t.Fatal("a fill that saw a newer version answered a scan")
		}
		wantScan(t, got, "a", "1", "b", "2b")
	})
	t.Run("closed early", func(t *testing.T) {
		s := openTest(t, nil)
		commitWrites(t, s, "a", "1", "b", "2", "c", "3", "d", "4")
		txn := s.Begin()
		defer txn.Rollback()
		it := txn.NewIter([]byte("a"), []byte("z"), false)
		it.Next() // on b: the fill covers [a, b]
		must(t, it.Close())
		if _, hit := cachedScan(t, txn, "a", "b\x00"); !hit {
			t.Fatal("the part an early-closed scan read was not kept")
		}
		if _, hit := cachedScan(t, txn, "a", "c"); hit {
			t.Fatal("an early-closed scan's cover reached past what it read")
		}
	})
}

// TestRangeCacheEvicts: the cache stays within its budget, an interval
// scans keep using survives the ones nobody uses, and once full it takes
// in a range only when read again.
func TestRangeCacheEvicts(t *testing.T) {
	const budget = 16 << 10
	s := openTest(t, func(o *Options) { o.RangeCacheSize = budget })
	val := bytes.Repeat([]byte("v"), 100)
	txn := s.Begin()
	for i := range 1000 {
		must(t, txn.Set(benchKey(i), val))
	}
	_, err := txn.Commit()
	must(t, err)
	hot := func() bool {
		r := s.Begin()
		defer r.Rollback()
		it := r.NewIter(benchKey(0), benchKey(10), false)
		hit := it.(*txnIter).snap.cached
		collect(t, it)
		return hit
	}
	scan := func(i int) bool {
		r := s.Begin()
		defer r.Rollback()
		it := r.NewIter(benchKey(i), benchKey(i+10), false)
		hit := it.(*txnIter).snap.cached
		collect(t, it)
		return hit
	}
	hot()
	for i := 10; i < 980; i += 10 {
		// Twice: a full cache takes in a range the second time it is read.
		scan(i)
		scan(i)
		if !hot() {
			t.Fatalf("the interval used by every other scan was evicted after the scan at %d", i)
		}
		if got := s.ranges.bytes; got > budget {
			t.Fatalf("cache holds %d bytes, budget %d", got, budget)
		}
	}
	if n := len(s.ranges.ring); n >= 97 {
		t.Fatalf("%d intervals kept within %d bytes: nothing evicted", n, budget)
	}
	for n, want := range []bool{false, false, true} {
		if hit := scan(980); hit != want {
			t.Fatalf("read %d of a new range on a full cache: hit %v, want %v", n+1, hit, want)
		}
	}
}

// TestRangeCacheRace races random commits against random scans, and checks
// every scan, answered from the cache or not, against Pebble's own answer
// at the same snapshot.
func TestRangeCacheRace(t *testing.T) {
	// The smaller budgets keep the cache full: evicting, and refusing
	// ranges read once.
	for seed, budget := range map[uint64]int64{1: 64 << 10, 2: 8 << 10, 3: 2 << 10} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := openTest(t, func(o *Options) { o.RangeCacheSize = budget })
			const keys = 200
			key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
			var stop atomic.Bool
			var writers, readers sync.WaitGroup
			for w := range 3 {
				writers.Add(1)
				go func() {
					defer writers.Done()
					rng := rand.New(rand.NewPCG(seed, uint64(w)))
					for n := 0; !stop.Load(); n++ {
						txn := s.Begin()
						for range 1 + rng.IntN(4) {
							k := key(rng.IntN(keys))
							if rng.IntN(4) == 0 {
								must(t, txn.Delete(k))
							} else {
								must(t, txn.Set(k, fmt.Appendf(nil, "w%d-%d", w, n)))
							}
						}
						if _, err := txn.Commit(); err != nil && !errors.Is(err, ErrWriteConflict) {
							t.Error(err)
							return
						}
					}
				}()
			}
			var hits, scans atomic.Int64
			for r := range 3 {
				readers.Add(1)
				go func() {
					defer readers.Done()
					rng := rand.New(rand.NewPCG(seed, 100+uint64(r)))
					for range 1500 {
						txn := s.Begin()
						if rng.IntN(8) == 0 {
							must(t, txn.Set(key(rng.IntN(keys)), []byte("own")))
						}
						for range 3 {
							lo := rng.IntN(keys)
							hi := lo + 1 + rng.IntN(30)
							it := txn.NewIter(key(lo), key(hi), false)
							if it.(*txnIter).snap.cached {
								hits.Add(1)
							}
							got := collect(t, it)
							scans.Add(1)
							want := collect(t, txn.uncachedIter(key(lo), key(hi)))
							if fmt.Sprint(got) != fmt.Sprint(want) {
								t.Errorf("scan [%s, %s) at %d: got %v, Pebble says %v", key(lo), key(hi), txn.readTS, got, want)
								stop.Store(true)
							}
						}
						txn.Rollback()
					}
				}()
			}
			readers.Wait()
			stop.Store(true)
			writers.Wait()
			if hits.Load() == 0 {
				t.Fatalf("none of %d scans was answered from the cache", scans.Load())
			}
			t.Logf("%d of %d scans from the cache", hits.Load(), scans.Load())
		})
	}
}

// TestRangeCacheDropsUnread: an interval that commits keep writing while
// no scan reads it is dropped; one that scans read in between stays.
func TestRangeCacheDropsUnread(t *testing.T) {
	for _, read := range []bool{false, true} {
		t.Run(fmt.Sprintf("read=%v", read), func(t *testing.T) {
			s := openTest(t, nil)
			commitWrites(t, s, "a", "1", "b", "2", "c", "3")
			txn := s.Begin()
			collect(t, txn.NewIter([]byte("a"), []byte("z"), false))
			txn.Rollback()
			for n := range rangeMaxUnread + 1 {
				commitWrites(t, s, "b", fmt.Sprint(n))
				if read {
					txn := s.Begin()
					if _, hit := cachedScan(t, txn, "a", "c"); !hit {
						t.Fatalf("after %d commits: a read interval was dropped", n+1)
					}
					txn.Rollback()
				}
			}
			txn = s.Begin()
			defer txn.Rollback()
			got, hit := cachedScan(t, txn, "a", "z")
			if hit == !read {
				t.Fatalf("cache hit %v after %d commits with reads %v", hit, rangeMaxUnread+1, read)
			}
			wantScan(t, got, "a", "1", "b", fmt.Sprint(rangeMaxUnread), "c", "3")
		})
	}
}
