package sql_test

import (
	"database/sql"
	"regexp"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestClockPrecision: NOW(n) and its synonyms, UTC_TIMESTAMP(n) and
// CURTIME(n) give the current time with exactly n fractional digits, in
// the text and the binary protocol, and NOW(7) is MySQL's 1426.
func TestClockPrecision(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	// The values as the server sends them, not parsed into time.Time.
	raw, err := sql.Open("mysql", strings.Replace(s.DSN("app"), "parseTime=true", "parseTime=false", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, c := range []struct {
		expr, want string
	}{
		{"NOW(3)", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$`},
		{"NOW()", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`},
		{"CURRENT_TIMESTAMP(1)", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d$`},
		{"SYSDATE(2)", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d\d$`},
		{"LOCALTIMESTAMP(6)", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$`},
		{"UTC_TIMESTAMP()", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`},
		{"UTC_TIMESTAMP(4)", `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{4}$`},
		{"CURTIME(2)", `^\d\d:\d\d:\d\d\.\d\d$`},
		{"CURRENT_TIME(0)", `^\d\d:\d\d:\d\d$`},
	} {
		for _, proto := range []string{"text", "binary"} {
			var got string
			if proto == "text" {
				err = raw.QueryRow("SELECT " + c.expr).Scan(&got)
			} else {
				err = raw.QueryRow("SELECT "+c.expr+" FROM (SELECT ? AS x) AS d", 1).Scan(&got)
			}
			if err != nil {
				t.Fatalf("%s (%s): %v", c.expr, proto, err)
			}
			if !regexp.MustCompile(c.want).MatchString(got) {
				t.Errorf("%s (%s) = %q, want %s", c.expr, proto, got, c.want)
			}
		}
	}
	// The value is cut to its digits: NOW(3) is NOW(6) without the last three.
	var n3, n6 string
	if err := raw.QueryRow("SELECT NOW(3), NOW(6)").Scan(&n3, &n6); err != nil {
		t.Fatal(err)
	}
	if n6[:len(n3)] != n3 {
		t.Errorf("NOW(3) = %s is not NOW(6) = %s cut", n3, n6)
	}
	_, err = db.Exec("SELECT NOW(7)")
	expectErr(t, err, 1426, "Too-big precision 7 specified for 'now'. Maximum is 6.")
	// Column defaults keep working.
	mustExec(t, db, "CREATE TABLE c (id INT PRIMARY KEY, a DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3))")
	mustExec(t, db, "INSERT INTO c (id) VALUES (1)")
	expectRows(t, db, "SELECT COUNT(*) FROM c WHERE a <= NOW(3) AND a > NOW(3) - INTERVAL 1 HOUR", "1")
}

// TestDateNumbers: a DATE, DATETIME or TIMESTAMP in arithmetic or a CAST
// to a number reads as MySQL reads it, YYYYMMDD or YYYYMMDDhhmmss with
// the type's fraction.
func TestDateNumbers(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, d DATE, dt DATETIME(3), ts TIMESTAMP(2) NULL)")
	mustExec(t, db, "INSERT INTO t VALUES (1, '2020-01-02', '2020-01-02 03:04:05.678', '2021-02-03 04:05:06.78'), (2, NULL, NULL, NULL)")
	expectRows(t, db, "SELECT d + 0, dt + 0, ts + 0, d + 1, CAST(dt AS UNSIGNED), CAST(d AS SIGNED) FROM t ORDER BY id",
		"20200102,20200102030405.678,20210203040506.78,20200103,20200102030406,20200102", "NULL,NULL,NULL,NULL,NULL,NULL")
	// Interval arithmetic is DATE_ADD / DATE_SUB: a DATE plus days stays a
	// DATE, a DATETIME keeps its fraction.
	expectRows(t, db, "SELECT CAST(d - INTERVAL 2 DAY AS CHAR), CAST(INTERVAL 1 MONTH + d AS CHAR), "+
		"MICROSECOND(dt - INTERVAL 1 DAY), CAST('2020-01-01' + INTERVAL 1 DAY AS CHAR) FROM t WHERE id = 1",
		"2019-12-31,2020-02-02,678000,2020-01-02")
}
