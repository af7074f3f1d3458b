package server_test

import (
	"database/sql"
	"testing"

	"github.com/reorgdb/reorgdb/internal/testserver"
)

// TestPrivilegeErrors: what an account may not do is refused with MySQL's
// codes: 1142 for a table, 1044 for a database, 1227 for an
// administrative statement.
func TestPrivilegeErrors(t *testing.T) {
	s := testserver.Start(t)
	root := s.DB("d")
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY)", "CREATE DATABASE other",
		"CREATE USER 'low'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON d.t TO 'low'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	low, err := sql.Open("mysql", "low:pw@tcp("+s.Addr()+")/d")
	if err != nil {
		t.Fatal(err)
	}
	defer low.Close()
	low.SetMaxOpenConns(1)
	if _, err := low.Exec("SELECT * FROM t"); err != nil {
		t.Fatalf("a granted SELECT: %v", err)
	}
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"INSERT INTO t VALUES (1)", 1142, "INSERT command denied to user 'low'@'%' for table 't'"},
		{"UPDATE t SET id = 2", 1142, "UPDATE command denied to user 'low'@'%' for table 't'"},
		{"DELETE FROM d.t", 1142, "DELETE command denied to user 'low'@'%' for table 't'"},
		{"USE other", 1044, "Access denied for user 'low'@'%' to database 'other'"},
		{"CREATE USER 'x'@'%'", 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"},
	} {
		_, err := low.Exec(c.q)
		if !isMySQLError(err, c.code, c.msg) {
			t.Errorf("%s: got %v, want %d %q", c.q, err, c.code, c.msg)
		}
	}
}
