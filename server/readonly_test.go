package server_test

import (
	"database/sql"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestReadOnly: with read_only on, an account without SUPER cannot write
// (data, schema, accounts; plain and prepared statements) and gets 1290,
// while it still reads and sets variables and root still writes; with
// super_read_only on nobody writes. The two variables move together as
// in MySQL.
func TestReadOnly(t *testing.T) {
	s := servertest.Start(t)
	root := s.DB("d")
	resetGlobals(t, s, "super_read_only = OFF", "read_only = OFF")
	for _, q := range []string{
		"CREATE TABLE t (id int primary key, v int)",
		"INSERT INTO t VALUES (1, 1)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
		"GRANT ALL ON d.* TO 'app'@'%'",
		"SET GLOBAL read_only = ON",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	app, _ := sql.Open("mysql", "app:pw@tcp("+s.Addr()+")/d")
	defer app.Close()
	app.SetMaxOpenConns(1)
	const roMsg = "The MySQL server is running with the --read-only option so it cannot execute this statement"
	const superMsg = "The MySQL server is running with the --super-read-only option so it cannot execute this statement"
	writes := []string{
		"INSERT INTO t VALUES (2, 2)",
		"INSERT INTO t SELECT id + 10, v FROM t",
		"UPDATE t SET v = 5 WHERE id = 1",
		"UPDATE t SET v = v + 1",
		"DELETE FROM t WHERE id = 1",
		"REPLACE INTO t VALUES (1, 9)",
		"CREATE TABLE u (id int primary key)",
		"ALTER TABLE t ADD INDEX v_idx (v)",
		"TRUNCATE TABLE t",
		"DROP TABLE t",
		"CREATE DATABASE e",
	}
	for _, q := range writes {
		if _, err := app.Exec(q); !isMySQLError(err, 1290, roMsg) {
			t.Errorf("app, read_only: %s: %v, want 1290", q, err)
		}
	}
	if _, err := app.Exec("PREPARE s FROM 'DELETE FROM t'"); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Exec("EXECUTE s"); !isMySQLError(err, 1290, roMsg) {
		t.Errorf("app, read_only: EXECUTE of a prepared DELETE: %v, want 1290", err)
	}
	if _, err := app.Exec("UPDATE t SET v = ? WHERE id = ?", 7, 1); !isMySQLError(err, 1290, roMsg) {
		t.Errorf("app, read_only: prepared UPDATE: %v, want 1290", err)
	}
	for _, q := range []string{"SELECT * FROM t", "SET @x = 1", "SET SESSION sql_mode = ''", "BEGIN", "SELECT v FROM t WHERE id = 1", "COMMIT", "SHOW TABLES",
		"EXPLAIN INSERT INTO t VALUES (2, 2)", "PREPARE s FROM 'INSERT INTO t VALUES (2, 2)'", "DEALLOCATE PREPARE s", "SELECT 1 INTO @y"} {
		if _, err := app.Exec(q); err != nil {
			t.Errorf("app, read_only: %s: %v", q, err)
		}
	}
	var v int
	if err := app.QueryRow("SELECT v FROM t WHERE id = ?", 1).Scan(&v); err != nil || v != 1 {
		t.Errorf("app reads v = %d, %v; want 1", v, err)
	}
	// root has SUPER.
	if _, err := root.Exec("INSERT INTO t VALUES (3, 3)"); err != nil {
		t.Fatalf("root, read_only: %v", err)
	}

	if _, err := root.Exec("SET GLOBAL super_read_only = ON"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO t VALUES (4, 4)", "CREATE TABLE u (id int primary key)", "CREATE USER 'x'@'%'"} {
		if _, err := root.Exec(q); !isMySQLError(err, 1290, superMsg) {
			t.Errorf("root, super_read_only: %s: %v, want 1290", q, err)
		}
	}
	for _, q := range []string{"INSERT INTO t VALUES (4, 4)", "CREATE TABLE u (id int primary key)"} {
		if _, err := app.Exec(q); !isMySQLError(err, 1290, superMsg) {
			t.Errorf("app, super_read_only: %s: %v, want 1290", q, err)
		}
	}
	var ro, sro int
	if err := root.QueryRow("SELECT @@global.read_only, @@global.super_read_only").Scan(&ro, &sro); err != nil || ro != 1 || sro != 1 {
		t.Errorf("read_only %d, super_read_only %d, %v; want 1, 1", ro, sro, err)
	}
	// read_only = OFF ends both.
	if _, err := root.Exec("SET GLOBAL read_only = OFF"); err != nil {
		t.Fatal(err)
	}
	if err := root.QueryRow("SELECT @@global.read_only, @@global.super_read_only").Scan(&ro, &sro); err != nil || ro != 0 || sro != 0 {
		t.Errorf("after read_only = OFF: read_only %d, super_read_only %d, %v; want 0, 0", ro, sro, err)
	}
	if _, err := app.Exec("INSERT INTO t VALUES (5, 5)"); err != nil {
		t.Errorf("app after read_only = OFF: %v", err)
	}
	if _, err := app.Exec("UPDATE t SET v = ? WHERE id = 5", 6); err != nil {
		t.Errorf("app after read_only = OFF: prepared UPDATE: %v", err)
	}
	var n int
	if err := root.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Errorf("%d rows, %v; want 3 (1, 3, 5)", n, err)
	}
}
