package server_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestBinaryZeroDate: a zero DATE or DATETIME reaches a binary-protocol
// client as MySQL sends it (length 0), so go-sql-driver with parseTime
// reads the zero time.Time, not -0001-11-30; without parseTime it reads
// the zero text. Text results are unchanged.
func TestBinaryZeroDate(t *testing.T) {
	s := servertest.Start(t)
	for _, parse := range []bool{true, false} {
		dsn := "root:@tcp(" + s.Addr() + ")/?interpolateParams=false&parseTime=false"
		if parse {
			dsn = s.DSN("")
		}
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, c := range []struct{ q, arg, text string }{
			{"SELECT CAST(? AS DATE)", "0000-00-00", "0000-00-00"},
			{"SELECT CAST(? AS DATETIME)", "0000-00-00 00:00:00", "0000-00-00 00:00:00"},
			{"SELECT CAST(? AS DATETIME(6))", "0000-00-00 00:00:00", "0000-00-00 00:00:00.000000"},
		} {
			var v any
			if err := db.QueryRow(c.q, c.arg).Scan(&v); err != nil {
				t.Fatalf("%s: %v", c.q, err)
			}
			switch x := v.(type) {
			case time.Time:
				if !parse || !x.IsZero() {
					t.Errorf("%s (parseTime=%v): %v, want the zero time", c.q, parse, x)
				}
			case []byte:
				if parse || string(x) != c.text {
					t.Errorf("%s (parseTime=%v): %q, want %q", c.q, parse, x, c.text)
				}
			default:
				t.Errorf("%s (parseTime=%v): %T %v", c.q, parse, v, v)
			}
		}
		var d string
		if err := db.QueryRow("SELECT CAST(? AS DATE)", "2011-11-20").Scan(&d); err != nil || d[:10] != "2011-11-20" {
			t.Errorf("a non-zero date: %q %v", d, err)
		}
	}
}
