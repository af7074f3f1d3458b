package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

const (
	tableID = 5
	indexID = 1
	logID   = 2
)

// entries indexes a row by its value (a non-unique index).
func entries(h int64, row []byte) ([]codec.Entry, error) {
	k, err := codec.IndexKey(nil, tableID, indexID, []any{string(row)}, &h)
	return []codec.Entry{{IndexID: indexID, Key: k}}, err
}

func set(t *testing.T, txn *kv.Txn, key []byte, v string) {
	t.Helper()
	if err := txn.Set(key, []byte(v)); err != nil {
		t.Fatal(err)
	}
}

// TestLogMergesEveryRowAroundLockedOnes: rows changed after S, more than
// a batch of them, one of which a user transaction holds while the merge
// runs. The merge ends with the index exactly what the rows call for.
func TestLogMergesEveryRowAroundLockedOnes(t *testing.T) {
	s, err := kv.Open(kv.Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 2*BatchRows + 10
	// At S: every row is "old", and the ingest wrote its entry.
	txn := s.Begin()
	for h := int64(1); h <= n; h++ {
		set(t, txn, codec.RecordKey(tableID, h), "old")
	}
	snap, err := txn.Commit()
	if err != nil {
		t.Fatal(err)
	}
	txn = s.Begin()
	for h := int64(1); h <= n; h++ {
		ents, _ := entries(h, []byte("old"))
		set(t, txn, ents[0].Key, "")
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	// After S: every row changes and is logged; the index is left alone.
	txn = s.Begin()
	for h := int64(1); h <= n; h++ {
		set(t, txn, codec.RecordKey(tableID, h), fmt.Sprint("new", h))
		lk, _ := codec.IndexKey(nil, tableID, logID, nil, &h)
		set(t, txn, lk, "")
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	// A user transaction holds row 300 (in the second batch, not its
	// first row) for a while, then changes it again, maintaining the
	// index itself as DML in the merging state does.
	user := s.Begin()
	busy := int64(300)
	if _, err := user.Lock(context.Background(), codec.RecordKey(tableID, busy), time.Second); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		old, _ := entries(busy, []byte(fmt.Sprint("new", busy)))
		cur, _ := entries(busy, []byte("user"))
		err := errors.Join(user.Set(codec.RecordKey(tableID, busy), []byte("user")), user.Delete(old[0].Key), user.Set(cur[0].Key, nil))
		if _, cerr := user.Commit(); err != nil || cerr != nil {
			t.Error(err, cerr)
		}
	}()
	batches, err := Log(context.Background(), Spec{Store: s, Snapshot: snap, TableID: tableID, LogID: logID, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	if batches < 3 {
		t.Errorf("%d batches for %d rows", batches, n)
	}
	// The index has exactly each row's current entry.
	check := s.Begin()
	defer check.Rollback()
	want := map[string]bool{}
	for h := int64(1); h <= n; h++ {
		v, _, _ := check.Get(codec.RecordKey(tableID, h))
		ents, _ := entries(h, v)
		want[string(ents[0].Key)] = true
	}
	p := codec.IndexPrefix(tableID, indexID)
	it := check.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	got := 0
	for ; it.Valid(); it.Next() {
		got++
		if !want[string(it.Key())] {
			t.Errorf("stale entry %q", it.Key())
		}
	}
	if got != n {
		t.Errorf("%d entries for %d rows", got, n)
	}
}
