package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestCastAsTime: CAST(x AS TIME(n)) has n decimals (0 without n) in
// the column metadata and the value, rounded as MySQL rounds, in text and
// prepared (binary) results; a date-time gives its time of day.
func TestCastAsTime(t *testing.T) {
	s := servertest.Start(t)
	for _, interp := range []string{"true", "false"} {
		db, err := sql.Open("mysql", strings.Replace(s.DSN(""), "interpolateParams=false", "interpolateParams="+interp, 1))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, c := range []struct{ q, arg, want string }{
			{"SELECT CAST(? AS TIME)", "03:25:45", "03:25:45"},
			{"SELECT CAST(? AS TIME)", "12:34:56.7", "12:34:57"},
			{"SELECT CAST(? AS TIME(0))", "-838:59:59", "-838:59:59"},
			{"SELECT CAST(? AS TIME(1))", "-12:34:56.7", "-12:34:56.7"},
			{"SELECT CAST(? AS TIME(6))", "838:59:58.999999", "838:59:58.999999"},
			{"SELECT CAST(? AS TIME)", "0001-01-01 03:25:45", "03:25:45"},
			{"SELECT CAST(CAST(? AS TIME(2)) AS CHAR)", "01:02:03.456", "01:02:03.46"},
		} {
			var got sql.NullString
			if err := db.QueryRow(c.q, c.arg).Scan(&got); err != nil {
				t.Fatalf("%s: %v", c.q, err)
			}
			if got.String != c.want {
				t.Errorf("%s [%s] (interpolateParams=%s): %q, want %q", c.q, c.arg, interp, got.String, c.want)
			}
		}
	}
}
