package extsort

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/reorgdb/reorgdb/internal/directio"
)

// A sorted run is a file of (uvarint len, key, uvarint len, value) records
// in key order: what the ingest backfill spills when the index does not fit
// in its memory budget. Runs are merged into sstables at the end, or
// earlier when the next spill would pass the disk quota.

// cursor yields key/value pairs in key order.
type cursor interface {
	// next returns the next pair, valid until the following call; ok is
	// false at the end.
	next() (k, v []byte, ok bool, err error)
	close() error
}

func (s *bufSource) close() error { return nil }

// Run is a spilled run: the file, and a sparse index of it kept in
// memory, so that a merge of one key range can start reading near it.
type Run struct {
	path  string
	marks []runMark // a record's offset and key, every runMarkEvery bytes
	last  []byte    // the run's last key
	Bytes int64
	// readBuf is each of a reader's two read buffers: a merge opens every
	// run once per key range, so it shrinks as runs add up (see
	// SetReadBufs).
	readBuf int
}

// runReadMemory bounds the read buffers of one merge of runs (each reader
// has two: one it reads from, one being read ahead).
const runReadMemory = 64 << 20

// SetReadBufs sizes the read buffers of runs merged in parts key ranges.
func SetReadBufs(runs []*Run, parts int) {
	size := runReadMemory / max(1, 2*len(runs)*parts)
	size = min(max(size, 16<<10), 1<<20)
	for _, r := range runs {
		r.readBuf = size
	}
}

type runMark struct {
	off int64
	key []byte
}

const runMarkEvery = 256 << 10

// RunWriter writes a sorted run file, around the page cache (directio):
// a run is read back once, soon, and the bytes cost the CPU less that way.
type RunWriter struct {
	w   *directio.Writer
	rf  *Run
	tmp [binary.MaxVarintLen64]byte
}

// CreateRun starts a run file at path; pairs must be added in key order.
func CreateRun(path string) (*RunWriter, error) {
	w, err := directio.Create(path)
	if err != nil {
		return nil, err
	}
	return &RunWriter{w: w, rf: &Run{path: path}}, nil
}

func (r *RunWriter) Add(k, v []byte) error {
	rf := r.rf
	if len(rf.marks) == 0 || rf.Bytes-rf.marks[len(rf.marks)-1].off >= runMarkEvery {
		rf.marks = append(rf.marks, runMark{off: rf.Bytes, key: bytes.Clone(k)})
	}
	rf.last = append(rf.last[:0], k...)
	for _, b := range [][]byte{k, v} {
		n := binary.PutUvarint(r.tmp[:], uint64(len(b)))
		if _, err := r.w.Write(r.tmp[:n]); err != nil {
			return err
		}
		if _, err := r.w.Write(b); err != nil {
			return err
		}
		rf.Bytes += int64(n + len(b))
	}
	return nil
}

// Close finishes the run; it is a temporary file, not made durable.
func (r *RunWriter) Close() error { return r.w.Close() }

// Run is the run being written, readable once Close has returned.
func (r *RunWriter) Run() *Run { return r.rf }

// Path is the run's file, which the caller removes when done with it.
func (rf *Run) Path() string { return rf.path }

func (rf *Run) samples(n int) [][]byte {
	var out [][]byte
	for i := 1; i <= n && len(rf.marks) > 0; i++ {
		out = append(out, rf.marks[i*(len(rf.marks)-1)/n].key)
	}
	return out
}

// open reads the run's pairs in [lo, hi) (nil: no bound).
func (rf *Run) open(lo, hi []byte) (cursor, error) {
	if len(rf.marks) == 0 || (lo != nil && bytes.Compare(rf.last, lo) < 0) ||
		(hi != nil && bytes.Compare(rf.marks[0].key, hi) >= 0) {
		return &bufSource{}, nil
	}
	var off int64
	if lo != nil {
		// The last mark not above lo: every key before it is below lo.
		i := sort.Search(len(rf.marks), func(i int) bool { return bytes.Compare(rf.marks[i].key, lo) > 0 })
		if i > 0 {
			off = rf.marks[i-1].off
		}
	}
	size := rf.readBuf
	if size == 0 {
		size = 1 << 20
	}
	// Runs are written around the page cache, and so read: through it,
	// each byte would cost a copy into the cache and one out of it.
	f, err := directio.Open(rf.path, off, size)
	if err != nil {
		return nil, err
	}
	return &runReader{r: f, lo: lo, hi: hi}, nil
}

// runReader reads a range of a run file.
type runReader struct {
	r      *directio.Reader
	lo, hi []byte
	k, v   []byte
}

func (r *runReader) next() ([]byte, []byte, bool, error) {
	for {
		k, v, ok, err := r.read()
		if !ok || err != nil {
			return nil, nil, false, err
		}
		if r.lo != nil && bytes.Compare(k, r.lo) < 0 {
			continue
		}
		if r.hi != nil && bytes.Compare(k, r.hi) >= 0 {
			return nil, nil, false, nil
		}
		r.lo = nil
		return k, v, true, nil
	}
}

func (r *runReader) read() ([]byte, []byte, bool, error) {
	kl, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	// The buffers are reused: a pair is valid until the next call.
	r.k = slices.Grow(r.k[:0], int(kl))[:kl]
	if _, err := io.ReadFull(r.r, r.k); err != nil {
		return nil, nil, false, fmt.Errorf("extsort: truncated run: %w", err)
	}
	vl, err := binary.ReadUvarint(r.r)
	if err != nil {
		return nil, nil, false, fmt.Errorf("extsort: truncated run: %w", err)
	}
	r.v = slices.Grow(r.v[:0], int(vl))[:vl]
	if _, err := io.ReadFull(r.r, r.v); err != nil {
		return nil, nil, false, fmt.Errorf("extsort: truncated run: %w", err)
	}
	return r.k, r.v, true, nil
}

func (r *runReader) close() error { return r.r.Close() }

// Source is sorted data that can be read by key range: an in-memory
// buffer or a run file.
type Source interface {
	open(lo, hi []byte) (cursor, error)
	// samples returns up to n of its keys, spread evenly.
	samples(n int) [][]byte
	// bounds returns its first and last keys; ok is false when empty.
	bounds() (first, last []byte, ok bool)
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (b *Buffer) bounds() ([]byte, []byte, bool) {
	if len(b.ents) == 0 {
		return nil, nil, false
	}
	return b.key(0), b.key(len(b.ents) - 1), true
}

func (rf *Run) bounds() ([]byte, []byte, bool) {
	if len(rf.marks) == 0 {
		return nil, nil, false
	}
	return rf.marks[0].key, rf.last, true
}

func (b *Buffer) open(lo, hi []byte) (cursor, error) { return b.source(lo, hi), nil }

// splitKeys picks bounds that cut the union of srcs into about parts
// ranges of similar size.
func splitKeys(srcs []Source, parts int) [][]byte {
	if parts <= 1 {
		return nil
	}
	var all [][]byte
	for _, s := range srcs {
		all = append(all, s.samples(parts*8)...)
	}
	slices.SortFunc(all, bytes.Compare)
	all = slices.CompactFunc(all, bytes.Equal)
	var bounds [][]byte
	for i := 1; i < parts && len(all) > 0; i++ {
		b := all[i*len(all)/parts]
		if len(bounds) == 0 || !bytes.Equal(bounds[len(bounds)-1], b) {
			bounds = append(bounds, b)
		}
	}
	return bounds
}

// MergeParallel merges srcs cut into key ranges (see splitKeys), one
// goroutine per range writing to its own sink: the sinks' outputs are
// sorted and do not overlap each other. A duplicate key always falls into
// one range, so dup sees every duplicate.
func MergeParallel(srcs []Source, parts int, sink func(part int) func(k, v []byte) error, dup func(k, v []byte) error) error {
	bounds := splitKeys(srcs, parts)
	// The prefix every key shares: that of the smallest and the largest.
	var lo, hi []byte
	for _, s := range srcs {
		if f, l, ok := s.bounds(); ok {
			if lo == nil || bytes.Compare(f, lo) < 0 {
				lo = f
			}
			if hi == nil || bytes.Compare(l, hi) > 0 {
				hi = l
			}
		}
	}
	skip := commonPrefix(lo, hi)
	errs := make([]error, len(bounds)+1)
	var wg sync.WaitGroup
	for p := 0; p <= len(bounds); p++ {
		var lo, hi []byte
		if p > 0 {
			lo = bounds[p-1]
		}
		if p < len(bounds) {
			hi = bounds[p]
		}
		wg.Add(1)
		go func(p int, lo, hi []byte) {
			defer wg.Done()
			var subs []cursor
			defer func() {
				for _, s := range subs {
					s.close()
				}
			}()
			for _, s := range srcs {
				sub, err := s.open(lo, hi)
				if err != nil {
					errs[p] = err
					return
				}
				subs = append(subs, sub)
			}
			errs[p] = merge(subs, skip, sink(p), dup)
		}(p, lo, hi)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type mergeItem struct {
	pfx  uint64 // the 8 key bytes after the prefix all keys share
	src  cursor
	k, v []byte
}

func (a *mergeItem) less(b *mergeItem) bool {
	if a.pfx != b.pfx {
		return a.pfx < b.pfx
	}
	return bytes.Compare(a.k, b.k) < 0
}

// mergeHeap is a binary min-heap of the sources' current pairs, written
// out rather than through container/heap: the merge compares millions of
// keys, and most comparisons end at the integer prefix.
type mergeHeap []mergeItem

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// merge emits the pairs of all sources in key order; every key shares its
// first skip bytes with all others. Two equal keys are a duplicate of a
// unique index (every other key carries its row's handle): dup is called
// with the key and the second pair's value, and its error ends the merge.
func merge(srcs []cursor, skip int, emit func(k, v []byte) error, dup func(k, v []byte) error) error {
	var h mergeHeap
	for _, s := range srcs {
		k, v, ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, mergeItem{keyPrefix(k, skip), s, k, v})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	var prev []byte
	first := true
	for len(h) > 0 {
		it := &h[0]
		if !first && bytes.Equal(prev, it.k) {
			return dup(it.k, it.v)
		}
		if err := emit(it.k, it.v); err != nil {
			return err
		}
		prev = append(prev[:0], it.k...)
		first = false
		k, v, ok, err := it.src.next()
		if err != nil {
			return err
		}
		if ok {
			it.pfx, it.k, it.v = keyPrefix(k, skip), k, v
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		h.down(0)
	}
	return nil
}
