package server_test

import (
	"database/sql"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestHandshakeCollation: the collation a client sends in its handshake
// (go-sql-driver's collation parameter) becomes the session's
// collation_connection and character sets, as in MySQL.
func TestHandshakeCollation(t *testing.T) {
	s := servertest.Start(t)
	for coll, cs := range map[string]string{
		"latin1_general_ci":  "latin1",
		"binary":             "binary",
		"utf8mb4_unicode_ci": "utf8mb4",
		"utf8mb4_general_ci": "utf8mb4",
	} {
		db, err := sql.Open("mysql", s.DSN("")+"&collation="+coll)
		if err != nil {
			t.Fatal(err)
		}
		var gotColl, client, conn, results string
		err = db.QueryRow("SELECT @@collation_connection, @@character_set_client, @@character_set_connection, @@character_set_results").Scan(&gotColl, &client, &conn, &results)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if gotColl != coll || client != cs || conn != cs || results != cs {
			t.Errorf("collation %s: collation_connection %s, character sets %s/%s/%s; want %s and %s", coll, gotColl, client, conn, results, coll, cs)
		}
	}
}
