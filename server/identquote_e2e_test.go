package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestNonASCIIIdentifiers: unquoted identifiers with characters beyond
// ASCII, as MySQL accepts them, in text and prepared statements.
func TestNonASCIIIdentifiers(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE café (ö INT PRIMARY KEY, naïve VARCHAR(10))",
		"INSERT INTO café (ö, naïve) VALUES (1, 'ünïcode'), (2, 'b')",
		"UPDATE café SET naïve = 'x' WHERE ö = 2",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := db.Query("SELECT ö, naïve FROM café /* ö */ WHERE naïve <> 'ö' ORDER BY ö")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	var got []string
	for rows.Next() {
		var a int
		var b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", a, b))
	}
	rows.Close()
	if strings.Join(cols, ",") != "ö,naïve" || strings.Join(got, ";") != "1 ünïcode;2 x" {
		t.Errorf("columns %q, rows %q", cols, got)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM café WHERE ö > ?", 0).Scan(&n); err != nil || n != 2 {
		t.Errorf("prepared: %v %d", err, n)
	}
}
