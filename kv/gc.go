package kv

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Variables rather than constants so tests can shrink them to exercise the
// batch and iterator turnover paths.
var (
	// gcBatchSize bounds each GC deletion batch, so a pass never occupies
	// the commit pipeline (and the memtable) with one huge write.
	gcBatchSize = 1024
	// gcRefreshKeys: a pass re-creates its iterator at least this often so a
	// long scan does not pin old memtables and sstables for its whole length.
	gcRefreshKeys = 64 << 10
	// gcFlushHook, if set, runs after each committed GC batch so tests can
	// check every intermediate state a reader could observe.
	gcFlushHook func()
)

var errClosed = errors.New("kv: store closed")

// every runs fn every interval until the store closes or fn returns
// false.
func (s *Store) every(interval time.Duration, fn func() bool) {
	defer s.bg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-tick.C:
		}
		if !fn() {
			return
		}
	}
}

// gcPassTick runs one background pass, unless nothing was written since the
// last one; false once the store is closing.
func (s *Store) gcPassTick() bool {
	s.mu.Lock()
	idle := s.last <= s.gcCleanTo
	s.mu.Unlock()
	if idle {
		// Nothing was written above the last completed pass's safe
		// point, so that pass left nothing to collect.
		return true
	}
	start := time.Now()
	removed, err := s.runGC(gcBackgroundPace)
	switch {
	case errors.Is(err, errClosed):
		return false
	case errors.Is(err, ErrDiskFull):
		s.log.Debug("kv: GC pass skipped", "err", err)
	case err != nil:
		s.log.Error("kv: GC pass failed", "err", err, "removed", removed)
	case removed > 0:
		s.log.Debug("kv: GC pass", "removed", removed, "took", time.Since(start))
	}
	return true
}

// RunGC runs one garbage-collection pass now. It computes a safe point (see
// SafePoint) and, for every user key, keeps the newest version at or below
// it and everything newer, and deletes all older versions. A tombstone that
// ends up as a key's oldest version is deleted too, after everything older:
// readers at or above the safe point see "absent" either way. Commits are
// never blocked: the pass takes no latches, and writes only in small batches.
func (s *Store) RunGC() (removed int, err error) { return s.runGC(0) }

// gcBackgroundPace is how long the background pass sleeps per unit of time
// it worked: it visits every version in the store, and at full speed a
// pass over 2M sysbench rows took one core for about five seconds. At 3
// it takes a quarter of a core for four times as long.
const gcBackgroundPace = 3

// gcPaceKeys is how many versions a paced pass visits between pauses.
const gcPaceKeys = 4096

func (s *Store) runGC(pace float64) (removed int, err error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	if s.isClosed() {
		return 0, errClosed
	}
	if err := s.disk.Err(); err != nil {
		return 0, err
	}

	sp, err := s.advanceSafePoint()
	if err != nil {
		return 0, err
	}

	s.gcPasses.Add(1)
	g := gcPass{s: s, sp: sp, batch: s.db.NewBatch(), pace: pace, mark: time.Now()}
	defer g.batch.Close()
	err = g.run()
	if err == nil {
		err = g.flush()
	}
	if g.it != nil {
		err = errors.Join(err, g.it.Close())
	}
	if err == nil {
		s.mu.Lock()
		s.gcCleanTo = max(s.gcCleanTo, sp)
		s.mu.Unlock()
	}
	return g.removed, err
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

type gcPass struct {
	s       *Store
	sp      uint64
	it      *pebble.Iterator
	batch   *pebble.Batch
	removed int

	prefix   []byte // version prefix of the key being processed
	anchored bool   // its newest version at or below sp has been seen
	newer    int    // versions above sp seen for it
	// tomb is the key's anchor version when that is a tombstone; it is
	// deleted once the key's older versions have been queued.
	tomb []byte
	seek []byte

	pace float64   // sleep per unit of work (0: none)
	mark time.Time // when the pass last resumed work
}

// rest sleeps pace times the work done since the last rest, or returns
// errClosed if the store closes meanwhile.
func (g *gcPass) rest() error {
	d := time.Duration(float64(time.Since(g.mark)) * g.pace)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-g.s.stopGC:
		return errClosed
	case <-t.C:
	}
	g.mark = time.Now()
	return nil
}

func (g *gcPass) run() error {
	if err := g.reopen(userSpaceStart); err != nil {
		return err
	}
	visited := 0
	for g.it.Valid() {
		visited++
		if g.pace > 0 && visited%gcPaceKeys == 0 {
			if err := g.rest(); err != nil {
				return err
			}
		}
		if visited%gcRefreshKeys == 0 {
			if err := g.reopen(bytes.Clone(g.it.Key())); err != nil {
				return err
			}
			continue
		}
		k := g.it.Key()
		p, ts, err := splitVersionKey(k)
		if err != nil {
			return fmt.Errorf("%w: %x", err, k)
		}
		if !bytes.Equal(p, g.prefix) {
			if err := g.finishKey(); err != nil {
				return err
			}
			g.prefix = append(g.prefix[:0], p...)
			g.anchored, g.newer = false, 0
		}
		switch {
		case ts > g.sp:
			// Readable by someone at or above the safe point.
			if g.newer++; g.newer > stepsBeforeSeek {
				g.seek = appendTS(append(g.seek[:0], g.prefix...), g.sp)
				g.it.SeekGE(g.seek)
				continue
			}
		case !g.anchored:
			// The version readers at the safe point see: keep it (unless
			// it is a tombstone, see finishKey).
			g.anchored = true
			v, err := g.it.ValueAndErr()
			if err != nil {
				return err
			}
			if len(v) > 0 && v[0] == flagDelete {
				g.tomb = append(g.tomb[:0], k...)
			}
		default:
			// Shadowed for every reader at or above the safe point.
			lv := g.it.LazyValue()
			if err := g.batch.DeleteSized(k, uint32(lv.Len()), nil); err != nil {
				return err
			}
			g.removed++
			if g.it.Next() && int(g.batch.Count()) >= gcBatchSize {
				next := bytes.Clone(g.it.Key())
				if err := g.flush(); err != nil {
					return err
				}
				// Reopen so the iterator does not keep the pre-deletion
				// state pinned.
				if err := g.reopen(next); err != nil {
					return err
				}
			}
			continue
		}
		g.it.Next()
	}
	if err := g.it.Error(); err != nil {
		return err
	}
	return g.finishKey()
}

// finishKey queues the deletion of the finished key's tombstone anchor. It
// is queued after every older version of the key, so it commits in the same
// batch or a later one: no reader ever sees an older version resurface.
func (g *gcPass) finishKey() error {
	if len(g.tomb) == 0 {
		return nil
	}
	err := g.batch.Delete(g.tomb, nil)
	g.tomb = g.tomb[:0]
	if err == nil {
		g.removed++
	}
	return err
}

func (g *gcPass) flush() error {
	if g.batch.Empty() {
		return nil
	}
	if err := g.s.disk.Err(); err != nil {
		return err
	}
	// Unsynced: a deletion lost in a crash is simply redone by a later pass.
	err := g.batch.Commit(pebble.NoSync)
	g.batch.Reset()
	if gcFlushHook != nil {
		gcFlushHook()
	}
	return err
}

// reopen replaces the iterator with a fresh one positioned at key. It is
// also where a pass notices that the store is closing.
func (g *gcPass) reopen(key []byte) error {
	select {
	case <-g.s.stopGC:
		return errClosed
	default:
	}
	if g.it != nil {
		if err := g.it.Close(); err != nil {
			g.it = nil
			return err
		}
	}
	it, err := g.s.db.NewIter(&pebble.IterOptions{LowerBound: userSpaceStart})
	if err != nil {
		g.it = nil
		return err
	}
	g.it = it
	it.SeekGE(key)
	return nil
}
