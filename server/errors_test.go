package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestErrorCodes: malformed statements get MySQL 8's error code, SQLSTATE
// and text. Statements run in order on one connection.
func TestErrorCodes(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cols := func(n int, prefix string) string {
		var b []string
		for i := 0; i < n; i++ {
			b = append(b, fmt.Sprintf("%s%d", prefix, i))
		}
		return strings.Join(b, ", ")
	}
	colDefs := func(n int) string {
		var b []string
		for i := 0; i < n; i++ {
			b = append(b, fmt.Sprintf("c%d int", i))
		}
		return strings.Join(b, ", ")
	}
	long := strings.Repeat("x", 65)
	var manyIndexes []string
	for i := 0; i < 65; i++ {
		manyIndexes = append(manyIndexes, fmt.Sprintf("KEY k%d (a)", i))
	}
	cases := []struct {
		stmt  string
		code  uint16 // 0: must succeed
		state string
		msg   string // "" = not checked
	}{
		{"SELECT * FROM t", 1046, "3D000", "No database selected"},
		{"CREATE TABLE t (a int)", 1046, "3D000", "No database selected"},
		{"CREATE DATABASE d", 0, "", ""},
		{"USE d", 0, "", ""},
		{"CREATE TABLE t (id int primary key, c varchar(3), ti tinyint, u int unsigned, d date, dt datetime)", 0, "", ""},
		{"INSERT INTO t (id, c) VALUES (1, 'abcdef')", 1406, "22001", "Data too long for column 'c' at row 1"},
		{"CREATE TABLE x1 (a VARCHAR(5)) CHARSET nosuch", 1115, "42000", "Unknown character set: 'nosuch'"},
		{"ALTER TABLE t CONVERT TO CHARACTER SET nosuch", 1115, "42000", "Unknown character set: 'nosuch'"},
		{"SET NAMES nosuch", 1115, "42000", "Unknown character set: 'nosuch'"},
		{"CREATE TABLE x2 (a VARCHAR(5) COLLATE nosuch_ci)", 1273, "HY000", "Unknown collation: 'nosuch_ci'"},
		{"INSERT INTO t (id, c) VALUES (1, 'a'), (2, 'abcd')", 1406, "22001", "Data too long for column 'c' at row 2"},
		{"INSERT INTO t (id, ti) VALUES (1, 1000)", 1264, "22003", "Out of range value for column 'ti' at row 1"},
		{"INSERT INTO t (id, ti) VALUES (1, 1), (2, -129)", 1264, "22003", "Out of range value for column 'ti' at row 2"},
		{"INSERT INTO t (id, u) VALUES (1, -1)", 1264, "22003", "Out of range value for column 'u' at row 1"},
		{"INSERT INTO t VALUES (1, 'a', 1, 1, '2020-01-01', '2020-01-01')", 0, "", ""},
		{"INSERT INTO t (id, ti) SELECT 5, 1000", 1264, "22003", "Out of range value for column 'ti' at row 1"},
		{"DEALLOCATE PREPARE nope", 1243, "HY000", "Unknown prepared statement handler (nope) given to DEALLOCATE PREPARE"},
		{"SELECT @@global.bogus", 1193, "HY000", "Unknown system variable 'bogus'"},
		{"SELECT * FROM d.nosuch2", 1146, "42S02", "Table 'd.nosuch2' doesn't exist"},
		{"UPDATE t SET ti = 300 WHERE id = 1", 1264, "22003", "Out of range value for column 'ti' at row 1"},
		{"UPDATE t SET ti = ti + 200 WHERE id = 1", 1264, "22003", "Out of range value for column 'ti' at row 1"},
		{"UPDATE t SET u = -5", 1264, "22003", "Out of range value for column 'u' at row 1"},
		{"UPDATE t SET ti = 100 WHERE id = 1", 0, "", ""},
		{"INSERT INTO t (id, ti) VALUES (1, 1) ON DUPLICATE KEY UPDATE ti = 300", 1264, "22003", "Out of range value for column 'ti' at row 1"},
		{"INSERT INTO t (id, ti) VALUES (1, 1) ON DUPLICATE KEY UPDATE ti = ti", 0, "", ""},
		{"INSERT INTO t (id, d) VALUES (2, '2020-13-45')", 1292, "22007", "Incorrect date value: '2020-13-45' for column 'd' at row 1"},
		{"INSERT INTO t (id, dt) VALUES (2, 'not a time')", 1292, "22007", "Incorrect datetime value: 'not a time' for column 'dt' at row 1"},
		{"SET @@bogus = 1", 1193, "HY000", "Unknown system variable 'bogus'"},
		{"SELECT @@bogus", 1193, "HY000", "Unknown system variable 'bogus'"},
		{"SET autocommit = 'x'", 1231, "42000", "Variable 'autocommit' can't be set to the value of 'x'"},
		{"SET time_zone = 'bogus'", 1298, "HY000", "Unknown or incorrect time zone: 'bogus'"},
		{"SET time_zone = '+15:00'", 1298, "HY000", "Unknown or incorrect time zone: '+15:00'"},
		{"SET GLOBAL time_zone = 'bogus'", 1298, "HY000", "Unknown or incorrect time zone: 'bogus'"},
		{"SELECT NOW() IS NOT NULL", 0, "", ""},
		{"SET time_zone = '+05:30'", 0, "", ""},
		{"SET time_zone = 'Europe/Berlin'", 0, "", ""},
		{"SET time_zone = 'SYSTEM'", 0, "", ""},
		{"EXECUTE nope", 1243, "HY000", "Unknown prepared statement handler (nope) given to EXECUTE"},
		{"SELECT 1 UNION SELECT 1, 2", 1222, "21000", "The used SELECT statements have a different number of columns"},
		{"CREATE TABLE t2 (a int, a int)", 1060, "42S21", "Duplicate column name 'a'"},
		{"CREATE TABLE t2 (" + long + " int)", 1059, "42000", "Identifier name '" + long + "' is too long"},
		{"CREATE TABLE " + long + " (a int)", 1059, "42000", "Identifier name '" + long + "' is too long"},
		{"CREATE TABLE w (" + colDefs(17) + ", KEY k (" + cols(17, "c") + "))", 1070, "42000", "Too many key parts specified; max 16 parts allowed"},
		{"CREATE TABLE w (a int, " + strings.Join(manyIndexes, ", ") + ")", 1069, "42000", "Too many keys specified; max 64 keys allowed"},
		{"SELECT @@", 1064, "42000", ""},
		{"KILL 987654", 1094, "HY000", "Unknown thread id: 987654"},
		{"START TRANSACTION READ ONLY", 0, "", ""},
		{"INSERT INTO t (id) VALUES (9)", 1792, "25006", "Cannot execute statement in a READ ONLY transaction."},
		{"ROLLBACK", 0, "", ""},
		{"SELECT * FROM nosuch", 1146, "42S02", "Table 'd.nosuch' doesn't exist"},
		{"INSERT INTO t (id) VALUES (1)", 1062, "23000", ""},
		{"CREATE TABLE e (id int primary key, n int not null, e enum('a','b'), dec1 decimal(5,2), s set('x','y'), j json)", 0, "", ""},
		{"INSERT INTO e (id, n, j) VALUES (1, 1, '{bad')", 3140, "22032", ""},
		{"INSERT INTO e (id) VALUES (1)", 1364, "HY000", "Field 'n' doesn't have a default value"},
		{"INSERT INTO e (id, n) VALUES (1, NULL)", 1048, "23000", "Column 'n' cannot be null"},
		{"INSERT INTO e (id, n, e) VALUES (1, 1, 'z')", 1265, "01000", "Data truncated for column 'e' at row 1"},
		{"INSERT INTO e (id, n, dec1) VALUES (1, 1, 12345.6)", 1264, "22003", "Out of range value for column 'dec1' at row 1"},
		{"INSERT INTO e (id, n) VALUES (1, 'abc')", 1366, "HY000", "Incorrect integer value: 'abc' for column 'n' at row 1"},
		{"INSERT INTO e (id, n, nosuch) VALUES (1, 1, 1)", 1054, "42S22", "Unknown column 'nosuch' in 'field list'"},
		{"INSERT INTO e VALUES (1)", 1136, "21S01", "Column count doesn't match value count at row 1"},
		{"INSERT INTO e (id, n) VALUES (1, 1), (2, 2, 2)", 1136, "21S01", "Column count doesn't match value count at row 2"},
		{"INSERT INTO e SET id = 1, n = 1, n = 2", 1110, "42000", "Column 'n' specified twice"},
		{"SELECT nosuch FROM e", 1054, "42S22", "Unknown column 'nosuch' in 'field list'"},
		{"SELECT id FROM e WHERE nosuch = 1", 1054, "42S22", "Unknown column 'nosuch' in 'where clause'"},
		{"SELECT id FROM e ORDER BY nosuch", 1054, "42S22", "Unknown column 'nosuch' in 'order clause'"},
		{"UPDATE e SET nosuch = 1", 1054, "42S22", "Unknown column 'nosuch' in 'field list'"},
		{"SELECT id FROM e a JOIN e b ON a.id = b.id", 1052, "23000", "Column 'id' in field list is ambiguous"},
		{"SELECT id, n FROM e GROUP BY n", 1055, "42000", "Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'd.e.id' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT * FROM e t1, e t1", 1066, "42000", "Not unique table/alias: 't1'"},
		{"CREATE DATABASE d", 1007, "HY000", "Can't create database 'd'; database exists"},
		{"ALTER TABLE e ADD COLUMN n int", 1060, "42S21", "Duplicate column name 'n'"},
		{"ALTER TABLE e DROP COLUMN nosuch", 1091, "42000", "Can't DROP 'nosuch'; check that column/key exists"},
		{"CREATE TABLE m (a int, PRIMARY KEY (a), PRIMARY KEY (a))", 1068, "42000", "Multiple primary key defined"},
		{"CREATE TABLE m (a int primary key, b int, PRIMARY KEY (b))", 1068, "42000", "Multiple primary key defined"},
		{"CREATE TABLE m (a int auto_increment)", 1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key"},
		{"CREATE TABLE m (a varchar(70000))", 1074, "42000", "Column length too big for column 'a' (max = 16383); use BLOB or TEXT instead"},
		{"CREATE TABLE m (a int, KEY k (nosuch))", 1072, "42000", "Key column 'nosuch' doesn't exist in table"},
		{"SELECT ABS()", 1582, "42000", "Incorrect parameter count in the call to native function 'ABS'"},
		{"SELECT nosuchfunc(1)", 1305, "42000", "FUNCTION d.nosuchfunc does not exist"},
		{"ROLLBACK TO SAVEPOINT nosuch", 1305, "42000", "SAVEPOINT nosuch does not exist"},
		{"SET sql_mode = 'NOSUCH'", 1231, "42000", "Variable 'sql_mode' can't be set to the value of 'NOSUCH'"},
		{"SET SESSION max_connections = 1", 1229, "HY000", "Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL"},
		{"SELECT 1 INTO @a, @b", 1222, "21000", "The used SELECT statements have a different number of columns"},
		{"SELEC 1", 1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC 1' at line 1"},
		{"SELECT *\nFROM e LIMIT -1", 1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'LIMIT -1' at line 2"},
		{"GRANT ALL ON d.* TO nobody", 1410, "42000", "You are not allowed to create a user with GRANT"},
	}
	more := []struct {
		stmt  string
		code  uint16
		state string
		msg   string
	}{
		{"CREATE TABLE w (" + colDefs(17) + ", KEY k (" + cols(16, "c") + "))", 0, "", ""},
		{"CREATE INDEX k2 ON w (" + cols(17, "c") + ")", 1070, "42000", "Too many key parts specified; max 16 parts allowed"},
		{"ALTER TABLE w ADD INDEX k3 (" + cols(17, "c") + ")", 1070, "42000", "Too many key parts specified; max 16 parts allowed"},
		{"ALTER TABLE w ADD INDEX k3 (" + cols(16, "c") + ")", 0, "", ""},
	}
	cases = append(cases, more...)
	for _, c := range cases {
		_, err := conn.ExecContext(ctx, c.stmt)
		what := c.stmt
		if len(what) > 80 {
			what = what[:80] + "..."
		}
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
			continue
		}
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			t.Errorf("%s: got %v, want error %d", what, err, c.code)
			continue
		}
		if me.Number != c.code || c.state != "" && string(me.SQLState[:]) != c.state || c.msg != "" && me.Message != c.msg {
			t.Errorf("%s:\n got %d (%s) %q\nwant %d (%s) %q", what, me.Number, me.SQLState[:], me.Message, c.code, c.state, c.msg)
		}
	}

	// The refused UPDATEs changed nothing; UPDATE IGNORE and non-strict
	// mode clamp, as in MySQL; a prepared UPDATE is checked too.
	var ti, u int64
	if err := conn.QueryRowContext(ctx, "SELECT ti, u FROM t WHERE id = 1").Scan(&ti, &u); err != nil || ti != 100 || u != 1 {
		t.Fatalf("after refused UPDATEs: ti=%d u=%d err=%v", ti, u, err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE t SET ti = ? WHERE id = 1", 1000); err == nil || !strings.Contains(err.Error(), "1264") {
		t.Errorf("prepared out-of-range UPDATE: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE IGNORE t SET ti = 300 WHERE id = 1"); err != nil {
		t.Errorf("UPDATE IGNORE: %v", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT ti FROM t WHERE id = 1").Scan(&ti); err != nil || ti != 127 {
		t.Errorf("after UPDATE IGNORE: ti=%d err=%v", ti, err)
	}
	if _, err := conn.ExecContext(ctx, "SET sql_mode = ''"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE t SET ti = -300 WHERE id = 1"); err != nil {
		t.Errorf("non-strict UPDATE: %v", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT ti FROM t WHERE id = 1").Scan(&ti); err != nil || ti != -128 {
		t.Errorf("after non-strict UPDATE: ti=%d err=%v", ti, err)
	}
	if _, err := conn.ExecContext(ctx, "SET sql_mode = DEFAULT"); err != nil {
		t.Fatal(err)
	}

	// 64 keys are allowed, the 65th is refused by ALTER TABLE and CREATE INDEX.
	if _, err := conn.ExecContext(ctx, "CREATE TABLE k64 (id int primary key, a int, "+strings.Join(manyIndexes[:63], ", ")+")"); err != nil {
		t.Fatalf("table with 64 keys: %v", err)
	}
	for _, q := range []string{"CREATE INDEX k99 ON k64 (a)", "ALTER TABLE k64 ADD INDEX k99 (a)", "ALTER TABLE k64 ADD COLUMN b int UNIQUE"} {
		_, err := conn.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1069 {
			t.Errorf("%s: got %v, want 1069", q, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "ALTER TABLE k64 DROP INDEX k0, ADD INDEX k99 (a)"); err != nil {
		t.Errorf("drop one, add one: %v", err)
	}
}
