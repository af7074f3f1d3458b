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
