package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortBufOffHeap fills a buffer past several chunks and record-array
// growths (all in mapped memory), across two rounds, and checks that it
// sorts and returns exactly what went in.
func TestSortBufOffHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := NewBuffer(2)
	defer b.Free()
	for round := range 2 {
		b.Reset()
		type kv struct{ k, v []byte }
		var want []kv
		for i := range 60000 {
			k := fmt.Appendf([]byte("ix"), "%08x-%d", rng.Uint32(), i)
			v := bytes.Repeat([]byte{byte(i)}, rng.IntN(300)) // ~9 MiB: three chunks
			b.Add(k, v)
			want = append(want, kv{k, v})
		}
		// The second round sorts with pauses, which must not change the order.
		pauses := 0
		if round == 0 {
			b.Sort(nil)
		} else {
			b.Sort(func() { pauses++ })
			if pauses < 10 {
				t.Fatalf("sort of %d entries paused %d times", len(b.ents), pauses)
			}
		}
		slices.SortFunc(want, func(x, y kv) int { return bytes.Compare(x.k, y.k) })
		if len(b.ents) != len(want) {
			t.Fatalf("round %d: %d entries, want %d", round, len(b.ents), len(want))
		}
		if len(b.chunks) < 3 {
			t.Fatalf("round %d: only %d chunks; the test should span several", round, len(b.chunks))
		}
		for i, w := range want {
			if !bytes.Equal(b.key(i), w.k) || !bytes.Equal(b.val(i), w.v) {
				t.Fatalf("round %d: entry %d is %q, want %q", round, i, b.key(i), w.k)
			}
		}
	}
}

// TestSortOrderIsByteOrder: keys that share their first 8 or 16 bytes
// after the common prefix, end inside them, or differ only by trailing
// zero bytes sort as bytes.Compare sorts them.
func TestSortOrderIsByteOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{0x00, 0x01, 'a', 0xff}
	b := NewBuffer(2)
	defer b.Free()
	var want [][]byte
	for range 20000 {
		k := []byte("ix")
		if rng.IntN(2) == 0 { // a long shared run, then a few random bytes
			k = append(k, "0123456789abcdef"[:rng.IntN(17)]...)
		}
		for range rng.IntN(20) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		b.Add(k, nil)
		want = append(want, k)
	}
	b.Sort(nil)
	slices.SortFunc(want, bytes.Compare)
	for i, w := range want {
		if !bytes.Equal(b.key(i), w) {
			t.Fatalf("entry %d is %q, want %q", i, b.key(i), w)
		}
	}
}
