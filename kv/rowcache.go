package kv

import (
	"sync"
	"sync/atomic"
)

// The row cache holds the newest committed version of keys read or
// written recently, so that a point read of a hot row skips Pebble's seek
// through every memtable and level (RocksDB's row_cache, kept coherent
// with MVCC). Its invariant: an entry (ts, value) is the newest version of
// its key that any commit has applied. A read at timestamp r may answer
// from an entry only when ts <= r; an entry newer than r says nothing
// about older versions, and the read goes to Pebble.
//
// The invariant holds because:
//   - a commit, with its keys latched, replaces the entry of each key it
//     wrote after its batch is applied (commits to one key are serialized
//     by the key's latch, in timestamp order);
//   - a read fills an entry only under the key's latch, and only when the
//     stripe's recent-commit table (recent.go) shows no commit to the key
//     above the read's timestamp: so no newer version exists, and every
//     later commit will replace the entry;
//   - versions that bypass commits (Ingester, ClearRange) empty the cache
//     once they are in place, and a fill that read before that is refused
//     (the generation it saw has changed).
//
// Each shard is bounded; past its budget, arbitrary entries are dropped
// (Go's map order), which keeps a skewed workload's hot rows in the cache
// often enough at no bookkeeping cost per hit.

const rowCacheShards = 64

// rowCacheEntryOverhead approximates an entry's bytes besides key and
// value: the map slot, the string header and the entry.
const rowCacheEntryOverhead = 80

type rowCache struct {
	shards   [rowCacheShards]rowCacheShard
	shardMax int64
	gen      atomic.Uint64
}

type rowCacheShard struct {
	mu    sync.Mutex
	m     map[string]*rowCacheEntry
	bytes int64
}

type rowCacheEntry struct {
	ts  uint64 // commit timestamp of the version; 0: no version exists
	val []byte // nil: deleted or absent
	// written: a commit put the entry here, so exactly one Set wrote its
	// version (a version read from Pebble may be an Ingester's, which a
	// resumed build can write twice).
	written bool
}

func newRowCache(size int64) *rowCache {
	if size <= 0 {
		return nil
	}
	c := &rowCache{shardMax: size / rowCacheShards}
	for i := range c.shards {
		c.shards[i].m = map[string]*rowCacheEntry{}
	}
	return c
}

func (c *rowCache) shard(h uint64) *rowCacheShard { return &c.shards[(h>>32)%rowCacheShards] }

// get returns a copy of the value of key as of timestamp r, if the cache
// can tell.
func (c *rowCache) get(key []byte, h, r uint64) (val []byte, found, ok bool) {
	sh := c.shard(h)
	sh.mu.Lock()
	e := sh.m[string(key)]
	if e == nil || e.ts > r {
		sh.mu.Unlock()
		return nil, false, false
	}
	if e.val == nil {
		sh.mu.Unlock()
		return nil, false, true
	}
	val = append(make([]byte, 0, len(e.val)), e.val...)
	sh.mu.Unlock()
	return val, true, true
}

// committed replaces the entry of a key a commit at ts wrote; the caller
// holds the key's latch. A key not in the cache stays out. It returns the
// version the commit superseded, if the cache knew it: its timestamp (0:
// none known) and whether a commit wrote it (see written).
func (c *rowCache) committed(key []byte, h, ts uint64, val []byte, del bool) (prevTS uint64, prevWritten bool) {
	sh := c.shard(h)
	sh.mu.Lock()
	if e := sh.m[string(key)]; e != nil {
		prevTS, prevWritten = e.ts, e.written
		e.written = true
		sh.bytes -= int64(len(e.val))
		e.ts, e.val = ts, nil
		if !del {
			e.val = append(make([]byte, 0, len(val)), val...)
			sh.bytes += int64(len(val))
		}
	}
	sh.mu.Unlock()
	return prevTS, prevWritten
}

// fill records that the newest version of key is (ts, val) (val nil: none
// live), read from Pebble during generation gen. The caller holds the
// key's latch and has checked that no commit to it is newer than the read.
func (c *rowCache) fill(key []byte, h, gen, ts uint64, val []byte) {
	sh := c.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c.gen.Load() != gen {
		return
	}
	if e := sh.m[string(key)]; e != nil {
		return // a commit or another read put it there, at least as new
	}
	e := &rowCacheEntry{ts: ts}
	if val != nil {
		e.val = append(make([]byte, 0, len(val)), val...)
	}
	sh.m[string(key)] = e
	sh.bytes += int64(len(key)+len(val)) + rowCacheEntryOverhead
	for k, old := range sh.m {
		if sh.bytes <= c.shardMax {
			break
		}
		delete(sh.m, k)
		sh.bytes -= int64(len(k)+len(old.val)) + rowCacheEntryOverhead
	}
}

// clear empties the cache after versions appeared without a commit.
func (c *rowCache) clear() {
	c.gen.Add(1)
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.bytes = 0
		sh.mu.Unlock()
	}
}

// rowHash returns key's latch hash and the cache generation a fill after
// a read from Pebble must still find.
func (s *Store) rowHash(key []byte) (h, gen uint64) {
	if s.rows != nil {
		gen = s.rows.gen.Load()
	}
	return s.latches.hash(key), gen
}

// cachedRow answers a read of key at timestamp r from the row cache, when
// it can.
func (s *Store) cachedRow(key []byte, h, r uint64) (val []byte, found, ok bool) {
	if s.rows == nil {
		return nil, false, false
	}
	return s.rows.get(key, h, r)
}

// fillRow puts what a read at timestamp r found in Pebble (the version at
// vts, or none) into the row cache, if no commit to key is newer than r.
func (s *Store) fillRow(key []byte, h, gen, r, vts uint64, val []byte) {
	if s.rows != nil {
		s.newestBelow(key, h, gen, r, vts, val, true)
	}
}

// newestBelow reports whether a read of key (latch hash h) that saw every
// commit at or below r found its newest version (at vts, or none): so
// whether no commit to key above r is known. If so and fill is set, the
// version goes into the row cache.
func (s *Store) newestBelow(key []byte, h, gen, r, vts uint64, val []byte, fill bool) bool {
	st := stripeOf(h)
	s.latches.stripes[st].Lock()
	defer s.latches.stripes[st].Unlock()
	if rc := &s.latches.recent[st]; !rc.covers(r, s.bypassHorizon.Load()) || rc.conflicts(h, r) {
		return false
	}
	if fill && s.rows != nil {
		s.rows.fill(key, h, gen, vts, val)
	}
	return true
}
