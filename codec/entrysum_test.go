package codec

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestEntrySum: the same pairs in any order sum alike; a missing, extra,
// changed or duplicated pair does not.
func TestEntrySum(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var pairs [][2][]byte
	for i := 0; i < 1000; i++ {
		pairs = append(pairs, [2][]byte{fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", rng.Intn(50))})
	}
	sum := func(ps [][2][]byte) EntrySum {
		var s EntrySum
		for _, p := range ps {
			s.Add(p[0], p[1])
		}
		return s
	}
	base := sum(pairs)
	shuffled := append([][2][]byte(nil), pairs...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if sum(shuffled) != base {
		t.Fatal("the same pairs in another order sum differently")
	}
	changed := append([][2][]byte(nil), pairs...)
	changed[7] = [2][]byte{changed[7][0], []byte("other")}
	// Moving a byte from the key to the value changes the pair.
	moved := append([][2][]byte(nil), pairs...)
	moved[3] = [2][]byte{[]byte("k"), []byte("3v")}
	for name, ps := range map[string][][2][]byte{
		"missing":   pairs[1:],
		"extra":     append(append([][2][]byte(nil), pairs...), [2][]byte{[]byte("x"), nil}),
		"changed":   changed,
		"duplicate": append(append([][2][]byte(nil), pairs[1:]...), pairs[2]),
		"moved":     moved,
	} {
		if sum(ps) == base {
			t.Errorf("%s pair: sums are equal", name)
		}
	}
}
