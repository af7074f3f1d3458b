package server_test

import (
	"context"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestSetTransactionOnce: SET TRANSACTION without GLOBAL or SESSION sets
// the isolation level and access mode of the next transaction only, and
// is refused inside a transaction (1568), as in MySQL; with SESSION it
// lasts, and a read-only session's transactions refuse writes (1792)
// unless started READ WRITE.
func TestSetTransactionOnce(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string) error { _, err := c.ExecContext(ctx, q); return err }
	must := func(q string) {
		t.Helper()
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	iso := func(want string) {
		t.Helper()
		var got string
		if err := c.QueryRowContext(ctx, "SELECT @@transaction_isolation").Scan(&got); err != nil || got != want {
			t.Fatalf("@@transaction_isolation = %q (%v), want %q", got, err, want)
		}
	}
	must("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	must("BEGIN")
	iso("READ-COMMITTED")
	must("COMMIT")
	iso("REPEATABLE-READ")

	// An autocommit statement is the next transaction too.
	must("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
	iso("SERIALIZABLE")
	iso("REPEATABLE-READ")

	must("SET TRANSACTION READ ONLY")
	must("START TRANSACTION")
	expectCode(t, exec("INSERT INTO t VALUES (1)"), 1792)
	must("ROLLBACK")
	must("INSERT INTO t VALUES (1)")

	must("BEGIN")
	expectCode(t, exec("SET TRANSACTION ISOLATION LEVEL READ COMMITTED"), 1568)
	must("COMMIT")

	must("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
	must("BEGIN")
	must("COMMIT")
	iso("READ-COMMITTED")
	iso("READ-COMMITTED")

	// transaction_read_only applies to every transaction of the session
	// that does not declare READ WRITE.
	must("SET SESSION TRANSACTION READ ONLY")
	expectCode(t, exec("INSERT INTO t VALUES (2)"), 1792)
	must("START TRANSACTION READ WRITE")
	must("INSERT INTO t VALUES (2)")
	must("COMMIT")
	must("SET SESSION TRANSACTION READ WRITE")
	must("INSERT INTO t VALUES (3)")
}
