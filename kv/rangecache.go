package kv

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RaduBerinde/btreemap"
)

// The range cache holds, for intervals of the user key space that forward
// scans have read, the newest committed version of every live key in them,
// as a sorted slice. A short scan that an interval covers reads that slice
// instead of merging Pebble's memtables and levels, where every update
// since the last flush leaves a version and a purge deletion for the scan
// to step over, one cache miss each (docs/benchmarks.md, the purge).
//
// Invariant, for an interval [start, end) with validFrom v: for every key
// in [start, end), ents holds the newest version any commit or fill has
// applied if that version is live, and nothing if it is a deletion at or
// below v or the key has no version. A scan at timestamp r may answer from
// the interval when r >= v and every entry it returns has ts <= r; else it
// goes to Pebble.
//
// It holds because:
//   - a commit, after its batch is applied and before its timestamp can
//     be read at (endCommit), replaces, inserts or removes the entries of
//     the keys it wrote; a deletion of a cached key raises v to its
//     timestamp, so older scans no longer take the key's absence as given;
//   - a fill is registered before its Pebble iterator is opened, and any
//     commit that reaches the cache while it is registered, to a key in
//     its range, voids it; so does a version above the fill's timestamp
//     seen by its scan, for then the scan's version is not the newest.
//     The fill's scan therefore saw every commit the cache has not, and
//     none the cache has that the scan missed;
//   - a fill becomes intervals only over the parts of its range no
//     interval covers: two intervals never overlap, and what an interval
//     already holds (kept current by commits) stays;
//   - versions that bypass commits (Ingester, ClearRange) empty the cache
//     and void the fills in progress.
//
// Past its budget, whole intervals are dropped in CLOCK order: an interval
// a scan used since the hand last passed is kept one more turn.

// rangeFillMaxRows bounds what one scan records: longer scans (table scans,
// backfills) would only push the short ones' hot intervals out.
const rangeFillMaxRows = 512

// rangeEntryOverhead approximates an entry's bytes besides key and value.
const rangeEntryOverhead = 64

type rangeEntry struct {
	key, val []byte // immutable once in the cache
	ts       uint64
}

type rangeInterval struct {
	start, end []byte
	validFrom  uint64
	ents       []rangeEntry
	bytes      int64
	used       atomic.Bool
	ring       int // index in rangeCache.ring
}

type rangeCache struct {
	mu      sync.RWMutex
	tree    *btreemap.BTreeMap[[]byte, *rangeInterval] // by start
	ring    []*rangeInterval
	hand    int
	bytes   int64
	max     int64
	pending []*rangeFill
}

// rangeFill records what one forward scan read, to become intervals when
// it ends.
type rangeFill struct {
	c            *rangeCache
	lower, upper []byte
	ts           uint64
	void         bool // set under c.mu by commits and clears
	skip         bool // the scan met a version above ts, or too many rows
	buf          []byte
	offs         []rangeOff
}

type rangeOff struct {
	keyEnd, valEnd int // into buf; each entry starts where the previous ended
	ts             uint64
}

func newRangeCache(size int64) *rangeCache {
	if size <= 0 {
		return nil
	}
	return &rangeCache{tree: btreemap.New[[]byte, *rangeInterval](16, bytes.Compare), max: size}
}

// containing returns the interval holding key, if any. The caller holds mu.
func (c *rangeCache) containing(key []byte) *rangeInterval {
	var found *rangeInterval
	c.tree.DescendFunc(btreemap.LE(key), btreemap.Min[[]byte](), func(_ []byte, iv *rangeInterval) bool {
		if bytes.Compare(key, iv.end) < 0 {
			found = iv
		}
		return false
	})
	return found
}

// read returns the live keys of [lower, upper) as of timestamp r, if
// intervals cover the range and hold nothing in it newer than r. The
// entries must not be modified; they may be the interval's own, which
// commits replace rather than change.
func (c *rangeCache) read(lower, upper []byte, r uint64) ([]rangeEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []rangeEntry
	iv := c.containing(lower)
	for pos := lower; ; {
		if iv == nil || iv.validFrom > r {
			return nil, false
		}
		i, _ := slices.BinarySearchFunc(iv.ents, pos, cmpEntryKey)
		j := i
		for ; j < len(iv.ents) && bytes.Compare(iv.ents[j].key, upper) < 0; j++ {
			if iv.ents[j].ts > r {
				return nil, false
			}
		}
		iv.used.Store(true)
		last := bytes.Compare(upper, iv.end) <= 0
		if last && out == nil {
			return iv.ents[i:j:j], true
		}
		out = append(out, iv.ents[i:j]...)
		if last {
			return out, true
		}
		pos = iv.end
		_, iv, _ = c.tree.Get(pos)
	}
}

func cmpEntryKey(e rangeEntry, k []byte) int { return bytes.Compare(e.key, k) }

// startFill registers a scan of [lower, upper) at timestamp ts; the caller
// opens its Pebble iterator afterwards.
func (c *rangeCache) startFill(lower, upper []byte, ts uint64) *rangeFill {
	f := fillPool.Get().(*rangeFill)
	*f = rangeFill{c: c, lower: append(f.lower[:0], lower...), upper: append(f.upper[:0], upper...), ts: ts,
		buf: f.buf[:0], offs: f.offs[:0]}
	c.mu.Lock()
	c.pending = append(c.pending, f)
	c.mu.Unlock()
	return f
}

// fillPool recycles fills' buffers: a scan that misses records every row
// it reads, and most of what it records is copied into intervals or dropped.
var fillPool = sync.Pool{New: func() any { return new(rangeFill) }}

// add records the next live key the scan yields, at its newest version.
func (f *rangeFill) add(key []byte, ts uint64, val []byte) {
	if f.skip {
		return
	}
	if len(f.offs) == rangeFillMaxRows {
		f.skip = true // a long scan: not worth keeping
		return
	}
	f.buf = append(f.buf, key...)
	k := len(f.buf)
	f.buf = append(f.buf, val...)
	f.offs = append(f.offs, rangeOff{keyEnd: k, valEnd: len(f.buf), ts: ts})
}

// finish ends the fill: it becomes intervals over [f.lower, end) when
// nothing voided it. A nil end abandons it. The fill must not be used
// afterwards.
func (f *rangeFill) finish(end []byte) {
	c := f.c
	c.mu.Lock()
	if i := slices.Index(c.pending, f); i >= 0 {
		c.pending = slices.Delete(c.pending, i, i+1)
	}
	if !f.void && !f.skip && end != nil && bytes.Compare(f.lower, end) < 0 {
		c.installLocked(f, end)
		c.evictLocked()
	}
	c.mu.Unlock()
	f.c = nil
	fillPool.Put(f)
}

// installLocked adds intervals over the gaps of [f.lower, end).
func (c *rangeCache) installLocked(f *rangeFill, end []byte) {
	pos := f.lower
	if iv := c.containing(pos); iv != nil {
		pos = iv.end
	}
	var next []*rangeInterval
	c.tree.AscendFunc(btreemap.GT(f.lower), btreemap.LT(end), func(_ []byte, iv *rangeInterval) bool {
		next = append(next, iv)
		return true
	})
	for _, iv := range next {
		if bytes.Compare(pos, iv.start) < 0 {
			c.addGapLocked(f, pos, iv.start)
		}
		if bytes.Compare(iv.end, pos) > 0 {
			pos = iv.end
		}
	}
	if bytes.Compare(pos, end) < 0 {
		c.addGapLocked(f, pos, end)
	}
}

func (c *rangeCache) addGapLocked(f *rangeFill, lo, hi []byte) {
	iv := &rangeInterval{start: bytes.Clone(lo), end: bytes.Clone(hi), validFrom: f.ts}
	// The gap's entries get one allocation of their own, so dropping the
	// interval frees them.
	first, n, size := -1, 0, 0
	prev := 0
	for i, o := range f.offs {
		k := f.buf[prev:o.keyEnd]
		prev = o.valEnd
		if bytes.Compare(k, lo) < 0 {
			continue
		}
		if bytes.Compare(k, hi) >= 0 {
			break
		}
		if first < 0 {
			first = i
		}
		n++
		size += o.valEnd - (o.keyEnd - len(k))
	}
	if n > 0 {
		arena := make([]byte, 0, size)
		iv.ents = make([]rangeEntry, 0, n)
		prev = 0
		if first > 0 {
			prev = f.offs[first-1].valEnd
		}
		for _, o := range f.offs[first : first+n] {
			at := len(arena)
			arena = append(arena, f.buf[prev:o.valEnd]...)
			kl := o.keyEnd - prev
			iv.ents = append(iv.ents, rangeEntry{key: arena[at : at+kl : at+kl], val: arena[at+kl : len(arena) : len(arena)], ts: o.ts})
			prev = o.valEnd
		}
		iv.bytes = int64(size + n*rangeEntryOverhead)
	}
	iv.bytes += int64(len(lo)+len(hi)) + rangeEntryOverhead
	iv.ring = len(c.ring)
	c.ring = append(c.ring, iv)
	c.tree.ReplaceOrInsert(iv.start, iv)
	c.bytes += iv.bytes
}

// evictLocked drops intervals until the cache is within its budget.
func (c *rangeCache) evictLocked() {
	for c.bytes > c.max && len(c.ring) > 0 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		iv := c.ring[c.hand]
		if iv.used.Swap(false) {
			c.hand++
			continue
		}
		c.dropLocked(iv)
	}
}

func (c *rangeCache) dropLocked(iv *rangeInterval) {
	last := len(c.ring) - 1
	c.ring[iv.ring] = c.ring[last]
	c.ring[iv.ring].ring = iv.ring
	c.ring[last] = nil
	c.ring = c.ring[:last]
	c.tree.Delete(iv.start)
	c.bytes -= iv.bytes
}

// committed applies a commit at ts to the intervals and voids the fills in
// progress over its keys. The caller holds the keys' latches, after the
// commit's batch is applied and before endCommit.
func (c *rangeCache) committed(writes []bufWrite, ts uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range writes {
		w := &writes[i]
		for _, f := range c.pending {
			if bytes.Compare(w.key, f.lower) >= 0 && bytes.Compare(w.key, f.upper) < 0 {
				f.void = true
			}
		}
		iv := c.containing(w.key)
		if iv == nil {
			continue
		}
		// Scans may hold the old slice: it is replaced, never changed.
		i, found := slices.BinarySearchFunc(iv.ents, w.key, cmpEntryKey)
		switch {
		case w.del && found:
			iv.ents = slices.Concat(iv.ents[:i], iv.ents[i+1:])
			iv.validFrom = max(iv.validFrom, ts)
			c.resize(iv, -int64(len(w.key)+rangeEntryOverhead))
		case w.del:
		case found:
			old := iv.ents[i].val
			iv.ents = slices.Clone(iv.ents)
			iv.ents[i].val, iv.ents[i].ts = bytes.Clone(w.val), ts
			c.resize(iv, int64(len(w.val)-len(old)))
		default:
			e := rangeEntry{key: bytes.Clone(w.key), val: bytes.Clone(w.val), ts: ts}
			iv.ents = slices.Concat(iv.ents[:i], []rangeEntry{e}, iv.ents[i:])
			c.resize(iv, int64(len(w.key)+len(w.val)+rangeEntryOverhead))
		}
	}
	c.evictLocked()
}

func (c *rangeCache) resize(iv *rangeInterval, d int64) {
	iv.bytes += d
	c.bytes += d
}

// clear empties the cache and voids the fills in progress, after versions
// appeared (or before they appear) without a commit.
func (c *rangeCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.pending {
		f.void = true
	}
	c.tree.Clear(false)
	clear(c.ring)
	c.ring, c.hand, c.bytes = c.ring[:0], 0, 0
}
