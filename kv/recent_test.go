package kv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestRecentWritesTable drives one stripe's table step by step: it answers
// for bases at or above its horizon, forgets what no live transaction can
// conflict with, and raises its horizon instead of growing without bound.
func TestRecentWritesTable(t *testing.T) {
	var r recentWrites
	low := uint64(0)
	lowWater := func() uint64 { return low }
	r.record(1, 100, lowWater)
	if !r.covers(50, 0) || !r.conflicts(1, 99) || r.conflicts(1, 100) || r.conflicts(2, 0) {
		t.Fatalf("after one commit at 100: %+v", r)
	}
	// Past recentTablePrune entries, those at or below the low water go.
	low = 150
	for h := uint64(10); h < 10+recentTablePrune; h++ {
		r.record(h, 200, lowWater)
	}
	if _, ok := r.ts[1]; ok || len(r.ts) != recentTablePrune {
		t.Fatalf("entry below the low water kept: %d entries, %v", len(r.ts), r.ts[1])
	}
	// A long transaction (low water 0) keeps everything: past
	// recentTableMax the table is cleared and only answers above its
	// newest commit; older bases go to Pebble.
	low = 0
	for h := uint64(1000); len(r.ts) > 0 || r.horizon == 0; h++ {
		r.record(h, 300+h, lowWater)
		if len(r.ts) > recentTableMax {
			t.Fatalf("table grew to %d entries", len(r.ts))
		}
	}
	if r.covers(r.horizon-1, 0) || !r.covers(r.horizon, 0) || r.covers(r.horizon, r.horizon+1) {
		t.Fatalf("horizon %d: covers is wrong", r.horizon)
	}
}

// TestConflictWithoutTable: a writer whose base is below what the tables
// answer for is still checked, against Pebble: a snapshot from before a
// reopen, and a transaction older than an ingestion.
func TestConflictWithoutTable(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, func(o *Options) { o.Dir = dir })
	put := func(s *Store, k string) {
		t.Helper()
		txn := s.Begin()
		must(t, txn.Set([]byte(k), []byte("v")))
		if _, err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// A transaction that began before an ingestion of its key at S > its
	// start conflicts with the ingested version.
	old := s.Begin()
	S, err := s.ReserveTS()
	must(t, err)
	in, err := s.NewIngester(S, filepath.Join(t.TempDir(), "ingest"), IngestOptions{Filters: true, Compress: true})
	must(t, err)
	must(t, in.Add([]byte("ingested"), []byte("x")))
	must(t, in.Ingest(context.Background()))
	must(t, old.Set([]byte("ingested"), []byte("y")))
	if _, err := old.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("write over a newer ingested version: %v, want a write conflict", err)
	}
	// After a reopen the tables are empty: a snapshot taken before it
	// must still see the commit it missed as a conflict.
	before := s.ReadTS()
	put(s, "k")
	must(t, s.Close())
	s2 := openTest(t, func(o *Options) { o.Dir = dir })
	release := s2.HoldSafePoint(before, "test")
	defer release()
	snap, err := s2.BeginAt(before)
	must(t, err)
	must(t, snap.Set([]byte("k"), []byte("w")))
	if _, err := snap.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("write over a commit from before the reopen: %v, want a write conflict", err)
	}
	// And the tables themselves catch a conflict between two live writers.
	a, b := s2.Begin(), s2.Begin()
	for i, txn := range []*Txn{a, b} {
		must(t, txn.Set([]byte("shared"), []byte(fmt.Sprint(i))))
	}
	if _, err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("second writer of a key: %v, want a write conflict", err)
	}
}

// TestRunTxnRetriesConflicts: RunTxn starts over on a write conflict with
// a fresh snapshot, and stops on fn's error or when its context ends.
func TestRunTxnRetriesConflicts(t *testing.T) {
	s := openTest(t, nil)
	calls := 0
	_, err := s.RunTxn(context.Background(), func(txn *Txn) error {
		calls++
		v, _, err := txn.Get([]byte("n"))
		if err != nil {
			return err
		}
		if calls == 1 { // another writer commits after this snapshot
			other := s.Begin()
			must(t, other.Set([]byte("n"), []byte("x")))
			if _, err := other.Commit(); err != nil {
				return err
			}
		}
		return txn.Set([]byte("n"), append(v, 'y'))
	})
	if err != nil || calls != 2 {
		t.Fatalf("RunTxn: err %v after %d calls, want success on the second", err, calls)
	}
	check := s.Begin()
	defer check.Rollback()
	if v, _, _ := check.Get([]byte("n")); string(v) != "xy" {
		t.Fatalf("n = %q, want xy: the retry did not read the other writer's commit", v)
	}
	boom := errors.New("boom")
	if _, err := s.RunTxn(context.Background(), func(*Txn) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = s.RunTxn(ctx, func(txn *Txn) error {
		cancel()
		other := s.Begin()
		must(t, other.Set([]byte("m"), []byte("1")))
		if _, err := other.Commit(); err != nil {
			return err
		}
		_, _, err := txn.Get([]byte("zzz"))
		must(t, err)
		return txn.Set([]byte("m"), []byte("2"))
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("cancelled retry: got %v", err)
	}
}
