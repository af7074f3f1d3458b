package kv

import (
	"fmt"
	"testing"
)

// TestBlockCacheSurvivesMemtables checks that reads are served from the
// block cache after writes have rotated memtables. Pebble charges
// memtables to the block cache; with memtables as large as the cache, as
// this store once had, every block read went to the file system.
func TestBlockCacheSurvivesMemtables(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, CacheSize: 16 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 200)
	for b := range 100 {
		tx := s.Begin()
		for i := range 1000 {
			if err := tx.Set(fmt.Appendf(nil, "k%07d", b*1000+i), val); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB().Flush(); err != nil {
		t.Fatal(err)
	}
	read := func() {
		tx := s.Begin()
		defer tx.Rollback()
		for i := 0; i < 100000; i += 97 {
			if _, ok, err := tx.Get(fmt.Appendf(nil, "k%07d", i)); err != nil || !ok {
				t.Fatalf("get %d: %v %v", i, ok, err)
			}
		}
	}
	read()
	before := s.DB().Metrics().BlockCache
	read()
	after := s.DB().Metrics().BlockCache
	hits, misses := after.Hits-before.Hits, after.Misses-before.Misses
	if hits < 4*misses {
		t.Fatalf("second pass over the same keys: %d cache hits, %d misses", hits, misses)
	}

	// Charging the whole cache to other memory leaves no room for blocks;
	// releasing the charge brings the cache back.
	pass := func() (hits, misses int64) {
		b := s.DB().Metrics().BlockCache
		read()
		a := s.DB().Metrics().BlockCache
		return a.Hits - b.Hits, a.Misses - b.Misses
	}
	release := s.ChargeCache(s.CacheSize())
	pass()
	if hits, misses := pass(); misses < 4*hits {
		t.Fatalf("with the cache charged away: %d hits, %d misses", hits, misses)
	}
	release()
	pass()
	if hits, misses := pass(); hits < 4*misses {
		t.Fatalf("after the charge was released: %d hits, %d misses", hits, misses)
	}

	if _, err := Open(Options{Dir: t.TempDir(), CacheSize: 64 << 20, MemTableSize: 32 << 20}); err == nil {
		t.Fatal("a cache smaller than three memtables was accepted")
	}
}
