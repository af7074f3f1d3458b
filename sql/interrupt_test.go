package sql

import (
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/kv"
)

// TestInterruptedTransaction: an abandoned statement's transaction gives
// up its metadata lock at once, can never commit what it wrote, and no
// new transaction starts for the statement until EndInterrupt.
func TestInterruptedTransaction(t *testing.T) {
	store, err := kv.Open(kv.Options{Dir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := NewEngine(store, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession(gms.NewBaseSession())
	ctx := gms.NewContext(t.Context(), gms.WithSession(s))

	tx, err := s.StartTransaction(ctx, gms.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	ctx.SetTransaction(tx)
	if err := tx.(*Transaction).txn.Set([]byte("zz-interrupt-test"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if n := e.ActiveTransactions(); n != 1 {
		t.Fatalf("%d leases, want 1", n)
	}
	s.Interrupt()
	if n := e.ActiveTransactions(); n != 0 {
		t.Fatalf("after Interrupt: %d leases, want 0", n)
	}
	wantInterrupted := func(what string, err error) {
		t.Helper()
		if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1317 {
			t.Fatalf("%s: %v, want 1317", what, err)
		}
	}
	// The statement's goroutine goes on and tries to commit, or to begin
	// again.
	wantInterrupted("commit", s.CommitTransaction(ctx, tx))
	_, err = s.StartTransaction(ctx, gms.ReadWrite)
	wantInterrupted("start", err)
	if n := e.ActiveTransactions(); n != 0 {
		t.Fatalf("after the refused start: %d leases, want 0", n)
	}
	s.EndInterrupt()
	check := store.Begin()
	defer check.Rollback()
	if _, found, err := check.Get([]byte("zz-interrupt-test")); err != nil || found {
		t.Fatalf("the interrupted write is visible: %v %v", found, err)
	}
	// The session works again.
	tx, err = s.StartTransaction(ctx, gms.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CommitTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if n := e.ActiveTransactions(); n != 0 {
		t.Fatalf("at the end: %d leases, want 0", n)
	}
}
