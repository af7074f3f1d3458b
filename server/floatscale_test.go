package server_test

import (
	"database/sql"
	"math"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestFloatScale: FLOAT and DOUBLE columns and expressions have no fixed
// scale in their column metadata (MySQL's decimals 31), which
// go-sql-driver reports as DecimalSize's math.MaxInt64, in text and
// prepared results; DECIMAL keeps its scale.
func TestFloatScale(t *testing.T) {
	s := servertest.Start(t)
	if _, err := s.DB("d").Exec("CREATE TABLE t (f FLOAT, d DOUBLE, m DECIMAL(10,6))"); err != nil {
		t.Fatal(err)
	}
	for _, interp := range []string{"true", "false"} {
		db, err := sql.Open("mysql", strings.Replace(s.DSN("d"), "interpolateParams=false", "interpolateParams="+interp, 1))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query("SELECT f, d, m, d * 2 FROM t WHERE ? = 1", 1)
		if err != nil {
			t.Fatal(err)
		}
		cts, err := rows.ColumnTypes()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{math.MaxInt64, math.MaxInt64, 6, math.MaxInt64}
		for i, ct := range cts {
			if _, scale, ok := ct.DecimalSize(); !ok || scale != want[i] {
				t.Errorf("interpolateParams=%s: column %s scale %d (ok %v), want %d", interp, ct.Name(), scale, ok, want[i])
			}
		}
	}
}
