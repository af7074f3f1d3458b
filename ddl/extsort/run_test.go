package extsort

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"
)

// randomSources spreads n distinct random keys over in-memory buffers and
// run files, and returns them with the keys in order.
func randomSources(t *testing.T, rng *rand.Rand, n int) ([]Source, [][]byte) {
	seen := map[string]bool{}
	var keys [][]byte
	for len(keys) < n {
		// Shared prefixes and short keys exercise the integer prefix.
		k := fmt.Appendf(nil, "ix%0*d", rng.Intn(12), rng.Intn(n*4))
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	nsrc := 1 + rng.Intn(6)
	parts := make([][][]byte, nsrc)
	for _, k := range keys {
		i := rng.Intn(nsrc)
		parts[i] = append(parts[i], k)
	}
	var srcs []Source
	for i, p := range parts {
		slices.SortFunc(p, bytes.Compare)
		if i%2 == 0 {
			b := NewBuffer(2)
			for _, k := range p {
				b.Add(k, append([]byte("v"), k...))
			}
			b.Sort(nil)
			srcs = append(srcs, b)
			continue
		}
		w, err := CreateRun(filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range p {
			if err := w.Add(k, append([]byte("v"), k...)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, w.Run())
	}
	slices.SortFunc(keys, bytes.Compare)
	return srcs, keys
}

// TestMergeParallel: for any number of ranges, the ranges' outputs are
// each sorted, follow each other without overlap, and together are exactly
// the union of the sources, each key with its value.
func TestMergeParallel(t *testing.T) {
	for seed := int64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		n := []int{0, 1, 7, 1000, 30000}[rng.Intn(5)]
		srcs, want := randomSources(t, rng, n)
		parts := 1 + rng.Intn(6)
		outs := make([][][]byte, parts)
		err := MergeParallel(srcs, parts, func(p int) func(k, v []byte) error {
			return func(k, v []byte) error {
				if !bytes.Equal(v, append([]byte("v"), k...)) {
					return fmt.Errorf("key %q has value %q", k, v)
				}
				outs[p] = append(outs[p], bytes.Clone(k))
				return nil
			}
		}, func(k, _ []byte) error { return fmt.Errorf("false duplicate %q", k) })
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got := slices.Concat(outs...)
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("seed %d (%d keys, %d ranges): merged %d keys, want %d in order", seed, n, parts, len(got), len(want))
		}
	}
}

// TestMergeParallelFindsDuplicates: a key present in two sources is
// reported, whichever range it falls into.
func TestMergeParallelFindsDuplicates(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		srcs, keys := randomSources(t, rng, 5000)
		dupKey := keys[rng.Intn(len(keys))]
		extra := NewBuffer(2)
		extra.Add(dupKey, nil)
		extra.Sort(nil)
		errDup := errors.New("dup")
		var found []byte
		err := MergeParallel(append(srcs, extra), 1+rng.Intn(6), func(int) func(k, v []byte) error {
			return func(k, v []byte) error { return nil }
		}, func(k, _ []byte) error { found = bytes.Clone(k); return errDup })
		if !errors.Is(err, errDup) || !bytes.Equal(found, dupKey) {
			t.Fatalf("seed %d: err %v, found %q, want duplicate %q", seed, err, found, dupKey)
		}
	}
}

// TestRunRangeRead: a run read from any bounds yields exactly its keys in
// [lo, hi).
func TestRunRangeRead(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	w, err := CreateRun(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for i := 0; i < 50000; i++ {
		k := fmt.Appendf(nil, "k%08d", i*3)
		keys = append(keys, k)
		if err := w.Add(k, bytes.Repeat([]byte{'x'}, rng.Intn(20))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Run().marks) < 2 {
		t.Fatalf("run has %d marks, want several", len(w.Run().marks))
	}
	bound := func() []byte {
		if rng.Intn(5) == 0 {
			return nil
		}
		return fmt.Appendf(nil, "k%08d", rng.Intn(160000))
	}
	for i := 0; i < 50; i++ {
		lo, hi := bound(), bound()
		src, err := w.Run().open(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for {
			k, _, ok, err := src.next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			got = append(got, bytes.Clone(k))
		}
		src.close()
		var want [][]byte
		for _, k := range keys {
			if (lo == nil || bytes.Compare(k, lo) >= 0) && (hi == nil || bytes.Compare(k, hi) < 0) {
				want = append(want, k)
			}
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("range [%q, %q): got %d keys, want %d", lo, hi, len(got), len(want))
		}
	}
}
