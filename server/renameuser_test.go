package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func expectError(t *testing.T, err error, code uint16, msg string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || me.Message != msg {
		t.Fatalf("got %v, want %d %q", err, code, msg)
	}
}

// TestRenameUser: RENAME USER moves an account with its password, its
// global, database and table privileges, its roles and the grants of a
// role, and its TLS requirement; the old name no longer logs in; a list
// applies in order; and the accounts are as renamed after a restart.
func TestRenameUser(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	rootExec(t, s,
		"CREATE DATABASE shop", "CREATE TABLE shop.item (id INT PRIMARY KEY)", "INSERT INTO shop.item VALUES (1)",
		"CREATE USER 'a'@'%' IDENTIFIED BY 'pw'",
		"GRANT PROCESS ON *.* TO a", "GRANT SELECT ON shop.* TO a", "GRANT UPDATE ON shop.item TO a",
		"CREATE ROLE deleter", "GRANT DELETE ON shop.* TO deleter", "GRANT deleter TO a",
		"CREATE USER sec IDENTIFIED BY 'pw' REQUIRE SSL")
	root := s.DB("")
	want := strings.ReplaceAll(strings.Join(queryStrings(t, root, "SHOW GRANTS FOR a"), "\n"), "`a`@`%`", "`b`@`localhost`")

	rootExec(t, s, "RENAME USER a TO 'b'@'localhost', deleter TO remover, sec TO sec2")
	got := strings.Join(queryStrings(t, root, "SHOW GRANTS FOR 'b'@'localhost'"), "\n")
	if want = strings.ReplaceAll(want, "`deleter`", "`remover`"); got != want {
		t.Fatalf("SHOW GRANTS after RENAME USER:\n%s\nwant\n%s", got, want)
	}
	query(t, root, "SHOW GRANTS FOR remover", "GRANT USAGE ON *.* TO `remover`@`%`")
	query(t, root, "SELECT count(*) FROM mysql.user WHERE user IN ('a', 'deleter', 'sec')", "0")
	checkRenamed(t, s)

	// a TO b, b TO c: each pair sees the accounts the earlier ones leave.
	rootExec(t, s, "RENAME USER 'b'@'localhost' TO c, c TO 'd'@'localhost'")
	query(t, root, "SELECT group_concat(user) FROM mysql.user WHERE user IN ('b', 'c', 'd')", "d")
	rootExec(t, s, "RENAME USER 'd'@'localhost' TO 'b'@'localhost'")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = servertest.StartDir(t, dir)
	checkRenamed(t, s)
	got = strings.Join(queryStrings(t, s.DB(""), "SHOW GRANTS FOR 'b'@'localhost'"), "\n")
	if got != want {
		t.Fatalf("SHOW GRANTS after a restart:\n%s\nwant\n%s", got, want)
	}
}

// checkRenamed checks the accounts TestRenameUser renamed: the new names
// log in with the old passwords and privileges, the old ones do not.
func checkRenamed(t *testing.T, s *servertest.Server) {
	t.Helper()
	expectCode(t, loginErr(t, s, "a", "pw", ""), 1045)
	if err := loginErr(t, s, "b", "pw", ""); err != nil {
		t.Fatalf("login with the renamed account: %v", err)
	}
	b := openDSN(t, "b:pw@tcp("+s.Addr()+")/shop")
	query(t, b, "SELECT count(*) FROM item", "1")
	execT(t, b, "UPDATE item SET id = 2")
	execT(t, b, "DELETE FROM item WHERE id = 3") // through the renamed role
	_, err := b.Exec("INSERT INTO item VALUES (4)")
	expectCode(t, err, 1142)
	expectDenied(t, loginErr(t, s, "sec2", "pw", ""), "sec2")
	if err := loginErr(t, s, "sec2", "pw", "skip-verify"); err != nil {
		t.Fatalf("renamed REQUIRE SSL account over TLS: %v", err)
	}
}

// TestRenameUserErrors: a missing source or an existing target fails the
// whole list with MySQL's 1396, naming each failing source, and changes
// nothing; an account without CREATE USER gets 1227; a prepared RENAME
// USER works.
func TestRenameUserErrors(t *testing.T) {
	s := servertest.Start(t)
	rootExec(t, s, "CREATE USER a IDENTIFIED BY 'pw'", "CREATE USER b", "CREATE USER 'low'@'%' IDENTIFIED BY 'pw'")
	root := s.DB("")
	_, err := root.Exec("RENAME USER nobody TO x")
	expectError(t, err, 1396, "Operation RENAME USER failed for 'nobody'@'%'")
	_, err = root.Exec("RENAME USER a TO c, b TO 'root'@'localhost', nobody TO y")
	expectError(t, err, 1396, "Operation RENAME USER failed for 'b'@'%','nobody'@'%'")
	_, err = root.Exec("RENAME USER a TO b")
	expectError(t, err, 1396, "Operation RENAME USER failed for 'a'@'%'")
	query(t, root, "SELECT group_concat(user ORDER BY user) FROM mysql.user WHERE user IN ('a', 'b', 'c')", "a,b")

	low := openDSN(t, "low:pw@tcp("+s.Addr()+")/")
	_, err = low.Exec("RENAME USER a TO c")
	expectError(t, err, 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
	_, err = low.Prepare("RENAME USER a TO c")
	expectError(t, err, 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
	rootExec(t, s, "GRANT UPDATE ON mysql.* TO low")
	execT(t, low, "RENAME USER a TO c")

	stmt, err := root.Prepare("RENAME USER c TO a")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	if _, err := stmt.Exec(); err != nil {
		t.Fatalf("prepared RENAME USER: %v", err)
	}
	if err := loginErr(t, s, "a", "pw", ""); err != nil {
		t.Fatalf("login after a prepared RENAME USER: %v", err)
	}
}
