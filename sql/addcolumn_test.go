package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAddColumnInstant: ADD COLUMN changes only the catalog; rows written
// before it read the column's default (constant DEFAULT, NULL, or the
// type's implicit default for NOT NULL), through full rows, projections,
// index lookups and point selects; updated old rows keep their values.
func TestAddColumnInstant(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ka (a))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10), (2, 20), (3, NULL)")

	// A statement prepared before the change (the prepared-statement fast
	// path's shapes) reads the new columns after it.
	star, err := db.Prepare("SELECT * FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer star.Close()
	expectArgs(t, stmtQuerier{star}, "", []any{2}, "2,20")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN i INT NOT NULL DEFAULT 7")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN s VARCHAR(20) DEFAULT 'hello', ADD COLUMN n BIGINT NULL")
	mustExec(t, db, "ALTER TABLE t ADD d DECIMAL(6,2) NOT NULL, ADD COLUMN dt DATETIME DEFAULT '2020-01-02 03:04:05', ALGORITHM=INSTANT")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN e ENUM('x','y') NOT NULL DEFAULT 'y', ADD COLUMN z VARCHAR(5) NOT NULL, ADD COLUMN f DOUBLE DEFAULT 1.5, LOCK=NONE, ALGORITHM=INPLACE")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN u INT UNSIGNED NOT NULL, ALGORITHM=COPY, LOCK=EXCLUSIVE")
	// The implicit defaults of NOT NULL columns without a DEFAULT.
	mustExec(t, db, "CREATE TABLE imp (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO imp VALUES (1)")
	mustExec(t, db, "ALTER TABLE imp ADD COLUMN en ENUM('p','q') NOT NULL, ADD COLUMN st SET('p','q') NOT NULL, ADD COLUMN tm TIME NOT NULL, ADD COLUMN yr YEAR NOT NULL, ADD COLUMN fl FLOAT NOT NULL, ADD COLUMN bl BLOB NOT NULL, ADD COLUMN bg BIGINT UNSIGNED NOT NULL DEFAULT 18446744073709551615, ADD COLUMN dd DATE NOT NULL DEFAULT '2024-02-03', ADD COLUMN ts TIMESTAMP NULL")
	expectRows(t, db, "SELECT * FROM imp", "1,p,,00:00:00,0,0,,18446744073709551615,2024-02-03T00:00:00Z,NULL")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN v BIGINT NULL DEFAULT NULL")

	mustExec(t, db, "INSERT INTO t (id, a, i, s, n, d, z, u, v) VALUES (4, 40, 8, 'new', 99, 1.25, 'zz', 5, 48)")
	const all = "SELECT id, a, i, s, n, d, dt, e, z, f, u, v FROM t ORDER BY id"
	expectRows(t, db, all,
		"1,10,7,hello,NULL,0.00,2020-01-02T03:04:05Z,y,,1.5,0,NULL",
		"2,20,7,hello,NULL,0.00,2020-01-02T03:04:05Z,y,,1.5,0,NULL",
		"3,NULL,7,hello,NULL,0.00,2020-01-02T03:04:05Z,y,,1.5,0,NULL",
		"4,40,8,new,99,1.25,2020-01-02T03:04:05Z,y,zz,1.5,5,48")
	// Projections, a point select and an index lookup read the defaults too.
	expectRows(t, db, "SELECT s, i FROM t WHERE id = 2", "hello,7")
	expectRows(t, db, "SELECT id, s, d FROM t WHERE a = 10", "1,hello,0.00")
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE i = 7 AND s = 'hello' AND n IS NULL", "3")
	// SELECT * has the columns in schema order.
	expectRows(t, db, "SELECT * FROM t WHERE id = 1", "1,10,7,hello,NULL,0.00,2020-01-02T03:04:05Z,y,,1.5,0,NULL")

	// Prepared statements: point, range and SUM shapes of the fast path.
	expectArgs(t, stmtQuerier{star}, "", []any{2}, "2,20,7,hello,NULL,0.00,2020-01-02T03:04:05Z,y,,1.5,0,NULL")
	expectArgs(t, db, "SELECT s, i, d, z FROM t WHERE id = ?", []any{3}, "hello,7,0.00,")
	expectArgs(t, db, "SELECT id, s, u FROM t WHERE id BETWEEN ? AND ? ORDER BY s", []any{1, 1}, "1,hello,0")
	expectArgs(t, db, "SELECT SUM(i) FROM t WHERE id BETWEEN ? AND ?", []any{1, 4}, "29")

	// Updating an old row stores the defaults it read along with the change.
	mustExec(t, db, "UPDATE t SET a = 11 WHERE id = 1")
	mustExec(t, db, "UPDATE t SET s = 'changed', n = 5 WHERE id = 2")
	mustExec(t, db, "UPDATE t SET n = NULL, i = i + 1, v = 3 WHERE id = 3")
	expectRows(t, db, "SELECT id, a, i, s, n, v FROM t ORDER BY id",
		"1,11,7,hello,NULL,NULL",
		"2,20,7,changed,5,NULL",
		"3,NULL,8,hello,NULL,3",
		"4,40,8,new,99,48")
	mustExec(t, db, "DELETE FROM t WHERE id = 4")
	expectRows(t, db, "SELECT COUNT(*) FROM t", "3")
	mustExec(t, db, "ADMIN CHECK TABLE t")

	// The new columns can be indexed online, in both backfill modes, and
	// the index holds old rows' defaults.
	mustExec(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = OFF")
	mustExec(t, db, "CREATE INDEX ks ON t (s)")
	mustExec(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = ON")
	mustExec(t, db, "CREATE INDEX kin ON t (i, n)")
	mustExec(t, db, "ALTER TABLE t ADD INDEX kd (d, z)")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (ks) WHERE s = 'hello' ORDER BY id", "1", "3")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (kin) WHERE i = 7 AND n IS NULL", "1")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (kd) WHERE d = 0 AND z = '' ORDER BY id", "1", "2", "3")

	// A column with an inline UNIQUE key: the column is instant, the key an
	// online index job over rows that all read NULL.
	mustExec(t, db, "ALTER TABLE t ADD COLUMN w INT UNIQUE")
	mustExec(t, db, "UPDATE t SET w = id * 100 WHERE id < 3")
	expectRows(t, db, "SELECT id, w FROM t ORDER BY id", "1,100", "2,200", "3,NULL")
	_, err = db.Exec("UPDATE t SET w = 100 WHERE id = 3")
	expectErr(t, err, 1062, "Duplicate entry")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestAddColumnOrder: FIRST and AFTER place the column in SELECT * and
// SHOW CREATE TABLE without rewriting rows.
func TestAddColumnOrder(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 2, 3)")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN f INT DEFAULT 9 FIRST")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN m VARCHAR(3) NOT NULL DEFAULT 'm' AFTER a, ADD COLUMN l INT AFTER b")
	expectRows(t, db, "SELECT * FROM t", "9,1,2,m,3,NULL")
	mustExec(t, db, "INSERT INTO t VALUES (8, 4, 5, 'q', 6, 7)")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "9,1,2,m,3,NULL", "8,4,5,q,6,7")
	// A column and an index on it in one statement: the index job runs
	// after the column's.
	mustExec(t, db, "ALTER TABLE t ADD COLUMN x INT DEFAULT 5, ADD INDEX ix (x)")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (ix) WHERE x = 5 ORDER BY id", "1", "4")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	got := rows(t, db, "SHOW CREATE TABLE t")
	if len(got) != 1 {
		t.Fatalf("SHOW CREATE TABLE: %q", got)
	}
	ddl := got[0]
	want := []string{"`f` int DEFAULT '9'", "`id` int NOT NULL", "`a` int", "`m` varchar(3) NOT NULL DEFAULT 'm'", "`b` int", "`l` int", "`x` int DEFAULT '5'", "KEY `ix` (`x`)"}
	at := 0
	for _, w := range want {
		i := strings.Index(ddl[at:], w)
		if i < 0 {
			t.Fatalf("SHOW CREATE TABLE: %q not found in order in\n%s", w, ddl)
		}
		at += i + len(w)
	}
}

// TestAddColumnRestart: an added column, its origin default and its
// position survive a restart.
func TestAddColumnRestart(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1)")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN c VARCHAR(8) NOT NULL DEFAULT 'old' FIRST")
	mustExec(t, db, "INSERT INTO t VALUES ('new', 2, 2)")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartDir(t, dir)
	db2 := s2.DB("app")
	expectRows(t, db2, "SELECT * FROM t ORDER BY id", "old,1,1", "new,2,2")
	mustExec(t, db2, "ALTER TABLE t ADD COLUMN d INT DEFAULT 4")
	expectRows(t, db2, "SELECT c, id, d FROM t ORDER BY id", "old,1,4", "new,2,4")
	mustExec(t, db2, "ADMIN CHECK TABLE t")
}

// TestAddColumnConcurrentWriter: a writer inserting and updating rows
// while columns are added loses nothing; rows it wrote on the old schema
// read the default, rows on the new one keep their values.
func TestAddColumnConcurrentWriter(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, KEY kv (v))")
	for i := 1; i <= 200; i++ {
		mustExec(t, db, "INSERT INTO t VALUES (?, ?)", i, i)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	var inserted, updated int
	go func() {
		id := 1000
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			id++
			if _, err := db.Exec("INSERT INTO t (id, v) VALUES (?, ?)", id, id); err != nil {
				done <- fmt.Errorf("insert %d: %w", id, err)
				return
			}
			inserted++
			for {
				_, err := db.Exec("UPDATE t SET v = v + 1 WHERE id = ?", id%200+1)
				if err == nil {
					updated++
					break
				}
				if errCode(err) != 1213 { // a conflict with the ALTER's commit is retried
					done <- fmt.Errorf("update: %w", err)
					return
				}
			}
		}
	}()
	for i := 0; i < 5; i++ {
		mustExec(t, db, fmt.Sprintf("ALTER TABLE t ADD COLUMN c%d INT NOT NULL DEFAULT %d", i, i*10))
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if inserted == 0 {
		t.Fatal("the writer wrote nothing")
	}
	// Every row is there, with its v: inserted rows have v = id plus the
	// updates of rows 1..200.
	expectRows(t, db, "SELECT COUNT(*) FROM t", strconv.Itoa(200+inserted))
	expectRows(t, db, "SELECT SUM(v) FROM t", strconv.Itoa(200*201/2+updated+sumRange(1001, 1000+inserted)))
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE c0 = 0 AND c1 = 10 AND c2 = 20 AND c3 = 30 AND c4 = 40", strconv.Itoa(200+inserted))
	mustExec(t, db, "UPDATE t SET c4 = id WHERE id <= 10")
	expectRows(t, db, "SELECT SUM(c4) FROM t WHERE id <= 10", "55")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	t.Logf("%d inserts, %d updates during 5 ADD COLUMNs", inserted, updated)
}

func sumRange(lo, hi int) int {
	s := 0
	for i := lo; i <= hi; i++ {
		s += i
	}
	return s
}

// TestAddColumnErrors: what cannot be added instantly is refused, and a
// refused statement changes nothing.
func TestAddColumnErrors(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1)")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE t ADD COLUMN a INT", 1060, "Duplicate column name 'a'"},
		{"ALTER TABLE t ADD COLUMN A VARCHAR(3)", 1060, "Duplicate column name"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 5, ADD COLUMN a INT", 1060, "Duplicate column name 'a'"},
		{"ALTER TABLE t ADD COLUMN n INT AUTO_INCREMENT", 1075, "there can be only one auto column and it must be defined as a key"},
		{"ALTER TABLE t ADD COLUMN n INT AUTO_INCREMENT UNIQUE", 1846, "ALGORITHM=INSTANT is not supported"},
		{"ALTER TABLE t ADD COLUMN n INT PRIMARY KEY", 0, ""},
		{"ALTER TABLE t ADD COLUMN n INT AS (a * 2) STORED", 1235, "generated column"},
		{"ALTER TABLE t ADD COLUMN n INT AS (a * 2) VIRTUAL", 1235, "generated column"},
		{"ALTER TABLE t ADD COLUMN n INT AFTER nosuch", 1054, "nosuch"},
		{"ALTER TABLE t ADD COLUMN n DOUBLE DEFAULT (RAND())", 1235, "gives each row its own value"},
		{"ALTER TABLE t ADD COLUMN n VARCHAR(36) DEFAULT (UUID())", 1235, "gives each row its own value"},
		{"ALTER TABLE t ADD COLUMN n INT, ALGORITHM=BOGUS", 1800, "Unknown ALGORITHM 'BOGUS'"},
	} {
		_, err := db.Exec(c.q)
		if err == nil {
			t.Errorf("%s: succeeded", c.q)
			continue
		}
		if c.code != 0 && (errCode(err) != c.code || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s: got %v, want %d %q", c.q, err, c.code, c.msg)
		}
		t.Logf("%s: %v", c.q, err)
	}
	expectRows(t, db, "SELECT * FROM t", "1,1")
	expectRows(t, db, "SELECT COUNT(*) FROM information_schema.ddl_jobs", "0")
}

// TestAddColumnIsAJob: each ADD COLUMN clause is an "add column" job that
// ADMIN SHOW DDL JOBS and information_schema.ddl_jobs list, absent ->
// public in one step, and a failed one is listed as rolled back.
func TestAddColumnIsAJob(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1)")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN b INT DEFAULT 2, ADD COLUMN c INT DEFAULT 3 FIRST")
	expectRows(t, db, "SELECT job_type, table_name, state, schema_state, comments FROM information_schema.ddl_jobs ORDER BY job_id",
		"add column,t,synced,public,mode=instant", "add column,t,synced,public,mode=instant")
	expectRows(t, db, "SELECT * FROM t", "3,1,1,2")
	if got := rows(t, db, "ADMIN SHOW DDL JOBS"); len(got) != 2 || !strings.Contains(got[0], "add column") {
		t.Fatalf("ADMIN SHOW DDL JOBS: %q", got)
	}
	// An open transaction on the old schema holds the job on the metadata
	// lock, as it holds MySQL's ALTER; its commit lets the job end.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	expectRows(t, tx, "SELECT a FROM t WHERE id = 1", "1")
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("ALTER TABLE t ADD COLUMN d VARCHAR(4) NOT NULL DEFAULT 'dd'")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := rows(t, db, "SELECT comments FROM information_schema.ddl_jobs WHERE query LIKE '%ADD COLUMN d%'")
		if len(got) == 1 && strings.Contains(got[0], "waiting for a transaction") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job does not wait for the open transaction: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("ALTER returned (%v) while a transaction on the old schema is open", err)
	default:
	}
	// The old transaction still writes rows without the new column; they
	// read its default.
	if _, err := tx.Exec("INSERT INTO t (id, a) VALUES (2, 5)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id, d FROM t ORDER BY id", "1,dd", "2,dd")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

type stmtQuerier struct{ *sql.Stmt }

func (s stmtQuerier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return s.Stmt.QueryContext(ctx, args...)
}

// expectArgs is expectRows for a statement with parameters (sent as a
// server-side prepared statement).
func expectArgs(t *testing.T, db querier, q string, args []any, want ...string) {
	t.Helper()
	got := rows(t, db, q, args...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %v:\n got %q\nwant %q", q, args, got, want)
	}
}

// TestAddColumnJobSurvivesRestart: an ADD COLUMN queued behind a paused
// ADD INDEX on the same table is stored with its definition and origin
// default, and runs after a restart once the index job goes on.
func TestAddColumnJobSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	loadRows(t, db, 20000)
	setMode(t, db, "txn")
	slowBackfill(t, db)
	done := make(chan error, 2)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a)"); done <- err }()
	ix := waitJob(t, db, func(j jobRow) bool { return j.state == "running" && j.rowCount > 0 }, "is backfilling")
	mustExec(t, db, fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", ix.id))
	waitJob(t, db, func(x jobRow) bool { return x.id == ix.id && x.state == "paused" }, "is paused")
	go func() {
		_, err := db.Exec("ALTER TABLE t ADD COLUMN n VARCHAR(10) NOT NULL DEFAULT 'forty-two' AFTER a")
		done <- err
	}()
	col := waitJob(t, db, func(x jobRow) bool { return x.id != ix.id && x.state == "queueing" }, "is queued")
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE id < 10", "10")
	if _, err := db.Exec("SELECT n FROM t LIMIT 1"); errCode(err) != 1054 {
		t.Fatalf("the queued column is visible: %v", err)
	}
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The two ALTER statements lose their connections; their jobs stay.

	s2 := servertest.StartDir(t, dir)
	db2 := s2.DB("app")
	mustExec(t, db2, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	mustExec(t, db2, "SET GLOBAL tidb_ddl_reorg_batch_size = 256")
	mustExec(t, db2, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", ix.id))
	waitJob(t, db2, func(x jobRow) bool { return x.id == col.id && x.state == "synced" && x.schema == "public" }, "added the column")
	expectRows(t, db2, "SELECT id, a, n FROM t WHERE id = 1007", "1007,7,forty-two")
	expectRows(t, db2, "SELECT COUNT(*) FROM t WHERE n = 'forty-two'", "20000")
	mustExec(t, db2, "ADMIN CHECK TABLE t")
}

// TestAddColumnStatementTimeDefault: a column defaulting to the
// statement's time is added instantly; every existing row reads the
// ALTER's time, and rows inserted later their own, as in MySQL. A
// deterministic expression default is a constant for old rows too.
func TestAddColumnStatementTimeDefault(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO t VALUES (1), (2), (3)")
	const now = "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')"
	before := rows(t, db, now)[0]
	mustExec(t, db, "ALTER TABLE t ADD COLUMN ts TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), ADD COLUMN d DATE DEFAULT (CURRENT_DATE), ADD COLUMN n INT DEFAULT (1 + 2)")
	after := rows(t, db, now)[0]
	expectRows(t, db, "SELECT COUNT(DISTINCT ts), COUNT(*) FROM t WHERE d = CURRENT_DATE AND n = 3", "1,3")
	got := rows(t, db, "SELECT DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f') FROM t WHERE id = 1")[0]
	if got < before || got > after {
		t.Errorf("old rows read %s, not the ALTER's time (between %s and %s)", got, before, after)
	}
	time.Sleep(10 * time.Millisecond)
	mustExec(t, db, "INSERT INTO t (id) VALUES (4)")
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE id = 4 AND ts > (SELECT ts FROM t WHERE id = 1) AND n = 3", "1")
	create := rows(t, db, "SHOW CREATE TABLE t")[0]
	for _, want := range []string{"DEFAULT CURRENT_TIMESTAMP(6)", "date DEFAULT (", "DEFAULT ((1 + 2))"} {
		if !strings.Contains(strings.ToLower(create), strings.ToLower(want)) {
			t.Errorf("SHOW CREATE TABLE lacks %s:\n%s", want, create)
		}
	}
	expectRows(t, db, "ADMIN CHECK TABLE t")
}
