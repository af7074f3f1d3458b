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
// as a sorted slice (whose entries commits replace, never change, so scans
// read them in place). A short scan that an interval covers reads that slice
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
// Dropping an interval is always safe: its keys go back to Pebble. Past
// its budget, whole intervals are dropped in CLOCK order: the hand passes
// an interval once for each scan that used it since (up to three), so a
// hot interval outlives many that were read once. An interval commits
// keep writing while no scan reads it is dropped too, and a full cache
// takes in a range only when it is read again (startFill).

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
	newest     uint64 // no entry's ts is above it
	ents       []rangeEntry
	bytes      int64
	// loose counts entries that commits put outside the packed
	// allocation since the last pack.
	loose int
	// unread counts commits to the interval since a scan last used it.
	unread atomic.Int32
	// uses counts recent scans, up to rangeMaxUses; the clock's hand
	// takes one off as it passes, and drops the interval at none.
	uses atomic.Int32
	ring int // index in rangeCache.ring
}

type rangeCache struct {
	mu      sync.RWMutex
	tree    *btreemap.BTreeMap[[]byte, *rangeInterval] // by start
	ring    []*rangeInterval
	hand    int
	bytes   int64
	max     int64
	pending []*rangeFill
	// ghosts are ranges whose scans a full cache did not take in (see
	// startFill), most recent at ghostNext-1.
	ghosts    [rangeGhosts]struct{ lo, hi []byte }
	ghostNext int
}

// rangeMaxUses bounds how many turns of the clock's hand a much-used
// interval survives unused.
const rangeMaxUses = 3

// rangeMaxUnread is how many commits to an interval without a scan using
// it in between drop it.
const rangeMaxUnread = 32

// rangeGhosts is how many refused scans a full cache remembers.
const rangeGhosts = 64

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

// read returns the live keys of [lower, upper) as of timestamp r, in
// order over the returned segments, if intervals cover the range and hold
// nothing in it newer than r. The entries must not be modified; they are
// the intervals' own, which commits replace rather than change.
func (c *rangeCache) read(lower, upper []byte, r uint64, segs [][]rangeEntry) ([][]rangeEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	iv := c.containing(lower)
	for pos := lower; ; {
		if iv == nil || iv.validFrom > r {
			return segs, false
		}
		i, j := 0, len(iv.ents)
		if bytes.Compare(pos, iv.start) > 0 {
			i, _ = slices.BinarySearchFunc(iv.ents, pos, cmpEntryKey)
		}
		last := bytes.Compare(upper, iv.end) <= 0
		if last {
			j, _ = slices.BinarySearchFunc(iv.ents[i:], upper, cmpEntryKey)
			j += i
		}
		if iv.newest > r {
			for _, e := range iv.ents[i:j] {
				if e.ts > r {
					return segs, false
				}
			}
		}
		if iv.uses.Load() < rangeMaxUses {
			iv.uses.Add(1)
		}
		if iv.unread.Load() != 0 {
			iv.unread.Store(0)
		}
		segs = append(segs, iv.ents[i:j:j])
		if last {
			return segs, true
		}
		pos = iv.end
		_, iv, _ = c.tree.Get(pos)
	}
}

func cmpEntryKey(e rangeEntry, k []byte) int { return bytes.Compare(e.key, k) }

// startFill registers a scan of [lower, upper) at timestamp ts, which the
// caller opens its Pebble iterator after. Once the cache is full, only a
// scan that overlaps an interval or a range recently refused is taken in:
// a scan of rows nobody reads twice would only push out those that are.
// It returns nil when the scan is not taken in.
func (c *rangeCache) startFill(lower, upper []byte, ts uint64) *rangeFill {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes >= c.max-c.max/8 && !c.overlapsLocked(lower, upper) {
		g := &c.ghosts[c.ghostNext]
		g.lo, g.hi = append(g.lo[:0], lower...), append(g.hi[:0], upper...)
		c.ghostNext = (c.ghostNext + 1) % rangeGhosts
		return nil
	}
	f := fillPool.Get().(*rangeFill)
	*f = rangeFill{c: c, lower: append(f.lower[:0], lower...), upper: append(f.upper[:0], upper...), ts: ts,
		buf: f.buf[:0], offs: f.offs[:0]}
	c.pending = append(c.pending, f)
	return f
}

// overlapsLocked reports whether [lo, hi) overlaps an interval or a ghost.
func (c *rangeCache) overlapsLocked(lo, hi []byte) bool {
	for i := range c.ghosts {
		g := &c.ghosts[i]
		if g.hi != nil && bytes.Compare(lo, g.hi) < 0 && bytes.Compare(g.lo, hi) < 0 {
			return true
		}
	}
	if c.containing(lo) != nil {
		return true
	}
	found := false
	c.tree.AscendFunc(btreemap.GE(lo), btreemap.LT(hi), func([]byte, *rangeInterval) bool {
		found = true
		return false
	})
	return found
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
	iv := &rangeInterval{start: bytes.Clone(lo), end: bytes.Clone(hi), validFrom: f.ts, newest: f.ts}
	prev := 0
	for _, o := range f.offs {
		k, v := f.buf[prev:o.keyEnd], f.buf[o.keyEnd:o.valEnd]
		prev = o.valEnd
		if bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 {
			// Aliases the fill until pack copies it.
			iv.ents = append(iv.ents, rangeEntry{key: k, val: v, ts: o.ts})
		}
	}
	iv.uses.Store(1) // a turn of the clock before it can go
	iv.ring = len(c.ring)
	c.ring = append(c.ring, iv)
	c.tree.ReplaceOrInsert(iv.start, iv)
	c.pack(iv)
}

// evictLocked drops intervals until the cache is within its budget.
func (c *rangeCache) evictLocked() {
	for c.bytes > c.max && len(c.ring) > 0 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		iv := c.ring[c.hand]
		if n := iv.uses.Load(); n > 0 {
			iv.uses.Store(n - 1)
			c.hand++
			continue
		}
		c.dropLocked(iv)
	}
}

func (c *rangeCache) dropLocked(iv *rangeInterval) {
	c.ring = swapRemove(c.ring, iv.ring, func(moved *rangeInterval, i int) { moved.ring = i })
	c.tree.Delete(iv.start)
	c.bytes -= iv.bytes
}

// committed applies a commit at ts to the intervals and voids the fills in
// progress over its keys. The caller holds the keys' latches, after the
// commit's batch is applied and before endCommit.
func (c *rangeCache) committed(writes []bufWrite, ts uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var touched []*rangeInterval
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
		if !slices.Contains(touched, iv) {
			// Scans may hold the old slice: it is replaced, never changed.
			touched = append(touched, iv)
			iv.ents = slices.Clone(iv.ents)
		}
		c.applyLocked(iv, w, ts)
	}
	for _, iv := range touched {
		switch {
		case iv.unread.Add(1) > rangeMaxUnread:
			// Written, not read: keeping it current costs commits and
			// gives scans nothing.
			c.dropLocked(iv)
		case iv.loose > len(iv.ents)/8:
			c.pack(iv)
		}
	}
	c.evictLocked()
}

// applyLocked puts one write of a commit at ts into the interval holding
// its key, whose entries the commit already owns (a fresh copy).
func (c *rangeCache) applyLocked(iv *rangeInterval, w *bufWrite, ts uint64) {
	i, found := slices.BinarySearchFunc(iv.ents, w.key, cmpEntryKey)
	switch {
	case w.del && found:
		iv.ents = slices.Delete(iv.ents, i, i+1)
		iv.validFrom = max(iv.validFrom, ts)
	case w.del:
	case found:
		iv.ents[i].val, iv.ents[i].ts = bytes.Clone(w.val), ts
		iv.newest = max(iv.newest, ts)
		iv.loose++
		c.grow(iv, len(w.val))
	default:
		iv.ents = slices.Insert(iv.ents, i, rangeEntry{key: bytes.Clone(w.key), val: bytes.Clone(w.val), ts: ts})
		iv.newest = max(iv.newest, ts)
		iv.loose++
		c.grow(iv, len(w.key)+len(w.val)+rangeEntryOverhead)
	}
}

// pack copies the interval's keys and values into one new allocation, in
// order: a scan then reads them as one sequential stream, where values
// allocated one by one as commits replace them would each cost the scan a
// miss in the CPU's caches. Commits pack an interval once an eighth of
// its entries are outside the allocation.
func (c *rangeCache) pack(iv *rangeInterval) {
	size := 0
	for _, e := range iv.ents {
		size += len(e.key) + len(e.val)
	}
	arena := make([]byte, 0, size)
	for i := range iv.ents {
		e := &iv.ents[i]
		k := len(arena)
		arena = append(arena, e.key...)
		v := len(arena)
		arena = append(arena, e.val...)
		e.key, e.val = arena[k:v:v], arena[v:len(arena):len(arena)]
	}
	iv.loose = 0
	old := iv.bytes
	iv.bytes = int64(size+len(iv.ents)*rangeEntryOverhead+len(iv.start)+len(iv.end)) + rangeEntryOverhead
	c.bytes += iv.bytes - old
}

// grow counts n more bytes in the interval until its next pack.
func (c *rangeCache) grow(iv *rangeInterval, n int) {
	iv.bytes += int64(n)
	c.bytes += int64(n)
}

// size returns the bytes the cache counts against its budget (0 for no
// cache).
func (c *rangeCache) size() int64 {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
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
