package server_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAccountStatementsCommit: an account statement commits the open
// transaction first, as in MySQL (ROLLBACK then keeps the rows), also when
// it fails, and SET ROLE does not.
func TestAccountStatementsCommit(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExecDB(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "CREATE ROLE r", "GRANT r TO root@localhost")
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stmts := []string{"CREATE USER a", "RENAME USER a TO b", "GRANT SELECT ON app.* TO b", "REVOKE SELECT ON app.* FROM b",
		"ALTER USER b ACCOUNT LOCK", "ALTER USER b DEFAULT ROLE NONE", "SET PASSWORD FOR b = 'x'", "CREATE ROLE r2",
		"DROP ROLE r2", "DROP USER b", "RENAME USER nobody TO c"}
	for i, q := range stmts {
		mustExec(t, c, "BEGIN", "INSERT INTO t VALUES ("+strconv.Itoa(i)+")")
		_, _ = c.ExecContext(context.Background(), q)
		mustExec(t, c, "ROLLBACK")
		query(t, db, "SELECT count(*) FROM t", strconv.Itoa(i+1))
	}
	mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (100)", "SET ROLE r", "ROLLBACK")
	query(t, db, "SELECT count(*) FROM t", strconv.Itoa(len(stmts)))
}
