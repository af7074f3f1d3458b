package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// uncachedGet reads key at ts from Pebble alone, as Get did before the
// row cache.
func uncachedGet(t testing.TB, s *Store, key []byte, ts uint64) ([]byte, bool) {
	t.Helper()
	it, err := s.db.NewIter(nil)
	must(t, err)
	defer it.Close()
	v, _, found, err := readVersion(it, appendVersionKey(nil, key, ts))
	must(t, err)
	return v, found
}

// TestRowCacheVersions: the cache answers a read only with the version
// that read must see: a newer commit replaces the entry, an older
// snapshot reads past it, and a deletion is remembered as one.
func TestRowCacheVersions(t *testing.T) {
	s := openTest(t, nil)
	put := func(k, v string) {
		t.Helper()
		txn := s.Begin()
		if v == "" {
			must(t, txn.Delete([]byte(k)))
		} else {
			must(t, txn.Set([]byte(k), []byte(v)))
		}
		_, err := txn.Commit()
		must(t, err)
	}
	get := func(txn *Txn, k string) string {
		t.Helper()
		v, found, err := txn.Get([]byte(k))
		must(t, err)
		if !found {
			return "<none>"
		}
		return string(v)
	}
	fresh := func(k string) string {
		t.Helper()
		txn := s.Begin()
		defer txn.Rollback()
		return get(txn, k)
	}
	put("a", "1")
	old := s.Begin()
	defer old.Rollback()
	if got := get(old, "a"); got != "1" {
		t.Fatalf("first read: %q", got)
	}
	if _, _, ok := s.cachedRow([]byte("a"), s.latches.hash([]byte("a")), s.ReadTS()); !ok {
		t.Fatal("a read did not fill the cache")
	}
	put("a", "2")
	if got := fresh("a"); got != "2" {
		t.Fatalf("after a commit: %q, want 2", got)
	}
	if got := get(old, "a"); got != "1" {
		t.Fatalf("older snapshot after a commit: %q, want 1", got)
	}
	put("a", "")
	if got := fresh("a"); got != "<none>" {
		t.Fatalf("after a delete: %q", got)
	}
	latest, found, err := old.GetLatest([]byte("a"))
	must(t, err)
	if found {
		t.Fatalf("GetLatest after a delete: %q", latest)
	}
	// A miss is remembered too, and a later insert replaces it.
	if got := fresh("b"); got != "<none>" {
		t.Fatalf("absent key: %q", got)
	}
	put("b", "x")
	if got := fresh("b"); got != "x" {
		t.Fatalf("after inserting a key read as absent: %q", got)
	}
}

// TestRowCacheIngestAndClearRange: versions that arrive without a commit
// empty the cache, so no read after them sees what was there before.
func TestRowCacheIngestAndClearRange(t *testing.T) {
	s := openTest(t, nil)
	txn := s.Begin()
	must(t, txn.Set([]byte("r1"), []byte("v")))
	_, err := txn.Commit()
	must(t, err)
	S, err := s.ReserveTS()
	must(t, err)
	read := func(k string) ([]byte, bool, error) {
		txn := s.Begin()
		defer txn.Rollback()
		return txn.Get([]byte(k))
	}
	for _, k := range []string{"i1", "r1"} {
		if _, _, err := read(k); err != nil { // fills: absent, v
			t.Fatal(err)
		}
	}
	in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "in"), IngestOptions{Filters: true, Compress: true})
	must(t, err)
	must(t, in.Add([]byte("i1"), []byte("ingested")))
	must(t, in.Ingest(context.Background()))
	if v, found, err := read("i1"); err != nil || !found || string(v) != "ingested" {
		t.Fatalf("read after an ingestion: %q %v %v", v, found, err)
	}
	must(t, s.ClearRange([]byte("r"), []byte("s")))
	if v, found, err := read("r1"); err != nil || found {
		t.Fatalf("read after ClearRange: %q %v %v", v, found, err)
	}
}

// TestRowCacheRandomized races writers (locked read-modify-write,
// deletes, blind writes, aborted transactions) against readers that
// compare every cached read with Pebble's answer at the same snapshot,
// on a small cache that evicts all the time.
func TestRowCacheRandomized(t *testing.T) {
	s := openTest(t, func(o *Options) { o.RowCacheSize = 64 * rowCacheShards * 4 })
	const keys = 40
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%03d", i)) }
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var reads, mismatches atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) { firstErr.CompareAndSwap(nil, err) }
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for time.Now().Before(deadline) {
				txn := s.Begin()
				k := key(rng.IntN(keys))
				if _, err := txn.Lock(context.Background(), k, time.Second); err != nil {
					txn.Rollback()
					continue
				}
				v, _, err := txn.GetLatest(k)
				if err != nil {
					fail(err)
					txn.Rollback()
					return
				}
				switch rng.IntN(5) {
				case 0:
					must(t, txn.Delete(k))
				case 1:
					txn.Rollback()
					continue
				default:
					must(t, txn.Set(k, append(v, byte('a'+rng.IntN(26)))[max(0, len(v)-8):]))
				}
				if rng.IntN(3) == 0 { // a blind write of another key too
					must(t, txn.Set(key(rng.IntN(keys)), []byte{byte(rng.IntN(256))}))
				}
				if _, err := txn.Commit(); err != nil && !errors.Is(err, ErrWriteConflict) {
					fail(err)
					return
				}
			}
		}(uint64(w))
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 2))
			for time.Now().Before(deadline) {
				txn := s.Begin()
				for i := 0; i < 20; i++ {
					k := key(rng.IntN(keys))
					v, found, err := txn.Get(k)
					if err != nil {
						fail(err)
						return
					}
					want, wantFound := uncachedGet(t, s, k, txn.StartTS())
					reads.Add(1)
					if found != wantFound || !bytes.Equal(v, want) {
						mismatches.Add(1)
						fail(fmt.Errorf("key %s at %d: cache path %q/%v, Pebble %q/%v", k, txn.StartTS(), v, found, want, wantFound))
					}
				}
				txn.Rollback()
			}
		}(uint64(100 + r))
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatalf("%v (%d of %d reads wrong)", err, mismatches.Load(), reads.Load())
	}
	if reads.Load() < 1000 {
		t.Fatalf("only %d reads checked", reads.Load())
	}
}
