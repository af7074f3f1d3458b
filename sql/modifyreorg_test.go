package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func showCreate(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	var create string
	if err := db.QueryRow("SHOW CREATE TABLE "+table).Scan(new(string), &create); err != nil {
		t.Fatal(err)
	}
	return create
}

// TestModifyColumnConversions: type changes that rewrite values run as
// jobs; each converts every row as MySQL's table copy does in strict mode,
// and a value that does not convert fails the ALTER with MySQL's error
// naming the column and the first bad row, leaving the table as it was.
func TestModifyColumnConversions(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, i INT, s VARCHAR(20), d DECIMAL(6,2), f DOUBLE, n INT NULL, k INT, KEY kk (k))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 100, '12', 1.25, 2.5, 1, 1), (2, -5, 'abc', 10.75, 3.5, NULL, 2), (3, 300, '  7 ', 3.00, -2.5, 3, 3)")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE t MODIFY i TINYINT", 1264, "Out of range value for column 'i' at row 3"},
		{"ALTER TABLE t MODIFY i TINYINT UNSIGNED", 1264, "Out of range value for column 'i' at row 2"},
		{"ALTER TABLE t MODIFY i VARCHAR(2)", 1265, "Data truncated for column 'i' at row 1"},
		{"ALTER TABLE t MODIFY s INT", 1366, "Incorrect integer value: 'abc' for column 's' at row 2"},
		{"ALTER TABLE t MODIFY s DECIMAL(5,2)", 1366, "Incorrect decimal value: 'abc' for column 's' at row 2"},
		{"ALTER TABLE t CHANGE s s2 VARCHAR(2)", 1265, "Data truncated for column 's2' at row 2"},
		{"ALTER TABLE t MODIFY d DECIMAL(3,2)", 1264, "Out of range value for column 'd' at row 2"},
		{"ALTER TABLE t MODIFY n INT NOT NULL", 1138, "Invalid use of NULL value"},
		{"ALTER TABLE t MODIFY id BIGINT UNSIGNED NOT NULL", 1235, "primary-key column id"},
		{"ALTER TABLE t MODIFY f DATETIME", 1292, "Incorrect datetime value: '2.5' for column 'f' at row 1"},
		{"ALTER TABLE t MODIFY f JSON", 1235, "only numbers, strings"},
	} {
		before := showCreate(t, db, "t")
		_, err := db.Exec(c.q)
		expectErr(t, err, c.code, c.msg)
		if after := showCreate(t, db, "t"); after != before {
			t.Fatalf("%s changed the table:\n%s\nto\n%s", c.q, before, after)
		}
	}
	expectRows(t, db, "SELECT * FROM t ORDER BY id",
		"1,100,12,1.25,2.5,1,1", "2,-5,abc,10.75,3.5,NULL,2", "3,300,  7 ,3.00,-2.5,3,3")
	expectRows(t, db, "SELECT state, error FROM information_schema.ddl_jobs WHERE job_type = 'modify column' ORDER BY job_id LIMIT 1",
		"rollback done,Out of range value for column 'i' at row 3")

	mustExec(t, db, "UPDATE t SET s = '12x' WHERE id = 2")
	_, err := db.Exec("ALTER TABLE t MODIFY s INT")
	expectErr(t, err, 1265, "Data truncated for column 's' at row 2")
	mustExec(t, db, "UPDATE t SET s = '4', n = 2 WHERE id = 2")

	for _, q := range []string{
		"ALTER TABLE t MODIFY i SMALLINT",
		"ALTER TABLE t MODIFY i VARCHAR(3)",
		"ALTER TABLE t MODIFY s INT",
		"ALTER TABLE t MODIFY d DECIMAL(5,1)",
		"ALTER TABLE t MODIFY f INT, ALGORITHM=INPLACE, LOCK=NONE",
		"ALTER TABLE t MODIFY n INT NOT NULL",
		"ALTER TABLE t CHANGE d dd DOUBLE FIRST",
	} {
		mustExec(t, db, q)
	}
	expectRows(t, db, "SELECT * FROM t ORDER BY id",
		"1.3,1,100,12,3,1,1", "10.8,2,-5,4,4,2,2", "3,3,300,7,-3,3,3")
	_, err = db.Exec("INSERT INTO t (id, i, s, n) VALUES (4, '1', 1, NULL)")
	expectErr(t, err, 1048, "Column 'n' cannot be null")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	expectRows(t, db, "SELECT state, row_count FROM information_schema.ddl_jobs WHERE job_type = 'modify column' ORDER BY job_id DESC LIMIT 1", "synced,3")

	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, b BIGINT UNSIGNED, d DECIMAL(4,1), s TEXT, e VARCHAR(5))")
	mustExec(t, db, "INSERT INTO u VALUES (1, 18446744073709551615, 2.5, 'ab   ', ''), (2, 5, -2.5, 'x', 'abc')")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE u MODIFY b BIGINT", 1264, "Out of range value for column 'b' at row 1"},
		{"ALTER TABLE u MODIFY e INT", 1366, "Incorrect integer value: '' for column 'e' at row 1"},
		{"ALTER TABLE u MODIFY e DOUBLE", 1366, "Incorrect double value: '' for column 'e' at row 1"},
		{"ALTER TABLE u MODIFY d TINYINT UNSIGNED", 1264, "Out of range value for column 'd' at row 2"},
	} {
		_, err := db.Exec(c.q)
		expectErr(t, err, c.code, c.msg)
	}
	_, err = db.Exec("ALTER TABLE u MODIFY e CHAR(2)")
	expectErr(t, err, 1265, "Data truncated for column 'e' at row 2")
	mustExec(t, db, "ALTER TABLE u MODIFY d INT, MODIFY s VARCHAR(3), MODIFY b DECIMAL(20,0)")
	expectRows(t, db, "SELECT id, b, d, CONCAT('[', s, ']') FROM u ORDER BY id", "1,18446744073709551615,3,[ab ]", "2,5,-3,[x]")
	mustExec(t, db, "ALTER TABLE u MODIFY d CHAR(4)")
	mustExec(t, db, "UPDATE u SET d = ' 42' WHERE id = 1")
	mustExec(t, db, "ALTER TABLE u MODIFY d SMALLINT")
	expectRows(t, db, "SELECT id, d FROM u ORDER BY id", "1,42", "2,-3")

	// Numbers in strings: rounded half away from zero, range-checked.
	mustExec(t, db, "CREATE TABLE n (id INT PRIMARY KEY, s VARCHAR(30))")
	mustExec(t, db, "INSERT INTO n VALUES (1, '1.5'), (2, '-2.5e0'), (3, '9223372036854775808')")
	_, err = db.Exec("ALTER TABLE n MODIFY s BIGINT")
	expectErr(t, err, 1264, "Out of range value for column 's' at row 3")
	mustExec(t, db, "DELETE FROM n WHERE id = 3")
	_, err = db.Exec("ALTER TABLE n MODIFY s INT UNSIGNED")
	expectErr(t, err, 1264, "Out of range value for column 's' at row 2")
	mustExec(t, db, "ALTER TABLE n MODIFY s INT")
	expectRows(t, db, "SELECT s FROM n ORDER BY id", "2", "-3")

	// Without a primary key rows have hidden handles.
	mustExec(t, db, "CREATE TABLE h (a VARCHAR(10), b INT)")
	mustExec(t, db, "INSERT INTO h VALUES ('1', 1), ('2', 2), ('x', 3)")
	_, err = db.Exec("ALTER TABLE h MODIFY a SMALLINT")
	expectErr(t, err, 1366, "Incorrect integer value: 'x' for column 'a' at row 3")
	mustExec(t, db, "UPDATE h SET a = '3' WHERE b = 3")
	mustExec(t, db, "ALTER TABLE h MODIFY a SMALLINT NOT NULL")
	mustExec(t, db, "UPDATE h SET a = a + 10 WHERE b = 2")
	expectRows(t, db, "SELECT a, b FROM h ORDER BY b", "1,1", "12,2", "3,3")
	mustExec(t, db, "ADMIN CHECK TABLE h")

	want := showCreate(t, db, "t")
	for _, part := range []string{"`dd` double DEFAULT NULL,\n  `id` int", "`i` varchar(3)", "`s` int", "`f` int", "`n` int NOT NULL"} {
		if !strings.Contains(want, part) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", part, want)
		}
	}
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db = servertest.StartDir(t, dir).DB("app")
	if got := showCreate(t, db, "t"); got != want {
		t.Fatalf("after restart:\n%s\nwant\n%s", got, want)
	}
	expectRows(t, db, "SELECT * FROM t ORDER BY id",
		"1.3,1,100,12,3,1,1", "10.8,2,-5,4,4,2,2", "3,3,300,7,-3,3,3")
}

// stallModify starts ALTER q with the job stopped at the start of its
// backfill, and returns the job and the ALTER's outcome.
func stallModify(t *testing.T, db *sql.DB, q string) (jobRow, chan error) {
	t.Helper()
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'backfill'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	done := make(chan error, 1)
	go func() { _, err := db.Exec(q); done <- err }()
	j := waitJob(t, db, func(x jobRow) bool {
		return x.schema == "write reorganization" && strings.Contains(x.comment, "stalled=backfill")
	}, "stalls in its backfill")
	return j, done
}

// TestModifyColumnCancel: a MODIFY COLUMN can be paused and resumed, and
// once cancelled rolls back to the table as it was, values written
// meanwhile included; DROP TABLE ends a running one.
func TestModifyColumnCancel(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10), (2, 20)")
	before := showCreate(t, db, "t")
	j, done := stallModify(t, db, "ALTER TABLE t MODIFY v VARCHAR(4)")
	// Written while the job runs: converted too.
	mustExec(t, db, "INSERT INTO t VALUES (3, 30)")
	mustExec(t, db, "UPDATE t SET v = v + 1 WHERE id = 1")
	mustExec(t, db, fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id))
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "paused" }, "is paused")
	mustExec(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", j.id))
	waitJob(t, db, func(x jobRow) bool {
		return x.id == j.id && x.state == "running" && strings.Contains(x.comment, "stalled=backfill")
	}, "runs again")
	mustExec(t, db, fmt.Sprintf("ADMIN CANCEL DDL JOBS %d", j.id))
	select {
	case err := <-done:
		expectErr(t, err, 8214, "Cancelled DDL job")
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled ALTER still runs")
	}
	if got := waitJob(t, db, func(x jobRow) bool { return x.id == j.id }, "exists"); got.state != "cancelled" {
		t.Fatalf("job state %q, want cancelled", got.state)
	}
	if after := showCreate(t, db, "t"); after != before {
		t.Fatalf("cancel left\n%s\nwant\n%s", after, before)
	}
	mustExec(t, db, "INSERT INTO t VALUES (4, 123456)")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,11", "2,20", "3,30", "4,123456")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	mustExec(t, db, "DELETE FROM t WHERE id = 4")
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(4)")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,11", "2,20", "3,30")

	_, done = stallModify(t, db, "ALTER TABLE t MODIFY v INT")
	mustExec(t, db, "DROP TABLE t")
	expectErr(t, <-done, 8214, "Cancelled DDL job")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)")
	expectRows(t, db, "SELECT COUNT(*) FROM t", "0")
}

// TestModifyColumnBadRowStaysWritable: a row whose value will fail the
// job can still be updated meanwhile in its other columns; the job then
// fails on it and the table is as it was, with the update.
func TestModifyColumnBadRowStaysWritable(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 0), (2, 99999, 0), (3, 30, 0)")
	before := showCreate(t, db, "t")
	_, done := stallModify(t, db, "ALTER TABLE t MODIFY v VARCHAR(4)")
	mustExec(t, db, "UPDATE t SET w = w + 1")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	expectErr(t, <-done, 1265, "Data truncated for column 'v' at row 2")
	if after := showCreate(t, db, "t"); after != before {
		t.Fatalf("the failed job left\n%s\nwant\n%s", after, before)
	}
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,10,1", "2,99999,1", "3,30,1")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestModifyColumnDoomedByDML: a statement that writes a value the new
// type cannot hold while a MODIFY COLUMN runs succeeds, and the job fails
// on it with the error a table copy would give, leaving the table as it
// was with the statement's value: before the backfill reaches the row,
// after it has passed it, and once the backfill is done.
func TestModifyColumnDoomedByDML(t *testing.T) {
	for _, c := range []struct{ name, stall, write string }{
		{"before the backfill", "backfill", "UPDATE t SET v = 123456 WHERE id = 3"},
		{"a new row", "backfill", "INSERT INTO t VALUES (4, 123456, 0)"},
		{"after the backfill", "validate", "UPDATE t SET v = 123456 WHERE id = 1"},
		{"NULL into NOT NULL", "validate", "UPDATE t SET w = NULL WHERE id = 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := servertest.Start(t)
			db := s.DB("app")
			mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT, KEY kv (v), KEY kw (w))")
			mustExec(t, db, "INSERT INTO t VALUES (1, 10, 1), (2, 20, 2), (3, 30, 3)")
			before := showCreate(t, db, "t")
			mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+c.stall+"'")
			t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
			q := "ALTER TABLE t MODIFY v VARCHAR(4)"
			if strings.Contains(c.write, "NULL") {
				q = "ALTER TABLE t MODIFY w INT NOT NULL"
			}
			done := make(chan error, 1)
			go func() { _, err := db.Exec(q); done <- err }()
			waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+c.stall) }, "stalls at "+c.stall)
			mustExec(t, db, c.write)
			mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
			err := <-done
			if strings.Contains(c.write, "NULL") {
				expectErr(t, err, 1138, "Invalid use of NULL value")
			} else {
				expectErr(t, err, 1265, "Data truncated for column 'v'")
			}
			if after := showCreate(t, db, "t"); after != before {
				t.Fatalf("the failed job left\n%s\nwant\n%s", after, before)
			}
			mustExec(t, db, "ADMIN CHECK TABLE t")
			if n := s.Engine().CountKeys([]byte("m/ddl/doom/")); n != 0 {
				t.Fatalf("%d doom records left", n)
			}
			// The table takes the change once the value is gone.
			mustExec(t, db, "DELETE FROM t WHERE v = 123456 OR w IS NULL")
			mustExec(t, db, q)
			mustExec(t, db, "ADMIN CHECK TABLE t")
		})
	}
}

// TestModifyColumnUnderDML: random inserts, updates and deletes run in
// goroutines through every step of a MODIFY COLUMN; in the end every
// row's value is the conversion of the last value written to it, and the
// indexes that contain the column (a unique one, a composite one) hold
// exactly the rows' entries.
func TestModifyColumnUnderDML(t *testing.T) {
	t.Run("unindexed", func(t *testing.T) { modifyUnderDML(t, "") })
	t.Run("indexed", func(t *testing.T) { modifyUnderDML(t, ", UNIQUE KEY uv (v), KEY kwv (w, v)") })
}

// modifyUnderDML runs TestModifyColumnUnderDML on a table with the given
// index clauses. Every value written is unique to its row: id in the
// millions, so that a unique index never refuses a write.
func modifyUnderDML(t *testing.T, indexes string) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(16)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT NOT NULL, w INT"+indexes+")")
	const rows = 3000
	var b strings.Builder
	for i := 0; i < rows; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,%d)", i, int64(i)*1_000_000+int64(i*7%100000)+1, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_batch_size = 32")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 2")
	t.Cleanup(func() {
		db.Exec("SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
		db.Exec("SET GLOBAL tidb_ddl_reorg_batch_size = 256")
	})

	var mu sync.Mutex
	model := map[int]int64{}
	for i := 0; i < rows; i++ {
		model[i] = int64(i)*1_000_000 + int64(i*7%100000) + 1
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops, fails int
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Each writer owns the ids congruent to w, so the model
				// needs no ordering between writers.
				id := r.Intn(rows+500)/4*4 + w
				v := int64(id)*1_000_000 + 1 + r.Int63n(999_998)
				var err error
				op := r.Intn(5)
				switch op {
				case 0:
					_, err = db.Exec("REPLACE INTO t VALUES (?, ?, ?)", id, v, w)
				case 1:
					_, err = db.Exec("UPDATE t SET v = ? WHERE id = ?", v, id)
				case 2:
					_, err = db.Exec("DELETE FROM t WHERE id = ?", id)
				case 3:
					// Another column only: the converted value stays.
					_, err = db.Exec("UPDATE t SET w = w + 1 WHERE id = ?", id)
				default:
					// Two statements on the row in one transaction, and
					// sometimes a rollback.
					var committed bool
					committed, err = updateTwice(db, id, v, r.Intn(4) == 0)
					if !committed {
						op = 3
					}
				}
				mu.Lock()
				ops++
				if err != nil {
					fails++
					t.Errorf("writer %d: %v", w, err)
				} else {
					_, ok := model[id]
					switch {
					case op == 0, (op == 1 || op == 4) && ok:
						model[id] = v
					case op == 2:
						delete(model, id)
					}
				}
				mu.Unlock()
			}
		}(w)
	}
	time.Sleep(100 * time.Millisecond)
	j, done := stallModify(t, db, "ALTER TABLE t MODIFY v VARCHAR(12) NOT NULL")
	time.Sleep(300 * time.Millisecond)
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	if err := <-done; err != nil {
		t.Fatalf("ALTER: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("job %d: %d writes during the test, %d failed", j.id, ops, fails)

	got := map[int]string{}
	r, err := db.Query("SELECT id, v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int
		var v string
		if err := r.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		got[id] = v
	}
	r.Close()
	if len(got) != len(model) {
		t.Errorf("%d rows, want %d", len(got), len(model))
	}
	for id, v := range model {
		if got[id] != fmt.Sprint(v) {
			t.Errorf("row %d: v = %q, want %q", id, got[id], fmt.Sprint(v))
		}
	}
	if !strings.Contains(showCreate(t, db, "t"), "`v` varchar(12) NOT NULL") {
		t.Errorf("v not converted:\n%s", showCreate(t, db, "t"))
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// updateTwice sets row id's v to v in a transaction of two statements,
// and rolls it back when rollback is set.
func updateTwice(db *sql.DB, id int, v int64, rollback bool) (bool, error) {
	tx, err := db.Begin()
	if err != nil {
		return false, err
	}
	for _, q := range []string{"UPDATE t SET v = ? - 1 WHERE id = ?", "UPDATE t SET v = v + 1, w = w + 1 WHERE id = ?"} {
		args := []any{v, id}
		if strings.Count(q, "?") == 1 {
			args = args[1:]
		}
		if _, err := tx.Exec(q, args...); err != nil {
			tx.Rollback()
			return false, err
		}
	}
	if rollback {
		return false, tx.Rollback()
	}
	return true, tx.Commit()
}

// TestModifyColumnCrash SIGKILLs the server with the hidden column just
// added, in the middle of a MODIFY COLUMN's backfill, just before its swap
// and just after it, with a writer updating the column; after the
// restart the job resumes (from its checkpoints) and finishes, and every
// row holds the conversion of its last acknowledged value.
func TestModifyColumnCrash(t *testing.T) {
	for _, at := range []string{"write-only", "backfill", "validate", "swap", "public"} {
		t.Run(at, func(t *testing.T) { crashModify(t, at, false) })
	}
}

// TestModifyIndexedColumnCrash is TestModifyColumnCrash with the column
// in two indexes, whose replacements are also killed delete-only.
func TestModifyIndexedColumnCrash(t *testing.T) {
	for _, at := range []string{"delete-only", "write-only", "backfill", "validate", "swap", "public"} {
		t.Run(at, func(t *testing.T) { crashModify(t, at, true) })
	}
}

func crashModify(t *testing.T, at string, indexed bool) {
	var setup []string
	if indexed {
		setup = []string{"CREATE INDEX ia ON t (a)", "CREATE UNIQUE INDEX uca ON t (c, a)"}
	}
	s, w := crashAlter(t, at, "ALTER TABLE t MODIFY a VARCHAR(8) NOT NULL", setup...)
	db2 := s.DB("app")
	if !strings.Contains(showCreate(t, db2, "t"), "`a` varchar(8) NOT NULL") {
		t.Fatalf("a not converted:\n%s", showCreate(t, db2, "t"))
	}
	w.check(t, db2)
	mustExec(t, db2, "ADMIN CHECK TABLE t")
	if indexed {
		id, v := 17, 17
		if a, ok := w.acked[id]; ok {
			v = a
		}
		if w.inflight[0] != id {
			expectRows(t, db2, fmt.Sprintf("SELECT id FROM t USE INDEX (ia) WHERE a = '%d' AND id = %d", v, id), fmt.Sprint(id))
		}
		expectRows(t, db2, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_name = 't'", "4")
	}
	t.Logf("%d acknowledged updates", len(w.acked))
}

// aWrites is what a writer updating column a of random rows of the
// crash child's t had acknowledged when the server died, and the update
// in flight then ({-1, 0} if none).
type aWrites struct {
	acked    map[int]int
	inflight [2]int
}

// crashAlter starts a server child whose t has 30000 rows, runs setup,
// then alter, held at stall phase at (or, for "backfill", slowed and
// caught half way), while a writer updates a; it SIGKILLs the server
// there, restarts it on the same data and waits until the job ends
// synced. It returns the restarted server and the writer's updates.
func crashAlter(t *testing.T, at, alter string, setup ...string) (*servertest.Server, *aWrites) {
	dir := t.TempDir()
	child, dsn := startChild(t, dir, "")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	var lastJob int64 // the jobs before the ALTER's
	for _, q := range setup {
		mustExec(t, db, q)
	}
	for _, j := range showJobs(t, db) {
		lastJob = max(lastJob, j.id)
	}
	if at == "backfill" { // slow enough to be killed half way
		mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_batch_size = 32")
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 2")
	} else {
		mustExec(t, db, fmt.Sprintf("SET GLOBAL reorgdb_ddl_test_stall_phase = '%s'", at))
	}
	go db.Exec(alter)

	w := &aWrites{acked: map[int]int{}, inflight: [2]int{-1, 0}}
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewSource(1))
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, v := r.Intn(30000), 1000+r.Intn(9000)
			mu.Lock()
			w.inflight = [2]int{id, v}
			mu.Unlock()
			if _, err := db.Exec("UPDATE t SET a = ? WHERE id = ?", v, id); err != nil {
				return // the server is gone
			}
			mu.Lock()
			w.acked[id], w.inflight = v, [2]int{-1, 0}
			mu.Unlock()
		}
	}()
	if at != "backfill" {
		waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+at) }, "stalled at "+at)
	} else {
		waitJob(t, db, func(x jobRow) bool { return x.id > lastJob && x.rowCount >= 3000 }, "backfilled 3000 rows")
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	close(stop)
	wg.Wait()
	db.Close()

	s := servertest.StartDir(t, dir)
	j := waitJob(t, s.DB("app"), func(x jobRow) bool {
		return x.id > lastJob && (x.state == "synced" || x.state == "rollback done")
	}, "finished")
	if j.state != "synced" {
		t.Fatalf("job ended %q: %s", j.state, j.errText)
	}
	return s, w
}

// check verifies that every one of t's 30000 rows holds its last
// acknowledged a (id % 1000 if never updated), or the update in flight.
func (w *aWrites) check(t *testing.T, db *sql.DB) {
	t.Helper()
	r, err := db.Query("SELECT id, a FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Next() {
		var id int
		var a string
		if err := r.Scan(&id, &a); err != nil {
			t.Fatal(err)
		}
		n++
		want, ok := w.acked[id]
		if !ok {
			want = id % 1000
		}
		if a != fmt.Sprint(want) && !(w.inflight[0] == id && a == fmt.Sprint(w.inflight[1])) {
			t.Errorf("row %d: a = %q, want %d", id, a, want)
		}
	}
	if n != 30000 {
		t.Errorf("%d rows, want 30000", n)
	}
}

// TestModifyColumnSwapUnderOldTransaction: a transaction still on the
// schema version before the swap reads and writes the column as it was
// defined, also in rows that transactions on the new version wrote, and
// the job waits for it before the old column goes. With indexes on the
// column, it finds through the old index what transactions on the new
// version wrote, and its writes leave every index exact.
func TestModifyColumnSwapUnderOldTransaction(t *testing.T) {
	t.Run("unindexed", func(t *testing.T) { swapUnderOldTransaction(t, "") })
	t.Run("indexed", func(t *testing.T) { swapUnderOldTransaction(t, ", UNIQUE KEY kv (v), KEY kwv (w, v)") })
}

func swapUnderOldTransaction(t *testing.T, indexes string) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT"+indexes+")")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 0), (2, 20, 0), (3, 30, 0), (4, 40, 0)")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'swap'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t MODIFY v VARCHAR(12)"); done <- err }()
	waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=swap") }, "stalls before its swap")

	ctx := context.Background()
	old, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	mustExec(t, old, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
	mustExec(t, old, "BEGIN")
	expectRows(t, old, "SELECT v FROM t WHERE id = 1", "10")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	waitJob(t, db, func(x jobRow) bool { return x.schema == "public" }, "swapped")
	mustExec(t, db, "UPDATE t SET v = '77' WHERE id = 2")
	expectRows(t, db, "SELECT v FROM t WHERE id = 2", "77")
	expectRows(t, old, "SELECT v + 1 FROM t WHERE id = 2", "78")
	if indexes != "" {
		expectRows(t, old, "SELECT id FROM t USE INDEX (kv) WHERE v = 77", "2")
		expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = '77'", "2")
	}
	// Distinct new values that the old definition cannot tell apart: the
	// old unique index, on its way out, refuses neither.
	mustExec(t, db, "UPDATE t SET v = '077' WHERE id = 1")
	mustExec(t, old, "UPDATE t SET v = v + 1 WHERE id = 3")
	// What the new definition holds and the old one cannot is kept
	// through an update of another column on the old version.
	mustExec(t, db, "UPDATE t SET v = 'abc' WHERE id = 4")
	mustExec(t, old, "UPDATE t SET w = 1 WHERE id = 4")
	select {
	case err := <-done:
		t.Fatalf("the ALTER ended (%v) while a transaction on the old definition runs", err)
	case <-time.After(200 * time.Millisecond):
	}
	mustExec(t, old, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id, v, w FROM t ORDER BY id", "1,077,0", "2,77,0", "3,31,0", "4,abc,1")
	if indexes != "" {
		expectRows(t, db, "SELECT id FROM t USE INDEX (kwv) WHERE w = 1 AND v = 'abc'", "4")
		expectRows(t, db, "SELECT id FROM t USE INDEX (kv) WHERE v = '31'", "3")
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestModifyColumnQueuedBehindAnother: an ALTER checked against a column
// that an earlier job of the same table changes before it runs is
// refused when it runs instead of trusting the old definition: 1412 for a
// metadata-only change of a column since rewritten, 1170 for a rewrite of
// a column since indexed into a type that index cannot have (a rewrite
// into one it can have rebuilds the index).
func TestModifyColumnQueuedBehindAnother(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 100), (2, 20, 200)")
	queue := func(q string, after int64) (jobRow, chan error) {
		done := make(chan error, 1)
		go func() { _, err := db.Exec(q); done <- err }()
		j := waitJob(t, db, func(x jobRow) bool { return x.id > after }, "queued after job "+fmt.Sprint(after))
		return j, done
	}

	// The refused ALTER's connection then reads the table as it is now.
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectRows(t, c, "SELECT v FROM t ORDER BY id", "10", "20")
	j1, done1 := stallModify(t, db, "ALTER TABLE t MODIFY v VARCHAR(12)")
	done2 := make(chan error, 1)
	go func() { _, err := c.ExecContext(ctx, "ALTER TABLE t MODIFY v BIGINT COMMENT 'stale'"); done2 <- err }()
	waitJob(t, db, func(x jobRow) bool { return x.id > j1.id }, "queued after the first")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	expectErr(t, <-done2, 1412, "Table definition has changed")
	expectRows(t, c, "SELECT v FROM t ORDER BY id", "10", "20")

	j3, done3 := stallModify(t, db, "ALTER TABLE t MODIFY w VARCHAR(10)")
	j4, done4 := queue("ALTER TABLE t ADD INDEX iv (v)", j3.id)
	_, done5 := queue("ALTER TABLE t MODIFY v TEXT", j4.id)
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	if err := <-done3; err != nil {
		t.Fatal(err)
	}
	if got := rows(t, db, "SELECT w FROM t ORDER BY id"); strings.Join(got, " ") != "100 200" {
		t.Fatalf("w after job %d: %q; jobs %+v", j3.id, got, showJobs(t, db))
	}
	if err := <-done4; err != nil {
		t.Fatal(err)
	}
	expectErr(t, <-done5, 1170, "BLOB/TEXT column 'v' used in key specification without a key length")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,10,100", "2,20,200")
	if !strings.Contains(showCreate(t, db, "t"), "`v` varchar(12)") {
		t.Fatalf("v:\n%s", showCreate(t, db, "t"))
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "ALTER TABLE t MODIFY v VARCHAR(4)")
	expectRows(t, db, "SELECT id FROM t USE INDEX (iv) WHERE v = '20'", "2")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}
