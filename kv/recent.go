package kv

import "sync/atomic"

// The commit check asks, for each key a transaction writes, whether a
// commit newer than the transaction's base wrote it. Asking Pebble costs a
// seek through every memtable and level per key; instead each latch stripe
// remembers the newest commit timestamp of the keys hashed onto it, for
// commits after the stripe's horizon. The stripe's latch guards its table,
// so the table needs no lock of its own, and a committer sees every
// earlier commit to its keys (they recorded before releasing the latch).
//
// A table forgets commits at or below the oldest live transaction's start:
// no transaction can conflict with them (its base is at least its start).
// When a long transaction keeps them, a table that grows past
// recentTableMax is cleared and its horizon raised past its newest entry;
// a transaction whose base is below a horizon (or below the store's
// bypass horizon: versions from before the open, or that Ingesters write,
// are not in the tables) is checked against Pebble. Keys are remembered by their 64-bit
// hash: a collision can only report a conflict that was not one, with
// odds of about one in 2^64 per pair of keys.

// recentTableMax bounds a stripe's table; past recentTablePrune entries a
// commit first forgets those no live transaction can conflict with.
const (
	recentTablePrune = 64
	recentTableMax   = 1024
)

type recentWrites struct {
	ts      map[uint64]uint64 // key hash -> newest commit timestamp
	horizon uint64            // every commit above it is in ts
}

// covers reports whether the table can answer for a transaction whose
// base is base.
func (r *recentWrites) covers(base, bypassHorizon uint64) bool {
	return base >= r.horizon && base >= bypassHorizon
}

// conflicts reports whether a commit above base wrote the key with hash h.
func (r *recentWrites) conflicts(h, base uint64) bool {
	ts, ok := r.ts[h]
	return ok && ts > base
}

// record notes a commit at ts of the key with hash h. lowWater returns the
// start timestamp of the oldest live transaction; it is called only when
// the table needs pruning.
func (r *recentWrites) record(h, ts uint64, lowWater func() uint64) {
	if r.ts == nil {
		r.ts = make(map[uint64]uint64, recentTablePrune)
	}
	r.ts[h] = ts
	if len(r.ts) <= recentTablePrune {
		return
	}
	low := lowWater()
	newest := uint64(0)
	for k, v := range r.ts {
		if v <= low {
			delete(r.ts, k)
		}
		newest = max(newest, v)
	}
	if len(r.ts) > recentTableMax {
		clear(r.ts)
		r.horizon = newest
	}
}

// raiseHorizon makes transactions whose base is below ts check against
// Pebble: versions at ts are about to appear without a commit.
func raiseHorizon(h *atomic.Uint64, ts uint64) {
	for {
		cur := h.Load()
		if cur >= ts || h.CompareAndSwap(cur, ts) {
			return
		}
	}
}
