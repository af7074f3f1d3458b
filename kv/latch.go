package kv

import (
	"hash/maphash"
	"slices"
	"sync"
)

const numLatches = 4096

// latches serialize committers that write the same keys, from their conflict
// check until their batch is applied, so two of them can never both pass the
// check. Keys are hashed onto a fixed set of stripes: unrelated keys sharing
// a stripe only wait for each other briefly, and memory stays constant.
type latches struct {
	seed    maphash.Seed
	stripes [numLatches]sync.Mutex
	recent  [numLatches]recentWrites // each guarded by its stripe
}

func (l *latches) init() { l.seed = maphash.MakeSeed() }

func (l *latches) hash(key []byte) uint64 { return maphash.Bytes(l.seed, key) }

func stripeOf(h uint64) uint16 { return uint16(h % numLatches) }

// acquire sorts and deduplicates stripes, locks them and returns the set to
// release. Locking in ascending order rules out deadlock between committers.
func (l *latches) acquire(stripes []uint16) []uint16 {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, i := range stripes {
		l.stripes[i].Lock()
	}
	return stripes
}

func (l *latches) release(stripes []uint16) {
	for _, i := range slices.Backward(stripes) {
		l.stripes[i].Unlock()
	}
}
