package extsort

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"
)

// Buffer holds one worker's entries of one index for a round. Keys and
// values live in large arena chunks (millions of small allocations would
// cost the garbage collector more than the build itself); each entry is a
// fixed-size record whose first field is the 8 key bytes after the prefix
// every key of the buffer shares, so that most comparisons of the sort are
// one integer comparison and touch no key bytes.
//
// Chunks and records are allocated outside the Go heap (mapAnon) and must
// be given back with Free once nothing reads the buffer any more.
type Buffer struct {
	skip    int // length of the prefix all keys share (the index prefix)
	chunks  [][]byte
	mapped  []bool // per chunk: from mapAnon (else from the Go heap)
	cur     int    // the chunk being filled
	ents    []sortEnt
	entsMem []byte // the mapping behind ents, nil if on the Go heap
	bytes   int64  // accounted memory: key and value bytes plus the record
}

// sortEnt is one entry's record. The 16 key bytes after the shared
// prefix are kept in it as two integers, so that most comparisons read no
// key memory: a string column's collation key spends two bytes per
// character, and keys alike in their first 8 bytes are common.
type sortEnt struct {
	pfx, pfx2  uint64
	chunk, off uint32
	klen, vlen uint32
}

const (
	sortChunkSize = 4 << 20
	sortEntSize   = 32
)

// NewBuffer returns an empty buffer for keys that all share their first
// skip bytes.
func NewBuffer(skip int) *Buffer { return &Buffer{skip: skip} }

// Bytes is the memory the buffer's entries account for.
func (b *Buffer) Bytes() int64 { return b.bytes }

// Len is the number of entries.
func (b *Buffer) Len() int { return len(b.ents) }

// Add copies an entry in and returns the memory it accounts for.
func (b *Buffer) Add(k, v []byte) int64 {
	n := len(k) + len(v)
	for b.cur < len(b.chunks) && len(b.chunks[b.cur])+n > cap(b.chunks[b.cur]) {
		b.cur++
	}
	if b.cur == len(b.chunks) {
		c, mapped := offHeap(max(sortChunkSize, n))
		b.chunks, b.mapped = append(b.chunks, c[:0]), append(b.mapped, mapped)
	}
	if len(b.ents) == cap(b.ents) {
		b.growEnts()
	}
	last := b.cur
	c := b.chunks[last]
	off := len(c)
	c = append(append(c, k...), v...)
	b.chunks[last] = c
	b.ents = append(b.ents, sortEnt{pfx: keyPrefix(k, b.skip), pfx2: keyPrefix(k, b.skip+8), chunk: uint32(last), off: uint32(off), klen: uint32(len(k)), vlen: uint32(len(v))})
	sz := int64(n + sortEntSize)
	b.bytes += sz
	return sz
}

// offHeap maps n bytes, or allocates them on the Go heap if mapping fails.
func offHeap(n int) (mem []byte, mapped bool) {
	if m, err := mapAnon(n); err == nil {
		return m, true
	}
	return make([]byte, n), false
}

// growEnts doubles the record array in a new mapping and unmaps the old
// one right away, so growing never leaves garbage behind.
func (b *Buffer) growEnts() {
	n := max(1<<14, 2*cap(b.ents))
	var ents []sortEnt
	mem, mapped := offHeap(n * sortEntSize)
	if mapped {
		ents = unsafe.Slice((*sortEnt)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	} else {
		mem, ents = nil, make([]sortEnt, n)
	}
	ents = ents[:len(b.ents)]
	copy(ents, b.ents)
	if b.entsMem != nil {
		unmapAnon(b.entsMem)
	}
	b.ents, b.entsMem = ents, mem
}

// Free unmaps the buffer's memory; the buffer must not be used again.
func (b *Buffer) Free() {
	for i, c := range b.chunks {
		if b.mapped[i] {
			unmapAnon(c[:cap(c)])
		}
	}
	if b.entsMem != nil {
		unmapAnon(b.entsMem)
	}
	b.chunks, b.mapped, b.ents, b.entsMem, b.cur, b.bytes = nil, nil, nil, nil, 0, 0
}

// The records are laid out in mapped memory by hand.
var _ [unsafe.Sizeof(sortEnt{}) - sortEntSize]struct{}
var _ [sortEntSize - unsafe.Sizeof(sortEnt{})]struct{}

// Reset empties the buffer and keeps its memory for the next round: the
// budget's worth of memory is allocated once per job, not once per round.
func (b *Buffer) Reset() {
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

func (b *Buffer) key(i int) []byte {
	e := &b.ents[i]
	return b.chunks[e.chunk][e.off : e.off+e.klen : e.off+e.klen]
}

func (b *Buffer) val(i int) []byte {
	e := &b.ents[i]
	start := e.off + e.klen
	return b.chunks[e.chunk][start : start+e.vlen : start+e.vlen]
}

// cmp orders two entries. Equal prefixes are equal key bytes, or keys
// that end inside them followed by zeros in the other: the full keys
// decide then.
func (b *Buffer) cmp(x, y *sortEnt) int {
	if x.pfx != y.pfx {
		if x.pfx < y.pfx {
			return -1
		}
		return 1
	}
	if x.pfx2 != y.pfx2 {
		if x.pfx2 < y.pfx2 {
			return -1
		}
		return 1
	}
	kx := b.chunks[x.chunk][x.off : x.off+x.klen]
	ky := b.chunks[y.chunk][y.off : y.off+y.klen]
	return bytes.Compare(kx, ky)
}

// Sort orders the buffer. pause, if not nil, is called every
// sortPauseEvery comparisons: sorting a full buffer is tens of
// milliseconds of CPU, which a paced build must be able to spread out.
func (b *Buffer) Sort(pause func()) {
	n := 0
	slices.SortFunc(b.ents, func(x, y sortEnt) int {
		if n++; n == sortPauseEvery && pause != nil {
			n = 0
			pause()
		}
		return b.cmp(&x, &y)
	})
}

// About a millisecond of comparisons.
const sortPauseEvery = 1 << 14

// search returns the position of the first entry not below key (the
// buffer is sorted).
func (b *Buffer) search(key []byte) int {
	if key == nil {
		return len(b.ents)
	}
	return sort.Search(len(b.ents), func(i int) bool { return bytes.Compare(b.key(i), key) >= 0 })
}

// samples returns up to n keys spread evenly over the sorted buffer.
func (b *Buffer) samples(n int) [][]byte {
	var out [][]byte
	for i := 1; i <= n && len(b.ents) > 0; i++ {
		out = append(out, b.key(i*(len(b.ents)-1)/n))
	}
	return out
}

// bufSource reads the entries of a sorted buffer in [lo, hi) (nil: no bound).
type bufSource struct {
	b        *Buffer
	pos, end int
}

func (b *Buffer) source(lo, hi []byte) *bufSource {
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
