package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestTableGoesAwayDuringIndexJob: DROP TABLE, TRUNCATE TABLE and DROP
// DATABASE on a table whose index job is running, paused or queued end
// the job (cancelled, nothing of it left in kv), and RENAME TABLE lets it
// finish under the new name. The server must survive every combination.
func TestTableGoesAwayDuringIndexJob(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		for _, when := range []string{"running", "paused", "queued"} {
			for _, stmt := range []string{"DROP TABLE t", "TRUNCATE TABLE t", "DROP DATABASE app", "RENAME TABLE t TO t2"} {
				name := fmt.Sprintf("%s/%s/%s", mode, when, strings.Fields(stmt)[0]+"_"+strings.Fields(stmt)[1])
				t.Run(name, func(t *testing.T) { tableGoesAway(t, mode, when, stmt) })
			}
		}
	}
}

func tableGoesAway(t *testing.T, mode, when, stmt string) {
	s := servertest.Start(t)
	db := s.DB("app")
	loadRows(t, db, 3000)
	setMode(t, db, mode)
	slowBackfill(t, db)
	e := s.Engine()
	tableID := e.TableID("app", "t")

	alter := make(chan error, 2)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_u (c)"); alter <- err }()
	j := waitJob(t, db, func(x jobRow) bool { return x.state == "running" && x.rowCount > 0 }, "is backfilling")
	jobs := []int64{j.id}
	switch when {
	case "paused":
		mustExec(t, db, fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id))
		waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "paused" }, "paused")
	case "queued":
		go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX c_idx (c)"); alter <- err }()
		q := waitJob(t, db, func(x jobRow) bool { return x.id != j.id && x.state == "queueing" }, "queued")
		jobs = append(jobs, q.id)
	}

	if strings.HasPrefix(stmt, "RENAME") {
		renameWaits(t, db, when, j.id, jobs, alter)
		return
	}
	done := make(chan error, 1)
	go func() { _, err := db.Exec(stmt); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return; jobs: %+v", stmt, showJobs(t, db))
	}
	for range jobs {
		expectErr(t, <-alter, 8214, "Cancelled DDL job")
	}
	for _, id := range jobs {
		got := waitJob(t, db, func(x jobRow) bool { return x.id == id }, "exists")
		if got.state != "cancelled" {
			t.Fatalf("job %d: state %q, want cancelled", id, got.state)
		}
		if n := e.DDL.Checkpoints(id); n != 0 {
			t.Fatalf("job %d left %d checkpoints", id, n)
		}
	}
	want := 0
	if strings.HasPrefix(stmt, "TRUNCATE") {
		expectIndexes(t, db, "t", "PRIMARY")
		expectRows(t, db, "SELECT count(*) FROM t", "0")
		mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'x')")
		mustExec(t, db, "ALTER TABLE t ADD UNIQUE INDEX c_u (c)")
		mustExec(t, db, "ADMIN CHECK TABLE t")
		want = 2 // the new row and its entry
	}
	if n := e.CountTableKeys(tableID); n != want {
		t.Fatalf("%d keys left in the table's range after %s, want %d", n, stmt, want)
	}
	// The server still serves, and the temp dir is empty.
	mustExec(t, s.DB(""), "CREATE DATABASE IF NOT EXISTS app2")
}

// renameWaits: RENAME TABLE waits for the ALTERs on the table as MySQL's
// metadata lock makes it wait, up to lock_wait_timeout (then 1205, with
// the job untouched), and renames once they are done.
func renameWaits(t *testing.T, db *sql.DB, when string, first int64, jobs []int64, alter chan error) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if when == "paused" {
		mustExec(t, conn, "SET SESSION lock_wait_timeout = 1")
		_, err = conn.ExecContext(ctx, "RENAME TABLE t TO t2")
		expectErr(t, err, 1205, "Lock wait timeout exceeded")
		if j := waitJob(t, db, func(x jobRow) bool { return x.id == first }, "exists"); j.state != "paused" {
			t.Fatalf("job %d is %s after the timed-out RENAME, want paused", first, j.state)
		}
		mustExec(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", first))
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	}
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	mustExec(t, conn, "SET SESSION lock_wait_timeout = 60")
	_, err = conn.ExecContext(ctx, "RENAME TABLE t TO t2")
	if err != nil {
		t.Fatalf("RENAME: %v", err)
	}
	for range jobs {
		if err := <-alter; err != nil {
			t.Fatalf("ALTER: %v", err)
		}
	}
	want := []string{"PRIMARY", "a_idx", "c_u"}
	if when == "queued" {
		want = append(want, "c_idx")
	}
	expectIndexes(t, db, "t2", want...)
	mustExec(t, db, "ADMIN CHECK TABLE t2")
	expectRows(t, db, "SELECT id FROM t2 FORCE INDEX (c_u) WHERE c = 'v2999'", "2999")
}

// TestUniqueSwapsDuringIngestMerge: while an ingest build merges its change
// log into a new UNIQUE index, transactions that exchange the unique
// values of two rows through a third value are valid and must all commit
// (no false 1062); the index must come out consistent.
func TestUniqueSwapsDuringIngestMerge(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	const rows = 20000
	loadRows(t, db, rows)
	setMode(t, db, "ingest")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'merge'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var commits, dups atomic.Int64
	var firstDup atomic.Value
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Each writer owns the rows with id % 4 == w, so that
				// writers conflict only with the build.
				a := rnd.Intn(rows/4)*4 + w
				b := rnd.Intn(rows/4)*4 + w
				if a == b {
					continue
				}
				err := swapUnique(db, a, b, w)
				var me *mysql.MySQLError
				switch {
				case err == nil:
					commits.Add(1)
				case errors.As(err, &me) && me.Number == 1062:
					dups.Add(1)
					firstDup.CompareAndSwap(nil, err.Error())
				case errors.As(err, &me) && me.Number == 1213:
				default:
					t.Error(err)
					return
				}
			}
		}(w)
	}
	alter := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_u (c)"); alter <- err }()
	waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=merge") }, "stalled at merge")
	time.Sleep(2 * time.Second) // swaps pile up while merging
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	err := <-alter
	time.Sleep(500 * time.Millisecond) // swaps on the public index too
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("ALTER: %v", err)
	}
	if n := dups.Load(); n > 0 {
		t.Fatalf("%d of %d valid swaps failed with a false duplicate, e.g. %v", n, n+commits.Load(), firstDup.Load())
	}
	if commits.Load() == 0 {
		t.Fatal("no swap committed")
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
	t.Logf("%d swaps committed", commits.Load())
}

// swapUnique exchanges the c values of rows a and b in one transaction,
// through a third value, as an application renaming two keys would.
func swapUnique(db *sql.DB, a, b, w int) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	var ca, cb string
	if err := tx.QueryRow("SELECT c FROM t WHERE id = ?", a).Scan(&ca); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.QueryRow("SELECT c FROM t WHERE id = ?", b).Scan(&cb); err != nil {
		tx.Rollback()
		return err
	}
	tmp := fmt.Sprintf("tmp-%d", w)
	for _, q := range []struct {
		v  string
		id int
	}{{tmp, a}, {ca, b}, {cb, a}} {
		if _, err := tx.Exec("UPDATE t SET c = ? WHERE id = ?", q.v, q.id); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// TestDanglingIndexEntryIsAnError: a read through an index that meets an
// entry whose row is gone fails with an error that names the index, and
// the connection stays usable; ADMIN CHECK TABLE reports it.
func TestDanglingIndexEntryIsAnError(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20), UNIQUE KEY c_u (c), KEY c_i (c))")
	for i := 0; i < 300; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, 'v%03d')", i, i))
	}
	// Remove row 7's record behind the index's back.
	txn := s.Engine().Store().Begin()
	if err := txn.Delete(codec.RecordKey(s.Engine().TableID("app", "t"), 7)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT id FROM t FORCE INDEX (c_u) WHERE c = 'v007'",
		"SELECT id FROM t FORCE INDEX (c_i) WHERE c BETWEEN 'v000' AND 'v299'",
		"SELECT id, c FROM t FORCE INDEX (c_u) WHERE c >= 'v000' ORDER BY c",
		"SELECT id FROM t FORCE INDEX (c_u) WHERE c IN ('v006', 'v007') FOR UPDATE",
		"UPDATE t SET id = id WHERE c = 'v007'",
		"DELETE FROM t WHERE c = 'v007'",
	} {
		rows, err := db.Query(q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		expectErr(t, err, 1712, "is corrupted")
		expectRows(t, db, "SELECT count(*) FROM t", "299") // the same connection still serves
	}
	_, err := db.Exec("ADMIN CHECK TABLE t")
	expectErr(t, err, 8003, "")
}

// TestCancelWhileWaitingForMDL: an ALTER that waits for a transaction
// opened before it shows the connection it waits for, and ADMIN CANCEL
// ends it at once, without waiting for that transaction, which goes on
// unharmed.
func TestCancelWhileWaitingForMDL(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		t.Run(mode, func(t *testing.T) {
			s := servertest.Start(t)
			db := s.DB("app")
			setMode(t, db, mode)
			mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
			mustExec(t, db, "INSERT INTO t VALUES (1, 1), (2, 2)")
			ctx := context.Background()
			old, _ := db.Conn(ctx)
			defer old.Close()
			var connID int64
			if err := old.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
				t.Fatal(err)
			}
			mustExec(t, old, "BEGIN")
			expectRows(t, old, "SELECT a FROM t WHERE id = 1", "1")
			done := make(chan error, 1)
			go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX ia (a)"); done <- err }()
			j := waitJob(t, db, func(x jobRow) bool {
				return strings.Contains(x.comment, fmt.Sprintf("(connection %d)", connID))
			}, "names the connection it waits for")
			start := time.Now()
			mustExec(t, db, fmt.Sprintf("ADMIN CANCEL DDL JOBS %d", j.id))
			select {
			case err := <-done:
				expectErr(t, err, 8214, "Cancelled DDL job")
			case <-time.After(5 * time.Second):
				t.Fatalf("the cancelled ALTER still waits; jobs %+v", showJobs(t, db))
			}
			if got := waitJob(t, db, func(x jobRow) bool { return x.id == j.id }, "exists"); got.state != "cancelled" {
				t.Fatalf("job state %q, want cancelled", got.state)
			}
			t.Logf("cancelled in %s", time.Since(start))
			expectIndexes(t, db, "t", "PRIMARY")
			mustExec(t, old, "UPDATE t SET a = 3 WHERE id = 1")
			mustExec(t, old, "COMMIT")
			expectRows(t, db, "SELECT a FROM t WHERE id = 1", "3")
			if n := s.Engine().CountIndexEntries("app", "t"); n != 0 {
				t.Fatalf("%d index entries left", n)
			}
			mustExec(t, db, "ALTER TABLE t ADD INDEX ia (a)")
			mustExec(t, db, "ADMIN CHECK TABLE t")
		})
	}
}

// TestDDLJobTotalRowsIsARowCount: a job's TOTAL_ROWS estimates the table's
// rows, not its largest handle.
func TestDDLJobTotalRowsIsARowCount(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d)", i*2000, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	mustExec(t, db, "ALTER TABLE t ADD INDEX ia (a)")
	expectRows(t, db, "SELECT total_rows, row_count FROM information_schema.ddl_jobs", "5000,5000")
}

// TestDropIndexIsAJob: DROP INDEX runs as a job that ADMIN SHOW DDL JOBS and
// information_schema.ddl_jobs list, and leaves no entry behind.
func TestDropIndexIsAJob(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	loadRows(t, db, 2000)
	mustExec(t, db, "ALTER TABLE t ADD INDEX a_idx (a)")
	mustExec(t, db, "DROP INDEX a_idx ON t")
	expectRows(t, db, "SELECT job_type, state, schema_state, query FROM information_schema.ddl_jobs ORDER BY job_id",
		"add index,synced,public,ALTER TABLE t ADD INDEX a_idx (a)", "drop index,synced,none,DROP INDEX a_idx ON t")
	expectIndexes(t, db, "t", "PRIMARY")
	if n := s.Engine().CountIndexEntries("app", "t"); n != 0 {
		t.Fatalf("%d entries left", n)
	}
	_, err := db.Exec("DROP INDEX a_idx ON t")
	expectErr(t, err, 1091, "Can't DROP 'a_idx'; check that column/key exists")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestIngestMergeSerializesWithWriters: an ingest ADD UNIQUE INDEX paused
// and resumed under writers that swap, delete, re-insert and NULL unique
// values. A writer that changes a row while the change-log merge rewrites
// that row's entries must conflict with the merge: before the merge wrote
// the row back, a writer that set a swapped-in value to NULL left the
// merge's entry for the old value behind (caught by the validation as
// 1712, or by ADMIN CHECK TABLE). REORGDB_MERGE_TRIALS sets the trials.
func TestIngestMergeSerializesWithWriters(t *testing.T) {
	n := 4
	if v, err := strconv.Atoi(os.Getenv("REORGDB_MERGE_TRIALS")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < n; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := servertest.Start(t)
			db := s.DB("app")
			loadNullable(t, db, mergeCrashRows)
			setMode(t, db, "ingest")
			ws := newRowWriters(db, 4, int64(i))
			ws.start(t)
			done := make(chan error, 1)
			go func() { _, err := db.Exec("ALTER TABLE t ADD UNIQUE INDEX c_u (c)"); done <- err }()
			for k := 0; k < 3; k++ {
				time.Sleep(time.Duration(50+k*70) * time.Millisecond)
				j := waitJob(t, db, func(x jobRow) bool { return x.table == "t" }, "exists")
				if _, err := db.Exec(fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id)); err == nil {
					time.Sleep(100 * time.Millisecond)
					mustExec(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", j.id))
				}
			}
			err := <-done
			time.Sleep(200 * time.Millisecond)
			ws.stop()
			if err != nil {
				t.Fatalf("ALTER: %v", err)
			}
			mustExec(t, db, "ADMIN CHECK TABLE t")
			ws.verify(t, db)
		})
	}
}
