package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func mustExec(t testing.TB, db execer, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// rows returns a query's result as strings, one row per element.
func rows(t *testing.T, db querier, q string, args ...any) []string {
	t.Helper()
	r, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	cols, _ := r.Columns()
	var out []string
	for r.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			if v.Valid {
				parts[i] = v.String
			} else {
				parts[i] = "NULL"
			}
		}
		out = append(out, strings.Join(parts, ","))
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func expectRows(t *testing.T, db querier, q string, want ...string) {
	t.Helper()
	got := rows(t, db, q)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", q, got, want)
	}
}

func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func expectErr(t *testing.T, err error, code uint16, msgPart string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected error %d, got success", code)
	}
	if errCode(err) != code {
		t.Fatalf("expected error %d, got %v", code, err)
	}
	if msgPart != "" && !strings.Contains(err.Error(), msgPart) {
		t.Fatalf("error %q does not contain %q", err, msgPart)
	}
}

func TestDDLAndDML(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, `CREATE TABLE t (
		id INT NOT NULL AUTO_INCREMENT,
		k INT NOT NULL DEFAULT 0,
		c VARCHAR(20) NOT NULL DEFAULT '',
		n INT NULL,
		PRIMARY KEY (id),
		KEY k_1 (k),
		UNIQUE KEY c_u (c))`)
	mustExec(t, db, "INSERT INTO t (k, c) VALUES (10, 'a'), (20, 'b'), (30, 'c')")
	expectRows(t, db, "SELECT id, k, c, n FROM t ORDER BY id", "1,10,a,NULL", "2,20,b,NULL", "3,30,c,NULL")
	expectRows(t, db, "SELECT id FROM t WHERE k = 20", "2")
	expectRows(t, db, "SELECT id FROM t WHERE c = 'c'", "3")

	mustExec(t, db, "UPDATE t SET k = k + 1 WHERE id = 1")
	expectRows(t, db, "SELECT id FROM t WHERE k = 11", "1")
	expectRows(t, db, "SELECT id FROM t WHERE k = 10")

	// Unique violations name the index the MySQL way.
	_, err := db.Exec("INSERT INTO t (k, c) VALUES (1, 'a')")
	expectErr(t, err, 1062, "Duplicate entry 'a' for key 't.c_u'")
	_, err = db.Exec("INSERT INTO t (id, k, c) VALUES (2, 1, 'zz')")
	expectErr(t, err, 1062, "Duplicate entry '2' for key 't.PRIMARY'")
	_, err = db.Exec("UPDATE t SET c = 'b' WHERE id = 1")
	expectErr(t, err, 1062, "for key 't.c_u'")

	// INSERT IGNORE, ON DUPLICATE KEY UPDATE, REPLACE.
	r := mustExec(t, db, "INSERT IGNORE INTO t (k, c) VALUES (5, 'a'), (6, 'd')")
	if n, _ := r.RowsAffected(); n != 1 {
		t.Fatalf("INSERT IGNORE affected %d rows, want 1", n)
	}
	mustExec(t, db, "INSERT INTO t (id, k, c) VALUES (2, 0, 'x') ON DUPLICATE KEY UPDATE k = k + 100")
	expectRows(t, db, "SELECT k, c FROM t WHERE id = 2", "120,b")
	mustExec(t, db, "REPLACE INTO t (id, k, c) VALUES (9, 9, 'c')") // replaces row 3 through the unique key
	expectRows(t, db, "SELECT id FROM t WHERE c = 'c'", "9")
	expectRows(t, db, "SELECT count(*) FROM t WHERE id = 3", "0")
	expectRows(t, db, "SELECT id FROM t WHERE k = 30")

	mustExec(t, db, "DELETE FROM t WHERE k > 100")
	expectRows(t, db, "SELECT c FROM t ORDER BY id", "a", "d", "c")
	expectRows(t, db, "SELECT id FROM t WHERE c = 'b'")

	out := rows(t, db, "SHOW CREATE TABLE t")
	if len(out) != 1 || !strings.Contains(out[0], "UNIQUE KEY `c_u` (`c`)") || !strings.Contains(out[0], "KEY `k_1` (`k`)") {
		t.Fatalf("SHOW CREATE TABLE: %q", out)
	}
	idx := rows(t, db, "SHOW INDEX FROM t")
	if len(idx) != 3 {
		t.Fatalf("SHOW INDEX: %q", idx)
	}
	expectRows(t, db, "SHOW TABLES", "t")

	mustExec(t, db, "TRUNCATE TABLE t")
	expectRows(t, db, "SELECT count(*) FROM t", "0")
	mustExec(t, db, "INSERT INTO t (k, c) VALUES (1, 'q')")
	expectRows(t, db, "SELECT id, c FROM t WHERE k = 1", "1,q")

	// Tables without an integer primary key: a hidden handle, the primary
	// key as a unique index.
	mustExec(t, db, "CREATE TABLE s (name VARCHAR(10) PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO s VALUES ('x', 1), ('y', 2)")
	_, err = db.Exec("INSERT INTO s VALUES ('x', 3)")
	expectErr(t, err, 1062, "Duplicate entry 'x' for key 's.PRIMARY'")
	mustExec(t, db, "UPDATE s SET v = 5 WHERE name = 'y'")
	mustExec(t, db, "DELETE FROM s WHERE name = 'x'")
	expectRows(t, db, "SELECT name, v FROM s", "y,5")
	mustExec(t, db, "CREATE TABLE nopk (a INT, b INT)")
	mustExec(t, db, "INSERT INTO nopk VALUES (1, 1), (1, 1), (2, 2)")
	mustExec(t, db, "UPDATE nopk SET b = 7 WHERE a = 2")
	mustExec(t, db, "DELETE FROM nopk WHERE a = 1 LIMIT 1")
	expectRows(t, db, "SELECT a, b FROM nopk ORDER BY a", "1,1", "2,7")

	mustExec(t, db, "DROP TABLE t")
	expectRows(t, db, "SHOW TABLES", "nopk", "s")
	mustExec(t, db, "DROP DATABASE app")
	_, err = db.Exec("SELECT 1 FROM s")
	if err == nil {
		t.Fatal("query on a dropped database succeeded")
	}
}

func TestTypesRoundTrip(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, `CREATE TABLE ty (
		id BIGINT PRIMARY KEY,
		ti TINYINT, si SMALLINT UNSIGNED, bi BIGINT UNSIGNED,
		f FLOAT, d DOUBLE, dec1 DECIMAL(12,3),
		ch CHAR(5), vc VARCHAR(30), tx TEXT, bl BLOB, vb VARBINARY(8),
		dt DATE, dtt DATETIME(6), ts TIMESTAMP, tm TIME, y YEAR,
		e ENUM('a','b'), j JSON,
		KEY (ti), KEY (dec1), KEY (dtt), KEY (vb), KEY (tm), KEY (d))`)
	mustExec(t, db, `INSERT INTO ty VALUES (-5, -128, 65535, 18446744073709551615, 1.5, -2.25, -123456.789,
		'ab', 'hello', 'long text', x'00ff10', x'0001', '2024-02-29', '2024-02-29 13:14:15.123456',
		'2024-01-01 00:00:01', '-12:30:00', 2024, 'b', '{"a": [1, 2]}')`)
	expectRows(t, db, "SELECT * FROM ty",
		"-5,-128,65535,18446744073709551615,1.5,-2.25,-123456.789,ab,hello,long text,\x00\xff\x10,\x00\x01,2024-02-29T00:00:00Z,2024-02-29T13:14:15.123456Z,2024-01-01T00:00:01Z,-12:30:00,2024,b,{\"a\": [1, 2]}")
	expectRows(t, db, "SELECT id FROM ty WHERE ti = -128", "-5")
	expectRows(t, db, "SELECT id FROM ty WHERE dec1 < -100000", "-5")
	expectRows(t, db, "SELECT id FROM ty WHERE dtt > '2024-02-29 13:14:15'", "-5")
	expectRows(t, db, "SELECT id FROM ty WHERE tm = '-12:30:00'", "-5")
	expectRows(t, db, "SELECT id FROM ty WHERE vb = x'0001'", "-5")
	expectRows(t, db, "SELECT id FROM ty WHERE d BETWEEN -3 AND -2", "-5")
}

func TestErrorCodes(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10), b BLOB, ci VARCHAR(10) COLLATE utf8mb4_0900_as_cs, KEY kc (c))")
	cases := []struct {
		q    string
		code uint16
		msg  string
	}{
		{"SELEC 1", 1064, "syntax"},
		{"SELECT * FROM nosuch", 1146, "Table 'app.nosuch' doesn't exist"},
		{"SELECT nosuch FROM t", 1054, "nosuch"},
		{"USE nosuchdb", 1049, "Unknown database 'nosuchdb'"},
		{"CREATE TABLE t (a INT)", 1050, "Table 't' already exists"},
		{"CREATE DATABASE app", 1007, ""},
		{"CREATE INDEX kc ON t (c)", 1061, "Duplicate key name 'kc'"},
		{"CREATE INDEX x ON t (nosuch)", 1072, "nosuch"},
		{"CREATE INDEX x ON t (b)", 1170, "BLOB/TEXT column 'b'"},
		{"CREATE INDEX x ON t (c(50))", 1089, "prefix"},
		{"CREATE INDEX x ON t (ci)", 1235, "collation utf8mb4_0900_as_cs"},
		{"DROP INDEX nosuch ON t", 1091, "Can't DROP 'nosuch'; check that column/key exists"},
		{"ALTER TABLE t DROP INDEX nosuch", 1091, "Can't DROP 'nosuch'; check that column/key exists"},
		{"INSERT INTO t (id) VALUES (NULL)", 1048, ""},
		{"CREATE TABLE chk (a INT, FOREIGN KEY (a) REFERENCES t (nosuch))", 3734, "Missing column 'nosuch'"},
		{"CREATE TABLE badix (a INT, ci VARCHAR(5) COLLATE utf8mb4_0900_as_cs, KEY (ci))", 1235, "collation"},
		{"CREATE TABLE badpk (ci VARCHAR(5) COLLATE utf8mb4_0900_as_cs PRIMARY KEY)", 1235, "collation"},
		{"ALTER TABLE t DROP COLUMN id", 1235, "PRIMARY KEY"},
	}
	for _, c := range cases {
		_, err := db.Exec(c.q)
		if err == nil {
			t.Errorf("%s: expected error %d, got success", c.q, c.code)
			continue
		}
		if errCode(err) != c.code || (c.msg != "" && !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s: expected %d %q, got %v", c.q, c.code, c.msg, err)
		}
	}
	// The failed DDL left the catalog unchanged.
	expectRows(t, db, "SELECT count(*) FROM information_schema.statistics WHERE table_name = 't'", "2")
	expectRows(t, db, "SHOW TABLES", "t")
}

func TestTransactions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(4)
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 100)")
	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	c2, _ := db.Conn(ctx)
	defer c1.Close()
	defer c2.Close()

	// Snapshot reads: c1 keeps seeing its snapshot after c2 commits.
	mustExec(t, c1, "BEGIN")
	expectRows(t, c1, "SELECT bal FROM acct WHERE id = 1", "100")
	mustExec(t, c2, "UPDATE acct SET bal = 50 WHERE id = 1")
	expectRows(t, c1, "SELECT bal FROM acct WHERE id = 1", "100")
	// Read-your-own-writes, including through index scans.
	mustExec(t, c1, "INSERT INTO acct VALUES (3, 7)")
	expectRows(t, c1, "SELECT id FROM acct WHERE id >= 2 ORDER BY id", "2", "3")
	mustExec(t, c1, "COMMIT")
	expectRows(t, c1, "SELECT bal FROM acct WHERE id = 1", "50")

	// Row locks: a second writer of a row waits for the first and then
	// applies its change on top; nobody gets an error.
	mustExec(t, c1, "BEGIN")
	mustExec(t, c2, "BEGIN")
	mustExec(t, c1, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
	done := make(chan error, 1)
	go func() {
		_, err := c2.ExecContext(ctx, "UPDATE acct SET bal = bal + 10 WHERE id = 2")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the second writer of row 2 did not wait: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	mustExec(t, c1, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, c2, "COMMIT")
	expectRows(t, c1, "SELECT bal FROM acct WHERE id = 2", "111")

	// A deadlock: the victim gets 1213 and its whole transaction is
	// rolled back at once. sysbench retries with BEGIN and no ROLLBACK:
	// nothing of the failed transaction may survive.
	mustExec(t, c1, "BEGIN")
	mustExec(t, c2, "BEGIN")
	mustExec(t, c1, "UPDATE acct SET bal = bal + 1 WHERE id = 1")
	mustExec(t, c2, "INSERT INTO acct VALUES (4, 4)")
	mustExec(t, c2, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
	go func() {
		_, err := c1.ExecContext(ctx, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	_, err := c2.ExecContext(ctx, "UPDATE acct SET bal = bal + 1 WHERE id = 1")
	expectErr(t, err, 1213, "try restarting transaction")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, c1, "COMMIT")
	mustExec(t, c2, "BEGIN")
	expectRows(t, c2, "SELECT bal FROM acct WHERE id = 2", "112")
	expectRows(t, c2, "SELECT count(*) FROM acct WHERE id = 4", "0")
	mustExec(t, c2, "COMMIT")

	// ROLLBACK discards.
	mustExec(t, c1, "BEGIN")
	mustExec(t, c1, "DELETE FROM acct")
	mustExec(t, c1, "ROLLBACK")
	expectRows(t, c1, "SELECT count(*) FROM acct", "3")

	// A failing statement inside a transaction undoes only itself.
	mustExec(t, c1, "BEGIN")
	mustExec(t, c1, "INSERT INTO acct VALUES (10, 1)")
	_, err = c1.ExecContext(ctx, "INSERT INTO acct VALUES (11, 1), (12, 1), (1, 1)")
	expectErr(t, err, 1062, "")
	mustExec(t, c1, "COMMIT")
	expectRows(t, c1, "SELECT id FROM acct WHERE id >= 10 ORDER BY id", "10")

	// Savepoints.
	mustExec(t, c1, "BEGIN")
	mustExec(t, c1, "INSERT INTO acct VALUES (20, 1)")
	mustExec(t, c1, "SAVEPOINT sp1")
	mustExec(t, c1, "INSERT INTO acct VALUES (21, 1)")
	mustExec(t, c1, "ROLLBACK TO SAVEPOINT sp1")
	mustExec(t, c1, "COMMIT")
	expectRows(t, c1, "SELECT id FROM acct WHERE id >= 20 ORDER BY id", "20")
}

func TestLostUpdateUnderConcurrency(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE ctr (id INT PRIMARY KEY, n INT NOT NULL)")
	mustExec(t, db, "INSERT INTO ctr VALUES (1, 0)")
	const workers, per = 6, 40
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			conn, err := db.Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for i := 0; i < per; {
				_, err := conn.ExecContext(context.Background(), "BEGIN")
				if err == nil {
					var n int
					// A locking read, as on MySQL: a plain SELECT reads
					// the snapshot and the update would be lost.
					err = conn.QueryRowContext(context.Background(), "SELECT n FROM ctr WHERE id = 1 FOR UPDATE").Scan(&n)
					if err == nil {
						_, err = conn.ExecContext(context.Background(), "UPDATE ctr SET n = ? WHERE id = 1", n+1)
					}
					if err == nil {
						_, err = conn.ExecContext(context.Background(), "COMMIT")
					}
				}
				if err != nil {
					errs <- err
					return
				}
				i++
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	expectRows(t, db, "SELECT n FROM ctr WHERE id = 1", fmt.Sprint(workers*per))
}

func TestDisconnectRollsBack(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	conn, err := sql.Open("mysql", s.DSN("app"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := conn.Conn(context.Background())
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO t VALUES (1)")
	c.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() })
	c.Close()
	conn.Close()
	expectRows(t, db, "SELECT count(*) FROM t", "0")
	// The abandoned transaction holds no write: another can take the key.
	mustExec(t, db, "INSERT INTO t VALUES (1)")
}

func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), KEY kv (v))")
	mustExec(t, db, "INSERT INTO t (v) VALUES ('a'), ('b')")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartDir(t, dir)
	db2 := s2.DB("app")
	expectRows(t, db2, "SELECT id, v FROM t WHERE v = 'b'", "2,b")
	mustExec(t, db2, "INSERT INTO t (v) VALUES ('c')")
	got := rows(t, db2, "SELECT id FROM t WHERE v = 'c'")
	var id int
	fmt.Sscan(got[0], &id)
	if id <= 2 {
		t.Fatalf("AUTO_INCREMENT reused id %d after restart", id)
	}
	sort.Strings(got)
}

// TestGeneratedColumns: stored generated columns are computed on every
// write, virtual ones read back their expression, both survive a restart,
// can be indexed online in both backfill modes, and refuse explicit values
// as MySQL does.
func TestGeneratedColumns(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE g (id INT PRIMARY KEY, a INT, b INT AS (a*2) STORED, c INT GENERATED ALWAYS AS (a+1) VIRTUAL, s VARCHAR(20) AS (CONCAT('x', a)))")
	mustExec(t, db, "INSERT INTO g (id, a) VALUES (1, 10), (2, NULL), (3, 7)")
	expectRows(t, db, "SELECT id, a, b, c, s FROM g ORDER BY id", "1,10,20,11,x10", "2,NULL,NULL,NULL,NULL", "3,7,14,8,x7")
	mustExec(t, db, "UPDATE g SET a = 5 WHERE id = 1")
	expectRows(t, db, "SELECT id, a, b, c FROM g WHERE id = 1", "1,5,10,6")
	expectRows(t, db, "SELECT count(*) FROM g WHERE a = 7", "1") // a projection over a table with a virtual column
	expectRows(t, db, "SELECT s FROM g WHERE c = 8", "x7")
	_, err := db.Exec("INSERT INTO g (id, a, b) VALUES (4, 1, 99)")
	expectErr(t, err, 3105, "The value specified for generated column 'b' in table 'g' is not allowed")
	_, err = db.Exec("UPDATE g SET c = 1 WHERE id = 1")
	expectErr(t, err, 3105, "The value specified for generated column 'c' in table 'g' is not allowed")
	for _, mode := range []string{"txn", "ingest"} {
		setMode(t, db, mode)
		mustExec(t, db, "CREATE INDEX ib ON g (b)")
		mustExec(t, db, "CREATE UNIQUE INDEX ic ON g (c)")
		mustExec(t, db, "ADMIN CHECK TABLE g")
		expectRows(t, db, "SELECT id FROM g WHERE b = 14", "3")
		expectRows(t, db, "SELECT id FROM g WHERE c = 6", "1")
		mustExec(t, db, "UPDATE g SET a = 100 WHERE id = 3")
		expectRows(t, db, "SELECT id FROM g WHERE c = 101", "3")
		expectRows(t, db, "SELECT count(*) FROM g WHERE c = 8", "0")
		_, err = db.Exec("INSERT INTO g (id, a) VALUES (5, 100)")
		expectErr(t, err, 1062, "Duplicate entry '101' for key 'g.ic'")
		mustExec(t, db, "ADMIN CHECK TABLE g")
		mustExec(t, db, "DROP INDEX ib ON g")
		mustExec(t, db, "DROP INDEX ic ON g")
		mustExec(t, db, "UPDATE g SET a = 7 WHERE id = 3")
	}
	s.Close()
	s = servertest.StartDir(t, dir)
	db = s.DB("app")
	expectRows(t, db, "SELECT id, a, b, c, s FROM g ORDER BY id", "1,5,10,6,x5", "2,NULL,NULL,NULL,NULL", "3,7,14,8,x7")
	mustExec(t, db, "INSERT INTO g (id, a) VALUES (6, 1)")
	expectRows(t, db, "SELECT b, c FROM g WHERE id = 6", "2,2")
	// The same as a prepared statement (the fast path's shape).
	st, err := db.Prepare("SELECT b, c FROM g WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	expectArgs(t, stmtQuerier{st}, "", []any{6}, "2,2")
}
