package kv

import (
	"fmt"
	"testing"
)

// A durable store appends to its WAL files with direct writes where the
// file system has direct I/O, through memtable rotations and recycled WAL
// files, and a reopened store replays every commit from them. A relaxed
// store keeps the page cache, and so does a durable one asked to.
func TestDirectWALReplays(t *testing.T) {
	dir := t.TempDir()
	open := func(noSync, buffering bool) *Store {
		s, err := Open(Options{Dir: dir, NoSync: noSync, WALBuffering: buffering, GCInterval: -1,
			CacheSize: 8 << 20, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(false, false)
	val := make([]byte, 900)
	const n = 6000 // about five memtables
	for i := range n {
		txn := s.Begin()
		copy(val, fmt.Sprintf("value %d", i))
		must(t, txn.Set(walKey(i), val))
		if _, err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	direct := s.disk.directWALs.Load()
	must(t, s.Close())
	t.Logf("WAL files with direct appends: %d", direct)
	if direct == 0 {
		t.Logf("%s has no direct I/O: the WAL went through the page cache", dir)
	}

	s = open(false, true)
	if s.disk.directWALs.Load() != 0 {
		t.Fatal("a store with WALBuffering opened a WAL for direct appends")
	}
	must(t, s.Close())
	s = open(true, false)
	defer s.Close()
	if s.disk.directWALs.Load() != 0 {
		t.Fatal("a store with relaxed durability opened a WAL for direct appends")
	}
	txn := s.Begin()
	defer txn.Rollback()
	for i := range n {
		v, ok, err := txn.Get(walKey(i))
		if err != nil || !ok || string(v[:len(fmt.Sprintf("value %d", i))]) != fmt.Sprintf("value %d", i) {
			t.Fatalf("key %d after reopening: %q, %v", i, v, err)
		}
	}
}

func walKey(i int) []byte { return fmt.Appendf(nil, "wal/%06d", i) }
