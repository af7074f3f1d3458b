package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkMemtableLayouts scans 100 rows in Pebble directly after
// single-row updates still in the memtable, with the store's layout (a key
// per version, the superseded one single-deleted as the purge does) and
// with the alternative InnoDB's design suggests: one key per row
// overwritten in place, the previous version moved to a separate history
// space and purged there. Either way the memtable keeps every write of a
// hot row until the flush, and a scan steps over them all: the
// alternative saves the deletions only.
func BenchmarkMemtableLayouts(b *testing.B) {
	const keys = 20_000
	val := make([]byte, 200)
	for _, layout := range []string{"versioned", "inplace"} {
		for _, updates := range []int{0, 30_000, 100_000} {
			b.Run(fmt.Sprintf("%s/updates=%d", layout, updates), func(b *testing.B) {
				db, err := pebble.Open(b.TempDir(), &pebble.Options{Comparer: comparer, FS: vfs.Default, MemTableSize: 64 << 20, Cache: pebble.NewCache(256 << 20), DisableWAL: true})
				must(b, err)
				defer db.Close()
				ts := uint64(1)
				latest := make([]uint64, keys)
				hist := func(i int, t uint64) []byte { return appendVersionKey(nil, fmt.Appendf(nil, "hist/%08d", i), t) }
				row := func(i int, t uint64) []byte {
					if layout == "inplace" {
						return appendVersionKey(nil, benchKey(i), 0)
					}
					return appendVersionKey(nil, benchKey(i), t)
				}
				for i := range keys {
					must(b, db.Set(row(i, ts), val, pebble.NoSync))
					latest[i] = ts
				}
				must(b, db.Flush())
				must(b, db.Compact(b.Context(), []byte{0}, []byte{0xff}, true))
				rng := rand.New(rand.NewPCG(1, 1))
				for range updates {
					i := rng.IntN(keys)
					ts++
					bt := db.NewBatch()
					must(b, bt.Set(row(i, ts), val, nil))
					if layout == "inplace" {
						// the previous version moves to history, then is purged
						must(b, bt.Set(hist(i, latest[i]), val, nil))
						must(b, bt.SingleDelete(hist(i, latest[i]), nil))
					} else {
						must(b, bt.SingleDelete(row(i, latest[i]), nil))
					}
					latest[i] = ts
					must(b, bt.Commit(pebble.NoSync))
				}
				b.ResetTimer()
				for b.Loop() {
					start := rng.IntN(keys - 100)
					it, err := db.NewIter(&pebble.IterOptions{LowerBound: appendPrefix(nil, benchKey(start)), UpperBound: appendPrefix(nil, benchKey(start+100))})
					must(b, err)
					n := 0
					for ok := it.First(); ok; ok = it.NextPrefix() {
						_ = it.Value()
						n++
					}
					must(b, it.Close())
					if n != 100 {
						b.Fatal(n)
					}
				}
			})
		}
	}
}
