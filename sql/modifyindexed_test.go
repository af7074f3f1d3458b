package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestModifyIndexedColumn: a type change of a column that indexes
// contain rebuilds those indexes over the new values online: they keep
// their names, places and kinds, lookups through them find the
// converted values (in the new collation), and ADMIN CHECK TABLE finds
// every entry. A value that does not convert, an index definition the new
// type does not allow, and a primary-key column are refused, the table as
// it was.
func TestModifyIndexedColumn(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(120) COLLATE utf8mb4_bin, b BIGINT, w INT, "+
		"KEY kv (v), UNIQUE KEY ub (b), KEY kvw (v, w), KEY kw (w))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'Abc', 10, 1), (2, 'abd', 20, 2), (3, 'xyz', 300, 3), (4, NULL, NULL, 4)")
	before := showCreate(t, db, "t")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE t MODIFY v VARCHAR(2)", 1265, "Data truncated for column 'v' at row 1"},
		{"ALTER TABLE t MODIFY v TEXT", 1170, "BLOB/TEXT column 'v' used in key specification without a key length"},
		{"ALTER TABLE t MODIFY b TINYINT", 1264, "Out of range value for column 'b' at row 3"},
		{"ALTER TABLE t MODIFY id BIGINT UNSIGNED NOT NULL", 1235, "primary-key column id"},
	} {
		_, err := db.Exec(c.q)
		expectErr(t, err, c.code, c.msg)
		if after := showCreate(t, db, "t"); after != before {
			t.Fatalf("%s changed the table:\n%s\nto\n%s", c.q, before, after)
		}
		mustExec(t, db, "ADMIN CHECK TABLE t")
	}

	// Narrowing, then widening into the table's _ci collation: the
	// index is re-keyed by the new collation.
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(60) COLLATE utf8mb4_bin")
	expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = 'Abc'", "1")
	expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = 'abc'")
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(120) COLLATE utf8mb4_general_ci")
	expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = 'ABC'", "1")
	// Without a collation the column takes the table's.
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(200)")
	expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = 'ABC'", "1")
	expectRows(t, db, "SELECT id FROM t USE INDEX (kvw) WHERE v = 'ABD' AND w = 2", "2")
	mustExec(t, db, "ADMIN CHECK TABLE t")

	// BIGINT -> INT and INT -> VARCHAR on a unique index.
	mustExec(t, db, "ALTER TABLE t MODIFY b INT")
	mustExec(t, db, "ALTER TABLE t CHANGE b b2 VARCHAR(10)")
	expectRows(t, db, "SELECT id FROM t USE INDEX (ub) WHERE b2 = '20'", "2")
	_, err := db.Exec("INSERT INTO t VALUES (5, 'q', '20', 5)")
	expectErr(t, err, 1062, "Duplicate entry '20' for key 't.ub'")
	mustExec(t, db, "ADMIN CHECK TABLE t")

	want := []string{
		"`v` varchar(200)",
		"`b2` varchar(10)",
		"PRIMARY KEY (`id`),\n  KEY `kv` (`v`),\n  UNIQUE KEY `ub` (`b2`),\n  KEY `kvw` (`v`,`w`),\n  KEY `kw` (`w`)",
	}
	got := showCreate(t, db, "t")
	for _, part := range want {
		if !strings.Contains(got, part) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", part, got)
		}
	}
	expectRows(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_name = 't'", "6")

	// A prefix the new column is not longer than, or a type without
	// prefixes, makes the index a whole-column one, as in MySQL.
	mustExec(t, db, "CREATE TABLE p (id INT PRIMARY KEY, v VARCHAR(120), KEY kp (v(100)), KEY kq (v(10)))")
	mustExec(t, db, "INSERT INTO p VALUES (1, '12345678901'), (2, '7')")
	mustExec(t, db, "ALTER TABLE p MODIFY v VARCHAR(60)")
	if got := showCreate(t, db, "p"); !strings.Contains(got, "KEY `kp` (`v`),\n  KEY `kq` (`v`(10))") {
		t.Errorf("prefixes after VARCHAR(60):\n%s", got)
	}
	expectRows(t, db, "SELECT id FROM p USE INDEX (kp) WHERE v = '12345678901'", "1")
	expectRows(t, db, "SELECT id FROM p USE INDEX (kq) WHERE v = '12345678901'", "1")
	mustExec(t, db, "ALTER TABLE p MODIFY v BIGINT")
	if got := showCreate(t, db, "p"); !strings.Contains(got, "KEY `kp` (`v`),\n  KEY `kq` (`v`)") {
		t.Errorf("prefixes after BIGINT:\n%s", got)
	}
	expectRows(t, db, "SELECT id FROM p USE INDEX (kq) WHERE v = 7", "2")
	mustExec(t, db, "ADMIN CHECK TABLE p")

	// sysbench's columns: CHAR to VARCHAR, and an integer narrowed.
	mustExec(t, db, "CREATE TABLE sb (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(12) NOT NULL, KEY k_1 (k), KEY kc (c))")
	mustExec(t, db, "INSERT INTO sb VALUES (1, 5, 'abc'), (2, 70000, 'Abd'), (3, 5, 'xyz')")
	mustExec(t, db, "ALTER TABLE sb MODIFY c VARCHAR(200) NOT NULL")
	expectRows(t, db, "SELECT id FROM sb USE INDEX (kc) WHERE c = 'ABD' ORDER BY id", "2")
	mustExec(t, db, "ALTER TABLE sb MODIFY k BIGINT NOT NULL")
	_, err = db.Exec("ALTER TABLE sb MODIFY k SMALLINT NOT NULL")
	expectErr(t, err, 1264, "Out of range value for column 'k' at row 2")
	mustExec(t, db, "UPDATE sb SET k = 7 WHERE id = 2")
	mustExec(t, db, "ALTER TABLE sb MODIFY k SMALLINT NOT NULL")
	expectRows(t, db, "SELECT id FROM sb USE INDEX (k_1) WHERE k = 5 ORDER BY id", "1", "3")
	mustExec(t, db, "ADMIN CHECK TABLE sb")

	// Without a primary key; two columns of one index in one ALTER.
	mustExec(t, db, "CREATE TABLE h (a VARCHAR(10), b BIGINT, KEY kab (a, b), UNIQUE KEY ub (b))")
	mustExec(t, db, "INSERT INTO h VALUES ('1', 10), ('2', 20), ('3', NULL)")
	mustExec(t, db, "ALTER TABLE h MODIFY a SMALLINT, MODIFY b INT")
	mustExec(t, db, "UPDATE h SET b = 21 WHERE a = 2")
	mustExec(t, db, "DELETE FROM h WHERE a = 1")
	expectRows(t, db, "SELECT a, b FROM h USE INDEX (kab) WHERE a >= 2 ORDER BY a", "2,21", "3,NULL")
	expectRows(t, db, "SELECT a FROM h USE INDEX (ub) WHERE b = 21", "2")
	mustExec(t, db, "ADMIN CHECK TABLE h")
}

// TestModifyIndexedColumnDuplicate: converted values that collide in a
// unique index fail the job with 1062, whether the backfill or a
// statement meets them first, and the table stays as it was.
func TestModifyIndexedColumnDuplicate(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(6,2), s VARCHAR(10) COLLATE utf8mb4_bin, UNIQUE KEY ud (d), UNIQUE KEY us (s))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1.21, 'a'), (2, 2.50, 'B'), (3, 1.24, 'b')")
	before := showCreate(t, db, "t")
	_, err := db.Exec("ALTER TABLE t MODIFY d DECIMAL(6,1)")
	expectErr(t, err, 1062, "Duplicate entry '1.2' for key 't.ud'")
	_, err = db.Exec("ALTER TABLE t MODIFY s VARCHAR(10) COLLATE utf8mb4_general_ci")
	expectErr(t, err, 1062, "for key 't.us'")
	if after := showCreate(t, db, "t"); after != before {
		t.Fatalf("the failed jobs left\n%s\nwant\n%s", after, before)
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")

	mustExec(t, db, "UPDATE t SET d = 3.33 WHERE id = 3")
	_, done := stallModify(t, db, "ALTER TABLE t MODIFY d DECIMAL(6,1)")
	// The replacement index is out of sight until the swap.
	expectRows(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_name = 't'", "3")
	// A statement's value that collides with one a statement wrote
	// since the job began is refused; with a row the backfill has not
	// reached yet, the job fails on it.
	mustExec(t, db, "INSERT INTO t VALUES (4, 7.71, 'c')")
	_, err = db.Exec("INSERT INTO t VALUES (5, 7.74, 'd')")
	expectErr(t, err, 1062, "Duplicate entry '7.7' for key 't.ud'")
	// REPLACE and ON DUPLICATE KEY UPDATE leave the other row alone.
	_, err = db.Exec("REPLACE INTO t VALUES (5, 7.74, 'd')")
	expectErr(t, err, 1062, "Duplicate entry '7.7' for key 't.ud'")
	_, err = db.Exec("INSERT INTO t VALUES (5, 7.74, 'd') ON DUPLICATE KEY UPDATE s = 'z'")
	expectErr(t, err, 1062, "Duplicate entry '7.7' for key 't.ud'")
	mustExec(t, db, "INSERT INTO t VALUES (6, 2.46, 'e')")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	expectErr(t, <-done, 1062, "Duplicate entry '2.5' for key 't.ud'")
	if after := showCreate(t, db, "t"); after != before {
		t.Fatalf("the failed job left\n%s\nwant\n%s", after, before)
	}
	expectRows(t, db, "SELECT id, d FROM t ORDER BY id", "1,1.21", "2,2.50", "3,3.33", "4,7.71", "6,2.46")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "DELETE FROM t WHERE id = 6")
	mustExec(t, db, "ALTER TABLE t MODIFY d DECIMAL(6,1)")
	expectRows(t, db, "SELECT id FROM t USE INDEX (ud) WHERE d = 2.5", "2")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestModifyIndexedColumnCrashInRollback SIGKILLs the server while a
// failed MODIFY COLUMN of an indexed column rolls back (held up by a
// transaction that began during the job); after the restart the rollback
// finishes and the table is as it was.
func TestModifyIndexedColumnCrashInRollback(t *testing.T) {
	dir := t.TempDir()
	child, dsn := startChild(t, dir, "")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE UNIQUE INDEX uc ON t (c)")
	mustExec(t, db, "CREATE INDEX iac ON t (a, c)")
	before := showCreate(t, db, "t")
	var lastJob int64
	for _, j := range showJobs(t, db) {
		lastJob = max(lastJob, j.id)
	}
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'backfill'")
	go db.Exec("ALTER TABLE t MODIFY c VARCHAR(4) NOT NULL")
	waitJob(t, db, func(x jobRow) bool { return x.id > lastJob && strings.Contains(x.comment, "stalled=backfill") }, "stalls in its backfill")
	ctx := context.Background()
	old, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, old, "BEGIN")
	expectRows(t, old, "SELECT c FROM t WHERE id = 5", "v5")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	waitJob(t, db, func(x jobRow) bool {
		return x.id > lastJob && x.state == "rollingback" && strings.Contains(x.comment, "waiting for a transaction")
	}, "waits in its rollback")
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	old.Close()

	db2 := servertest.StartDir(t, dir).DB("app")
	j := waitJob(t, db2, func(x jobRow) bool { return x.id > lastJob && x.state == "rollback done" }, "rolled back")
	if !strings.Contains(j.errText, "Data truncated for column 'c' at row 1001") {
		t.Errorf("job error %q", j.errText)
	}
	if after := showCreate(t, db2, "t"); after != before {
		t.Fatalf("the rollback left\n%s\nwant\n%s", after, before)
	}
	expectRows(t, db2, "SELECT id FROM t USE INDEX (uc) WHERE c = 'v123'", "123")
	mustExec(t, db2, "ADMIN CHECK TABLE t")
	mustExec(t, db2, "DELETE FROM t WHERE id >= 1000")
	mustExec(t, db2, "ALTER TABLE t MODIFY c VARCHAR(4) NOT NULL")
	mustExec(t, db2, "ADMIN CHECK TABLE t")
}

// TestModifyIndexedColumnCancel: a MODIFY COLUMN of an indexed column
// cancelled with its replacement indexes delete-only, or while its
// backfill runs, leaves the table and its indexes as they were, with the
// writes made meanwhile.
func TestModifyIndexedColumnCancel(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT, KEY kv (v), UNIQUE KEY uwv (w, v))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 1), (2, 20, 2)")
	before := showCreate(t, db, "t")
	for i, phase := range []string{"delete-only", "backfill"} {
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+phase+"'")
		done := make(chan error, 1)
		go func() { _, err := db.Exec("ALTER TABLE t MODIFY v VARCHAR(4)"); done <- err }()
		j := waitJob(t, db, func(x jobRow) bool {
			return x.state == "running" && strings.Contains(x.comment, "stalled="+phase)
		}, "stalls at "+phase)
		mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 3)", 3+i, 30+i))
		mustExec(t, db, "UPDATE t SET v = v + 1 WHERE id = 1")
		mustExec(t, db, "DELETE FROM t WHERE id = 2")
		mustExec(t, db, fmt.Sprintf("ADMIN CANCEL DDL JOBS %d", j.id))
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
		expectErr(t, <-done, 8214, "Cancelled DDL job")
		if after := showCreate(t, db, "t"); after != before {
			t.Fatalf("cancel at %s left\n%s\nwant\n%s", phase, after, before)
		}
		mustExec(t, db, "ADMIN CHECK TABLE t")
		mustExec(t, db, "INSERT INTO t VALUES (2, 20, 2)")
	}
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,12,1", "2,20,2", "3,30,3", "4,31,3")
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(4)")
	expectRows(t, db, "SELECT id FROM t USE INDEX (uwv) WHERE w = 3 AND v = '31'", "4")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}
