package ddl

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
)

// sortBuf holds one worker's entries of one index for a round. Keys and
// values live in large arena chunks (millions of small allocations would
// cost the garbage collector more than the build itself); each entry is a
// fixed-size record whose first field is the 8 key bytes after the prefix
// every key of the buffer shares, so that most comparisons of the sort are
// one integer comparison and touch no key bytes.
type sortBuf struct {
	skip   int // length of the prefix all keys share (the index prefix)
	chunks [][]byte
	cur    int // the chunk being filled
	ents   []sortEnt
	bytes  int64 // accounted memory: key and value bytes plus the record
}

type sortEnt struct {
	pfx        uint64
	chunk, off uint32
	klen, vlen uint32
}

const (
	sortChunkSize = 4 << 20
	sortEntSize   = 24
)

func newSortBuf(skip int) *sortBuf { return &sortBuf{skip: skip} }

// add copies an entry in and returns the memory it accounts for.
func (b *sortBuf) add(k, v []byte) int64 {
	n := len(k) + len(v)
	for b.cur < len(b.chunks) && len(b.chunks[b.cur])+n > cap(b.chunks[b.cur]) {
		b.cur++
	}
	if b.cur == len(b.chunks) {
		b.chunks = append(b.chunks, make([]byte, 0, max(sortChunkSize, n)))
	}
	last := b.cur
	c := b.chunks[last]
	off := len(c)
	c = append(append(c, k...), v...)
	b.chunks[last] = c
	b.ents = append(b.ents, sortEnt{pfx: keyPrefix(k, b.skip), chunk: uint32(last), off: uint32(off), klen: uint32(len(k)), vlen: uint32(len(v))})
	sz := int64(n + sortEntSize)
	b.bytes += sz
	return sz
}

// reset empties the buffer and keeps its memory for the next round: the
// budget's worth of memory is allocated once per job, not once per round.
func (b *sortBuf) reset() {
	for i := range b.chunks {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.cur, b.ents, b.bytes = 0, b.ents[:0], 0
}

// keyPrefix is the big-endian integer of the 8 key bytes after skip,
// zero-padded: its order is the order of those bytes.
func keyPrefix(k []byte, skip int) uint64 {
	if len(k) >= skip+8 {
		return binary.BigEndian.Uint64(k[skip:])
	}
	var b [8]byte
	if len(k) > skip {
		copy(b[:], k[skip:])
	}
	return binary.BigEndian.Uint64(b[:])
}

func (b *sortBuf) key(i int) []byte {
	e := &b.ents[i]
	return b.chunks[e.chunk][e.off : e.off+e.klen : e.off+e.klen]
}

func (b *sortBuf) val(i int) []byte {
	e := &b.ents[i]
	start := e.off + e.klen
	return b.chunks[e.chunk][start : start+e.vlen : start+e.vlen]
}

func (b *sortBuf) cmp(x, y *sortEnt) int {
	if x.pfx != y.pfx {
		if x.pfx < y.pfx {
			return -1
		}
		return 1
	}
	kx := b.chunks[x.chunk][x.off : x.off+x.klen]
	ky := b.chunks[y.chunk][y.off : y.off+y.klen]
	return bytes.Compare(kx, ky)
}

func (b *sortBuf) sort() {
	slices.SortFunc(b.ents, func(x, y sortEnt) int { return b.cmp(&x, &y) })
}

// search returns the position of the first entry not below key (the
// buffer is sorted).
func (b *sortBuf) search(key []byte) int {
	if key == nil {
		return len(b.ents)
	}
	return sort.Search(len(b.ents), func(i int) bool { return bytes.Compare(b.key(i), key) >= 0 })
}

// samples returns up to n keys spread evenly over the sorted buffer.
func (b *sortBuf) samples(n int) [][]byte {
	var out [][]byte
	for i := 1; i <= n && len(b.ents) > 0; i++ {
		out = append(out, b.key(i*(len(b.ents)-1)/n))
	}
	return out
}

// bufSource reads the entries of a sorted buffer in [lo, hi) (nil: no bound).
type bufSource struct {
	b        *sortBuf
	pos, end int
}

func (b *sortBuf) source(lo, hi []byte) *bufSource {
	s := &bufSource{b: b, end: len(b.ents)}
	if lo != nil {
		s.pos = b.search(lo)
	}
	if hi != nil {
		s.end = b.search(hi)
	}
	return s
}

func (s *bufSource) next() ([]byte, []byte, bool, error) {
	if s.pos >= s.end {
		return nil, nil, false, nil
	}
	s.pos++
	return s.b.key(s.pos - 1), s.b.val(s.pos - 1), true, nil
}
