package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	const rows = 3000
	insertRows(t, db, rows, func(i int) string { return fmt.Sprintf("(%d,%d,'v%d',%d)", i, i%100, i, i) })
	// uc holds c and id: a multi-column index, rebuilt by another kind
	// of job (TestDropColumnRebuildsIndexes).
	mustExec(t, db, "ALTER TABLE t DROP INDEX uc")

	load := startLoad(t, db, func(rnd *rand.Rand, id int) string {
		switch rnd.Intn(4) {
		case 0:
			return fmt.Sprintf("INSERT INTO t (id, a, c, d) VALUES (%d, %d, 'w%d', %d)", id, id%100, rnd.Intn(50), id)
		case 1:
			return fmt.Sprintf("UPDATE t SET c = 'u%d', a = a + 1 WHERE id = %d OR id = %d", rnd.Intn(50), id, rnd.Intn(rows))
		case 2:
			return fmt.Sprintf("DELETE FROM t WHERE id = %d OR id = %d", id, rnd.Intn(rows))
		}
		return fmt.Sprintf("UPDATE t SET c = NULL WHERE id = %d", rnd.Intn(rows))
	}, rows, 1062, 1054)
	alterThroughStalls(t, db, load, "ALTER TABLE t DROP COLUMN c", "drop-write-only", "drop-delete-only", "drop-none")
	load.stop()
	if load.refused(1054) == 0 {
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
	insertRows(t, db, rows, func(i int) string { return fmt.Sprintf("(%d,%d,'v%d',%d)", i, i, i%7, i%100) })
	mustExec(t, db, "CREATE TABLE dup (id INT PRIMARY KEY, a INT, c INT, UNIQUE KEY uac (a, c))")
	mustExec(t, db, "INSERT INTO dup VALUES (1, 1, 1), (2, 1, 2)")
	before := showCreate(t, db, "dup")
	_, err := db.Exec("ALTER TABLE dup DROP COLUMN c")
	expectErr(t, err, 1062, "Duplicate entry '1' for key 'dup.uac'")
	if got := showCreate(t, db, "dup"); got != before {
		t.Fatalf("the failed DROP COLUMN left\n%s", got)
	}
	mustExec(t, db, "ADMIN CHECK TABLE dup")

	load := startLoad(t, db, func(rnd *rand.Rand, id int) string {
		switch rnd.Intn(4) {
		case 0:
			return fmt.Sprintf("INSERT INTO t (id, a, d) VALUES (%d, %d, %d)", id, id, rnd.Intn(100))
		case 1:
			return fmt.Sprintf("UPDATE t SET d = %d, a = -a WHERE id = %d OR id = %d", rnd.Intn(100), id, rnd.Intn(rows))
		case 2:
			return fmt.Sprintf("DELETE FROM t WHERE id = %d OR id = %d", id, rnd.Intn(rows))
		}
		return fmt.Sprintf("UPDATE t SET a = a + 100000 WHERE id = %d", rnd.Intn(rows))
	}, rows, 1062)
	alterThroughStalls(t, db, load, "ALTER TABLE t DROP COLUMN c", "backfill", "swap", "public")
	load.stop()
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
	s, w := crashAlter(t, at, "ALTER TABLE t DROP COLUMN c", "CREATE INDEX kca ON t (c, a)", "CREATE INDEX kc ON t (c)")
	db2 := s.DB("app")
	got := showCreate(t, db2, "t")
	if strings.Contains(got, "`c`") || strings.Contains(got, "`kc`") || !strings.Contains(got, "KEY `kca` (`a`)") {
		t.Fatalf("after the restart:\n%s", got)
	}
	mustExec(t, db2, "ADMIN CHECK TABLE t")
	w.check(t, db2)
	if e := s.Engine().CountIndexEntries("app", "t"); e != 30000 {
		t.Errorf("%d index entries for 30000 rows in kca alone", e)
	}
}

// insertRows inserts rows 0..n-1 of t, row(i) giving each one's values.
func insertRows(t *testing.T, db *sql.DB, n int, row func(i int) string) {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		b.WriteString(row(i))
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
}

// load is four writers racing a schema change, each sending the
// statements next makes for ids above the loaded rows that only it uses.
// It counts the acknowledged statements and the refusals with a tolerated
// code; any other error fails the test.
type load struct {
	quit   atomic.Bool
	wg     sync.WaitGroup
	acked  atomic.Int64
	mu     sync.Mutex
	refuse map[uint16]int64
}

func startLoad(t *testing.T, db *sql.DB, next func(rnd *rand.Rand, id int) string, rows int, tolerated ...uint16) *load {
	l := &load{refuse: map[uint16]int64{}}
	for w := 0; w < 4; w++ {
		l.wg.Add(1)
		go func(w int) {
			defer l.wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for !l.quit.Load() {
				q := next(rnd, rows+rnd.Intn(2000)*4+w)
				_, err := db.Exec(q)
				switch {
				case err == nil:
					l.acked.Add(1)
				case slices.Contains(tolerated, errCode(err)):
					l.mu.Lock()
					l.refuse[errCode(err)]++
					l.mu.Unlock()
				default:
					t.Errorf("%s: %v", q, err)
					return
				}
			}
		}(w)
	}
	return l
}

// progress waits until the writers have committed 50 more statements.
func (l *load) progress(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n := l.acked.Load(); l.acked.Load() < n+50; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("writers stopped")
		}
	}
}

func (l *load) stop() {
	l.quit.Store(true)
	l.wg.Wait()
}

func (l *load) refused(code uint16) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refuse[code]
}

// alterThroughStalls runs alter with its job held at each of the stall
// phases in turn until the writers have made progress there, and fails
// the test if the ALTER fails.
func alterThroughStalls(t *testing.T, db *sql.DB, l *load, alter string, phases ...string) {
	t.Helper()
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+phases[0]+"'")
	t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = ''") })
	done := make(chan error, 1)
	go func() { _, err := db.Exec(alter); done <- err }()
	for i, at := range phases {
		waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled="+at) }, "stalled at "+at)
		l.progress(t)
		next := ""
		if i+1 < len(phases) {
			next = phases[i+1]
		}
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+next+"'")
	}
	if err := <-done; err != nil {
		t.Fatalf("%s: %v", alter, err)
	}
	l.progress(t)
}
