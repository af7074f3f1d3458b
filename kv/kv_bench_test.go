package kv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
	loadRows(b, s, benchKeys, val)
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

// BenchmarkCommitLatency reports the latency of durable commits of two
// 200-byte keys from 1 and 4 committers, through a transaction (kv) and
// as a bare Pebble batch on the same store (pebble): what the commit's
// fsync costs, and what this package adds to it.
func BenchmarkCommitLatency(b *testing.B) {
	val := make([]byte, 200)
	commit := map[string]func(s *Store, k1, k2 []byte) error{
		"kv": func(s *Store, k1, k2 []byte) error {
			txn := s.Begin()
			_ = txn.Set(k1, val)
			_ = txn.Set(k2, val)
			_, err := txn.Commit()
			return err
		},
		"pebble": func(s *Store, k1, k2 []byte) error {
			batch := s.db.NewBatch()
			defer batch.Close()
			_ = batch.Set(k1, val, nil)
			_ = batch.Set(k2, val, nil)
			return batch.Commit(pebble.Sync)
		},
	}
	for _, layer := range []string{"kv", "pebble"} {
		for _, committers := range []int{1, 4} {
			b.Run(fmt.Sprintf("layer=%s/committers=%d", layer, committers), func(b *testing.B) {
				s := openTest(b, func(o *Options) { benchOpts(o); o.NoSync = false })
				lats := make([][]time.Duration, committers)
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for w := range committers {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							start := time.Now()
							if err := commit[layer](s, fmt.Appendf(nil, "a/%d", i), fmt.Appendf(nil, "b/%d", i)); err != nil {
								b.Error(err)
								return
							}
							lats[w] = append(lats[w], time.Since(start))
						}
					})
				}
				wg.Wait()
				all := slices.Sorted(slices.Values(slices.Concat(lats...)))
				if len(all) > 0 {
					b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(all[len(all)*9/10].Microseconds()), "p90-µs")
				}
			})
		}
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

// BenchmarkScanAfterUpdates scans rows that single-row transactions have
// updated many times, read first as an UPDATE reads them, with the
// superseded versions purged as the background loop would or kept.
func BenchmarkScanAfterUpdates(b *testing.B) {
	const keys, updates = 20_000, 200_000
	for _, purge := range []bool{false, true} {
		b.Run(fmt.Sprintf("purge=%v", purge), func(b *testing.B) {
			s := openTest(b, func(o *Options) { o.CacheSize = 256 << 20 })
			val := make([]byte, 200)
			loadRows(b, s, keys, val)
			must(b, s.db.Flush())
			rng := rand.New(rand.NewPCG(1, 1))
			updateRows(b, s, rng, keys, updates, val, purge)
			b.ResetTimer()
			txn := s.Begin()
			defer txn.Rollback()
			for b.Loop() {
				scan100(b, txn, rng.IntN(keys-100), false)
			}
		})
	}
}

// BenchmarkScanPurgedInMemtable scans rows that single-row transactions
// updated with the purge running, before and after the memtable that holds
// their versions and the purge's deletions is flushed: what a range scan
// pays for a hot row's recent history, which the purge removes only at the
// flush.
func BenchmarkScanPurgedInMemtable(b *testing.B) {
	const keys = 20_000
	for _, updates := range []int{0, 30_000, 100_000} {
		for _, flush := range []bool{false, true} {
			b.Run(fmt.Sprintf("updates=%d/flushed=%v", updates, flush), func(b *testing.B) {
				s := openTest(b, func(o *Options) { o.CacheSize = 256 << 20; o.MemTableSize = 64 << 20 })
				val := make([]byte, 200)
				loadRows(b, s, keys, val)
				must(b, s.db.Flush())
				must(b, s.db.Compact(b.Context(), []byte{0}, []byte{0xff}, true))
				rng := rand.New(rand.NewPCG(1, 1))
				updateRows(b, s, rng, keys, updates, val, true)
				if flush {
					must(b, s.db.Flush())
				}
				txn := s.Begin()
				defer txn.Rollback()
				for b.Loop() {
					scan100(b, txn, rng.IntN(keys-100), false)
				}
			})
		}
	}
}

// loadRows commits keys rows of val, 1000 per transaction.
func loadRows(b *testing.B, s *Store, keys int, val []byte) {
	for start := 0; start < keys; start += 1000 {
		txn := s.Begin()
		for i := start; i < start+1000; i++ {
			must(b, txn.Set(benchKey(i), val))
		}
		_, err := txn.Commit()
		must(b, err)
	}
}

// updateRows runs n single-row transactions that read a random row and
// rewrite it, as an UPDATE does; with purge, the purge runs every 200
// commits, as its loop would, and once at the end.
func updateRows(b *testing.B, s *Store, rng *rand.Rand, keys, n int, val []byte, purge bool) {
	for u := range n {
		k := benchKey(rng.IntN(keys))
		txn := s.Begin()
		_, _, err := txn.Get(k)
		must(b, err)
		must(b, txn.Set(k, val))
		_, err = txn.Commit()
		must(b, err)
		if purge && u%200 == 0 {
			_, err := s.purge()
			must(b, err)
		}
	}
	if purge {
		_, err := s.purge()
		must(b, err)
	}
}
