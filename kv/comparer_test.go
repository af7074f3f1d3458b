package kv

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestComparerAgreesWithLayout checks the comparer against the physical
// layout: Split finds the version prefix of every version key and of no
// other key, and Pebble's order (prefix, then suffix) agrees with the
// store's bytewise Compare on every key the store writes or bounds
// iterators with.
func TestComparerAgreesWithLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0x00, 0x01, 0x02, 0xFE, 0xFF, 'a'}
	userKey := func() []byte {
		k := make([]byte, rng.IntN(12))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return k
	}
	tss := []uint64{0, 1, 255, 256, 1 << 40, 1<<63 + 5, ^uint64(0) - 1, ^uint64(0)}
	var keys [][]byte
	kinds := map[string]bool{} // which keys are version keys
	for range 300 {
		k := userKey()
		p := appendPrefix(nil, k)
		for range 2 {
			ts := tss[rng.IntN(len(tss))]
			v := appendVersionKey(nil, k, ts)
			if got := splitKey(v); got != len(p) {
				t.Fatalf("splitKey(%x) = %d, want %d", v, got, len(p))
			}
			keys = append(keys, v)
			kinds[string(v)] = true
		}
		// Bounds: iterator bounds, their ends, range-deletion bounds.
		for _, b := range [][]byte{p, appendPrefixEnd(nil, p), appendEscaped(nil, k)} {
			if got := splitKey(b); got != len(b) {
				t.Fatalf("splitKey(bound %x) = %d, want %d", b, got, len(b))
			}
			keys = append(keys, b)
		}
	}
	for _, m := range [][]byte{hwmKey, safePointKey, metaKey("x\x00\x01abcdefgh")} {
		if got := splitKey(m); got != len(m) {
			t.Fatalf("splitKey(meta %q) = %d, want %d", m, got, len(m))
		}
		keys = append(keys, m)
	}
	for _, a := range keys {
		for _, b := range keys {
			if got, want := compareKeys(a, b), bytes.Compare(a, b); got != want {
				t.Fatalf("compareKeys(%x, %x) = %d, bytes say %d", a, b, got, want)
			}
			if comparer.Equal(a, b) != (compareKeys(a, b) == 0) {
				t.Fatalf("Equal(%x, %x) disagrees with compareKeys", a, b)
			}
		}
	}
	// The immediate successor of a key's prefix, which Pebble builds to skip
	// a key's versions, is a prefix key that sorts after all of them and
	// before any other key, in both definitions of the order.
	for _, a := range keys {
		if !kinds[string(a)] {
			continue
		}
		pa := a[:splitKey(a)]
		succ := comparer.ImmediateSuccessor(nil, pa)
		if splitKey(succ) != len(succ) {
			t.Fatalf("successor %x of %x is not a prefix key", succ, pa)
		}
		for _, b := range keys {
			c := comparer.Compare(succ, b)
			if c != compareKeys(succ, b) {
				t.Fatalf("successor %x ordered differently against %x by prefix and by bytes", succ, b)
			}
			if !kinds[string(b)] {
				continue
			}
			same := bytes.Equal(b[:splitKey(b)], pa)
			if same && c <= 0 || !same && bytes.Compare(pa, b) < 0 && c >= 0 {
				t.Fatalf("successor %x of %x misplaced against %x (%d)", succ, pa, b, c)
			}
		}
	}
}

// compareKeys orders keys by prefix, then by suffix: Pebble's definition of
// the order, which the store's bytewise Compare must agree with.
func compareKeys(a, b []byte) int {
	pa, pb := splitKey(a), splitKey(b)
	if c := bytes.Compare(a[:pa], b[:pb]); c != 0 {
		return c
	}
	return bytes.Compare(a[pa:], b[pb:])
}

// TestAppendEscaped checks appendEscaped against the escape spelled out
// byte by byte, on keys dense and sparse in zeros, after a non-empty dst.
func TestAppendEscaped(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		k := make([]byte, rng.IntN(300))
		dense := rng.IntN(2) == 0
		for i := range k {
			if dense && rng.IntN(3) == 0 || !dense && rng.IntN(40) == 0 {
				continue // a zero
			}
			k[i] = byte(1 + rng.IntN(255))
		}
		dst := []byte("prefix")
		want := bytes.Clone(dst)
		for _, b := range k {
			want = append(want, b)
			if b == 0 {
				want = append(want, 0xFF)
			}
		}
		if got := appendEscaped(dst, k); !bytes.Equal(got, want) {
			t.Fatalf("appendEscaped(%x) = %x, want %x", k, got, want)
		}
	}
}

// BenchmarkAppendEscaped escapes a secondary index key of the shape an
// index on a CHAR(120) column has: table and index IDs, a collation key
// without zeros, the row's handle.
func BenchmarkAppendEscaped(b *testing.B) {
	k := binary.BigEndian.AppendUint64(nil, 1<<63|116)
	k = append(k, '_', 'i')
	k = binary.BigEndian.AppendUint64(k, 1<<63|2)
	for range 229 {
		k = append(k, 0x9b)
	}
	k = append(k, 0x00, 0x01)
	k = binary.BigEndian.AppendUint64(k, 1<<63|1234567)
	dst := make([]byte, 0, 512)
	for b.Loop() {
		dst = appendEscaped(dst[:0], k)
	}
}
