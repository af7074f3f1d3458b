package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestDo: DO evaluates its expressions and answers with an OK packet, in
// a text query, as the first and a later statement of a multi-statement,
// and prepared; an error in an expression is reported.
func TestDo(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	for _, q := range []string{"DO 1", "do (1 + 2), SLEEP(0)", " DO\t(1)"} {
		res, err := db.Exec(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("%s: %d rows affected, want 0", q, n)
		}
	}
	// The expressions are evaluated: a subquery of two rows is an error.
	if _, err := db.Exec("DO (SELECT 1 UNION SELECT 2)"); err == nil || !strings.Contains(err.Error(), "1242") {
		t.Errorf("DO with a subquery of two rows: %v, want 1242", err)
	}
	rows, err := db.Query("DO 1")
	if err != nil {
		t.Fatal(err)
	}
	if cols, _ := rows.Columns(); len(cols) != 0 || rows.Next() {
		t.Errorf("DO 1 as a query: columns %v, want none and no rows", cols)
	}
	rows.Close()
	if _, err := db.Exec("DO 1 +"); err == nil || !strings.Contains(err.Error(), "1064") {
		t.Errorf("DO with a syntax error: %v, want 1064", err)
	}

	stmt, err := db.Prepare("DO ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i := 0; i < 2; i++ {
		if _, err := stmt.Exec(i); err != nil {
			t.Fatalf("prepared DO: %v", err)
		}
	}

	multi, err := sql.Open("mysql", s.DSN("d")+"&multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	rows, err = multi.Query("DO 1; SELECT 2; DO 3; SELECT 4")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for {
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil || len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Fatalf("multi-statement with DO: rows %v, err %v; want [2 4]", got, err)
	}
}
