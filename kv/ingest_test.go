package kv

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestIngestBackdatedVersions: versions ingested at a reserved timestamp S
// are visible at and after S, and any transaction that committed a key
// after S (a put or a delete) keeps its newer version visible.
func TestIngestBackdatedVersions(t *testing.T) {
	for _, opts := range []IngestOptions{{MaxSize: 1 << 10}, {MaxSize: 1 << 10, Filters: true, Compress: true}} {
		t.Run(fmt.Sprintf("filters=%v,compress=%v", opts.Filters, opts.Compress), func(t *testing.T) {
			testIngestBackdatedVersions(t, opts)
		})
	}
}

func testIngestBackdatedVersions(t *testing.T, opts IngestOptions) {
	s := openTest(t, nil)
	commit := func(fn func(*Txn)) {
		t.Helper()
		txn := s.Begin()
		fn(txn)
		if _, err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	commit(func(txn *Txn) { txn.Set([]byte("b"), []byte("old-b")) })
	S, err := s.ReserveTS()
	if err != nil {
		t.Fatal(err)
	}
	release := s.HoldSafePoint(S, "test")
	defer release()
	snap, err := s.BeginAt(S)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Begin() // a reader that started before the ingestion
	// Writes after S: they must win over the ingested versions.
	commit(func(txn *Txn) {
		txn.Set([]byte("c"), []byte("txn-c"))
		txn.Delete([]byte("d"))
	})
	in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "ingest"), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c", "d"} {
		if err := in.Add([]byte(k), []byte(fmt.Sprintf("ingested-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Add([]byte("a"), nil); err == nil {
		t.Fatal("out-of-order key accepted")
	}
	if err := in.Ingest(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := s.Begin()
	want := map[string]string{"a": "ingested-0", "b": "ingested-1", "c": "txn-c", "d": ""}
	for k, v := range want {
		got, found, err := after.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if v == "" && found || v != "" && string(got) != v {
			t.Errorf("after ingest, %s = %q (found %v), want %q", k, got, found, v)
		}
	}
	// The snapshot at S sees the ingested versions too (they are at S).
	if got, _, _ := snap.Get([]byte("b")); string(got) != "ingested-1" {
		t.Errorf("snapshot at S reads b = %q", got)
	}
	_ = before
	snap.Rollback()
	before.Rollback()
	after.Rollback()
	// A snapshot below the safe point is refused.
	release()
	s.RunGC()
	if _, err := s.BeginAt(1); err == nil {
		t.Error("BeginAt below the safe point accepted")
	}
}

// TestClearRange: every version of every key in [lo, hi) is gone, at any
// timestamp; keys just outside, and keys that extend the bounds with 0x00
// bytes, keep all their versions.
func TestClearRange(t *testing.T) {
	s := openTest(t, nil)
	keys := [][]byte{
		[]byte("a"), []byte("b"), []byte("b\x00"), []byte("b\x00\x00x"), []byte("bz"), []byte("c"), []byte("c\x00"), []byte("d"),
	}
	for round := 0; round < 3; round++ {
		txn := s.Begin()
		for _, k := range keys {
			if err := txn.Set(k, []byte(fmt.Sprintf("v%d", round))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	old := s.Begin() // a snapshot from before the clear
	defer old.Rollback()
	if err := s.ClearRange([]byte("b"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	cur := s.Begin()
	defer cur.Rollback()
	for _, txn := range []*Txn{cur, old} {
		for _, k := range keys {
			_, found, err := txn.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Compare(k, []byte("b")) < 0 || bytes.Compare(k, []byte("c")) >= 0
			if found != want {
				t.Errorf("key %q found=%v after ClearRange [b, c), want %v", k, found, want)
			}
		}
	}
	if err := s.ClearRange(nil, []byte("c")); err == nil {
		t.Fatal("ClearRange with an empty lower bound (which would reach the metadata) succeeded")
	}
}

// Ingested files go to the bottom level even where a file of the bottom
// level spans their key range without holding a key in it (the table's
// other keys on both sides of a new index's): Pebble splits that file
// rather than leave the new one higher up for compactions to rewrite.
func TestIngestIntoSpannedGap(t *testing.T) {
	s := openTest(t, nil)
	txn := s.Begin()
	for i := range 200 {
		must(t, txn.Set(fmt.Appendf(nil, "a/%04d", i), []byte("row")))
		must(t, txn.Set(fmt.Appendf(nil, "z/%04d", i), []byte("row")))
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	must(t, s.db.Compact(context.Background(), []byte("a"), []byte("zz"), true))
	bottom := len(s.db.Metrics().Levels) - 1
	if n := s.db.Metrics().Levels[bottom].TablesCount; n != 1 {
		t.Fatalf("%d files in the bottom level before the ingestion, want the one spanning a/ to z/", n)
	}
	S, err := s.ReserveTS()
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "ingest"), IngestOptions{MaxSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		must(t, in.Add(fmt.Appendf(nil, "m/%04d", i), []byte("entry")))
	}
	must(t, in.Ingest(context.Background()))
	m := s.db.Metrics()
	for l := range bottom {
		if m.Levels[l].TablesIngested != 0 {
			t.Fatalf("ingested into level %d, not the bottom level %d", l, bottom)
		}
	}
	if m.Levels[bottom].TablesIngested == 0 {
		t.Fatal("nothing ingested into the bottom level")
	}
}

// TestIngestFileOptions: the ingested files carry bloom filters and
// compressed blocks only when asked to.
func TestIngestFileOptions(t *testing.T) {
	for _, opts := range []IngestOptions{{}, {Filters: true}, {Compress: true}} {
		s := openTest(t, nil)
		S, err := s.ReserveTS()
		must(t, err)
		in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "ingest"), opts)
		must(t, err)
		for i := range 2000 {
			must(t, in.Add(fmt.Appendf(nil, "k/%06d", i), bytes.Repeat([]byte("v"), 100)))
		}
		must(t, in.Ingest(context.Background()))
		levels, err := s.db.SSTables(pebble.WithProperties())
		must(t, err)
		var files int
		for _, level := range levels {
			for _, f := range level {
				files++
				p := f.Properties
				if hasFilter := p.FilterPolicyName != ""; hasFilter != opts.Filters {
					t.Errorf("%+v: file has filter policy %q", opts, p.FilterPolicyName)
				}
				if compressed := p.CompressionName != "NoCompression"; compressed != opts.Compress {
					t.Errorf("%+v: file has compression %q", opts, p.CompressionName)
				}
			}
		}
		if files == 0 {
			t.Fatalf("%+v: no file ingested", opts)
		}
	}
}
