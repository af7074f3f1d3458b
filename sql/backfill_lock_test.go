package sql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestBuildWaitsForLockedRow: a user transaction that holds a row lock
// while the build reaches that row (the transactional backfill, or the
// ingest build's change log merge) commits without error; the build
// waits for it and the table checks clean. Without the build taking the
// row's lock, its write of the row's entries fails the user's commit with
// 1213.
func TestBuildWaitsForLockedRow(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		t.Run(mode, func(t *testing.T) { buildWaitsForLockedRow(t, mode) })
	}
}

func buildWaitsForLockedRow(t *testing.T, mode string) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	loadRows(t, db, 30000)
	setMode(t, db, mode)
	hold := "backfill" // before the first batch
	if mode == "ingest" {
		smallIngestBudgets(t, db)
		hold = "ingested"
	}
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+hold+"'")
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a)"); done <- err }()
	waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+hold) }, "stalled at "+hold)
	if mode == "ingest" {
		// A change during the build puts row 5 in the change log; the
		// user's transaction then holds it when the merge comes to it.
		mustExec(t, db, "UPDATE t SET a = a + 1 WHERE id = 5")
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'merge'")
		waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=merge") }, "stalled at merge")
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "UPDATE t SET a = a + 1000 WHERE id = 5")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	time.Sleep(300 * time.Millisecond) // the build comes to row 5 and waits
	select {
	case err := <-done:
		t.Fatalf("the build finished while a transaction held a row it must index: %v", err)
	default:
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatalf("COMMIT of the transaction holding the row: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("ADD INDEX: %v", err)
	}
	want := "1005"
	if mode == "ingest" {
		want = "1006"
	}
	expectRows(t, db, "SELECT a FROM t WHERE id = 5", want)
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (a_idx) WHERE a = "+want, "5")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}
