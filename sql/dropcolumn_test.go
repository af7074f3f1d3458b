package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestDropIndexedColumnUnderWriters: DROP COLUMN of a column with indexes
// of its own takes them with it online while writers insert, update and
// delete rows through the column; every index checks clean afterwards and
// after a restart, the dropped indexes leave no entry, and a primary-key
// column is refused with 1235, changing nothing.
func TestDropIndexedColumnUnderWriters(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(20), d INT, KEY kc (c), UNIQUE KEY uc (c, id), KEY kcc (c(3)), KEY kad (a, d))")
	_, err := db.Exec("ALTER TABLE t DROP COLUMN uc")
	expectErr(t, err, 1091, "Can't DROP 'uc'")
	before := showCreate(t, db, "t")
	_, err = db.Exec("ALTER TABLE t DROP COLUMN id")
	expectErr(t, err, 1235, "PRIMARY KEY")
	if got := showCreate(t, db, "t"); got != before {
		t.Fatalf("refused DROP COLUMN changed the table:\n%s", got)
	}
	var b strings.Builder
	const rows = 3000
	for i := 0; i < rows; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'v%d',%d)", i, i%100, i, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	// uc holds c and id: a multi-column index, rebuilt by another kind
	// of job (TestDropColumnRebuildsIndexes).
	mustExec(t, db, "ALTER TABLE t DROP INDEX uc")

	// Each step of the drop waits until writers reach it.
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'drop-write-only'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	var quit atomic.Bool
	var wg sync.WaitGroup
	var acked, unknown atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for !quit.Load() {
				id := rows + rnd.Intn(2000)*4 + w
				var q string
				switch rnd.Intn(4) {
				case 0:
					q = fmt.Sprintf("INSERT INTO t (id, a, c, d) VALUES (%d, %d, 'w%d', %d)", id, id%100, rnd.Intn(50), id)
				case 1:
					q = fmt.Sprintf("UPDATE t SET c = 'u%d', a = a + 1 WHERE id = %d OR id = %d", rnd.Intn(50), id, rnd.Intn(rows))
				case 2:
					q = fmt.Sprintf("DELETE FROM t WHERE id = %d OR id = %d", id, rnd.Intn(rows))
				default:
					q = fmt.Sprintf("UPDATE t SET c = NULL WHERE id = %d", rnd.Intn(rows))
				}
				_, err := db.Exec(q)
				switch {
				case err == nil:
					acked.Add(1)
				case errCode(err) == 1054:
					unknown.Add(1) // the column is gone
				case errCode(err) != 1062:
					t.Errorf("%s: %v", q, err)
					return
				}
			}
		}(w)
	}
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t DROP COLUMN c"); done <- err }()
	// progress waits until the writers have committed 50 more statements.
	progress := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for n := acked.Load(); acked.Load() < n+50; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("writers stopped")
			}
		}
	}
	stalled := "drop-write-only"
	for _, next := range []string{"drop-delete-only", "drop-none", ""} {
		waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+stalled) }, "stalled at "+stalled)
		progress()
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+next+"'")
		stalled = next
	}
	if err := <-done; err != nil {
		t.Fatalf("DROP COLUMN: %v", err)
	}
	progress()
	quit.Store(true)
	wg.Wait()
	if unknown.Load() == 0 {
		t.Errorf("no writer saw the column go")
	}
	expectIndexes(t, db, "t", "PRIMARY", "kad")
	if got := showCreate(t, db, "t"); strings.Contains(got, "`c`") {
		t.Fatalf("column c still there:\n%s", got)
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if e := s.Engine().CountIndexEntries("app", "t"); e != n {
		t.Fatalf("%d index entries for %d rows in kad alone: the dropped indexes left entries", e, n)
	}
	expectRows(t, db, "SELECT job_type, state, schema_state FROM information_schema.ddl_jobs ORDER BY job_id DESC LIMIT 1", "drop column,synced,none")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db = servertest.StartDir(t, dir).DB("app")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN c INT, ADD INDEX kc (c)")
	expectRows(t, db, "SELECT count(*) FROM t WHERE c IS NOT NULL", "0")
	expectRows(t, db, "SELECT count(*) FROM t WHERE c IS NULL", fmt.Sprint(n))
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestDropColumnRebuildsIndexes: DROP COLUMN of a column that multi-column
// indexes also hold rebuilds them without it online, as MySQL does, while
// writers change rows through every step: the indexes keep their names,
// an index of the column alone goes, every index checks clean before and
// after a restart, and no entry of an old index is left. A unique index
// whose rebuild finds a duplicate fails the ALTER with 1062 and leaves the
// table as it was.
func TestDropColumnRebuildsIndexes(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(20), d INT, KEY kc (c), UNIQUE KEY uac (a, c), KEY kcd (c, d), KEY ka (a))")
	const rows = 3000
	var b strings.Builder
	for i := 0; i < rows; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'v%d',%d)", i, i, i%7, i%100)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	mustExec(t, db, "CREATE TABLE dup (id INT PRIMARY KEY, a INT, c INT, UNIQUE KEY uac (a, c))")
	mustExec(t, db, "INSERT INTO dup VALUES (1, 1, 1), (2, 1, 2)")
	before := showCreate(t, db, "dup")
	_, err := db.Exec("ALTER TABLE dup DROP COLUMN c")
	expectErr(t, err, 1062, "Duplicate entry '1' for key 'dup.uac'")
	if got := showCreate(t, db, "dup"); got != before {
		t.Fatalf("the failed DROP COLUMN left\n%s", got)
	}
	mustExec(t, db, "ADMIN CHECK TABLE dup")

	var quit atomic.Bool
	var wg sync.WaitGroup
	var acked atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for !quit.Load() {
				id := rows + rnd.Intn(2000)*4 + w
				var q string
				switch rnd.Intn(4) {
				case 0:
					q = fmt.Sprintf("INSERT INTO t (id, a, d) VALUES (%d, %d, %d)", id, id, rnd.Intn(100))
				case 1:
					q = fmt.Sprintf("UPDATE t SET d = %d, a = -a WHERE id = %d OR id = %d", rnd.Intn(100), id, rnd.Intn(rows))
				case 2:
					q = fmt.Sprintf("DELETE FROM t WHERE id = %d OR id = %d", id, rnd.Intn(rows))
				default:
					q = fmt.Sprintf("UPDATE t SET a = a + 100000 WHERE id = %d", rnd.Intn(rows))
				}
				_, err := db.Exec(q)
				switch {
				case err == nil:
					acked.Add(1)
				case errCode(err) == 1062:
				default:
					t.Errorf("%s: %v", q, err)
					return
				}
			}
		}(w)
	}
	progress := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for n := acked.Load(); acked.Load() < n+50; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("writers stopped")
			}
		}
	}
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'backfill'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t DROP COLUMN c"); done <- err }()
	stalled := "backfill"
	for _, next := range []string{"swap", "public", ""} {
		waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+stalled) }, "stalled at "+stalled)
		progress()
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+next+"'")
		stalled = next
	}
	if err := <-done; err != nil {
		t.Fatalf("DROP COLUMN: %v", err)
	}
	progress()
	quit.Store(true)
	wg.Wait()
	check := func(db *sql.DB) {
		t.Helper()
		got := showCreate(t, db, "t")
		for _, want := range []string{"UNIQUE KEY `uac` (`a`)", "KEY `kcd` (`d`)", "KEY `ka` (`a`)"} {
			if !strings.Contains(got, want) {
				t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "`c`") || strings.Contains(got, "kc`") {
			t.Errorf("column c or index kc still there:\n%s", got)
		}
		mustExec(t, db, "ADMIN CHECK TABLE t")
		var n int
		if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if e := s.Engine().CountIndexEntries("app", "t"); e != 3*n {
			t.Errorf("%d index entries for %d rows in three indexes", e, n)
		}
	}
	check(db)
	expectRows(t, db, "SELECT job_type, state FROM information_schema.ddl_jobs WHERE table_name = 't' ORDER BY job_id DESC LIMIT 1", "drop column,synced")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = servertest.StartDir(t, dir)
	db = s.DB("app")
	check(db)
	mustExec(t, db, "INSERT INTO t (id, a, d) VALUES (-1, -77777, 1)")
	_, err = db.Exec("INSERT INTO t (id, a, d) VALUES (-2, -77777, 1)")
	expectErr(t, err, 1062, "Duplicate entry '-77777' for key 't.uac'")
}

// TestDropColumnRebuildCrash SIGKILLs the server during a DROP COLUMN that
// rebuilds a multi-column index, at each of its steps, while a writer
// updates the index's other column; after the restart the job finishes:
// the column and its single-column index are gone, the rebuilt index
// keeps its name and checks clean, and every acknowledged write is there.
func TestDropColumnRebuildCrash(t *testing.T) {
	for _, at := range []string{"delete-only", "write-only", "backfill", "swap", "public"} {
		t.Run(at, func(t *testing.T) { crashDropColumn(t, at) })
	}
}

func crashDropColumn(t *testing.T, at string) {
	dir := t.TempDir()
	child, dsn := startChild(t, dir, "")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE INDEX kca ON t (c, a)")
	mustExec(t, db, "CREATE INDEX kc ON t (c)")
	var lastJob int64
	for _, j := range showJobs(t, db) {
		lastJob = max(lastJob, j.id)
	}
	if at == "backfill" { // slow enough to be killed half way
		mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_batch_size = 32")
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 2")
	} else {
		mustExec(t, db, fmt.Sprintf("SET GLOBAL reorgdb_ddl_test_stall_phase = '%s'", at))
	}
	go db.Exec("ALTER TABLE t DROP COLUMN c")

	acked := map[int]int{}
	var mu sync.Mutex
	inflight := [2]int{-1, 0}
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
			inflight = [2]int{id, v}
			mu.Unlock()
			if _, err := db.Exec("UPDATE t SET a = ? WHERE id = ?", v, id); err != nil {
				return // the server is gone
			}
			mu.Lock()
			acked[id], inflight = v, [2]int{-1, 0}
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
	db2 := s.DB("app")
	j := waitJob(t, db2, func(x jobRow) bool {
		return x.id > lastJob && (x.state == "synced" || x.state == "rollback done")
	}, "finished")
	if j.state != "synced" {
		t.Fatalf("job ended %q: %s", j.state, j.errText)
	}
	got := showCreate(t, db2, "t")
	if strings.Contains(got, "`c`") || strings.Contains(got, "`kc`") || !strings.Contains(got, "KEY `kca` (`a`)") {
		t.Fatalf("after the restart:\n%s", got)
	}
	mustExec(t, db2, "ADMIN CHECK TABLE t")
	r, err := db2.Query("SELECT id, a FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Next() {
		var id, a int
		if err := r.Scan(&id, &a); err != nil {
			t.Fatal(err)
		}
		n++
		want, ok := acked[id]
		if !ok {
			want = id % 1000
		}
		if a != want && !(inflight[0] == id && a == inflight[1]) {
			t.Errorf("row %d: a = %d, want %d", id, a, want)
		}
	}
	if n != 30000 {
		t.Errorf("%d rows, want 30000", n)
	}
	if e := s.Engine().CountIndexEntries("app", "t"); e != n {
		t.Errorf("%d index entries for %d rows in kca alone", e, n)
	}
}
