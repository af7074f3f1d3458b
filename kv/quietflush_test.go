package kv

import (
	"fmt"
	"testing"
)

// TestQuietFlushObserve drives the decision tick by tick: a memtable is
// flushed once a tick sees writes stop, only if it took in enough since
// the last flush, never while a flush is pending, and a flush Pebble
// started for its own reasons restarts the count.
func TestQuietFlushObserve(t *testing.T) {
	const mem = 1 << 20
	floor, rate := uint64(mem/quietFlushFloor), uint64(mem/quietFlushRate)
	type tick struct {
		in      uint64 // WAL bytes in, cumulative
		busy    bool
		flushed bool // Pebble began a flush before this tick
		want    bool
	}
	for _, tc := range []struct {
		name  string
		ticks []tick
	}{
		{"writes stop after a floor's worth", []tick{{in: floor, want: false}, {in: floor, want: true}, {in: floor, want: false}}},
		{"below the floor", []tick{{in: floor - 1}, {in: floor - 1}, {in: floor - 1}}},
		{"a trickle under the rate", []tick{{in: floor}, {in: floor + rate - 1, want: true}, {in: floor + 2*rate}}},
		{"steady writes", []tick{{in: floor}, {in: floor + rate}, {in: floor + 2*rate}, {in: floor + 3*rate}}},
		{"a flush pending", []tick{{in: floor}, {in: floor, busy: true}, {in: floor, want: true}}},
		{"Pebble flushed", []tick{{in: floor}, {in: floor, flushed: true}, {in: floor}}},
		{"the count restarts after a flush", []tick{{in: floor}, {in: floor, want: true}, {in: 2*floor - 1}, {in: 2*floor - 1}, {in: 2 * floor, want: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q quietFlush
			for i, tk := range tc.ticks {
				q.flushed.Store(tk.flushed)
				if got := q.observe(tk.in, tk.busy, mem); got != tk.want {
					t.Fatalf("tick %d (%+v): flush %v, want %v", i, tk, got, tk.want)
				}
			}
		})
	}
}

// TestQuietFlushStore: on a real store, ticks while commits keep coming
// flush nothing; once they stop, the next tick flushes the memtable and
// the data reads back from the sstable.
func TestQuietFlushStore(t *testing.T) {
	s := openTest(t, func(o *Options) { o.CacheSize = 16 << 20; o.MemTableSize = 4 << 20 })
	val := make([]byte, 1000)
	write := func(from, n int) {
		for i := from; i < from+n; i++ {
			commitWrites(t, s, fmt.Sprintf("k%06d", i), string(val))
		}
	}
	flushes := func() int64 { return s.db.Metrics().Flush.Count }
	f0 := flushes()
	s.quietFlushTick()
	next := 0
	for range 3 {
		write(next, 600) // 600 KB a tick: neither quiet nor enough to fill
		next += 600
		s.quietFlushTick()
	}
	if f := flushes(); f != f0 {
		t.Fatalf("%d flushes while commits kept coming, want none", f-f0)
	}
	// Pebble's first memtables are small, and it holds full ones back
	// until they add up to MemTableSize: the quiet flush takes them too.
	s.quietFlushTick()
	waitFor(t, 10e9, func() bool { return s.db.Metrics().MemTable.Count == 1 && s.db.Metrics().Flush.NumInProgress == 0 })
	f1 := flushes()
	if f1 == f0 {
		t.Fatal("no flush after the writes stopped")
	}
	if l0 := s.db.Metrics().Levels[0].TablesCount; l0 == 0 {
		t.Fatal("no sstable in L0 after the quiet flush")
	}
	txn := s.Begin()
	defer txn.Rollback()
	it := txn.NewIter([]byte("k"), nil, false)
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	must(t, it.Err())
	must(t, it.Close())
	if n != next {
		t.Fatalf("%d keys read back after the flush, want %d", n, next)
	}
	s.quietFlushTick()
	if f := flushes(); f != f1 {
		t.Fatalf("%d more flushes after a tick with an empty memtable, want none", f-f1)
	}
}
