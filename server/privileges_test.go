package server_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestPrivilegeErrors: what an account may not do is refused with MySQL's
// codes: 1142 for a table, 1044 for a database, 1227 for an
// administrative statement.
func TestPrivilegeErrors(t *testing.T) {
	s := servertest.Start(t)
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

// TestAccountsSurviveRestart: accounts and grants are stored in kv with
// the data: after a restart the account logs in with its password and
// keeps its grants, and an account file of an earlier version is moved
// into kv at startup.
func TestAccountsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	root := s.DB("d")
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE USER 'keep'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON d.* TO 'keep'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	root.Close()
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "mysql_users.db")); !os.IsNotExist(err) {
		t.Fatalf("accounts written to a file beside kv: %v", err)
	}
	s = servertest.StartDir(t, dir)
	checkKeep := func(s *servertest.Server) {
		t.Helper()
		keep, err := sql.Open("mysql", "keep:pw@tcp("+s.Addr()+")/d")
		if err != nil {
			t.Fatal(err)
		}
		defer keep.Close()
		if _, err := keep.Exec("SELECT * FROM t"); err != nil {
			t.Fatalf("the account after a restart: %v", err)
		}
		_, err = keep.Exec("INSERT INTO t VALUES (1)")
		expectCode(t, err, 1142)
		bad, _ := sql.Open("mysql", "keep:wrong@tcp("+s.Addr()+")/d")
		defer bad.Close()
		expectCode(t, bad.Ping(), 1045)
	}
	checkKeep(s)

	// A data directory of an earlier version: its accounts file is read
	// once, stored in kv and removed.
	blob, err := s.Engine().Catalog().Accounts()
	if err != nil || len(blob) == 0 {
		t.Fatalf("no accounts in kv: %v", err)
	}
	s.Close()
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "mysql_users.db"), blob, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartDir(t, dir2)
	if _, err := os.Stat(filepath.Join(dir2, "mysql_users.db")); !os.IsNotExist(err) {
		t.Fatalf("legacy accounts file left: %v", err)
	}
	s2.DB("d").Exec("CREATE TABLE t (id INT PRIMARY KEY)")
	checkKeep(s2)
	s2.Close()
	s2 = servertest.StartDir(t, dir2)
	checkKeep(s2)
}
