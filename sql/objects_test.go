package sql_test

import (
	"context"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestStoredObjects: views, triggers and stored procedures are kept in
// the catalog, run, survive a restart, and go away with DROP; ALTER
// DATABASE keeps them and the database's tables.
func TestStoredObjects(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1), (2, 2)")
	mustExec(t, db, "CREATE VIEW v AS SELECT id, a * 2 AS a2 FROM t WHERE a > 1")
	mustExec(t, db, "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET new.a = new.a * 10")
	mustExec(t, db, "CREATE PROCEDURE p(IN x INT, OUT y INT) BEGIN SET y = x * 2; INSERT INTO t VALUES (x, x); END")
	_, err := db.Exec("CREATE VIEW v AS SELECT 1")
	expectErr(t, err, 1050, "")
	_, err = db.Exec("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET new.a = 0")
	expectErr(t, err, 1359, "Trigger already exists")
	// A prepared INSERT (the fast path's shape) runs the trigger too.
	ins, err := db.Prepare("INSERT INTO t (id, a) VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(9, 9); err != nil {
		t.Fatal(err)
	}
	ins.Close()
	expectRows(t, db, "SELECT a FROM t WHERE id = 9", "90")
	mustExec(t, db, "DELETE FROM t WHERE id = 9")
	mustExec(t, db, "CALL p(3, @y)")
	expectRows(t, db, "SELECT @y", "6")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,1", "2,2", "3,30")
	expectRows(t, db, "SELECT * FROM v ORDER BY id", "2,4", "3,60")

	// A CALL inside a transaction is part of it.
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "CALL p(4, @y)")
	expectRows(t, c, "SELECT a FROM t WHERE id = 4", "40")
	mustExec(t, c, "ROLLBACK")
	expectRows(t, c, "SELECT COUNT(*) FROM t WHERE id = 4", "0")
	c.Close()

	mustExec(t, db, "ALTER DATABASE app COLLATE utf8mb4_bin")
	expectRows(t, db, "SELECT COUNT(*) FROM t", "3")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db = servertest.StartDir(t, dir).DB("app")
	db.SetMaxOpenConns(1)
	expectRows(t, db, "SELECT * FROM v ORDER BY id", "2,4", "3,60")
	mustExec(t, db, "INSERT INTO t VALUES (5, 5)")
	expectRows(t, db, "SELECT a FROM t WHERE id = 5", "50")
	mustExec(t, db, "CALL p(6, @y)")
	expectRows(t, db, "SELECT a FROM t WHERE id = 6", "60")
	expectRows(t, db, "SELECT routine_name FROM information_schema.routines WHERE routine_schema = 'app'", "p")
	expectRows(t, db, "SELECT default_collation_name FROM information_schema.schemata WHERE schema_name = 'app'", "utf8mb4_bin")
	mustExec(t, db, "DROP TRIGGER tr")
	mustExec(t, db, "DROP VIEW v")
	mustExec(t, db, "DROP PROCEDURE p")
	mustExec(t, db, "INSERT INTO t VALUES (7, 7)")
	expectRows(t, db, "SELECT a FROM t WHERE id = 7", "7")
	_, err = db.Exec("SELECT * FROM v")
	expectErr(t, err, 1146, "")
	_, err = db.Exec("CALL p(1, @y)")
	expectErr(t, err, 1305, "")
}
