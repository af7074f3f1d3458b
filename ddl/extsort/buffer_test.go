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
