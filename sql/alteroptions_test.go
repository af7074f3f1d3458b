package sql_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAlterTableOptions runs table options as a MySQL client sends them:
// separated by spaces, with COMMENT, on plain and temporary tables.
func TestAlterTableOptions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10)) COMMENT='orig'")
	comment := func() string {
		t.Helper()
		var c string
		if err := db.QueryRow("SELECT table_comment FROM information_schema.tables WHERE table_schema = 'app' AND table_name = 't'").Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	mustExec(t, db, "ALTER TABLE t COMMENT='hello'")
	if c := comment(); c != "hello" {
		t.Fatalf("comment %q after ALTER TABLE t COMMENT='hello'", c)
	}
	mustExec(t, db, "ALTER TABLE t ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT 'it''s'")
	got := showCreate(t, db, "t")
	if !strings.Contains(got, "COLLATE=utf8mb4_bin COMMENT='it''s'") {
		t.Fatalf("SHOW CREATE TABLE after spaced options:\n%s", got)
	}
	// With a change that runs as a job, and a column comment left alone.
	mustExec(t, db, "ALTER TABLE t ADD COLUMN c INT COMMENT 'col', ADD INDEX ia (a), COMMENT = 'both'")
	got = showCreate(t, db, "t")
	for _, want := range []string{"`c` int DEFAULT NULL COMMENT 'col'", "KEY `ia` (`a`)", "COMMENT='both'"} {
		if !strings.Contains(got, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, got)
		}
	}
	_, err := db.Exec("ALTER TABLE t COMMENT '" + strings.Repeat("x", 2049) + "'")
	expectErr(t, err, 1628, "Comment for table 't' is too long (max = 2048)")
	_, err = db.Exec("CREATE TABLE long_comment (id INT) COMMENT '" + strings.Repeat("x", 2049) + "'")
	expectErr(t, err, 1628, "Comment for table 'long_comment' is too long")
	if c := comment(); c != "both" {
		t.Fatalf("comment %q after a refused ALTER", c)
	}
	_, err = db.Exec("ALTER TABLE nosuch COMMENT 'x'")
	expectErr(t, err, 1146, "nosuch")

	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "CREATE TEMPORARY TABLE tt (x INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "ALTER TABLE tt COMMENT 'tmp' ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	var name, create string
	if err := conn.QueryRowContext(t.Context(), "SHOW CREATE TABLE tt").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, "COMMENT='tmp'") {
		t.Fatalf("temporary table after ALTER ... COMMENT:\n%s", create)
	}
}

// TestYearWidth: YEAR(4), as MySQL 5.7 and MariaDB dumps write it, is
// YEAR (with a TIME(n) in the same statement keeping its precision);
// other widths get MySQL 8's 1818.
func TestYearWidth(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE y (id INT PRIMARY KEY, yr YEAR(4) DEFAULT NULL, tm TIME(1))")
	mustExec(t, db, "ALTER TABLE y ADD COLUMN y2 YEAR(4) NOT NULL DEFAULT 2000, ENGINE=InnoDB ROW_FORMAT=DYNAMIC")
	mustExec(t, db, "INSERT INTO y (id, yr, tm) VALUES (1, 2024, '10:11:12.34')")
	expectRows(t, db, "SELECT yr, y2, CAST(tm AS CHAR) FROM y", "2024,2000,10:11:12.3")
	got := showCreate(t, db, "y")
	if !strings.Contains(got, "`yr` year DEFAULT NULL") || !strings.Contains(got, "`tm` time(1)") {
		t.Fatalf("SHOW CREATE TABLE:\n%s", got)
	}
	_, err := db.Exec("CREATE TABLE y2 (yr YEAR(2))")
	expectErr(t, err, 1818, "Supports only YEAR or YEAR(4) column.")
	expectRows(t, db, "SELECT YEAR('2020-05-06')", "2020")
}
