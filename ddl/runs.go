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
}

// bufSource reads a sorted in-memory buffer.
type bufSource struct {
	b   *entryBuf
	pos int
}

func (s *bufSource) next() ([]byte, []byte, bool, error) {
	if s.pos >= len(s.b.keys) {
		return nil, nil, false, nil
	}
	s.pos++
	return s.b.keys[s.pos-1], s.b.vals[s.pos-1], true, nil
}

// runWriter writes a sorted run file.
type runWriter struct {
	f     *os.File
	w     *bufio.Writer
	n     int64
	Bytes int64
	tmp   [binary.MaxVarintLen64]byte
}

func createRun(path string) (*runWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &runWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (r *runWriter) add(k, v []byte) error {
	for _, b := range [][]byte{k, v} {
		n := binary.PutUvarint(r.tmp[:], uint64(len(b)))
		if _, err := r.w.Write(r.tmp[:n]); err != nil {
			return err
		}
		if _, err := r.w.Write(b); err != nil {
			return err
		}
		r.Bytes += int64(n + len(b))
	}
	r.n++
	return nil
}

func (r *runWriter) close() error {
	if err := r.w.Flush(); err != nil {
		r.f.Close()
		return err
	}
	return r.f.Close()
}

// runReader reads a run file back.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	k, v []byte
}

func openRun(path string) (*runReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &runReader{f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

func (r *runReader) next() ([]byte, []byte, bool, error) {
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
