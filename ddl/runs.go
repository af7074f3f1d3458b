package ddl

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
)

// A sorted run is a file of (uvarint len, key, uvarint len, value) records
// in key order: what the ingest backfill spills when the index does not fit
// in its memory budget. Runs are merged into sstables at the end, or
// earlier when the next spill would pass the disk quota.

// source yields key/value pairs in key order.
type source interface {
	// next returns the next pair, valid until the following call; ok is
	// false at the end.
	next() (k, v []byte, ok bool, err error)
	close() error
}

func (s *bufSource) close() error { return nil }

// runFile is a spilled run: the file, and a sparse index of it kept in
// memory, so that a merge of one key range can start reading near it.
type runFile struct {
	path  string
	marks []runMark // a record's offset and key, every runMarkEvery bytes
	last  []byte    // the run's last key
	Bytes int64
}

type runMark struct {
	off int64
	key []byte
}

const runMarkEvery = 256 << 10

// runWriter writes a sorted run file.
type runWriter struct {
	f   *os.File
	w   *bufio.Writer
	rf  *runFile
	tmp [binary.MaxVarintLen64]byte
}

func createRun(path string) (*runWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &runWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), rf: &runFile{path: path}}, nil
}

func (r *runWriter) add(k, v []byte) error {
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

func (r *runWriter) close() error {
	if err := r.w.Flush(); err != nil {
		r.f.Close()
		return err
	}
	return r.f.Close()
}

func (rf *runFile) samples(n int) [][]byte {
	var out [][]byte
	for i := 1; i <= n && len(rf.marks) > 0; i++ {
		out = append(out, rf.marks[i*(len(rf.marks)-1)/n].key)
	}
	return out
}

// open reads the run's pairs in [lo, hi) (nil: no bound).
func (rf *runFile) open(lo, hi []byte) (source, error) {
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
	f, err := os.Open(rf.path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &runReader{f: f, r: bufio.NewReaderSize(f, 1<<20), lo: lo, hi: hi}, nil
}

// runReader reads a range of a run file.
type runReader struct {
	f      *os.File
	r      *bufio.Reader
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
		return nil, nil, false, fmt.Errorf("ddl: truncated run: %w", err)
	}
	vl, err := binary.ReadUvarint(r.r)
	if err != nil {
		return nil, nil, false, fmt.Errorf("ddl: truncated run: %w", err)
	}
	r.v = slices.Grow(r.v[:0], int(vl))[:vl]
	if _, err := io.ReadFull(r.r, r.v); err != nil {
		return nil, nil, false, fmt.Errorf("ddl: truncated run: %w", err)
	}
	return r.k, r.v, true, nil
}

func (r *runReader) close() error { return r.f.Close() }

// rangeSource is sorted data that can be read by key range: an in-memory
// buffer or a run file.
type rangeSource interface {
	open(lo, hi []byte) (source, error)
	// samples returns up to n of its keys, spread evenly.
	samples(n int) [][]byte
}

func (b *sortBuf) open(lo, hi []byte) (source, error) { return b.source(lo, hi), nil }

// splitKeys picks bounds that cut the union of srcs into about parts
// ranges of similar size.
func splitKeys(srcs []rangeSource, parts int) [][]byte {
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

// mergeParallel merges srcs cut into key ranges (see splitKeys), one
// goroutine per range writing to its own sink: the sinks' outputs are
// sorted and do not overlap each other. A duplicate key always falls into
// one range, so dup sees every duplicate.
func mergeParallel(srcs []rangeSource, parts int, sink func(part int) func(k, v []byte) error, dup func(k []byte) error) error {
	bounds := splitKeys(srcs, parts)
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
			var subs []source
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
			errs[p] = merge(subs, sink(p), dup)
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
	src  source
	k, v []byte
}

type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) Len() int           { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool { return bytes.Compare(h.items[i].k, h.items[j].k) < 0 }
func (h *mergeHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)         { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// merge emits the pairs of all sources in key order. Two equal keys are a
// duplicate of a unique index (every other key carries its row's handle):
// dup is called with the key and its error ends the merge.
func merge(srcs []source, emit func(k, v []byte) error, dup func(k []byte) error) error {
	h := &mergeHeap{}
	for _, s := range srcs {
		k, v, ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h.items = append(h.items, mergeItem{s, k, v})
		}
	}
	heap.Init(h)
	var prev []byte
	first := true
	for h.Len() > 0 {
		it := &h.items[0]
		if !first && bytes.Equal(prev, it.k) {
			return dup(it.k)
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
			it.k, it.v = k, v
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}
