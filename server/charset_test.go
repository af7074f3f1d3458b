package server_test

import (
	"database/sql"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestHandshakeCollation: the collation a client sends in its handshake
// (go-sql-driver's collation parameter) becomes the session's
// collation_connection, character_set_client and
// character_set_connection, as in MySQL. Results stay utf8mb4, so a
// latin1 client still reads text latin1 cannot hold.
func TestHandshakeCollation(t *testing.T) {
	s := servertest.Start(t)
	if _, err := s.DB("d").Exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB("d").Exec("INSERT INTO t VALUES (1, '日本é')"); err != nil {
		t.Fatal(err)
	}
	for coll, cs := range map[string]string{
		"latin1_general_ci":  "latin1",
		"binary":             "binary",
		"utf8mb4_unicode_ci": "utf8mb4",
		"utf8mb4_general_ci": "utf8mb4",
	} {
		db, err := sql.Open("mysql", s.DSN("d")+"&collation="+coll)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var gotColl, client, conn, results, c string
		err = db.QueryRow("SELECT @@collation_connection, @@character_set_client, @@character_set_connection, @@character_set_results").Scan(&gotColl, &client, &conn, &results)
		if err != nil {
			t.Fatal(err)
		}
		if gotColl != coll || client != cs || conn != cs || results != "utf8mb4" {
			t.Errorf("collation %s: collation_connection %s, character sets %s/%s/%s; want %s, %s/%s/utf8mb4", coll, gotColl, client, conn, results, coll, cs, cs)
		}
		if err := db.QueryRow("SELECT c FROM t WHERE id = 1").Scan(&c); err != nil || c != "日本é" {
			t.Errorf("collation %s: read %q, %v", coll, c, err)
		}
	}
}

// TestLatin1ClientText: statements from a latin1 client, by its handshake
// or by SET NAMES, carry their string literals in latin1, as MySQL reads
// them: they are stored as the same characters in the utf8mb4 column,
// found by equality, and the first statement of a connection is read in
// the handshake's character set. SET NAMES utf8mb4 switches back.
func TestLatin1ClientText(t *testing.T) {
	s := servertest.Start(t)
	mustExecDB(t, s.DB("d"), "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))")
	hexOf := func(db *sql.DB, id int) string {
		t.Helper()
		var h string
		if err := db.QueryRow("SELECT HEX(c) FROM t WHERE id = ?", id).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	// é is 0xE9 in latin1, C3 A9 in UTF-8.
	db, err := sql.Open("mysql", s.DSN("d")+"&collation=latin1_swedish_ci")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	mustExecDB(t, db, "INSERT INTO t VALUES (1, 'caf\xe9')") // the connection's first statement
	if h := hexOf(s.DB("d"), 1); h != "636166C3A9" {
		t.Fatalf("latin1 handshake: stored %s, want 636166C3A9", h)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE c = 'caf\xe9'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("latin1 equality: %d, %v", n, err)
	}
	// A raw client says latin1 in its handshake only, and nothing runs
	// before its first statement.
	rc := dialRawCollation(t, s.Addr(), "", 0, 8) // latin1_swedish_ci
	rc.mustQuery("INSERT INTO d.t VALUES (4, 'caf\xe9')")
	if h := hexOf(s.DB("d"), 4); h != "636166C3A9" {
		t.Fatalf("latin1 handshake, first statement: stored %s, want 636166C3A9", h)
	}
	utf := s.DB("d")
	utf.SetMaxOpenConns(1)
	mustExecDB(t, utf, "SET NAMES latin1")
	mustExecDB(t, utf, "INSERT INTO t VALUES (2, '\xe0 la')")
	mustExecDB(t, utf, "SET NAMES utf8mb4")
	mustExecDB(t, utf, "INSERT INTO t VALUES (3, 'à la')")
	if h2, h3 := hexOf(utf, 2), hexOf(utf, 3); h2 != "C3A0206C61" || h3 != h2 {
		t.Fatalf("SET NAMES latin1 then utf8mb4: stored %s and %s, want C3A0206C61 twice", h2, h3)
	}
}
