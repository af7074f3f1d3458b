package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestReadOnlyTransactionDDL: with SET SESSION TRANSACTION READ ONLY,
// DDL fails with MySQL's 1792 as row writes do (go-sql-driver's
// rejectReadOnly relies on that error), while reads and a transaction
// started READ WRITE still work; SET SESSION TRANSACTION READ WRITE lifts
// it.
func TestReadOnlyTransactionDDL(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	c, err := s.DB("d").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want1792 := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "Error 1792 (25006): Cannot execute statement in a READ ONLY transaction.") {
			t.Errorf("%s: %v, want 1792", q, err)
		}
	}
	mustExec("CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec("SET SESSION TRANSACTION READ ONLY")
	for _, q := range []string{"DROP TABLE t", "CREATE TABLE u (id INT)", "ALTER TABLE t ADD COLUMN c INT",
		"CREATE INDEX i ON t (id)", "INSERT INTO t VALUES (1)", "CREATE DATABASE d2", "TRUNCATE t"} {
		want1792(q)
	}
	mustExec("SELECT * FROM t")
	mustExec("START TRANSACTION READ WRITE")
	mustExec("INSERT INTO t VALUES (1)")
	mustExec("COMMIT")
	mustExec("SET SESSION TRANSACTION READ WRITE")
	mustExec("DROP TABLE t")
}
