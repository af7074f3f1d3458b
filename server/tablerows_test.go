package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestTableRowsEstimate: information_schema.tables gives a small table's
// exact row count and a large one's estimate (after a flush, when Pebble
// knows the sizes) within 30%, with data and index lengths.
func TestTableRowsEstimate(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	for _, q := range []string{
		"CREATE TABLE small (id int primary key, v int)",
		"CREATE TABLE big (id int primary key, v varchar(40), key v_idx (v))",
		"CREATE TABLE nothing (id int primary key)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(table string, from, n int, row func(i int) string) {
		for i := from; i < from+n; i += 1000 {
			var vals []string
			for j := i; j < min(i+1000, from+n); j++ {
				vals = append(vals, row(j))
			}
			if _, err := db.Exec("INSERT INTO " + table + " VALUES " + strings.Join(vals, ",")); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert("small", 0, 300, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i) })
	insert("big", 0, 20000, func(i int) string { return fmt.Sprintf("(%d, 'value-%030d')", i, i) })
	if _, err := db.Exec("DELETE FROM small WHERE id < 100"); err != nil {
		t.Fatal(err)
	}
	if err := s.Engine().Store().DB().Flush(); err != nil {
		t.Fatal(err)
	}
	got := map[string][4]uint64{}
	rows, err := db.Query("SELECT table_name, table_rows, avg_row_length, data_length, index_length FROM information_schema.tables WHERE table_schema = 'd'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var v [4]uint64
		if err := rows.Scan(&name, &v[0], &v[1], &v[2], &v[3]); err != nil {
			t.Fatal(err)
		}
		got[name] = v
	}
	rows.Close()
	if got["small"][0] != 200 {
		t.Errorf("small: table_rows %d, want 200", got["small"][0])
	}
	if got["nothing"][0] != 0 {
		t.Errorf("nothing: table_rows %d, want 0", got["nothing"][0])
	}
	b := got["big"]
	if b[0] < 14000 || b[0] > 26000 {
		t.Errorf("big: table_rows %d, want about 20000", b[0])
	}
	if b[2] == 0 || b[3] == 0 || b[1] == 0 || b[1] != b[2]/b[0] {
		t.Errorf("big: avg_row_length %d, data_length %d, index_length %d", b[1], b[2], b[3])
	}
	// SHOW TABLE STATUS gives the same estimates.
	var name, engine, version, format string
	var n, avg, data, index uint64
	if err := db.QueryRow("SHOW TABLE STATUS LIKE 'big'").Scan(&name, &engine, &version, &format, &n, &avg, &data, new(any), &index,
		new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any)); err != nil {
		t.Fatal(err)
	}
	if n != b[0] || avg != b[1] || data != b[2] || index != b[3] {
		t.Errorf("SHOW TABLE STATUS: rows %d, avg %d, data %d, index %d; information_schema.tables says %v", n, avg, data, index, b)
	}
}
