package kv

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestPurgeRandomized: after a history whose writers read each key first,
// a purge with the safe point held keeps, per key, every version newer
// than the hold and the newest at or below it, and every reader at or above
// the hold sees what it saw before, between the purge's batches too. Once
// the hold goes, each key keeps its newest version only.
func TestPurgeRandomized(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			if seed%2 == 1 {
				defer func(b int) { gcBatchSize = b }(gcBatchSize)
				gcBatchSize = 3
			}
			s := openTest(t, nil)
			rng := rand.New(rand.NewPCG(seed, 7))
			keys := keyPool(rng, 20)
			m, stamps := randomHistoryReading(t, s, rng, keys, 300, true)
			sp := stamps[len(stamps)/3+rng.IntN(len(stamps)/2)]
			release := s.HoldSafePoint(sp, "test")
			defer release()
			views := randomViews(rng, stamps, sp)
			check := func() { checkViews(t, s, m, keys, rng, views) }
			check()

			removed, err := s.purge()
			must(t, err)
			if got := s.SafePoint(); got != sp {
				t.Fatalf("safe point %d, want the hold at %d", got, sp)
			}
			checkKept(t, s, m, sp, false, removed)
			check()
			// Compactions meet each SingleDelete with its version's one Set.
			must(t, s.db.Compact(t.Context(), userSpaceStart, []byte{0xff, 0xff}, true))
			if n := s.singleDelMisuse.Load(); n != 0 {
				t.Fatalf("%d purged versions were written more than once", n)
			}
			check()

			release()
			if _, err := s.purge(); err != nil {
				t.Fatal(err)
			}
			for k, n := range rawVersions(t, s) {
				if n != 1 {
					t.Fatalf("key %q: %d versions once no reader needs the old ones", k, n)
				}
			}
			checkViews(t, s, m, keys, rng, stamps[len(stamps)-1:])
		})
	}
}

// TestReserveHeldTS: GC never passes a timestamp ReserveHeldTS returned
// until it is released, so a snapshot there reads what it did.
func TestReserveHeldTS(t *testing.T) {
	s := openTest(t, nil)
	read := func(txn *Txn) string {
		v, _, err := txn.Get([]byte("k"))
		must(t, err)
		return string(v)
	}
	commitWrites(t, s, "k", "1")
	ts, release, err := s.ReserveHeldTS("test")
	must(t, err)
	for _, v := range []string{"2", "3"} {
		txn := s.Begin()
		read(txn)
		must(t, txn.Set([]byte("k"), []byte(v)))
		_, err := txn.Commit()
		must(t, err)
	}
	_, err = s.RunGC()
	must(t, err)
	_, err = s.purge()
	must(t, err)
	if sp := s.SafePoint(); sp > ts {
		t.Fatalf("safe point %d passed the held timestamp %d", sp, ts)
	}
	snap, err := s.BeginAt(ts)
	must(t, err)
	if v := read(snap); v != "1" {
		t.Fatalf("snapshot at the held timestamp reads %q, want 1", v)
	}
	snap.Rollback()
	release()
	_, err = s.RunGC()
	must(t, err)
	if _, err := s.BeginAt(ts); err == nil {
		t.Fatal("a snapshot below the safe point started once the hold was released")
	}
}

// TestPurgeQueueTakesFront: a purge takes the queued versions from the
// front up to the first one whose superseding commit is above the safe
// point, leaving that one and everything behind it for a later tick.
func TestPurgeQueueTakesFront(t *testing.T) {
	var q purgeQueue
	q.push([]purgeEntry{{by: 5}, {by: 3}, {by: 9}, {by: 4}})
	byOf := func(es []purgeEntry) []uint64 {
		var bys []uint64
		for _, e := range es {
			bys = append(bys, e.by)
		}
		return bys
	}
	steps := []struct {
		sp   uint64
		want []uint64
		left int
	}{
		{2, nil, 4},
		{5, []uint64{5, 3}, 2},
		{8, nil, 2},
		{9, []uint64{9, 4}, 0},
	}
	for _, st := range steps {
		if got := byOf(q.take(st.sp)); !slices.Equal(got, st.want) {
			t.Fatalf("take(%d) = %v, want %v", st.sp, got, st.want)
		}
		if n := q.len(); n != st.left {
			t.Fatalf("after take(%d): %d left, want %d", st.sp, n, st.left)
		}
	}
	q.push([]purgeEntry{{by: 10}})
	if got := byOf(q.take(10)); !slices.Equal(got, []uint64{10}) {
		t.Fatalf("take after refill = %v", got)
	}
}

// BenchmarkPurgeTickHeld is one purge tick while a reader holds the safe
// point below a full queue, as during a long transaction or an index
// build: the tick finds nothing to delete and should cost next to nothing.
func BenchmarkPurgeTickHeld(b *testing.B) {
	s := openTest(b, nil)
	held := s.Begin()
	defer held.Rollback()
	es := make([]purgeEntry, purgeQueueMax)
	for i := range es {
		es[i] = purgeEntry{key: []byte("k"), by: uint64(1 << 40)}
	}
	s.purges.push(es)
	for b.Loop() {
		if n, err := s.purge(); err != nil || n != 0 {
			b.Fatal(n, err)
		}
	}
}
