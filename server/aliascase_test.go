package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAliasCase: a table alias keeps its spelling in the result's column
// metadata, which go-sql-driver's columnsWithAlias shows, in text and
// prepared statements; a table's own name is unchanged.
func TestAliasCase(t *testing.T) {
	s := servertest.Start(t)
	if _, err := s.DB("d").Exec("CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for _, interp := range []string{"true", "false"} {
		dsn := strings.Replace(s.DSN("d"), "interpolateParams=false", "interpolateParams="+interp, 1) + "&columnsWithAlias=true"
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for q, want := range map[string]string{
			"SELECT * FROM (SELECT 1 AS one) AS A WHERE ? = 1": "A.one",
			"SELECT Tx.id FROM t AS Tx WHERE ? = 1":            "Tx.id",
			"SELECT id FROM t WHERE ? = 1":                     "t.id",
		} {
			rows, err := db.Query(q, 1)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			cols, _ := rows.Columns()
			rows.Close()
			if len(cols) != 1 || cols[0] != want {
				t.Errorf("%s (interpolateParams=%s): columns %q, want %q", q, interp, cols, want)
			}
		}
	}
}
