package sql_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// jobRow is one row of ADMIN SHOW DDL JOBS.
type jobRow struct {
	id       int64
	table    string
	state    string
	schema   string
	rowCount int64
	errText  string
	comment  string
}

func showJobs(t testing.TB, db *sql.DB) []jobRow {
	t.Helper()
	r, err := db.Query("ADMIN SHOW DDL JOBS")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []jobRow
	for r.Next() {
		var j jobRow
		var dbn, typ, created string
		var start, end, comment sql.NullString
		var tableID, total int64
		if err := r.Scan(&j.id, &dbn, &j.table, &typ, &j.schema, &tableID, &j.rowCount, &total, &created, &start, &end, &j.state, &comment, &j.errText); err != nil {
			t.Fatal(err)
		}
		j.comment = comment.String
		out = append(out, j)
	}
	return out
}

func waitJob(t testing.TB, db *sql.DB, cond func(jobRow) bool, what string) jobRow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, j := range showJobs(t, db) {
			if cond(j) {
				return j
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for a job that %s; jobs: %+v", what, showJobs(t, db))
	return jobRow{}
}

func loadRows(t testing.TB, db *sql.DB, n int) {
	mustExec(t.(*testing.T), db, "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, c VARCHAR(20) NOT NULL)")
	var b strings.Builder
	for i := 0; i < n; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'v%d')", i, i%1000, i)
		if (i+1)%5000 == 0 || i == n-1 {
			mustExec(t.(*testing.T), db, "INSERT INTO t VALUES "+b.String())
			b.Reset()
		}
	}
}

// slowBackfill makes the backfill take a few seconds on n rows.
func slowBackfill(t *testing.T, db *sql.DB) {
	mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_worker_cnt = 1")
	mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_batch_size = 32")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 5")
	t.Cleanup(func() {
		db.Exec("SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
		db.Exec("SET GLOBAL tidb_ddl_reorg_worker_cnt = 4")
		db.Exec("SET GLOBAL tidb_ddl_reorg_batch_size = 256")
	})
}

func TestPauseResumeCancelAndKill(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		t.Run(mode, func(t *testing.T) { pauseResumeCancelKill(t, mode) })
	}
}

func pauseResumeCancelKill(t *testing.T, mode string) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	loadRows(t, db, 20000)
	setMode(t, db, mode)
	slowBackfill(t, db)

	// Pause and resume mid-backfill.
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a)"); done <- err }()
	j := waitJob(t, db, func(j jobRow) bool { return j.state == "running" && j.rowCount > 0 }, "is backfilling")
	// Progress shows in /metrics too.
	resp, err := http.Get("http://" + s.StatusAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metrics := []string{"rows"}
	if mode == "ingest" {
		metrics = append(metrics, "sorted_bytes", "spilled_bytes", "ingested_bytes")
	}
	for _, name := range metrics {
		if !strings.Contains(string(body), fmt.Sprintf(`reorgdb_ddl_job_%s{job="%d",mode="%s"`, name, j.id, mode)) {
			t.Fatalf("/metrics has no %s of job %d", name, j.id)
		}
	}
	expectRows(t, db, fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id), fmt.Sprintf("%d,successful", j.id))
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "paused" }, "is paused")
	p1 := waitJob(t, db, func(x jobRow) bool { return x.id == j.id }, "exists")
	time.Sleep(300 * time.Millisecond)
	p2 := waitJob(t, db, func(x jobRow) bool { return x.id == j.id }, "exists")
	if p2.rowCount != p1.rowCount || p2.state != "paused" {
		t.Fatalf("paused job moved: %+v -> %+v", p1, p2)
	}
	// DML goes on while the job is paused.
	mustExec(t, db, "UPDATE t SET a = 5000 WHERE id = 1")
	expectRows(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", j.id), fmt.Sprintf("%d,successful", j.id))
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectIndexes(t, db, "t", "PRIMARY", "a_idx")
	expectRows(t, db, "SELECT id FROM t WHERE a = 5000", "1")
	if _, err := db.Exec("ADMIN CHECK INDEX t a_idx"); err != nil {
		t.Fatal(err)
	}

	// Cancel mid-backfill: the statement fails, the index and its entries are gone.
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 5")
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX c_idx (c)"); done <- err }()
	j = waitJob(t, db, func(x jobRow) bool { return x.state == "running" && x.rowCount > 0 }, "is backfilling")
	expectRows(t, db, fmt.Sprintf("ADMIN CANCEL DDL JOBS %d", j.id), fmt.Sprintf("%d,successful", j.id))
	err = <-done
	expectErr(t, err, 8214, "Cancelled DDL job")
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "cancelled" }, "is cancelled")
	expectIndexes(t, db, "t", "PRIMARY", "a_idx")
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	before := s.Engine().CountIndexEntries("app", "t")
	var rowsN int
	db.QueryRow("SELECT count(*) FROM t").Scan(&rowsN)
	if before != rowsN {
		t.Fatalf("%d index entries for %d rows after the cancel (only a_idx should remain)", before, rowsN)
	}

	// KILL QUERY on the issuing connection cancels the job too.
	ctx := context.Background()
	conn, _ := db.Conn(ctx)
	defer conn.Close()
	var connID int64
	conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID)
	go func() { _, err := conn.ExecContext(ctx, "ALTER TABLE t ADD INDEX c_idx (c)"); done <- err }()
	j = waitJob(t, db, func(x jobRow) bool { return x.state == "running" && x.rowCount > 0 }, "is backfilling")
	mustExec(t, db, fmt.Sprintf("KILL QUERY %d", connID))
	if err := <-done; err == nil {
		t.Fatal("killed ALTER succeeded")
	}
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "cancelled" }, "is cancelled")
	expectIndexes(t, db, "t", "PRIMARY", "a_idx")

	// Unknown jobs and finished jobs are refused.
	out := rows(t, db, "ADMIN CANCEL DDL JOBS 999, 1")
	if len(out) != 2 || !strings.Contains(out[0], "not found") || !strings.Contains(out[1], "finished") {
		t.Fatalf("ADMIN CANCEL of bad jobs: %q", out)
	}
}

// TestCrashResumesFromCheckpoint SIGKILLs a server process mid-backfill,
// restarts on the same data, and checks that the job resumes from its
// checkpoint (not from row 0) and builds a consistent index.
func TestCrashResumesFromCheckpoint(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		t.Run(mode, func(t *testing.T) { crashResumes(t, mode, "") })
	}
}

// TestIngestCrashInEveryPhase SIGKILLs the server while an ingest build,
// after its first ingest, is in each phase: scanning, sorting, spilling,
// with sstables written but not ingested, ingested but not yet
// checkpointed, and merging the change logs, each time after some
// committed DML. Each time the job resumes, finishes with a consistent
// index that has the DML's rows, and leaves no temp file.
func TestIngestCrashInEveryPhase(t *testing.T) {
	for _, phase := range []string{"scan", "sort", "spill", "ingest", "ingested", "merge"} {
		t.Run(phase, func(t *testing.T) { crashResumes(t, "ingest", phase) })
	}
}

// crashResumes runs a build in a child server process and kills it mid-way:
// with stall "", once 3000 rows are done; otherwise when the ingest build
// stops at that phase (reorgdb_ddl_test_stall_phase).
func crashResumes(t *testing.T, mode, stall string) {
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChildServer$")
	child.Env = append(os.Environ(), "REORGDB_CRASH_CHILD_DIR="+dir)
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var dsn string
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "DSN "); ok {
			dsn = v
			break
		}
	}
	if dsn == "" {
		t.Fatal("child did not start")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "txn" {
		mustExec(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = OFF")
	} else {
		// Small memory and disk budgets: the build spills and ingests
		// many times, and a resume starts from the last ingested range.
		mustExec(t, db, "SET GLOBAL innodb_ddl_buffer_size = 65536")
		mustExec(t, db, "SET GLOBAL tidb_ddl_disk_quota = 400000")
	}
	var j jobRow
	if stall == "" {
		slowBackfill(t, db)
		go db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_idx (c)")
		j = waitJob(t, db, func(x jobRow) bool { return x.state == "running" && x.rowCount >= 3000 }, "backfilled 3000 rows")
	} else {
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+stall+"'")
		go db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_idx (c)")
		j = waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+stall) }, "stalled at "+stall)
		// Committed changes the resumed build must reflect: logged while
		// the build runs, or written into the indexes once merging.
		mustExec(t, db, "UPDATE t SET a = a + 3000, c = CONCAT(c, 'x') WHERE id < 20")
		mustExec(t, db, "DELETE FROM t WHERE id >= 20 AND id < 30")
		mustExec(t, db, "INSERT INTO t VALUES (90001, 1, 'n90001')")
	}
	last := waitJob(t, db, func(x jobRow) bool { return x.id == j.id }, "exists")
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	db.Close()

	// A sort file of some earlier crash: startup must remove it.
	os.MkdirAll(filepath.Join(dir, "ddl-tmp", "job-99"), 0o755)
	os.WriteFile(filepath.Join(dir, "ddl-tmp", "job-99", "run-0.bin"), []byte("stale"), 0o644)
	s := servertest.StartDir(t, dir)
	db2 := s.DB("app")
	// The resumed job starts from its checkpoints. The transactional
	// backfill checkpoints every batch, so nothing it reported is lost; the
	// ingest backfill checkpoints every ingested round, so the rounds in
	// flight are redone.
	var resumed int64
	if err := db2.QueryRow(fmt.Sprintf("SELECT resumed_rows FROM information_schema.ddl_jobs WHERE job_id = %d", j.id)).Scan(&resumed); err != nil {
		t.Fatal(err)
	}
	// (A kill after an ingest but before its checkpoint may lose the only
	// checkpoint there would have been.)
	if mode == "txn" && resumed < last.rowCount || mode == "ingest" && stall == "" && (resumed == 0 || resumed < last.rowCount/2) ||
		stall != "" && stall != "ingested" && resumed == 0 {
		t.Fatalf("job restarted from scratch: %d rows before the crash, resumed at %d", last.rowCount, resumed)
	}
	first := jobRow{rowCount: resumed}
	mustExec(t, db2, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	waitJob(t, db2, func(x jobRow) bool { return x.id == j.id && x.state == "synced" }, "finished")
	expectIndexes(t, db2, "t", "PRIMARY", "a_idx", "c_idx")
	if _, err := db2.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	expectRows(t, db2, "SELECT id FROM t WHERE c = 'v777'", "777")
	if stall != "" {
		expectRows(t, db2, "SELECT id FROM t FORCE INDEX (c_idx) WHERE c IN ('v5x', 'v25', 'n90001') ORDER BY id", "5", "90001")
		expectRows(t, db2, "SELECT count(*) FROM t FORCE INDEX (a_idx) WHERE a >= 3000", "20")
	}
	// Nothing of the killed process's, or any earlier, sort files is left.
	if ents, _ := os.ReadDir(filepath.Join(dir, "ddl-tmp")); len(ents) != 0 {
		t.Fatalf("temp files left: %v", ents)
	}
	t.Logf("rows before kill %d, at restart %d (%s)", last.rowCount, first.rowCount, strconv.Quote(first.state))
}

// TestCrashChildServer is the child process of TestCrashResumesFromCheckpoint:
// a server with 30,000 rows that runs until it is killed.
func TestCrashChildServer(t *testing.T) {
	dir := os.Getenv("REORGDB_CRASH_CHILD_DIR")
	if dir == "" {
		return // only meaningful as the child of TestCrashResumesFromCheckpoint
	}
	s := servertest.StartDurable(t, dir)
	db := s.DB("app")
	if os.Getenv("REORGDB_CRASH_CHILD_SCHEMA") == "nullable" {
		loadNullable(t, db, mergeCrashRows)
	} else {
		loadRows(t, db, 30000)
	}
	fmt.Printf("DSN %s\n", s.DSN("app"))
	select {}
}

// TestMDLWaitIsReported: a transaction that holds up a schema step is
// named in the job's status, the job waits for it (never kills it), and
// goes on once it ends.
func TestMDLWaitIsReported(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, big VARCHAR(1000))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'x')")
	mustExec(t, db, "SET GLOBAL reorgdb_mdl_report_after_seconds = 1")
	defer db.Exec("SET GLOBAL reorgdb_mdl_report_after_seconds = 10")
	ctx := context.Background()
	old, _ := db.Conn(ctx)
	defer old.Close()
	mustExec(t, old, "BEGIN")
	expectRows(t, old, "SELECT a FROM t WHERE id = 1", "1")
	done := make(chan error, 1)
	go func() { _, err := db.Exec("CREATE INDEX ia ON t (a)"); done <- err }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := rows(t, db, "SELECT comments FROM information_schema.ddl_jobs")
		if len(out) == 1 && strings.Contains(out[0], "waiting for a transaction") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the blocking transaction was not reported: %q", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("ADD INDEX finished while an old transaction was open: %v", err)
	default:
	}
	// The old transaction is intact and can still write.
	mustExec(t, old, "UPDATE t SET a = 2 WHERE id = 1")
	mustExec(t, old, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id FROM t WHERE a = 2", "1")
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec("CREATE INDEX ib ON t (big)")
	expectErr(t, err, 1071, "Specified key was too long")
	expectIndexes(t, db, "t", "PRIMARY", "ia")
}

// TestIngestConcurrentDuplicate: during an ingest ADD UNIQUE INDEX, a
// transaction inserts a value that a row of the snapshot already has; the
// job must fail with 1062 (the validation pass), and roll back cleanly.
func TestIngestConcurrentDuplicate(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	loadRows(t, db, 20000)
	setMode(t, db, "ingest")
	slowBackfill(t, db)
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD UNIQUE INDEX c_u (c)"); done <- err }()
	waitJob(t, db, func(x jobRow) bool { return x.state == "running" && x.rowCount > 0 }, "is scanning")
	// v19999 is in the last task, which the scan has not reached yet; the
	// insert's unique check therefore finds no entry.
	mustExec(t, db, "INSERT INTO t VALUES (100000, 1, 'v19999')")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	err := <-done
	expectErr(t, err, 1062, "Duplicate entry 'v19999' for key 't.c_u'")
	expectIndexes(t, db, "t", "PRIMARY")
	if n := s.Engine().CountIndexEntries("app", "t"); n != 0 {
		t.Fatalf("%d index entries left behind", n)
	}
	// Without the duplicate the same index builds.
	mustExec(t, db, "DELETE FROM t WHERE id = 100000")
	mustExec(t, db, "ALTER TABLE t ADD UNIQUE INDEX c_u (c)")
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
}

// TestIngestSpillsWithinDiskQuota: with a sort buffer and a disk quota far
// smaller than the index, the build spills sorted runs, ingests several
// times, never uses more temp space than the quota, and leaves the temp
// dir empty.
func TestIngestSpillsWithinDiskQuota(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	loadRows(t, db, 30000)
	setMode(t, db, "ingest")
	smallIngestBudgets(t, db)
	mustExec(t, db, "ALTER TABLE t ADD INDEX c_idx (c), ADD UNIQUE INDEX ac (a, c)")
	var spilled, ingested, peak int64
	if err := db.QueryRow("SELECT spilled_bytes, ingested_bytes, peak_temp_bytes FROM information_schema.ddl_jobs").Scan(&spilled, &ingested, &peak); err != nil {
		t.Fatal(err)
	}
	t.Logf("spilled %d, ingested %d, peak temp %d", spilled, ingested, peak)
	if spilled == 0 || ingested <= 400000 {
		t.Fatalf("expected spills and an index larger than the quota: spilled %d, ingested %d", spilled, ingested)
	}
	if peak > 400000 || peak == 0 {
		t.Fatalf("peak temp use %d outside (0, quota 400000]", peak)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id FROM t WHERE c = 'v123'", "123")
	ents, _ := os.ReadDir(filepath.Join(s.Dir, "ddl-tmp"))
	if len(ents) != 0 {
		t.Fatalf("temp dir not empty: %v", ents)
	}
	// A duplicate found while merging spilled runs fails the job.
	mustExec(t, db, "UPDATE t SET c = 'v1' WHERE id = 29000")
	_, err := db.Exec("ALTER TABLE t ADD UNIQUE INDEX c_u (c)")
	expectErr(t, err, 1062, "Duplicate entry 'v1' for key 't.c_u'")
}

// TestChangeLogMergeAfterIngest stops an ingest build right after its
// sstables are in (reorgdb_ddl_test_stall_phase=ingested), changes rows
// in every way that makes an ingested entry stale or missing, and checks
// that the finished indexes hold exactly the current rows: updates of the
// indexed columns, deletes, inserts, a unique value moved from one row to
// another, and a row deleted and inserted again under the same id.
func TestChangeLogMergeAfterIngest(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	loadRows(t, db, 30000)
	smallIngestBudgets(t, db)
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'ingested'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_idx (c)")
		done <- err
	}()
	waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=ingested") }, "stalled after an ingest")
	// Rows 0..99 were scanned before the snapshot ended; change them now.
	mustExec(t, db, "UPDATE t SET a = a + 5000 WHERE id < 50")       // indexed column moves
	mustExec(t, db, "DELETE FROM t WHERE id >= 50 AND id < 60")      // rows gone
	mustExec(t, db, "UPDATE t SET c = 'moved' WHERE id = 60")        // frees 'v60' ...
	mustExec(t, db, "UPDATE t SET c = 'v60' WHERE id = 61")          // ... which another row takes
	mustExec(t, db, "DELETE FROM t WHERE id = 62")                   // deleted ...
	mustExec(t, db, "INSERT INTO t VALUES (62, 4242, 'again62')")    // ... and back, changed
	mustExec(t, db, "INSERT INTO t VALUES (100000, 7, 'new100000')") // a new row
	mustExec(t, db, "UPDATE t SET id = 200000 WHERE id = 63")        // the row moves
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (c_idx) WHERE c = 'v60'", "61")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (c_idx) WHERE c = 'v61'")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (c_idx) WHERE c = 'again62'", "62")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (c_idx) WHERE c = 'v63'", "200000")
	// a = 7: ids 7, 1007, ..., 29007 less id 7 (moved), plus the new row.
	expectRows(t, db, "SELECT count(*) FROM t FORCE INDEX (a_idx) WHERE a = 7", "30")
	expectRows(t, db, "SELECT count(*) FROM t FORCE INDEX (a_idx) WHERE a >= 5000 AND a < 5050", "50")
	expectRows(t, db, "SELECT count(*) FROM t FORCE INDEX (c_idx) WHERE c IN ('v50', 'v55', 'v59', 'v62')", "0")
	// The change logs are cleared: only the two indexes' entries remain.
	var rows int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if n := s.Engine().CountIndexEntries("app", "t"); n != 2*rows {
		t.Fatalf("%d index entries for %d rows in 2 indexes: change-log records left behind", n, rows)
	}
}

// smallIngestBudgets sets a 64 KiB sort buffer and a 400 KB disk quota,
// so that an ingest build of a few thousand rows spills and ingests many
// times; the defaults come back when the test ends.
func smallIngestBudgets(t *testing.T, db *sql.DB) {
	mustExec(t, db, "SET GLOBAL innodb_ddl_buffer_size = 65536")
	mustExec(t, db, "SET GLOBAL tidb_ddl_disk_quota = 400000")
	t.Cleanup(func() {
		db.Exec("SET GLOBAL innodb_ddl_buffer_size = 268435456")
		db.Exec("SET GLOBAL tidb_ddl_disk_quota = 107374182400")
	})
}

// TestIngestRestartsAfterSnapshotCollected: a build paused across a
// restart holds GC at its snapshot from the restart on. One whose
// snapshot's history is gone when it resumes (collected while no server
// ran it) starts over at a new snapshot, and what it ingested at the old
// one, now stale for rows changed since, must not survive into the
// finished index.
func TestIngestRestartsAfterSnapshotCollected(t *testing.T) {
	dir := t.TempDir()
	gcByHand := func(c *server.Config) { c.GCLifetime, c.GCInterval = time.Millisecond, -1 }
	s := servertest.StartConfig(t, dir, gcByHand)
	db := s.DB("app")
	loadRows(t, db, 30000)
	smallIngestBudgets(t, db)
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'ingested'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	go db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_idx (c)")
	j := waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=ingested") }, "stalled after an ingest")
	// Rows whose entries the first ingest wrote change while the build runs.
	mustExec(t, db, "UPDATE t SET a = a + 3000, c = CONCAT(c, 'x') WHERE id < 20")
	mustExec(t, db, "DELETE FROM t WHERE id >= 20 AND id < 30")
	mustExec(t, db, fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id))
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "paused" }, "is paused")
	old, _ := s.Engine().DDL.Job(j.id)
	db.Close()
	s.Close()

	s = servertest.StartConfig(t, dir, gcByHand)
	mustExec(t, s.DB("app"), "UPDATE t SET a = a + 1 WHERE id >= 40 AND id < 60")
	time.Sleep(5 * time.Millisecond)
	if _, err := s.Engine().Store().RunGC(); err != nil {
		t.Fatal(err)
	}
	if sp := s.Engine().Store().SafePoint(); sp > old.IngestTS {
		t.Fatalf("GC safe point %d passed the paused build's snapshot %d", sp, old.IngestTS)
	}
	s.Close()

	// No server runs: nothing holds the snapshot.
	store, err := kv.Open(kv.Options{Dir: dir, GCLifetime: time.Millisecond, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := store.RunGC(); err != nil {
		t.Fatal(err)
	}
	if sp := store.SafePoint(); sp <= old.IngestTS {
		t.Fatalf("GC safe point %d did not pass the paused build's snapshot %d", sp, old.IngestTS)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	s = servertest.StartConfig(t, dir, gcByHand)
	db = s.DB("app")
	mustExec(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", j.id))
	waitJob(t, db, func(x jobRow) bool { return x.id == j.id && x.state == "synced" }, "finished")
	if now, _ := s.Engine().DDL.Job(j.id); now.IngestTS == old.IngestTS {
		t.Fatalf("the build kept its collected snapshot %d", old.IngestTS)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT count(*) FROM t FORCE INDEX (c_idx) WHERE c IN ('v5', 'v25', 'v5x')", "1")
	expectRows(t, db, "SELECT count(*) FROM t FORCE INDEX (a_idx) WHERE a >= 3000", "20")
}
