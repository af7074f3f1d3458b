package kv

import (
	"bytes"
	"errors"

	"github.com/RaduBerinde/btreemap"
	"github.com/cockroachdb/pebble/v2"
)

// Iterator iterates over user keys in order (or reverse order). Key and
// Value are valid until the next call to Next or Close and must not be
// modified; they may alias the transaction's write buffer.
type Iterator interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next()
	Err() error
	Close() error
}

// stepsBeforeSeek is how many versions newer than its snapshot an iterator
// steps over one at a time before it seeks instead. Stepping is much
// cheaper than a seek when keys have only a couple of versions, while
// seeking bounds the cost for keys with long histories.
const stepsBeforeSeek = 4

// mvccIter yields, per user key in [lower, upper), the newest version at or
// below ts, hiding keys whose visible version is a tombstone. It streams over
// Pebble and never holds more than one key's data.
type mvccIter struct {
	it      *pebble.Iterator
	ts      uint64
	reverse bool

	valid  bool
	err    error
	prefix []byte // version prefix of the current key (owned copy)
	key    []byte // unescaped current key
	val    []byte // current value; aliases Pebble (forward) or valBuf (reverse)
	valBuf []byte
	seek   []byte

	// fill, when set, records what a forward scan yields for the range
	// cache (rangecache.go); upper is then the scan's bound.
	fill  *rangeFill
	upper []byte
	// cached says the scan yields segs, the range cache's entries, instead
	// of Pebble (it is nil then); the current one is segs[0][cpos].
	cached bool
	segs   [][]rangeEntry
	cpos   int
}

// newSnapIter returns the newest versions at or below ts in [lower, upper):
// from the range cache when it covers the range, else from Pebble,
// recording a forward scan for the cache.
func (s *Store) newSnapIter(lower, upper []byte, ts uint64, reverse bool) (*mvccIter, error) {
	if s.ranges == nil || reverse || upper == nil {
		return newMVCCIter(s.db, lower, upper, ts, reverse, nil)
	}
	if segs, ok := s.ranges.read(lower, upper, ts, nil); ok {
		s.metrics.rangeHits.Inc()
		m := &mvccIter{ts: ts, cached: true, segs: segs}
		m.settleCached()
		return m, nil
	}
	s.metrics.rangeMisses.Inc()
	f := s.ranges.startFill(lower, upper, ts)
	m, err := newMVCCIter(s.db, lower, upper, ts, false, f)
	if err != nil && f != nil {
		f.finish(nil)
	}
	return m, err
}

func (m *mvccIter) settleCached() {
	for len(m.segs) > 0 && m.cpos == len(m.segs[0]) {
		m.segs, m.cpos = m.segs[1:], 0
	}
	m.valid = len(m.segs) > 0
	if m.valid {
		e := &m.segs[0][m.cpos]
		m.key, m.val = e.key, e.val
	}
}

func newMVCCIter(db *pebble.DB, lower, upper []byte, ts uint64, reverse bool, fill *rangeFill) (*mvccIter, error) {
	opts := &pebble.IterOptions{LowerBound: appendPrefix(nil, lower)}
	if upper != nil {
		opts.UpperBound = appendPrefix(nil, upper)
	}
	it, err := db.NewIter(opts)
	if err != nil {
		return nil, err
	}
	m := &mvccIter{it: it, ts: ts, reverse: reverse, fill: fill, upper: upper}
	if reverse {
		m.it.Last()
		m.settleReverse()
	} else {
		m.it.First()
		m.settleForward()
	}
	return m, nil
}

func (m *mvccIter) next() {
	if !m.valid {
		return
	}
	if m.cached {
		m.cpos++
		m.settleCached()
		return
	}
	if m.reverse {
		// settleReverse already left Pebble on the previous key.
		m.settleReverse()
		return
	}
	m.skipKeyForward()
	m.settleForward()
}

func (m *mvccIter) fail(err error) {
	m.valid = false
	m.err = err
}

// split splits the current Pebble key; a malformed key fails the iterator.
func (m *mvccIter) split() (prefix []byte, ts uint64, ok bool) {
	prefix, ts, err := splitVersionKey(m.it.Key())
	if err != nil {
		m.fail(err)
		return nil, 0, false
	}
	return prefix, ts, true
}

// settleForward moves from the current Pebble position to the first visible
// live key at or after it.
func (m *mvccIter) settleForward() {
	for m.it.Valid() {
		p, ts, ok := m.split()
		if !ok {
			return
		}
		m.prefix = append(m.prefix[:0], p...)
		if ts > m.ts && m.fill != nil {
			// Each turn starts on a key's newest version: the scan does
			// not see it, so the cache must not take what it sees instead.
			m.fill.skip = true
		}
		if ts > m.ts && !m.seekVisibleForward() {
			continue
		}
		v, err := m.it.ValueAndErr()
		if err != nil {
			m.fail(err)
			return
		}
		if len(v) == 0 {
			m.fail(errMalformedValue)
			return
		}
		if v[0] == flagDelete {
			m.skipKeyForward()
			continue
		}
		m.key = appendUnescaped(m.key[:0], m.prefix)
		m.val = v[1:]
		m.valid = true
		if m.fill != nil {
			m.fill.add(m.key, ts, m.val)
		}
		return
	}
	m.valid = false
	if m.err == nil {
		m.err = m.it.Error()
	}
	if m.err != nil {
		m.finishFill(nil)
	} else {
		m.finishFill(m.upper)
	}
}

// finishFill hands the fill over to the cache, covering [lower, end).
func (m *mvccIter) finishFill(end []byte) {
	if m.fill != nil {
		m.fill.finish(end)
		m.fill = nil
	}
}

// seekVisibleForward moves from a version of m.prefix newer than m.ts to the
// newest version at or below it. It reports false, positioned on a later
// key or exhausted, if the key has no such version.
func (m *mvccIter) seekVisibleForward() bool {
	for range stepsBeforeSeek {
		if !m.it.Next() {
			return false
		}
		p, ts, ok := m.split()
		if !ok || !bytes.Equal(p, m.prefix) {
			return false
		}
		if ts <= m.ts {
			return true
		}
	}
	m.seek = appendTS(append(m.seek[:0], m.prefix...), m.ts)
	if !m.it.SeekGE(m.seek) {
		return false
	}
	p, _, ok := m.split()
	return ok && bytes.Equal(p, m.prefix)
}

// skipKeyForward moves past the remaining versions of m.prefix with
// NextPrefix, which moves only the levels of the LSM still on this key and,
// within a level, tries a few steps before it seeks: cheaper than stepping
// through Pebble's merged view, which compares every version at every level
// (BenchmarkScanHistory).
func (m *mvccIter) skipKeyForward() {
	m.it.NextPrefix()
}

// settleReverse finds the last visible live key at or before the current
// Pebble position, which must be the oldest version of its key (or nothing).
// It leaves Pebble on the oldest version of the preceding key, so the value
// of the key it yields is copied.
func (m *mvccIter) settleReverse() {
	for m.valid = false; m.err == nil && m.it.Valid(); {
		p, ts, ok := m.split()
		if !ok {
			return
		}
		m.prefix = append(m.prefix[:0], p...)
		found, onPrev := false, false
		// Walk from the oldest version towards newer ones; the last version
		// at or below m.ts is the visible one.
		for steps := 0; ts <= m.ts; steps++ {
			if steps == stepsBeforeSeek {
				// A long visible history: jump straight to its newest
				// visible version, which exists since we are standing on
				// an older one.
				m.seek = appendTS(append(m.seek[:0], m.prefix...), m.ts)
				m.it.SeekGE(m.seek)
				if !m.it.Valid() {
					m.fail(errors.Join(errors.New("kv: reverse iteration lost its position"), m.it.Error()))
					return
				}
			}
			v, err := m.it.ValueAndErr()
			if err != nil {
				m.fail(err)
				return
			}
			if len(v) == 0 {
				m.fail(errMalformedValue)
				return
			}
			m.valBuf = append(m.valBuf[:0], v...)
			found = true
			if steps == stepsBeforeSeek {
				break
			}
			if !m.it.Prev() {
				if err := m.it.Error(); err != nil {
					m.fail(err)
					return
				}
				break
			}
			if p, ts, ok = m.split(); !ok {
				return
			}
			if !bytes.Equal(p, m.prefix) {
				onPrev = true
				break
			}
		}
		if !onPrev && m.it.Valid() {
			m.it.SeekLT(m.prefix)
		}
		if found && m.valBuf[0] == flagPut {
			m.key = appendUnescaped(m.key[:0], m.prefix)
			m.val = m.valBuf[1:]
			m.valid = true
			return
		}
	}
	if m.err == nil {
		m.err = m.it.Error()
	}
}

func (m *mvccIter) close() error {
	if m.fill != nil {
		// Closed before the end: what it read covers the keys up to and
		// including the current one.
		var end []byte
		if m.valid {
			end = append(bytes.Clone(m.key), 0x00)
		}
		m.finishFill(end)
	}
	if m.it == nil {
		return nil
	}
	return m.it.Close()
}

// bufIter walks a frozen write buffer over [lower, upper) in either
// direction. The B-tree only offers callback iteration, so it pulls small
// chunks and resumes after the last key seen.
type bufIter struct {
	tree         *writeBuffer
	lower, upper []byte
	reverse      bool

	chunk []bufWrite
	pos   int
	more  bool // the tree may hold entries beyond chunk
}

const bufChunk = 32

func newBufIter(tree *writeBuffer, lower, upper []byte, reverse bool) *bufIter {
	b := &bufIter{tree: tree, lower: lower, upper: upper, reverse: reverse}
	b.fill(nil)
	return b
}

func (b *bufIter) valid() bool { return b.pos < len(b.chunk) }

func (b *bufIter) cur() *bufWrite { return &b.chunk[b.pos] }

func (b *bufIter) next() {
	b.pos++
	if b.pos == len(b.chunk) && b.more {
		b.fill(b.chunk[b.pos-1].key)
	}
}

// fill loads the next chunk, starting after key after (nil: from the start).
func (b *bufIter) fill(after []byte) {
	b.chunk, b.pos = b.chunk[:0], 0
	add := func(k []byte, v bufVal) bool {
		b.chunk = append(b.chunk, bufWrite{key: k, bufVal: v})
		return len(b.chunk) < bufChunk
	}
	if b.reverse {
		start, stop := btreemap.Max[[]byte](), btreemap.Min[[]byte]()
		switch {
		case after != nil:
			start = btreemap.LT(after)
		case b.upper != nil:
			start = btreemap.LT(b.upper)
		}
		if b.lower != nil {
			stop = btreemap.GE(b.lower)
		}
		b.tree.DescendFunc(start, stop, add)
	} else {
		start, stop := btreemap.Min[[]byte](), btreemap.Max[[]byte]()
		switch {
		case after != nil:
			start = btreemap.GT(after)
		case b.lower != nil:
			start = btreemap.GE(b.lower)
		}
		if b.upper != nil {
			stop = btreemap.LT(b.upper)
		}
		b.tree.AscendFunc(start, stop, add)
	}
	b.more = len(b.chunk) == bufChunk
}

// txnIter merges a transaction's snapshot with its own buffered writes; a
// buffered write shadows the snapshot's version of the same key.
type txnIter struct {
	txn  *Txn
	idx  int // position in txn.iters
	snap *mvccIter
	buf  *bufIter // nil when nothing is buffered in range

	reverse  bool
	valid    bool
	err      error
	key, val []byte
	// Which inputs the current entry came from; both advance on a tie.
	fromSnap, fromBuf bool
	closed            bool
}

func newTxnIter(t *Txn, lower, upper []byte, reverse bool) (*txnIter, error) {
	snap, err := t.s.newSnapIter(lower, upper, t.readTS, reverse)
	if err != nil {
		return nil, err
	}
	return newTxnIterOver(t, snap, lower, upper, reverse), nil
}

func newTxnIterOver(t *Txn, snap *mvccIter, lower, upper []byte, reverse bool) *txnIter {
	it := &txnIter{txn: t, snap: snap, reverse: reverse}
	if t.buf != nil && t.buf.Len() > 0 {
		// Freeze the buffer for this iterator: writes made while iterating
		// (say, an UPDATE scanning its own table) must not show up in it.
		t.bufShared = true
		it.buf = newBufIter(t.buf, lower, upper, reverse)
		if !it.buf.valid() {
			it.buf = nil
		}
	}
	it.settle()
	return it
}

func (it *txnIter) settle() {
	it.fromSnap, it.fromBuf = false, false
	for {
		if it.snap.err != nil {
			it.valid, it.err = false, it.snap.err
			return
		}
		sv, bv := it.snap.valid, it.buf != nil && it.buf.valid()
		var c int // <0: buffer entry first, >0: snapshot entry first
		switch {
		case !sv && !bv:
			it.valid = false
			return
		case !bv:
			c = 1
		case !sv:
			c = -1
		default:
			c = bytes.Compare(it.buf.cur().key, it.snap.key)
			if it.reverse {
				c = -c
			}
		}
		if c > 0 {
			it.key, it.val, it.fromSnap = it.snap.key, it.snap.val, true
			it.valid = true
			return
		}
		w := it.buf.cur()
		if w.del {
			it.buf.next()
			if c == 0 {
				it.snap.next()
			}
			continue
		}
		it.key, it.val, it.fromBuf, it.fromSnap = w.key, w.val, true, c == 0
		it.valid = true
		return
	}
}

func (it *txnIter) Valid() bool   { return it.valid }
func (it *txnIter) Key() []byte   { return it.key }
func (it *txnIter) Value() []byte { return it.val }
func (it *txnIter) Err() error    { return it.err }

func (it *txnIter) Next() {
	if !it.valid {
		return
	}
	if it.fromBuf {
		it.buf.next()
	}
	if it.fromSnap {
		it.snap.next()
	}
	it.settle()
}

// Close releases the iterator. It is idempotent, and happens automatically
// when the transaction finishes.
func (it *txnIter) Close() error {
	if it.closed {
		return nil
	}
	it.closed, it.valid = true, false
	it.txn.forgetIter(it)
	return it.snap.close()
}

// errIter is an exhausted iterator reporting an error.
type errIter struct{ err error }

func (e *errIter) Valid() bool   { return false }
func (e *errIter) Key() []byte   { return nil }
func (e *errIter) Value() []byte { return nil }
func (e *errIter) Next()         {}
func (e *errIter) Err() error    { return e.err }
func (e *errIter) Close() error  { return nil }
