package kv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestGetLatestAfterLaterCommits: a transaction's current reads see the
// newest version of each key even when it was committed, deleted or
// ingested after the transaction's previous current read, with and
// without the row cache.
func TestGetLatestAfterLaterCommits(t *testing.T) {
	for _, rowCache := range []int64{-1, 0} {
		t.Run(fmt.Sprintf("rowcache=%d", rowCache), func(t *testing.T) {
			s := openTest(t, func(o *Options) { o.RowCacheSize = rowCache })
			commitWrites(t, s, "k1", "a1", "k2", "a2", "k3", "a3")
			S, err := s.ReserveTS()
			must(t, err)
			release := s.HoldSafePoint(S, "test")
			defer release()
			a := s.Begin()
			defer a.Rollback()
			latest := func(k string) string {
				t.Helper()
				v, found, err := a.GetLatest([]byte(k))
				must(t, err)
				if !found {
					return "<none>"
				}
				return string(v)
			}
			if got := latest("k1"); got != "a1" {
				t.Fatalf("k1 = %s", got)
			}
			commitWrites(t, s, "k2", "b2", "k3", "<del>", "k4", "b4")
			for k, want := range map[string]string{"k2": "b2", "k3": "<none>", "k4": "b4", "k1": "a1"} {
				if got := latest(k); got != want {
					t.Fatalf("%s = %s after a later commit, want %s", k, got, want)
				}
			}
			// Versions ingested below the reads' timestamps, after them.
			in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "ingest"), IngestOptions{MaxSize: 1 << 10, Filters: true})
			must(t, err)
			must(t, in.Add([]byte("z"), []byte("ingested")))
			must(t, in.Ingest(context.Background()))
			if got := latest("z"); got != "ingested" {
				t.Fatalf("z = %s after an ingest, want ingested", got)
			}
		})
	}
}

// TestGetLatestRandomized interleaves one long transaction's current
// reads with other transactions' commits, and checks each read against
// a fresh look at Pebble, for longer than one iterator serves.
func TestGetLatestRandomized(t *testing.T) {
	s := openTest(t, func(o *Options) { o.RowCacheSize = 16 << 10 })
	rng := rand.New(rand.NewPCG(7, 7))
	key := func() []byte { return fmt.Appendf(nil, "k%03d", rng.IntN(300)) }
	a := s.Begin()
	defer a.Rollback()
	for i := range 2 * latestIterUses {
		if rng.IntN(4) == 0 {
			w := s.Begin()
			for range 1 + rng.IntN(3) {
				if rng.IntN(4) == 0 {
					must(t, w.Delete(key()))
				} else {
					must(t, w.Set(key(), fmt.Appendf(nil, "v%d", i)))
				}
			}
			_, err := w.Commit()
			must(t, err)
		}
		k := key()
		v, found, err := a.GetLatest(k)
		must(t, err)
		want, wantFound := uncachedGet(t, s, k, s.ReadTS())
		if found != wantFound || !bytes.Equal(v, want) {
			t.Fatalf("step %d, %s: GetLatest %q/%v, Pebble %q/%v", i, k, v, found, want, wantFound)
		}
	}
}
