package server_test

import (
	"database/sql"
	"net"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// typesDB is a connection to database d that returns temporal values as
// the text MySQL sends (parseTime=false), in whichever protocol.
func typesDB(t *testing.T, s *servertest.Server) *sql.DB {
	t.Helper()
	s.DB("d").Close()
	db, err := sql.Open("mysql", strings.Replace(s.DSN("d"), "parseTime=true", "parseTime=false", 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

const typesTable = "CREATE TABLE tt (id int PRIMARY KEY, t0 time, t3 time(3), t6 time(6), dt3 datetime(3), " +
	"ts2 timestamp(2) NULL, dt datetime, y year, b bit(4))"

// typesRows are the values stored and what MySQL 8 reads back: fractions
// rounded half up to the column's precision and always printed with its
// digits, two-digit years in 2000-2069 / 1970-1999, BIT as bytes.
var typesRows = []struct {
	insert string
	want   []string
}{
	{"(1, '12:34:56.5', '-01:02:03.4565', '838:59:59', '2020-01-02 03:04:05.1', '2020-01-02 03:04:05.125', '2020-01-02 03:04:05.5', 69, b'1010')",
		[]string{"12:34:57", "-01:02:03.457", "838:59:59.000000", "2020-01-02 03:04:05.100", "2020-01-02 03:04:05.13", "2020-01-02 03:04:06", "2069", "\x0a"}},
	{"(2, '00:00:01.4999', '00:00:00.0004', '-12:00:00.5', '2020-01-02 03:04:05.9999', '2020-01-02 03:04:05', '2020-12-31 23:59:59.5', '70', b'1')",
		[]string{"00:00:01", "00:00:00.000", "-12:00:00.500000", "2020-01-02 03:04:06.000", "2020-01-02 03:04:05.00", "2021-01-01 00:00:00", "1970", "\x01"}},
}

// TestTypesOnTheWire: TIME(n), DATETIME(n), TIMESTAMP(n), YEAR and BIT
// read back as on MySQL 8 in the text and the binary protocol, with
// MySQL's column types, and SHOW CREATE TABLE loads back.
func TestTypesOnTheWire(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, typesTable)
	for _, r := range typesRows {
		execT(t, db, "INSERT INTO tt VALUES "+r.insert)
	}
	const q = "SELECT t0, t3, t6, dt3, ts2, dt, y, b FROM tt WHERE id = "
	for i, r := range typesRows {
		id := []string{"1", "2"}[i]
		checkTypesRow(t, "text", db, r.want, q+id)
		checkTypesRow(t, "binary", db, r.want, q+"?", id)
	}

	// Values bound to a prepared INSERT round the same way.
	execT(t, db, "INSERT INTO tt (id, t0, t3, dt3, ts2) VALUES (?, ?, ?, ?, ?)", 3, "10:00:00.5", "-00:00:01.0005", "2020-01-02 03:04:05.0004", "2020-01-02 03:04:05.999")
	checkRow(t, db, "SELECT t0, t3, dt3, ts2 FROM tt WHERE id = ?", []string{"10:00:01", "-00:00:01.001", "2020-01-02 03:04:05.000", "2020-01-02 03:04:06.00"}, 3)

	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE tt").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"`t0` time DEFAULT NULL,", "`t3` time(3) DEFAULT NULL,", "`t6` time(6) DEFAULT NULL,", "`dt3` datetime(3) DEFAULT NULL,", "`ts2` timestamp(2) NULL DEFAULT NULL,", "`y` year DEFAULT NULL,", "`b` bit(4) DEFAULT NULL"} {
		if !strings.Contains(create, col) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", col, create)
		}
	}
	execT(t, db, strings.Replace(create, "CREATE TABLE `tt`", "CREATE TABLE `tt2`", 1))
	var create2 string
	if err := db.QueryRow("SHOW CREATE TABLE tt2").Scan(&name, &create2); err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(create, "`tt`", "`tt2`", 1); create2 != want {
		t.Errorf("SHOW CREATE TABLE of the copy:\n%s\nwant\n%s", create2, want)
	}

	precs := queryStrings(t, db, "SELECT CONCAT(column_name, ':', column_type, ':', IFNULL(datetime_precision, 'NULL')) FROM information_schema.columns WHERE table_schema = 'd' AND table_name = 'tt' ORDER BY ordinal_position")
	want := []string{"id:int:NULL", "t0:time:0", "t3:time(3):3", "t6:time(6):6", "dt3:datetime(3):3", "ts2:timestamp(2):2", "dt:datetime:0", "y:year:NULL", "b:bit(4):NULL"}
	if !reflect.DeepEqual(precs, want) {
		t.Errorf("information_schema.columns: %q, want %q", precs, want)
	}

	_, err := db.Exec("CREATE TABLE bad (a time(7))")
	expectCode(t, err, 1426)
	if err == nil || !strings.Contains(err.Error(), "Too-big precision 7 specified for 'a'. Maximum is 6.") {
		t.Errorf("TIME(7): %v", err)
	}
}

// checkTypesRow reads one row of the tt columns by query (with args, a
// prepared statement) and compares values and column metadata.
func checkTypesRow(t *testing.T, proto string, db *sql.DB, want []string, query string, args ...any) {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", proto, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []struct {
		name string
		prec int64
	}{{"TIME", 0}, {"TIME", 3}, {"TIME", 6}, {"DATETIME", 3}, {"TIMESTAMP", 2}, {"DATETIME", 0}, {"YEAR", -1}, {"BIT", -1}}
	for i, ct := range cts {
		w := wantTypes[i]
		if ct.DatabaseTypeName() != w.name {
			t.Errorf("%s: column %s is %s, want %s", proto, ct.Name(), ct.DatabaseTypeName(), w.name)
		}
		if p, _, ok := ct.DecimalSize(); w.prec >= 0 && (!ok || p != w.prec) {
			t.Errorf("%s: column %s has %d decimals, want %d", proto, ct.Name(), p, w.prec)
		}
	}
	if st := cts[7].ScanType(); st != reflect.TypeOf(sql.RawBytes(nil)) && st != reflect.TypeOf([]byte(nil)) {
		t.Errorf("%s: BIT scans as %v, want bytes (character set binary)", proto, st)
	}
	if !rows.Next() {
		t.Fatalf("%s: no row", proto)
	}
	got := make([]sql.RawBytes, len(want))
	dst := make([]any, len(want))
	for i := range got {
		dst[i] = &got[i]
	}
	if err := rows.Scan(dst...); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("%s: %s = %q, want %q", proto, cts[i].Name(), got[i], want[i])
		}
	}
}

// TestTimeIndex: a TIME(n) column is indexed online, and a range scan of
// the index returns its values in order, negative ones first.
func TestTimeIndex(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	db.SetMaxOpenConns(1) // one session, for its sql_mode
	execT(t, db, "CREATE TABLE ti (id int PRIMARY KEY, a time(2))")
	execT(t, db, "INSERT INTO ti VALUES (1, '10:00:00.005'), (2, '-10:00:00'), (3, '09:59:59.999'), (4, '100:00:00.1'), (5, '-00:00:00.25'), (6, NULL)")
	execT(t, db, "ALTER TABLE ti ADD INDEX ia (a), ALGORITHM=INPLACE, LOCK=NONE")
	execT(t, db, "INSERT INTO ti VALUES (7, '00:00:00.004')")
	const q = "SELECT id, a FROM ti FORCE INDEX (ia) WHERE a > '-20:00:00' ORDER BY a"
	want := []string{"2 -10:00:00.00", "5 -00:00:00.25", "7 00:00:00.00", "3 10:00:00.00", "1 10:00:00.01", "4 100:00:00.10"}
	if got := queryPairs(t, db, q); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %q, want %q", q, got, want)
	}
	// The catalog keeps the precision across a restart.
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = servertest.StartDir(t, s.Dir)
	db = typesDB(t, s)
	db.SetMaxOpenConns(1)
	if got := queryPairs(t, db, q); !reflect.DeepEqual(got, want) {
		t.Errorf("after a restart: %q, want %q", got, want)
	}
	if got := queryStrings(t, db, "SELECT id FROM ti WHERE a BETWEEN '00:00:00' AND '10:00:00' ORDER BY a DESC"); !reflect.DeepEqual(got, []string{"3", "7"}) {
		t.Errorf("BETWEEN: %q, want [3 7]", got)
	}
	var plan string
	if err := db.QueryRow("EXPLAIN FORMAT=TREE SELECT id FROM ti WHERE a > '10:00:00'").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "IndexedTableAccess(ti)") || !strings.Contains(plan, "index: [ti.a]") {
		t.Errorf("the range does not use index ia:\n%s", plan)
	}
	execT(t, db, "ADMIN CHECK TABLE ti")

	// More digits are instant.
	execT(t, db, "ALTER TABLE ti MODIFY a time(4)")
	query(t, db, "SELECT a FROM ti WHERE id = 4", "100:00:00.1000")
	execT(t, db, "ADMIN CHECK TABLE ti")

	// sql_mode TIME_TRUNCATE_FRACTIONAL cuts instead of rounding.
	execT(t, db, "SET SESSION sql_mode = CONCAT(@@sql_mode, ',TIME_TRUNCATE_FRACTIONAL')")
	execT(t, db, "INSERT INTO ti VALUES (8, '00:00:01.99999')")
	query(t, db, "SELECT a FROM ti WHERE id = 8", "00:00:01.9999")

	// Fewer digits rewrite the values online, rounding them.
	execT(t, db, "SET SESSION sql_mode = DEFAULT")
	execT(t, db, "ALTER TABLE ti MODIFY a time(1)")
	query(t, db, "SELECT a FROM ti WHERE id = 4", "100:00:00.1")
	query(t, db, "SELECT a FROM ti WHERE id = 8", "00:00:02.0")
	execT(t, db, "ADMIN CHECK TABLE ti")
}

// TestTypesMariadbClient: a non-Go client reads BIT as binary and TIME(n)
// with its digits.
func TestTypesMariadbClient(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, typesTable)
	execT(t, db, "INSERT INTO tt VALUES "+typesRows[0].insert)
	execT(t, db, "UPDATE tt SET y = 0")
	host, port, _ := net.SplitHostPort(s.Addr())
	out, err := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "-N", "-B", "--binary-as-hex", "d",
		"-e", "SELECT b, t0, t3, t6, ts2, dt3, y FROM tt").CombinedOutput()
	want := "0x0A\t12:34:57\t-01:02:03.457\t838:59:59.000000\t2020-01-02 03:04:05.13\t2020-01-02 03:04:05.100\t0000"
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("mariadb: %v %q, want %q", err, out, want)
	}
}

func execT(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// queryPairs reads two columns per row as "a b".
func queryPairs(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, a+" "+b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestYearAndTimeErrors: values YEAR and TIME cannot hold get MySQL's
// errors in strict mode, and two-digit years map as MySQL maps them.
func TestYearAndTimeErrors(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, "CREATE TABLE ye (id int PRIMARY KEY, y year, t time(2))")
	execT(t, db, "INSERT INTO ye VALUES (1, '0', NULL), (2, '00', NULL), (3, 0, NULL), (4, '99', NULL), (5, 1, NULL), (6, 2155, NULL)")
	// go-sql-driver reads a YEAR as a number in both protocols, so 0000
	// reads 0 (TestTypesMariadbClient sees the text).
	if got, want := queryStrings(t, db, "SELECT y FROM ye ORDER BY id"), []string{"2000", "2000", "0", "1999", "2001", "2155"}; !reflect.DeepEqual(got, want) {
		t.Errorf("years: %q, want %q", got, want)
	}
	execT(t, db, "INSERT INTO ye VALUES (7, 2000, '838:59:59'), (8, 2000, '-34 22:59:59.004'), (9, 2000, '1 02:03:04.5')")
	if got, want := queryStrings(t, db, "SELECT t FROM ye WHERE id IN (7, 8, 9) ORDER BY id"), []string{"838:59:59.00", "-838:59:59.00", "26:03:04.50"}; !reflect.DeepEqual(got, want) {
		t.Errorf("TIME limits: %q, want %q", got, want)
	}
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"INSERT INTO ye VALUES (10, 1900, NULL)", 1264, "Out of range value for column 'y' at row 1"},
		{"INSERT INTO ye VALUES (10, 'abc', NULL)", 1366, "Incorrect integer value: 'abc' for column 'y' at row 1"},
		{"INSERT INTO ye VALUES (10, 2000, NULL), (11, 2000, 'abc')", 1292, "Incorrect time value: 'abc' for column 't' at row 2"},
		{"INSERT INTO ye VALUES (10, 2000, '839:00:00')", 1292, "Incorrect time value: '839:00:00' for column 't' at row 1"},
		{"INSERT INTO ye VALUES (10, 2000, -8390000)", 1292, "Incorrect time value: '-8390000' for column 't' at row 1"},
		{"INSERT INTO ye VALUES (10, 2000, '35 00:00:00')", 1292, "Incorrect time value: '35 00:00:00' for column 't' at row 1"},
	} {
		_, err := db.Exec(c.q)
		expectCode(t, err, c.code)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.q, err, c.msg)
		}
	}
}

// TestJSONNull: a JSON null is a value, not SQL NULL, as MySQL 8's
// manual describes (JSON_TYPE is 'NULL', IS NULL is false, it sorts
// after SQL NULL and before every other JSON value).
func TestJSONNull(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, "CREATE TABLE jn (id int PRIMARY KEY, d json)")
	execT(t, db, `INSERT INTO jn VALUES (1, 'null'), (2, NULL), (3, '1'), (4, '"a"')`)
	for q, want := range map[string]string{
		"SELECT CAST('null' AS JSON) IS NULL":                                     "0",
		"SELECT JSON_TYPE(CAST('null' AS JSON))":                                  "NULL",
		`SELECT JSON_EXTRACT('{"a": null}', '$.a')`:                               "null",
		`SELECT JSON_EXTRACT('{"a": null}', '$.a') IS NULL`:                       "0",
		`SELECT JSON_EXTRACT('{"a": null}', '$.b') IS NULL`:                       "1",
		`SELECT JSON_UNQUOTE(JSON_EXTRACT('{"a": null}', '$.a'))`:                 "null",
		"SELECT CAST(CAST('null' AS JSON) AS CHAR)":                               "null",
		"SELECT (CAST('null' AS JSON) = NULL) IS NULL":                            "1",
		"SELECT CAST('null' AS JSON) <=> NULL":                                    "0",
		"SELECT CAST('null' AS JSON) = CAST('null' AS JSON)":                      "1",
		"SELECT CAST('null' AS JSON) = 'null'":                                    "0",
		`SELECT COALESCE(JSON_EXTRACT('{"a": null}', '$.a'), 'x')`:                "null",
		"SELECT GROUP_CONCAT(id ORDER BY d, id) FROM jn":                          "2,1,3,4",
		"SELECT GROUP_CONCAT(id ORDER BY d DESC, id) FROM jn":                     "4,3,1,2",
		"SELECT GROUP_CONCAT(id ORDER BY id) FROM jn WHERE d IS NULL":             "2",
		"SELECT GROUP_CONCAT(id ORDER BY id) FROM jn WHERE JSON_TYPE(d) = 'NULL'": "1",
		"SELECT JSON_TYPE(NULL) IS NULL":                                          "1",
	} {
		query(t, db, q, want)
	}
}

// TestTimeAsText: a TIME value turns into MySQL's text where a string is
// wanted and into its number in arithmetic, and a UNION of two TIME
// precisions reads the values.
func TestTimeAsText(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, "CREATE TABLE tx (id int PRIMARY KEY, a time(3), b time(6))")
	execT(t, db, "INSERT INTO tx VALUES (1, '01:02:03.456', '-01:02:03.456')")
	query(t, db, "SELECT CAST(a AS CHAR) FROM tx", "01:02:03.456")
	query(t, db, "SELECT CONCAT(a, '|', b) FROM tx", "01:02:03.456|-01:02:03.456000")
	query(t, db, "SELECT CONCAT_WS(',', b, a) FROM tx", "-01:02:03.456000,01:02:03.456")
	query(t, db, "SELECT COALESCE(NULL, a) FROM tx", "01:02:03.456")
	// In a numeric context a TIME is hhmmss.ffffff.
	query(t, db, "SELECT a + 0 FROM tx", "10203.456")
	query(t, db, "SELECT b * 2 FROM tx", "-20406.912000")
	query(t, db, "SELECT a - b FROM tx", "20406.912000")
	if got, want := queryStrings(t, db, "SELECT a FROM tx UNION SELECT b FROM tx"), []string{"01:02:03.456", "-01:02:03.456000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("UNION: %q, want %q", got, want)
	}
	var got string
	if err := db.QueryRow("SELECT CONCAT(a, ?) FROM tx WHERE id = ?", "!", 1).Scan(&got); err != nil || got != "01:02:03.456!" {
		t.Errorf("prepared CONCAT: %q, %v", got, err)
	}
}

// TestDateAsText: a DATE, DATETIME(n) or TIMESTAMP(n) value turns into
// MySQL's text where a string is wanted: a DATE without a time, and as
// many fractional digits as the type has.
func TestDateAsText(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, "CREATE TABLE dx (id int PRIMARY KEY, d date, dt datetime(3), ts timestamp(6) NULL, p datetime)")
	execT(t, db, "INSERT INTO dx VALUES (1, '2020-01-02', '2020-01-02 03:04:05.5', '2020-01-02 03:04:05.25', '2021-02-03 04:05:06')")
	query(t, db, "SELECT CAST(d AS CHAR) FROM dx", "2020-01-02")
	query(t, db, "SELECT CONCAT(d, '|', dt, '|', ts, '|', p) FROM dx", "2020-01-02|2020-01-02 03:04:05.500|2020-01-02 03:04:05.250000|2021-02-03 04:05:06")
	query(t, db, "SELECT CONCAT_WS(',', dt, d) FROM dx", "2020-01-02 03:04:05.500,2020-01-02")
	query(t, db, "SELECT COALESCE(NULL, d) FROM dx", "2020-01-02")
	query(t, db, "SELECT CONVERT(dt, CHAR) FROM dx", "2020-01-02 03:04:05.500")
	query(t, db, "SELECT LENGTH(CONCAT(d)) FROM dx", "10")
	var got string
	if err := db.QueryRow("SELECT CONCAT(d, ?) FROM dx WHERE id = ?", "!", 1).Scan(&got); err != nil || got != "2020-01-02!" {
		t.Errorf("prepared CONCAT: %q, %v", got, err)
	}
}

// checkRow compares the one row query reads with want, as text.
func checkRow(t *testing.T, db *sql.DB, query string, want []string, args ...any) {
	t.Helper()
	got := make([]sql.RawBytes, len(want))
	dst := make([]any, len(want))
	for i := range got {
		dst[i] = &got[i]
	}
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("%s: no row", query)
	}
	if err := rows.Scan(dst...); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("%s: column %d = %q, want %q", query, i+1, got[i], want[i])
		}
	}
}

// TestTimeKey: a TIME(n) primary key, read and written through prepared
// statements (the fast path), finds its rows by the rounded value.
func TestTimeKey(t *testing.T) {
	s := servertest.Start(t)
	db := typesDB(t, s)
	execT(t, db, "CREATE TABLE tk (k time(1) PRIMARY KEY, v int, UNIQUE KEY uv (v))")
	for i, k := range []string{"10:00:00.04", "-10:00:00.06", "00:00:00.25"} {
		execT(t, db, "INSERT INTO tk VALUES (?, ?)", k, i)
	}
	checkRow(t, db, "SELECT k, v FROM tk WHERE k = ?", []string{"-10:00:00.1", "1"}, "-10:00:00.1")
	checkRow(t, db, "SELECT k FROM tk WHERE v = ?", []string{"00:00:00.3"}, 2)
	execT(t, db, "UPDATE tk SET v = v + 10 WHERE k = ?", "10:00:00")
	checkRow(t, db, "SELECT v FROM tk WHERE k = '10:00:00.0'", []string{"10"})
	_, err := db.Exec("INSERT INTO tk VALUES (?, ?)", "10:00:00.01", 7)
	expectCode(t, err, 1062)
	if got, want := queryPairs(t, db, "SELECT k, v FROM tk ORDER BY k DESC"), []string{"10:00:00.0 10", "00:00:00.3 2", "-10:00:00.1 1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ORDER BY k DESC: %q, want %q", got, want)
	}
	execT(t, db, "ADMIN CHECK TABLE tk")
}

// CHAR values lose their trailing spaces, as MySQL shows them when they
// are read, so comparisons and index lookups find them (an unpadded
// NO PAD collation such as utf8mb4_0900_ai_ci compares spaces too).
func TestCharTrailingSpaces(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExecDB(t, db, "CREATE TABLE t (id INT PRIMARY KEY, c CHAR(12), v VARCHAR(12), b BINARY(4), KEY (c))",
		"INSERT INTO t VALUES (1, 'Abd ', 'Abd ', 'a ')")
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?)", 2, "xy  ", "xy  ", "b"); err != nil {
		t.Fatal(err)
	}
	query(t, db, "SELECT concat('[', c, ']', '[', v, ']') FROM t WHERE id = 1", "[Abd][Abd ]")
	query(t, db, "SELECT concat('[', c, ']') FROM t WHERE id = 2", "[xy]")
	query(t, db, "SELECT id FROM t WHERE c = 'ABD'", "1")
	query(t, db, "SELECT id FROM t IGNORE INDEX (c) WHERE c = 'ABD'", "1")
	query(t, db, "SELECT count(*) FROM t WHERE v = 'ABD'", "0")   // NO PAD
	query(t, db, "SELECT hex(b) FROM t WHERE id = 1", "61200000") // BINARY keeps its bytes
	mustExecDB(t, db, "UPDATE t SET c = 'z   ' WHERE id = 1", "ALTER TABLE t MODIFY v CHAR(10)")
	query(t, db, "SELECT concat('[', c, ']', '[', v, ']') FROM t WHERE id = 1", "[z][Abd]")
	mustExecDB(t, db, "ADMIN CHECK TABLE t")
}
