package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// refusedUnchanged runs q, which must fail with code, SQLSTATE state and
// a message holding msg, and leave table's definition as it was.
func refusedUnchanged(t *testing.T, db *sql.DB, table, q string, code uint16, state, msg string) {
	t.Helper()
	before := showCreate(t, db, table)
	_, err := db.Exec(q)
	expectErr(t, err, code, msg)
	var me *mysql.MySQLError
	if errors.As(err, &me) && string(me.SQLState[:]) != state {
		t.Errorf("%s: SQLSTATE %s, want %s", q, me.SQLState[:], state)
	}
	if after := showCreate(t, db, table); after != before {
		t.Fatalf("%s changed the table:\n%s", q, after)
	}
}

// TestModifyEnumSetAndDates: ENUM and SET members added at the end are a
// metadata change, as in MySQL; other ENUM / SET changes, and changes
// between DATE, DATETIME, TIMESTAMP and strings, and between binary
// strings, rewrite the values online by their text as MySQL's table copy
// converts them in strict mode, failing with its errors and leaving the
// table as it was.
func TestModifyEnumSetAndDates(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE e (id INT PRIMARY KEY, s ENUM('a','b','c') NOT NULL, st SET('x','y'), "+
		"d DATETIME(6), dd DATE, b VARBINARY(10), c VARCHAR(30), KEY ks (s), KEY kd (d))")
	mustExec(t, db, "INSERT INTO e VALUES (1, 'b', 'x,y', '2020-01-02 03:04:05.600000', '2020-01-02', 'ab', '2021-05-06 07:08:09'), "+
		"(2, 'c', 'y', '1960-01-01 00:00:00', '2021-12-31', 'xyz', 'soon')")

	// Members added at the end: instant.
	mustExec(t, db, "ALTER TABLE e MODIFY s ENUM('a','b','c','d') NOT NULL, MODIFY st SET('x','y','z')")
	expectRows(t, db, "SELECT comments FROM information_schema.ddl_jobs ORDER BY job_id", "mode=instant", "mode=instant")
	mustExec(t, db, "INSERT INTO e (id, s, st) VALUES (3, 'd', 'z,x')")

	for _, c := range []struct {
		q, state string
		code     uint16
		msg      string
	}{
		{"ALTER TABLE e MODIFY s ENUM('a','c','d') NOT NULL", "01000", 1265, "Data truncated for column 's' at row 1"},
		{"ALTER TABLE e MODIFY c ENUM('soon')", "01000", 1265, "Data truncated for column 'c' at row 1"},
		{"ALTER TABLE e MODIFY d TIMESTAMP NULL", "22007", 1292, "Incorrect datetime value: '1960-01-01 00:00:00' for column 'd' at row 2"},
		{"ALTER TABLE e MODIFY c DATETIME", "22007", 1292, "Incorrect datetime value: 'soon' for column 'c' at row 2"},
		{"ALTER TABLE e MODIFY c DATE", "22007", 1292, "Incorrect date value: 'soon' for column 'c' at row 2"},
		{"ALTER TABLE e MODIFY d VARCHAR(10)", "01000", 1265, "Data truncated for column 'd' at row 1"},
		{"ALTER TABLE e MODIFY b VARBINARY(2)", "01000", 1265, "Data truncated for column 'b' at row 2"},
		{"ALTER TABLE e MODIFY d INT", "22003", 1264, "Out of range value for column 'd' at row 1"},
		{"ALTER TABLE e MODIFY d JSON", "42000", 3152, "JSON column 'd' supports indexing only via generated columns on a specified JSON path."},
		{"ALTER TABLE e MODIFY st JSON", "42000", 1235, "only numbers, strings"},
	} {
		refusedUnchanged(t, db, "e", c.q, c.code, c.state, c.msg)
	}

	mustExec(t, db, "UPDATE e SET c = '2022-02-03' WHERE id = 2")
	for _, q := range []string{
		"ALTER TABLE e MODIFY s ENUM('d','c','b','a') NOT NULL", // reordered: by member, not number
		"ALTER TABLE e MODIFY st VARCHAR(10)",
		"ALTER TABLE e MODIFY d DATETIME",  // rounds the fraction, as MySQL does
		"ALTER TABLE e MODIFY dd DATETIME", // midnight
		"ALTER TABLE e MODIFY c DATE",
		"ALTER TABLE e MODIFY b BLOB",
	} {
		mustExec(t, db, q)
	}
	expectRows(t, db, "SELECT id, s, s+0, st, DATE_FORMAT(d, '%Y-%m-%d %T.%f'), DATE_FORMAT(dd, '%Y-%m-%d %T'), b, DATE_FORMAT(c, '%Y-%m-%d') FROM e ORDER BY id",
		"1,b,3,x,y,2020-01-02 03:04:06.000000,2020-01-02 00:00:00,ab,2021-05-06",
		"2,c,2,y,1960-01-01 00:00:00.000000,2021-12-31 00:00:00,xyz,2022-02-03",
		"3,d,1,x,z,NULL,NULL,NULL,NULL")
	expectRows(t, db, "SELECT id FROM e FORCE INDEX (ks) WHERE s = 'c'", "2")
	expectRows(t, db, "SELECT id FROM e FORCE INDEX (kd) WHERE d = '2020-01-02 03:04:06'", "1")
	mustExec(t, db, "ALTER TABLE e MODIFY d DATE, MODIFY dd VARCHAR(20)")
	expectRows(t, db, "SELECT DATE_FORMAT(d, '%Y-%m-%d %T'), dd FROM e WHERE id = 1", "2020-01-02 00:00:00,2020-01-02 00:00:00")
	if got := showCreate(t, db, "e"); !strings.Contains(got, "`d` date DEFAULT NULL") || !strings.Contains(got, "`c` date DEFAULT NULL") {
		t.Errorf("SHOW CREATE TABLE:\n%s", got)
	}
	mustExec(t, db, "ADMIN CHECK TABLE e")
}

// TestModifyTimeAndYear: TIME changes precision (rounding) and converts
// to and from strings; YEAR converts to and from integers (two digits as
// MySQL reads them) and strings; bad values fail with MySQL's errors.
func TestModifyTimeAndYear(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE y (id INT PRIMARY KEY, t TIME(6), y YEAR, i INT, c VARCHAR(20), c2 VARCHAR(20))")
	mustExec(t, db, "INSERT INTO y VALUES (1, '10:00:00.600000', 2020, 69, '12:34:56', 'x'), (2, '-838:59:59', 1999, 2000, '1:2', '2021')")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE y MODIFY c2 TIME", 1292, "Incorrect time value: 'x' for column 'c2' at row 1"},
		{"ALTER TABLE y MODIFY c2 YEAR", 1366, "Incorrect integer value: 'x' for column 'c2' at row 1"},
		{"ALTER TABLE y MODIFY t DATETIME", 1235, "only numbers, strings"},
	} {
		_, err := db.Exec(c.q)
		expectErr(t, err, c.code, c.msg)
	}
	for _, q := range []string{
		"ALTER TABLE y MODIFY t TIME",
		"ALTER TABLE y MODIFY y INT",
		"ALTER TABLE y MODIFY i YEAR",
		"ALTER TABLE y MODIFY c TIME",
	} {
		mustExec(t, db, q)
	}
	expectRows(t, db, "SELECT id, CAST(t AS CHAR), y, i, CAST(c AS CHAR) FROM y ORDER BY id",
		"1,10:00:01,2020,2069,12:34:56", "2,-838:59:59,1999,2000,01:02:00")
	mustExec(t, db, "ALTER TABLE y MODIFY t VARCHAR(12)")
	expectRows(t, db, "SELECT t FROM y ORDER BY id", "10:00:01", "-838:59:59")
	mustExec(t, db, "CREATE TABLE y2 (i INT)")
	mustExec(t, db, "INSERT INTO y2 VALUES (3000)")
	_, err := db.Exec("ALTER TABLE y2 MODIFY i YEAR")
	expectErr(t, err, 1264, "Out of range value for column 'i' at row 1")
	mustExec(t, db, "ADMIN CHECK TABLE y")
}

// TestModifyColumnWithoutStrictMode: an ALTER from a session without a
// strict sql_mode converts as MySQL's copy does there: numbers out of
// range clamp to the type's range, text too long is cut, text that is not
// a number becomes its numeric prefix, NULL in a column made NOT NULL the
// type's implicit value (in the indexes too). Bad dates still fail.
func TestModifyColumnWithoutStrictMode(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'")
	mustExec(t, conn, "CREATE TABLE t (id INT PRIMARY KEY, i INT, u INT, s VARCHAR(20), n VARCHAR(20), d DECIMAL(6,2), m MEDIUMINT, x INT NULL, dt VARCHAR(20), e ENUM('p','q'), KEY ks (s), KEY kx (x, e))")
	mustExec(t, conn, "INSERT INTO t VALUES (1, 300, -5, 'abcdef', '12x', 10.75, 100, NULL, 'soon', NULL), (2, -300, 70000, 'ab', 'none', -99.99, -8000000, 1, '2020-01-01', 'q')")
	for _, q := range []string{
		"ALTER TABLE t MODIFY i TINYINT",
		"ALTER TABLE t MODIFY u SMALLINT UNSIGNED",
		"ALTER TABLE t MODIFY s VARCHAR(3)",
		"ALTER TABLE t MODIFY n INT",
		"ALTER TABLE t MODIFY d DECIMAL(3,1)",
		"ALTER TABLE t MODIFY m SMALLINT",
	} {
		mustExec(t, conn, q)
	}
	expectRows(t, conn, "SELECT id, i, u, s, n, d, m FROM t ORDER BY id",
		"1,127,0,abc,12,10.8,100", "2,-128,65535,ab,0,-99.9,-32768")
	expectRows(t, conn, "SELECT id FROM t FORCE INDEX (ks) WHERE s = 'abc'", "1")
	mustExec(t, conn, "ALTER TABLE t MODIFY x INT NOT NULL, MODIFY e ENUM('p','q') NOT NULL")
	expectRows(t, conn, "SELECT id, x, e FROM t FORCE INDEX (kx) WHERE x >= 0 ORDER BY id", "1,0,p", "2,1,q")
	_, err = conn.ExecContext(ctx, "ALTER TABLE t MODIFY dt DATE")
	expectErr(t, err, 1292, "Incorrect date value: 'soon'")
	mustExec(t, conn, "ADMIN CHECK TABLE t")
	// Each changed value is a warning of the ALTER, naming its row.
	mustExec(t, conn, "ALTER TABLE t MODIFY n TINYINT UNSIGNED, MODIFY dt VARCHAR(4)")
	expectRows(t, conn, "SHOW WARNINGS", "Warning,1265,Data truncated for column 'dt' at row 2")
	mustExec(t, conn, "ALTER TABLE t MODIFY i TINYINT UNSIGNED")
	expectRows(t, conn, "SHOW WARNINGS", "Warning,1264,Out of range value for column 'i' at row 2")
	mustExec(t, conn, "UPDATE t SET s = 'xyz'")
	mustExec(t, conn, "ALTER TABLE t MODIFY s VARCHAR(1), MODIFY n TINYINT UNSIGNED")
	expectRows(t, conn, "SHOW WARNINGS", "Warning,1265,Data truncated for column 's' at row 1", "Warning,1265,Data truncated for column 's' at row 2")
	// The same change in a strict session fails.
	mustExec(t, db, "CREATE TABLE t2 (id INT PRIMARY KEY, i INT, x INT)")
	mustExec(t, db, "INSERT INTO t2 VALUES (1, 300, NULL)")
	_, err = db.Exec("ALTER TABLE t2 MODIFY i TINYINT")
	expectErr(t, err, 1264, "Out of range value for column 'i' at row 1")
	_, err = db.Exec("ALTER TABLE t2 MODIFY x INT NOT NULL")
	expectErr(t, err, 1138, "Invalid use of NULL value")
}

// TestModifyBit: BIT widens and narrows and converts to and from
// integers (an integer as its 64-bit two's complement); a value wider
// than the new BIT fails the ALTER with 1406 and leaves the table as it
// was, or, without strict mode, becomes every bit set.
func TestModifyBit(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE b (id INT PRIMARY KEY, b BIT(8), n INT, s TINYINT, KEY kb (b))")
	mustExec(t, db, "INSERT INTO b VALUES (1, b'101', 5, -1), (2, b'11111111', 300, 7)")
	mustExec(t, db, "ALTER TABLE b MODIFY b BIT(16), MODIFY s BIT(64)")
	expectRows(t, db, "SELECT id, HEX(b), HEX(s) FROM b ORDER BY id", "1,5,FFFFFFFFFFFFFFFF", "2,FF,7")
	mustExec(t, db, "ALTER TABLE b MODIFY b INT, MODIFY n BIT(9)")
	expectRows(t, db, "SELECT id, b, HEX(n) FROM b FORCE INDEX (kb) WHERE b > 0 ORDER BY id", "1,5,5", "2,255,12C")
	refusedUnchanged(t, db, "b", "ALTER TABLE b MODIFY n BIT(8)", 1406, "22001", "Data too long for column 'n' at row 2")
	refusedUnchanged(t, db, "b", "ALTER TABLE b MODIFY b TINYINT", 1264, "22003", "Out of range value for column 'b' at row 2")
	mustExec(t, db, "ADMIN CHECK TABLE b")

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "SET SESSION sql_mode = ''")
	mustExec(t, conn, "ALTER TABLE b MODIFY n BIT(4)")
	expectRows(t, conn, "SELECT id, HEX(n) FROM b ORDER BY id", "1,5", "2,F")
	mustExec(t, conn, "ADMIN CHECK TABLE b")
}

// TestModifyTemporalNumbers: numbers become dates, datetimes and times as
// MySQL reads them in a numeric context (YYYYMMDD, YYMMDD,
// YYYYMMDDhhmmss, hhmmss) and back; a date or datetime becomes its time
// of day. A number that is no date fails with 1292 naming it.
func TestModifyTemporalNumbers(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE x (id INT PRIMARY KEY, n INT, m BIGINT, y INT, d DATE, dt DATETIME(2), t TIME(1), dc DECIMAL(20,3), KEY kn (n))")
	mustExec(t, db, "INSERT INTO x VALUES (1, 20200102, 20200102030405, 991231, '2020-01-02', '2020-01-02 03:04:05.67', '-10:11:12.3', 101112.5), "+
		"(2, 200102, 700101, 101, '1999-12-31', '1999-12-31 23:59:59.99', '838:59:59', 12)")
	mustExec(t, db, "ALTER TABLE x MODIFY n DATE, MODIFY m DATETIME, MODIFY y DATE, MODIFY dc TIME(1)")
	expectRows(t, db, "SELECT id, CAST(n AS CHAR), CAST(m AS CHAR), CAST(y AS CHAR), dc FROM x ORDER BY id",
		"1,2020-01-02,2020-01-02 03:04:05,1999-12-31,10:11:12.5", "2,2020-01-02,1970-01-01 00:00:00,2000-01-01,00:00:12.0")
	expectRows(t, db, "SELECT id FROM x FORCE INDEX (kn) WHERE n = '2020-01-02' ORDER BY id", "1", "2")
	mustExec(t, db, "ALTER TABLE x MODIFY d INT, MODIFY dt DECIMAL(20,2), MODIFY t INT")
	expectRows(t, db, "SELECT id, d, dt, t FROM x ORDER BY id", "1,20200102,20200102030405.67,-101112", "2,19991231,19991231235959.99,8385959")
	mustExec(t, db, "ALTER TABLE x MODIFY m TIME")
	expectRows(t, db, "SELECT id, m FROM x ORDER BY id", "1,03:04:05", "2,00:00:00")
	mustExec(t, db, "ADMIN CHECK TABLE x")

	mustExec(t, db, "CREATE TABLE z (id INT PRIMARY KEY, n INT, h INT)")
	mustExec(t, db, "INSERT INTO z VALUES (1, 20201340, 1261)")
	refusedUnchanged(t, db, "z", "ALTER TABLE z MODIFY n DATE", 1292, "22007", "Incorrect date value: '20201340' for column 'n' at row 1")
	refusedUnchanged(t, db, "z", "ALTER TABLE z MODIFY h TIME", 1292, "22007", "Incorrect time value: '1261' for column 'h' at row 1")
	refusedUnchanged(t, db, "z", "ALTER TABLE z MODIFY n DATETIME", 1292, "22007", "Incorrect datetime value: '20201340'")
}

// TestModifyJSON: text becomes JSON when every value parses (3140 names
// the column otherwise, the table as it was), and JSON becomes text as
// MySQL prints it.
func TestModifyJSON(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE j (id INT PRIMARY KEY, t TEXT, j JSON)")
	mustExec(t, db, `INSERT INTO j VALUES (1, '{"b": 2, "a": [1, true, null]}', '{"x":1}'), (2, 'not json', '[1,2]')`)
	refusedUnchanged(t, db, "j", "ALTER TABLE j MODIFY t JSON", 3140, "22032", "in value for column 't'")
	mustExec(t, db, `UPDATE j SET t = '"str"' WHERE id = 2`)
	mustExec(t, db, "ALTER TABLE j MODIFY t JSON, MODIFY j TEXT")
	expectRows(t, db, "SELECT id, JSON_TYPE(t), t->'$.a[1]', j FROM j ORDER BY id",
		`1,OBJECT,true,{"x": 1}`, `2,STRING,NULL,[1, 2]`)
	_, err := db.Exec(`INSERT INTO j VALUES (3, 'oops', '')`)
	expectErr(t, err, 3140, "")
	mustExec(t, db, "ADMIN CHECK TABLE j")
}

// TestConvertToCharacterSet: ALTER TABLE ... CONVERT TO CHARACTER SET (or
// CHARSET) converts every character column online, rebuilding the indexes
// that hold them, and sets the table's default; [DEFAULT] CHARSET alone
// changes only the default, which columns added later get.
func TestConvertToCharacterSet(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(50), email VARCHAR(100) NOT NULL, bio TEXT, "+
		"s ENUM('a','b'), b VARBINARY(10), KEY kn (name), UNIQUE KEY ue (email)) DEFAULT CHARSET=utf8mb3")
	mustExec(t, db, "INSERT INTO u VALUES (1, 'José', 'A@b', 'x', 'a', 'zz'), (2, 'Zoë', 'c@d', NULL, 'b', NULL)")
	mustExec(t, db, "ALTER TABLE u CONVERT TO CHARSET utf8mb4 COLLATE utf8mb4_unicode_ci")
	got := showCreate(t, db, "u")
	// TEXT grows to hold as many characters in four bytes each as in three.
	for _, want := range []string{"`name` varchar(50) DEFAULT NULL", "`bio` mediumtext,", "`b` varbinary(10)", "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"} {
		if !strings.Contains(got, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, got)
		}
	}
	expectRows(t, db, "SELECT id FROM u FORCE INDEX (kn) WHERE name = 'jose'", "1")
	expectRows(t, db, "SELECT id FROM u FORCE INDEX (ue) WHERE email = 'a@B'", "1")
	_, err := db.Exec("INSERT INTO u (id, email) VALUES (3, 'C@D')")
	expectErr(t, err, 1062, "for key 'u.ue'")
	mustExec(t, db, "ADMIN CHECK TABLE u")

	// Both ends of a foreign key must keep one collation: one end alone
	// is refused while foreign_key_checks is on, as in MySQL.
	mustExec(t, db, "CREATE TABLE par (code VARCHAR(10) PRIMARY KEY) DEFAULT CHARSET=utf8mb3")
	mustExec(t, db, "CREATE TABLE ch (id INT PRIMARY KEY, code VARCHAR(10), FOREIGN KEY (code) REFERENCES par (code)) DEFAULT CHARSET=utf8mb3")
	mustExec(t, db, "INSERT INTO par VALUES ('a')")
	mustExec(t, db, "INSERT INTO ch VALUES (1, 'a')")
	for _, q := range []string{"ALTER TABLE ch CONVERT TO CHARACTER SET utf8mb4", "ALTER TABLE par CONVERT TO CHARACTER SET utf8mb4"} {
		_, err := db.Exec(q)
		expectErr(t, err, 3780, "in foreign key constraint 'ch_ibfk_1' are incompatible")
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "SET SESSION foreign_key_checks = 0")
	mustExec(t, conn, "ALTER TABLE par CONVERT TO CHARACTER SET utf8mb4")
	mustExec(t, conn, "ALTER TABLE ch CONVERT TO CHARACTER SET utf8mb4")
	mustExec(t, db, "INSERT INTO ch VALUES (2, 'A')")
	_, err = db.Exec("INSERT INTO ch VALUES (3, 'zz')")
	expectErr(t, err, 1452, "")

	mustExec(t, db, "ALTER TABLE u DEFAULT CHARSET=latin1")
	mustExec(t, db, "ALTER TABLE u ADD COLUMN z VARCHAR(5)")
	expectRows(t, db, "SELECT collation_name FROM information_schema.columns WHERE table_name = 'u' AND column_name = 'z'", "latin1_swedish_ci")

	// A latin1 table's TEXT types and long VARCHARs become the TEXT types
	// that hold as many characters in utf8mb4, as in MySQL; a conversion
	// back does not shrink them.
	mustExec(t, db, "CREATE TABLE l (id INT PRIMARY KEY, a TINYTEXT, b TEXT, c VARCHAR(100), d VARCHAR(20000)) DEFAULT CHARSET=latin1")
	mustExec(t, db, "INSERT INTO l VALUES (1, 'x', REPEAT('e', 60000), 'y', 'z')")
	for _, cs := range []string{"utf8mb4", "latin1"} {
		mustExec(t, db, "ALTER TABLE l CONVERT TO CHARACTER SET "+cs)
		got := showCreate(t, db, "l")
		for _, want := range []string{"`a` text", "`b` mediumtext", "`c` varchar(100)", "`d` mediumtext"} {
			if !strings.Contains(got, want) {
				t.Errorf("after CONVERT TO %s, SHOW CREATE TABLE lacks %q:\n%s", cs, want, got)
			}
		}
	}
	expectRows(t, db, "SELECT CHAR_LENGTH(b) FROM l", "60000")
	mustExec(t, db, "ADMIN CHECK TABLE l")
	got = showCreate(t, db, "u")
	if !strings.Contains(got, "`z` varchar(5) DEFAULT NULL") || !strings.Contains(got, "DEFAULT CHARSET=latin1") ||
		!strings.Contains(got, "`name` varchar(50) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci") {
		t.Errorf("after DEFAULT CHARSET=latin1:\n%s", got)
	}
}
