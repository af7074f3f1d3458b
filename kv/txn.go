package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/RaduBerinde/btreemap"
	"github.com/cockroachdb/pebble/v2"
)

// writeBuffer holds a transaction's uncommitted writes in key order. It is a
// copy-on-write B-tree so that savepoints and iterators can keep an O(1)
// snapshot of it.
type writeBuffer = btreemap.BTreeMap[[]byte, bufVal]

// bufVal is a buffered write; del marks a tombstone. base is the newest
// timestamp whose commits the transaction could see when it wrote: a
// commit to the key above it is a conflict.
type bufVal struct {
	val  []byte
	del  bool
	base uint64
}

type bufWrite struct {
	key  []byte
	hash uint64 // the key's latch hash
	bufVal
}

const bufDegree = 16

func newWriteBuffer() *writeBuffer {
	return btreemap.New[[]byte, bufVal](bufDegree, bytes.Compare)
}

// Txn is a snapshot-isolation transaction. Reads see the store as of StartTS
// plus the transaction's own writes; writes are buffered in memory until
// Commit. A Txn must be used by one goroutine at a time, and must end with
// Commit or Rollback: until then it holds GC back at its snapshot.
type Txn struct {
	s       *Store
	startTS uint64
	// readTS is the snapshot reads see: startTS, or a newer one for a
	// statement that reads the newest data (SetReadTS).
	readTS uint64
	done   bool

	// locked are the keys the transaction holds locks on; lockTS is the
	// newest timestamp at which it took one (see locks.go).
	locked []string
	lockTS uint64
	owner  string // who runs it (SetOwner)

	buf *writeBuffer
	// bufShared is set while a savepoint or iterator may reference buf; the
	// next write then switches to a clone so that their view stays frozen.
	bufShared bool

	// pointIter serves Get. Reusing one iterator across the transaction's
	// point reads halves their cost compared to a fresh iterator each. Its
	// fixed view of the LSM is fine: it is created after Begin, so it holds
	// every commit at or below startTS, and later GC deletions are invisible
	// to it. The price is that a long transaction pins the memtables and
	// sstables that existed when it first read.
	pointIter *pebble.Iterator
	lo        []byte // the seek key of point reads, reused

	// latestIter serves GetLatest, which must see the newest commit of
	// its key. The iterator holds every commit at or below latestTS; an
	// answer from it stands when the key's latch stripe shows no commit
	// to the key above latestTS (Store.newestBelow) and no Ingest or
	// ClearRange has completed since it was opened; otherwise a fresh
	// iterator answers. Reusing it spares a bulk INSERT's
	// duplicate checks an iterator each, and lets Pebble seek onward
	// from the previous key.
	latestIter     *pebble.Iterator
	latestTS       uint64
	latestUses     int
	latestBypasses uint64 // Store.bypasses when latestIter was opened

	// iters are the transaction's open iterators, closed when it finishes.
	iters []*txnIter
}

func newTxn(s *Store, ts uint64) *Txn { return &Txn{s: s, startTS: ts, readTS: ts} }

// ReadTS returns the snapshot the transaction's reads see now.
func (t *Txn) ReadTS() uint64 { return t.readTS }

// SetReadTS makes later reads see the store as of ts, which must be at or
// above StartTS and at or below the store's ReadTS: a statement that
// reads the newest data (DML under pessimistic locking, READ COMMITTED)
// moves it up, and a snapshot statement after it moves it back to
// StartTS. GC never removes what ts sees: it keeps every version that is
// newest as of StartTS or later.
func (t *Txn) SetReadTS(ts uint64) {
	if ts < t.startTS {
		ts = t.startTS
	}
	if ts == t.readTS {
		return
	}
	t.readTS = ts
	// The point-read iterator's view of the LSM is fixed at its creation:
	// a newer snapshot needs a new one.
	t.closePointIter()
}

func (t *Txn) closePointIter() {
	if t.pointIter != nil {
		if err := t.pointIter.Close(); err != nil {
			t.s.log.Error("kv: closing point-read iterator", "err", err)
		}
		t.pointIter = nil
	}
}

// GetLatest is Get at the newest committed version of key (or the
// transaction's own write): the current read of a key the transaction
// has locked, which nobody else can change until it lets go. A key it
// finds absent does not go into the row cache: such reads are mostly an
// INSERT's duplicate checks, which a bulk load makes by the million.
func (t *Txn) GetLatest(key []byte) (value []byte, found bool, err error) {
	if value, found, done, err := t.buffered(key); done {
		return value, found, err
	}
	s := t.s
	ts := s.ReadTS()
	if ts > t.lockTS {
		t.lockTS = ts
	}
	h, gen := s.rowHash(key)
	if value, found, ok := s.cachedRow(key, h, ts); ok {
		return value, found, nil
	}
	t.lo = appendVersionKey(t.lo[:0], key, ts)
	if t.latestIter != nil && t.latestUses < latestIterUses {
		t.latestUses++
		value, vts, found, err := readVersion(t.latestIter, t.lo)
		if err != nil {
			return nil, false, err
		}
		if t.latestBypasses == s.bypasses.Load() && s.newestBelow(key, h, gen, t.latestTS, vts, value, found) {
			return value, found, nil
		}
	}
	// A fresh iterator holds every commit at or below ts.
	t.closeLatestIter()
	bypasses := s.bypasses.Load()
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, false, err
	}
	t.latestIter, t.latestTS, t.latestUses, t.latestBypasses = it, ts, 0, bypasses
	value, vts, found, err := readVersion(it, t.lo)
	if err == nil && found {
		s.fillRow(key, h, gen, ts, vts, value)
	}
	return value, found, err
}

// latestIterUses is how many current reads one iterator serves before a
// fresh one replaces it, so that a long transaction does not pin old
// memtables and sstables for its whole life.
const latestIterUses = 4096

func (t *Txn) closeLatestIter() {
	if t.latestIter != nil {
		if err := t.latestIter.Close(); err != nil {
			t.s.log.Error("kv: closing current-read iterator", "err", err)
		}
		t.latestIter = nil
	}
}

// buffered answers a read from the transaction's own writes; done is
// false when the key is not among them.
func (t *Txn) buffered(key []byte) (value []byte, found, done bool, err error) {
	if t.done {
		return nil, false, true, ErrTxnDone
	}
	if t.buf != nil {
		if _, v, ok := t.buf.Get(key); ok {
			if v.del {
				return nil, false, true, nil
			}
			return bytes.Clone(v.val), true, true, nil
		}
	}
	return nil, false, false, nil
}

// readVersion returns the value of the first version at or after the
// seek key lo (key and timestamp) of its key, and that version's
// timestamp (0 when there is none).
func readVersion(it *pebble.Iterator, lo []byte) (value []byte, ts uint64, found bool, err error) {
	if !it.SeekPrefixGE(lo) {
		return nil, 0, false, it.Error()
	}
	if _, ts, err = splitVersionKey(it.Key()); err != nil {
		return nil, 0, false, err
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return nil, 0, false, err
	}
	if len(v) == 0 {
		return nil, 0, false, errMalformedValue
	}
	if v[0] == flagDelete {
		return nil, ts, false, nil
	}
	// Non-nil even when empty: found values are never nil.
	return append(make([]byte, 0, len(v)-1), v[1:]...), ts, true, nil
}

// Savepoint is a snapshot of a transaction's write buffer.
type Savepoint struct {
	buf *writeBuffer
}

// StartTS returns the snapshot timestamp the transaction reads at.
func (t *Txn) StartTS() uint64 { return t.startTS }

// IsReadOnly reports whether the transaction has no buffered writes.
func (t *Txn) IsReadOnly() bool { return t.buf == nil || t.buf.Len() == 0 }

// Get returns the value of key as seen by the transaction. The returned
// slice is owned by the caller.
func (t *Txn) Get(key []byte) (value []byte, found bool, err error) {
	if value, found, done, err := t.buffered(key); done {
		return value, found, err
	}
	s := t.s
	h, gen := s.rowHash(key)
	if value, found, ok := s.cachedRow(key, h, t.readTS); ok {
		return value, found, nil
	}
	if t.pointIter == nil {
		if t.pointIter, err = s.db.NewIter(nil); err != nil {
			t.pointIter = nil
			return nil, false, err
		}
	}
	// The first version of key at or below readTS is the answer. A prefix
	// seek consults the sstables' bloom filters and never leaves the key.
	t.lo = appendVersionKey(t.lo[:0], key, t.readTS)
	value, vts, found, err := readVersion(t.pointIter, t.lo)
	if err == nil {
		s.fillRow(key, h, gen, t.readTS, vts, value)
	}
	return value, found, err
}

// Set buffers a write of value to key. Both are copied.
func (t *Txn) Set(key, value []byte) error {
	return t.write(key, bufVal{val: append(make([]byte, 0, len(value)), value...)})
}

// Delete buffers a deletion of key.
func (t *Txn) Delete(key []byte) error {
	return t.write(key, bufVal{del: true})
}

func (t *Txn) write(key []byte, v bufVal) error {
	if t.done {
		return ErrTxnDone
	}
	switch {
	case t.buf == nil:
		t.buf = newWriteBuffer()
	case t.bufShared:
		t.buf = t.buf.Clone()
		t.bufShared = false
	}
	v.base = max(t.readTS, t.lockTS)
	t.buf.ReplaceOrInsert(bytes.Clone(key), v)
	return nil
}

// Savepoint captures the write buffer. It is O(1): the buffer is shared
// copy-on-write.
func (t *Txn) Savepoint() Savepoint {
	t.bufShared = true
	return Savepoint{buf: t.buf}
}

// RollbackTo discards every write made since sp was taken. sp stays valid
// and can be rolled back to again.
func (t *Txn) RollbackTo(sp Savepoint) {
	if t.done {
		return
	}
	t.buf = sp.buf
	t.bufShared = true
}

// NewIter returns an iterator over [lower, upper) as seen by the
// transaction: its snapshot merged with its own writes as of this call.
// A nil upper means unbounded.
func (t *Txn) NewIter(lower, upper []byte, reverse bool) Iterator {
	if t.done {
		return &errIter{err: ErrTxnDone}
	}
	it, err := newTxnIter(t, lower, upper, reverse)
	if err != nil {
		return &errIter{err: err}
	}
	it.idx = len(t.iters)
	t.iters = append(t.iters, it)
	return it
}

func (t *Txn) forgetIter(it *txnIter) {
	t.iters = swapRemove(t.iters, it.idx, func(moved *txnIter, i int) { moved.idx = i })
}

// swapRemove removes s[i] in O(1) by moving the last element into its
// place, and tells that element its new index.
func swapRemove[T any](s []T, i int, moved func(T, int)) []T {
	last := len(s) - 1
	s[i] = s[last]
	moved(s[i], i)
	var zero T
	s[last] = zero
	return s[:last]
}

// Rollback discards the transaction. It is idempotent.
func (t *Txn) Rollback() {
	if t.done {
		return
	}
	if !t.IsReadOnly() {
		t.s.metrics.aborts.Inc()
	}
	t.finish()
}

// finish releases everything the transaction holds: its iterators and its
// registration, which lets GC advance past its snapshot.
func (t *Txn) finish() {
	t.done = true
	t.releaseLocks()
	if t.s.isClosed() {
		// The Pebble instance is gone (a connection closing during
		// shutdown): its iterators must not be touched any more.
		t.iters, t.pointIter, t.latestIter, t.buf = nil, nil, nil, nil
		t.s.unregister(t.startTS)
		return
	}
	for len(t.iters) > 0 {
		it := t.iters[len(t.iters)-1]
		it.err = ErrTxnDone
		if err := it.Close(); err != nil {
			t.s.log.Error("kv: closing iterator", "err", err)
		}
	}
	t.closePointIter()
	t.closeLatestIter()
	t.buf = nil
	t.s.unregister(t.startTS)
}

// Commit atomically applies the transaction's writes at a new commit
// timestamp, durably unless the store runs with NoSync. When it returns, the
// writes are visible to every transaction that begins afterwards. A
// read-only transaction commits at its start timestamp. On ErrWriteConflict
// (or any other error) the transaction is rolled back.
func (t *Txn) Commit() (commitTS uint64, err error) {
	if t.done {
		return 0, ErrTxnDone
	}
	s := t.s
	if t.IsReadOnly() {
		t.finish()
		s.metrics.commits.Inc()
		return t.startTS, nil
	}
	start := time.Now()

	writes := make([]bufWrite, 0, t.buf.Len())
	stripes := make([]uint16, 0, t.buf.Len())
	size := 0
	for k, v := range t.buf.Ascend(btreemap.Min[[]byte](), btreemap.Max[[]byte]()) {
		h := s.latches.hash(k)
		writes = append(writes, bufWrite{key: k, hash: h, bufVal: v})
		stripes = append(stripes, stripeOf(h))
		// Escaping at most doubles the key; 16 covers batch record overhead.
		size += 2*len(k) + versionSuffixLen + 1 + len(v.val) + 16
	}
	stripes = s.latches.acquire(stripes)
	commitTS, err = t.checkAndApply(writes, size)
	s.latches.release(stripes)
	if commitTS != 0 {
		s.endCommit(commitTS)
	}
	if err != nil {
		s.metrics.aborts.Inc()
		t.finish()
		return 0, err
	}
	t.finish()
	s.metrics.commits.Inc()
	s.metrics.commitDur.Observe(time.Since(start).Seconds())
	return commitTS, nil
}

// checkAndApply runs with the write set latched. It returns a non-zero
// commitTS whenever one was allocated, even on error, so the caller can take
// it out of flight.
func (t *Txn) checkAndApply(writes []bufWrite, size int) (commitTS uint64, err error) {
	s := t.s
	if err := s.disk.Err(); err != nil {
		return 0, err
	}
	if err := t.checkConflicts(writes); err != nil {
		if errors.Is(err, ErrWriteConflict) {
			s.metrics.conflicts.Inc()
		}
		return 0, err
	}

	commitTS, err = s.beginCommit()
	if err != nil {
		return 0, err
	}
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	for _, w := range writes {
		flag := flagPut
		if w.del {
			flag = flagDelete
		}
		op := b.SetDeferred(len(w.key)+bytes.Count(w.key, []byte{0})+versionSuffixLen, 1+len(w.val))
		appendVersionKey(op.Key[:0], w.key, commitTS)
		op.Value[0] = flag
		copy(op.Value[1:], w.val)
		if err := op.Finish(); err != nil {
			return commitTS, err
		}
	}
	// No Go lock is held here except this transaction's own key latches, so
	// committers of disjoint keys reach Pebble concurrently and share WAL
	// fsyncs.
	if err := b.Commit(s.writeOpts); err != nil {
		return commitTS, err
	}
	var purge []purgeEntry
	for _, w := range writes {
		s.latches.recent[stripeOf(w.hash)].record(w.hash, commitTS, s.oldestLive)
		if s.rows == nil {
			continue
		}
		if prev, single := s.rows.committed(w.key, w.hash, commitTS, w.val, w.del); prev != 0 && prev < commitTS {
			purge = append(purge, purgeEntry{key: appendVersionKey(nil, w.key, prev), by: commitTS, single: single})
		}
	}
	if len(purge) > 0 {
		s.purges.push(purge)
	}
	if s.ranges != nil {
		s.ranges.committed(writes, commitTS)
	}
	return commitTS, nil
}

// checkConflicts fails with ErrWriteConflict when a key the transaction
// writes was committed above the newest timestamp the transaction could
// see it at. It runs with the write set latched, and asks Pebble only for
// keys whose stripe cannot answer (recent.go).
func (t *Txn) checkConflicts(writes []bufWrite) error {
	s := t.s
	bypass := s.bypassHorizon.Load()
	var it *pebble.Iterator
	defer func() {
		if it != nil {
			it.Close()
		}
	}()
	var lo []byte
	for _, w := range writes {
		base := max(t.startTS, w.base)
		r := &s.latches.recent[stripeOf(w.hash)]
		if r.covers(base, bypass) {
			if r.conflicts(w.hash, base) {
				return fmt.Errorf("%w on key %q (read at %d)", ErrWriteConflict, w.key, base)
			}
			continue
		}
		if it == nil {
			// Created after latching: only then is it guaranteed to
			// contain every earlier commit to these keys.
			var err error
			if it, err = s.db.NewIter(nil); err != nil {
				return err
			}
		}
		lo = appendPrefix(lo[:0], w.key)
		if !it.SeekPrefixGE(lo) {
			if err := it.Error(); err != nil {
				return err
			}
			continue
		}
		_, ts, err := splitVersionKey(it.Key())
		if err != nil {
			return err
		}
		if ts > base {
			return fmt.Errorf("%w on key %q (committed at %d, read at %d)", ErrWriteConflict, w.key, ts, base)
		}
	}
	return nil
}

// runTxnAttempts bounds RunTxn's retries: a transaction that keeps
// conflicting that often has a livelock to report, not to hide.
const runTxnAttempts = 100

// RunTxn runs fn in a fresh transaction and commits it, starting over
// with a new snapshot while the commit fails with ErrWriteConflict (see
// RetryConflicts), at most runTxnAttempts times. fn must do nothing but
// read and write through txn, since it may run several times; an error
// from fn rolls back and ends.
func (s *Store) RunTxn(ctx context.Context, fn func(txn *Txn) error) (commitTS uint64, err error) {
	err = RetryConflicts(ctx, runTxnAttempts, nil, func() error {
		txn := s.Begin()
		if err := fn(txn); err != nil {
			txn.Rollback()
			return err
		}
		var err error
		commitTS, err = txn.Commit()
		return err
	})
	if err != nil {
		return 0, err
	}
	return commitTS, nil
}

// RetryConflicts calls fn until it returns anything but ErrWriteConflict,
// waiting before each new try for a backoff that doubles from 1 ms up to
// 128 ms: the writers it lost to are given time to finish. It gives up
// after maxAttempts tries (0: never) or when ctx ends, with the conflict
// joined to ctx's error. onRetry, if not nil, is told each backoff.
func RetryConflicts(ctx context.Context, maxAttempts int, onRetry func(backoff time.Duration), fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if !errors.Is(err, ErrWriteConflict) || (maxAttempts > 0 && attempt+1 >= maxAttempts) {
			return err
		}
		backoff := time.Duration(1<<min(attempt, 7)) * time.Millisecond
		if onRetry != nil {
			onRetry(backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}
