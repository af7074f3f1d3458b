package kv

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

const benchKeys = 100_000

// benchOpts uses the default block cache so the data set stays cached.
func benchOpts(o *Options) { o.CacheSize = 0 }

func benchKey(i int) []byte { return fmt.Appendf(nil, "bench/%08d", i) }

// loadBench fills a store with benchKeys keys of 100-byte values, with a few
// extra versions for some keys so reads step over history.
func loadBench(b *testing.B, s *Store) {
	b.Helper()
	val := make([]byte, 100)
	for start := 0; start < benchKeys; start += 1000 {
		txn := s.Begin()
		for i := start; i < start+1000; i++ {
			must(b, txn.Set(benchKey(i), val))
		}
		_, err := txn.Commit()
		must(b, err)
	}
	for round := range 3 {
		txn := s.Begin()
		for i := round; i < benchKeys; i += 10 {
			must(b, txn.Set(benchKey(i), val))
		}
		_, err := txn.Commit()
		must(b, err)
	}
	must(b, s.db.Flush())
}

func BenchmarkGet(b *testing.B) {
	s := openTest(b, benchOpts)
	loadBench(b, s)
	rng := rand.New(rand.NewPCG(1, 1))

	b.Run("in-txn", func(b *testing.B) {
		txn := s.Begin()
		defer txn.Rollback()
		for b.Loop() {
			if _, ok, err := txn.Get(benchKey(rng.IntN(benchKeys))); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	// A whole point-select transaction, as an autocommit SELECT would run.
	b.Run("txn-per-get", func(b *testing.B) {
		for b.Loop() {
			txn := s.Begin()
			if _, ok, err := txn.Get(benchKey(rng.IntN(benchKeys))); !ok || err != nil {
				b.Fatal(ok, err)
			}
			if _, err := txn.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScan(b *testing.B) {
	s := openTest(b, benchOpts)
	loadBench(b, s)
	for _, reverse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reverse=%v/rows=100", reverse), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, 2))
			txn := s.Begin()
			defer txn.Rollback()
			for b.Loop() {
				scan100(b, txn, rng.IntN(benchKeys-100), reverse)
			}
		})
	}
}

// scan100 reads the 100 keys from benchKey(start) through txn.
func scan100(b *testing.B, txn *Txn, start int, reverse bool) {
	it := txn.NewIter(benchKey(start), benchKey(start+100), reverse)
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	if err := it.Close(); err != nil || n != 100 {
		b.Fatal(n, err)
	}
}

// BenchmarkCommitParallel commits small read-write transactions on disjoint
// keys from many goroutines. With durable commits the per-op cost shows
// whether concurrent commits share WAL fsyncs rather than queueing behind one
// another.
func BenchmarkCommitParallel(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("nosync=%v", noSync), func(b *testing.B) {
			s := openTest(b, func(o *Options) { benchOpts(o); o.NoSync = noSync })
			var worker atomic.Int64
			val := make([]byte, 100)
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := worker.Add(1)
				for i := 0; pb.Next(); i++ {
					txn := s.Begin()
					for j := range 3 {
						_ = txn.Set(fmt.Appendf(nil, "w%03d/%d/%d", w, i, j), val)
					}
					if _, err := txn.Commit(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCommitSerial is the single-committer baseline for
// BenchmarkCommitParallel: each durable commit pays a full WAL fsync.
func BenchmarkCommitSerial(b *testing.B) {
	s := openTest(b, func(o *Options) { benchOpts(o); o.NoSync = false })
	val := make([]byte, 100)
	i := 0
	for b.Loop() {
		txn := s.Begin()
		for j := range 3 {
			_ = txn.Set(fmt.Appendf(nil, "s/%d/%d", i, j), val)
		}
		if _, err := txn.Commit(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkScanHistory scans 100-key ranges where every key has the given
// number of versions, with the history still in the memtable or flushed to
// sstables: the cost of stepping over versions no reader needs.
func BenchmarkScanHistory(b *testing.B) {
	const keys = 5000
	for _, flushed := range []bool{false, true} {
		for _, versions := range []int{1, 3, 10, 30} {
			b.Run(fmt.Sprintf("flushed=%v/versions=%d", flushed, versions), func(b *testing.B) {
				s := openTest(b, func(o *Options) { o.CacheSize = 1 << 30; o.MemTableSize = 256 << 20 })
				val := make([]byte, 100)
				for range versions {
					txn := s.Begin()
					for i := range keys {
						must(b, txn.Set(benchKey(i), val))
					}
					_, err := txn.Commit()
					must(b, err)
				}
				if flushed {
					must(b, s.db.Flush())
				}
				rng := rand.New(rand.NewPCG(2, 2))
				txn := s.Begin()
				defer txn.Rollback()
				for b.Loop() {
					scan100(b, txn, rng.IntN(keys-100), false)
				}
			})
		}
	}
}
