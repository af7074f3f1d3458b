package kv

import (
	"sync/atomic"
	"time"
)

// A memtable lives until it fills: while writes flow, that keeps flushes,
// and the compactions below them, rare. When writes stop, the memtable
// stops filling and stays: every range read steps over the versions and
// purge deletions it holds, one skiplist node at a time, for as long as
// reads go on without writes (a read-only workload after a write-heavy one,
// reports after a batch load). Such a memtable is flushed once the writes
// have gone quiet: its superseded versions and their deletions vanish in
// the flush, and what remains is read from sstables' contiguous blocks.
//
// Quiet means that the WAL took in less than memtable/quietFlushRate bytes
// since the last tick (every quietFlushInterval); only a memtable that took in at least
// memtable/quietFlushFloor bytes since the last flush is worth one, so a
// trickle of writes flushes at most quietFlushFloor times per memtable's
// worth of bytes.

const (
	quietFlushInterval = time.Second
	quietFlushRate     = 256
	quietFlushFloor    = 8
)

// quietFlush is the quiet-flush loop's state; only its tick touches it,
// but for flushed, which Pebble's event listener sets.
type quietFlush struct {
	walIn      uint64 // the WAL's bytes in at the last tick
	sinceFlush uint64 // bytes in since the last flush seen
	flushed    atomic.Bool
}

// observe takes the WAL's bytes in at this tick, whether a flush is under
// way and the memtable size, and reports whether to flush now.
func (q *quietFlush) observe(walIn uint64, busy bool, memtable int64) bool {
	grew := walIn - q.walIn
	q.walIn = walIn
	if q.flushed.Swap(false) {
		q.sinceFlush = 0
	}
	q.sinceFlush += grew
	if busy || grew >= uint64(memtable/quietFlushRate) || q.sinceFlush < uint64(memtable/quietFlushFloor) {
		return false
	}
	q.sinceFlush = 0
	return true
}

// quietFlushTick flushes the mutable memtable if writes went quiet with it
// holding enough to be worth a flush. It never stops the loop: Close does.
func (s *Store) quietFlushTick() bool {
	m := s.db.Metrics()
	// Memtables queued behind the mutable one do not count as busy:
	// Pebble holds small ones back until they add up to a memtable's size,
	// and the flush takes them too.
	busy := m.Flush.NumInProgress > 0
	if !s.quiet.observe(m.WAL.BytesIn, busy, s.memtableSize) {
		return true
	}
	if _, err := s.db.AsyncFlush(); err != nil {
		s.log.Debug("kv: flush of a quiet memtable skipped", "err", err)
	}
	return true
}
