package kv

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Purge removes the versions that commits supersede as soon as no reader
// can see them, as InnoDB's purge does with its undo log, instead of
// leaving them for the background pass (gc.go), which visits every version
// in the store. A scan over a hot row steps past each of its versions in
// every memtable and level that holds one, so versions that outlive their
// readers slow every later scan.
//
// A commit learns which version it supersedes from the row cache, whose
// entry for a key is its newest version (rowcache.go); keys outside the
// cache are left to the background pass. The superseded version K@p is
// queued with the timestamp c of the commit that wrote K@c. Once the safe
// point reaches c, every reader at or above it sees K@c (or something
// newer) before K@p, so deleting K@p changes no reader's view. The newest
// version of a key is never queued, so a version that shadows a purged one
// is itself only purged once a still newer one shadows it.

// purgeInterval is how often queued versions are checked against the safe
// point: often enough that a hot row's versions and their deletions still
// share a memtable, so a flush writes neither the versions nor their
// values.
const purgeInterval = 50 * time.Millisecond

// purgeQueueMax bounds the queue while a long transaction holds the safe
// point back; versions that do not fit wait for the background pass.
var purgeQueueMax = 256 << 10

type purgeEntry struct {
	key []byte // the superseded version's physical key
	by  uint64 // timestamp of the commit that superseded it
	// single: exactly one Set wrote the version (a commit did), so a
	// SingleDelete removes it. The pair then vanishes in the first flush or
	// compaction that holds both, where a Delete would travel down to the
	// last level, and be stepped over in every level it passes.
	single bool
}

type purgeQueue struct {
	mu      sync.Mutex
	entries []purgeEntry
}

// push queues es, as far as the queue has room.
func (q *purgeQueue) push(es []purgeEntry) {
	q.mu.Lock()
	n := min(len(es), purgeQueueMax-len(q.entries))
	if n > 0 {
		q.entries = append(q.entries, es[:n]...)
	}
	q.mu.Unlock()
}

// take removes and returns the queued entries superseded at or below sp,
// from the front of the queue up to the first one that is not. Entries are
// queued in about commit order, so the few behind a later commit wait a
// tick; in exchange a tick costs what it removes, not the whole queue,
// which matters while a long transaction or an index build's snapshot
// holds the safe point and the queue stays full.
func (q *purgeQueue) take(sp uint64) []purgeEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := 0
	for i < len(q.entries) && q.entries[i].by <= sp {
		i++
	}
	ready := q.entries[:i:i]
	q.entries = q.entries[i:]
	if len(q.entries) == 0 {
		q.entries = nil // let the consumed array go
	}
	return ready
}

func (q *purgeQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.entries)
}

// purgeTick runs one purge; a failure leaves the work to the next one or
// to the background pass.
func (s *Store) purgeTick() bool {
	if _, err := s.purge(); err != nil {
		s.log.Debug("kv: purge skipped", "err", err)
	}
	return true
}

// purge deletes the queued versions whose superseding commit is at or
// below the safe point. Entries it cannot delete (a full disk, a failed
// write) are dropped: the background pass removes those versions later.
func (s *Store) purge() (removed int, err error) {
	if s.purges.len() == 0 {
		return 0, nil
	}
	if err := s.disk.Err(); err != nil {
		return 0, err
	}
	sp, err := s.advanceSafePoint()
	if err != nil {
		return 0, err
	}
	ready := s.purges.take(sp)
	if len(ready) == 0 {
		return 0, nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, e := range ready {
		del := b.Delete
		if e.single {
			del = b.SingleDelete
		}
		if err := del(e.key, nil); err != nil {
			return removed, err
		}
		if int(b.Count()) >= gcBatchSize {
			n, err := s.commitPurge(b)
			if removed += n; err != nil {
				return removed, err
			}
		}
	}
	n, err := s.commitPurge(b)
	return removed + n, err
}

// commitPurge commits b unsynced (a deletion lost in a crash is redone by
// the background pass) and resets it.
func (s *Store) commitPurge(b *pebble.Batch) (int, error) {
	n := int(b.Count())
	if n == 0 {
		return 0, nil
	}
	err := b.Commit(pebble.NoSync)
	b.Reset()
	if err != nil {
		return 0, err
	}
	s.metrics.purged.Add(float64(n))
	return n, nil
}
