package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestOnlineAddIndexRace runs randomized DML transactions against a table
// while indexes are added (plain, unique on a column the workload keeps
// unique, and several in one ALTER), then checks every index against the
// table and that every transaction reported committed is visible.
func TestOnlineAddIndexRace(t *testing.T) {
	for _, cfg := range []struct {
		name           string
		seed           int64
		mode           string
		workers, batch int
		cpuShare       int // 100: the backfill never yields to the DML
	}{
		{"txn-defaults", 1, "txn", 4, 256, 10},
		{"txn-small-batches-many-workers", 2, "txn", 16, 32, 100},
		{"txn-one-worker", 3, "txn", 1, 1024, 10},
		{"ingest-defaults", 4, "ingest", 4, 256, 10},
		{"ingest-small-buffer", 5, "ingest", 3, 256, 100}, // many sort/ingest rounds
	} {
		t.Run(cfg.name, func(t *testing.T) {
			s := servertest.Start(t)
			db := s.DB("app")
			mustExec(t, db, fmt.Sprintf("SET GLOBAL reorgdb_ddl_cpu_share = %d", cfg.cpuShare))
			t.Cleanup(func() { db.Exec("SET GLOBAL reorgdb_ddl_cpu_share = DEFAULT") })
			raceAddIndex(t, s, cfg.seed, cfg.mode, cfg.workers, cfg.batch)
		})
	}
}

// setMode selects the backfill: "txn" or "ingest" (with a tiny sort
// buffer, so that a build takes many sort-and-ingest rounds).
func setMode(t testing.TB, db *sql.DB, mode string) {
	t.Helper()
	if mode == "txn" {
		mustExec(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = OFF")
	} else {
		mustExec(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = ON")
		mustExec(t, db, "SET GLOBAL innodb_ddl_buffer_size = 65536")
	}
	t.Cleanup(func() {
		db.Exec("SET GLOBAL tidb_ddl_enable_fast_reorg = ON")
		db.Exec("SET GLOBAL innodb_ddl_buffer_size = 268435456")
	})
}

func raceAddIndex(t *testing.T, s *servertest.Server, seed int64, mode string, workers, batch int) {
	db := s.DB("app")
	db.SetMaxOpenConns(16)
	setMode(t, db, mode)
	mustExec(t, db, fmt.Sprintf("SET GLOBAL tidb_ddl_reorg_worker_cnt = %d", workers))
	mustExec(t, db, fmt.Sprintf("SET GLOBAL tidb_ddl_reorg_batch_size = %d", batch))
	mustExec(t, db, `CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, u INT NOT NULL, c VARCHAR(30) NOT NULL, pad VARCHAR(30) NOT NULL)`)
	const rowsN = 20000
	var b strings.Builder
	for i := 0; i < rowsN; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,%d,'c%d','p%d')", i, i%100, i, i%997, i)
		if (i+1)%2000 == 0 {
			mustExec(t, db, "INSERT INTO t VALUES "+b.String())
			b.Reset()
		}
	}

	// Each worker owns the ids congruent to its number mod 6, so it knows
	// exactly what its committed transactions left in them. The workload
	// keeps u unique: u of row id is always id or id+1e6.
	type rowState struct {
		exists bool
		a, u   int
		c      string
	}
	const nw = 6
	models := make([]map[int]rowState, nw)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var nCommits, nConflicts atomic.Int64
	errc := make(chan error, nw)
	for w := 0; w < nw; w++ {
		models[w] = map[int]rowState{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			model := models[w]
			get := func(id int) rowState {
				if r, ok := model[id]; ok {
					return r
				}
				return rowState{true, id % 100, id, fmt.Sprintf("c%d", id%997)}
			}
			rng := rand.New(rand.NewSource(seed*100 + int64(w)))
			conn, err := db.Conn(context.Background())
			if err != nil {
				errc <- err
				return
			}
			defer conn.Close()
			ctx := context.Background()
			for !stop.Load() {
				pending := map[int]rowState{}
				cur := func(id int) rowState {
					if r, ok := pending[id]; ok {
						return r
					}
					return get(id)
				}
				_, err := conn.ExecContext(ctx, "BEGIN")
				for k := 0; k < 3 && err == nil; k++ {
					id := rng.Intn(rowsN/nw)*nw + w
					r := cur(id)
					switch rng.Intn(5) {
					case 0:
						a, c := rng.Intn(100), fmt.Sprintf("c%d", rng.Intn(997))
						if _, err = conn.ExecContext(ctx, "UPDATE t SET a = ?, c = ? WHERE id = ?", a, c, id); err == nil && r.exists {
							r.a, r.c = a, c
						}
					case 1:
						u := id
						if rng.Intn(2) == 0 {
							u = id + 1000000
						}
						if _, err = conn.ExecContext(ctx, "UPDATE t SET u = ?, pad = 'x' WHERE id = ?", u, id); err == nil && r.exists {
							r.u = u
						}
					case 2:
						if _, err = conn.ExecContext(ctx, "DELETE FROM t WHERE id = ?", id); err == nil {
							r.exists = false
						}
					case 3:
						a, c := rng.Intn(100), fmt.Sprintf("c%d", rng.Intn(997))
						if _, err = conn.ExecContext(ctx, "REPLACE INTO t VALUES (?, ?, ?, ?, 'r')", id, a, id, c); err == nil {
							r = rowState{true, a, id, c}
						}
					case 4:
						a := rng.Intn(100)
						if _, err = conn.ExecContext(ctx, "INSERT IGNORE INTO t VALUES (?, ?, ?, 'ins', 'i')", id, a, id+1000000); err == nil && !r.exists {
							r = rowState{true, a, id + 1000000, "ins"}
						}
					}
					pending[id] = r
				}
				if err == nil {
					_, err = conn.ExecContext(ctx, "COMMIT")
				}
				if err != nil {
					if errCode(err) == 1213 {
						nConflicts.Add(1)
						continue
					}
					errc <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				nCommits.Add(1)
				for id, r := range pending {
					model[id] = r
				}
			}
		}(w)
	}
	time.Sleep(200 * time.Millisecond)
	ddls := []string{
		"ALTER TABLE t ADD INDEX a_idx (a)",
		"CREATE UNIQUE INDEX u_idx ON t (u)",
		"ALTER TABLE t ADD INDEX c_idx (c), ADD INDEX ac_idx (a, c(3)), ADD UNIQUE INDEX uc_idx (u, c)",
	}
	for _, q := range ddls {
		if _, err := db.Exec(q); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("%s: %v", q, err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	t.Logf("commits %d, conflicts %d", nCommits.Load(), nConflicts.Load())
	if nCommits.Load() < 20 {
		t.Fatalf("only %d transactions committed during the DDL", nCommits.Load())
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	// Every index answers like a full scan.
	for _, q := range []string{"SELECT count(*) FROM t WHERE a = 7", "SELECT count(*) FROM t WHERE c = 'c5'", "SELECT count(*) FROM t WHERE u > 1000000"} {
		var viaIndex, viaScan int
		if err := db.QueryRow(q).Scan(&viaIndex); err != nil {
			t.Fatal(err)
		}
		cond := q[strings.Index(q, "WHERE")+6:]
		if err := db.QueryRow("SELECT count(*) FROM t WHERE id + 0 >= 0 AND (" + cond + ") AND pad = pad").Scan(&viaScan); err != nil {
			t.Fatal(err)
		}
		if viaIndex != viaScan {
			t.Fatalf("%s: %d through the index, %d by scan", q, viaIndex, viaScan)
		}
	}
	expectIndexes(t, db, "t", "PRIMARY", "a_idx", "ac_idx", "c_idx", "u_idx", "uc_idx")
	// Every committed change is there.
	for w := 0; w < nw; w++ {
		for id, r := range models[w] {
			got := rows(t, db, fmt.Sprintf("SELECT a, u, c FROM t WHERE id = %d", id))
			want := []string(nil)
			if r.exists {
				want = []string{fmt.Sprintf("%d,%d,%s", r.a, r.u, r.c)}
			}
			if strings.Join(got, ";") != strings.Join(want, ";") {
				t.Fatalf("row %d: got %v, want %v", id, got, want)
			}
		}
	}
}

func expectIndexes(t *testing.T, db *sql.DB, table string, want ...string) {
	t.Helper()
	got := rows(t, db, "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_name = '"+table+"'")
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("indexes of %s: %v, want %v", table, got, want)
	}
}

func TestAddUniqueIndexWithDuplicatesFails(t *testing.T) {
	for _, mode := range []string{"txn", "ingest"} {
		t.Run(mode, func(t *testing.T) { addUniqueWithDuplicates(t, mode) })
	}
}

func addUniqueWithDuplicates(t *testing.T, mode string) {
	s := servertest.Start(t)
	db := s.DB("app")
	setMode(t, db, mode)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT, w INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 1), (2, 20, 2), (3, 10, 3)")
	before := rows(t, db, "SELECT * FROM t ORDER BY id")
	_, err := db.Exec("ALTER TABLE t ADD UNIQUE INDEX v_u (v)")
	expectErr(t, err, 1062, "Duplicate entry '10' for key 't.v_u'")
	_, err = db.Exec("ALTER TABLE t ADD INDEX w_i (w), ADD UNIQUE INDEX v_u (v)")
	expectErr(t, err, 1062, "Duplicate entry '10' for key 't.v_u'")
	expectIndexes(t, db, "t", "PRIMARY")
	if got := rows(t, db, "SELECT * FROM t ORDER BY id"); strings.Join(got, ";") != strings.Join(before, ";") {
		t.Fatalf("table changed: %v", got)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	// No entry of the failed indexes is left behind.
	if n := s.Engine().CountIndexEntries("app", "t"); n != 0 {
		t.Fatalf("%d index entries left behind", n)
	}
	jobs := rows(t, db, "ADMIN SHOW DDL JOBS")
	if len(jobs) < 2 || !strings.Contains(jobs[0], "rollback done") {
		t.Fatalf("ADMIN SHOW DDL JOBS: %q", jobs)
	}
}

func TestMultiIndexAlterIsOneJob(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'x'), (2, 2, 'y')")
	mustExec(t, db, "ALTER TABLE t ADD INDEX ia (a), ADD INDEX ib (b), ALGORITHM=INPLACE, LOCK=NONE")
	expectIndexes(t, db, "t", "PRIMARY", "ia", "ib")
	jobs := rows(t, db, "ADMIN SHOW DDL JOBS")
	if len(jobs) != 1 || !strings.Contains(jobs[0], "synced") || !strings.Contains(jobs[0], ",2,") {
		t.Fatalf("ADMIN SHOW DDL JOBS: %q", jobs)
	}
	ij := rows(t, db, "SELECT job_id, state, row_count, query FROM information_schema.ddl_jobs")
	if len(ij) != 1 || !strings.HasPrefix(ij[0], "1,synced,2,ALTER TABLE t ADD INDEX ia") {
		t.Fatalf("information_schema.ddl_jobs: %q", ij)
	}
	q := rows(t, db, "ADMIN SHOW DDL JOB QUERIES 1")
	if len(q) != 1 || !strings.Contains(q[0], "ADD INDEX ia") {
		t.Fatalf("ADMIN SHOW DDL JOB QUERIES: %q", q)
	}
	expectRows(t, db, "SELECT id FROM t WHERE b = 'y'", "2")
	mustExec(t, db, "DROP INDEX ia ON t")
	expectIndexes(t, db, "t", "PRIMARY", "ib")
}

func TestIndexDDLStatementForms(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(40), bl BLOB)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'hello', 'x'), (2, 2, 'help', 'y')")
	mustExec(t, db, "CREATE INDEX ia ON t (a) ALGORITHM=INPLACE LOCK=NONE")
	mustExec(t, db, "CREATE UNIQUE INDEX ib ON t (b(3), a) ALGORITHM = DEFAULT")
	mustExec(t, db, "ALTER TABLE t ADD INDEX ibl (bl(2)), ALGORITHM=INPLACE, LOCK=NONE")
	mustExec(t, db, "CREATE INDEX IF NOT EXISTS ia ON t (a)")
	mustExec(t, db, "ALTER TABLE t DROP INDEX ibl")
	mustExec(t, db, "DROP INDEX IF EXISTS ibl ON t")
	expectIndexes(t, db, "t", "PRIMARY", "ia", "ib")
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"CREATE INDEX ic ON t (a) ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t ADD INDEX ic (a), LOCK=BOGUS", 1801},
		{"CREATE INDEX ia ON t (b)", 1061},
		{"CREATE INDEX ic ON t (nosuch)", 1072},
		{"CREATE INDEX ic ON t (bl)", 1170},
		{"CREATE INDEX ic ON t (b(41))", 1089},
		{"ALTER TABLE t ADD INDEX ic (a), ADD INDEX ic (b)", 1061},
		{"ALTER TABLE t MODIFY COLUMN a DATETIME", 1292},
		{"ALTER TABLE t MODIFY COLUMN a JSON", 3152},
		{"ALTER TABLE t ADD COLUMN big INT, ALGORITHM=INSTANT, ADD INDEX ib2 (b)", 1845},
	} {
		_, err := db.Exec(c.q)
		if errCode(err) != c.code {
			t.Errorf("%s: got %v, want error %d", c.q, err, c.code)
		}
	}
	expectIndexes(t, db, "t", "PRIMARY", "ia", "ib")
	expectRows(t, db, "SELECT id FROM t WHERE b = 'help'", "2")
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ADMIN CHECK INDEX t ib"); err != nil {
		t.Fatal(err)
	}
}

// TestDDLCommitsOpenTransaction: as in MySQL, DDL first commits the
// session's open transaction, so its rows get the new index's entries.
func TestDDLCommitsOpenTransaction(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1)")
	ctx := context.Background()
	c, _ := db.Conn(ctx)
	defer c.Close()
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO t VALUES (2, 2)")
	mustExec(t, c, "CREATE INDEX ia ON t (a)")
	mustExec(t, c, "ROLLBACK") // nothing left to roll back
	expectRows(t, db, "SELECT id FROM t WHERE a = 2", "2")
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerCountAliases(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	defer db.Exec("SET GLOBAL tidb_ddl_reorg_worker_cnt = 4")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1)")
	setMode(t, db, "txn")
	mustExec(t, db, "SET GLOBAL innodb_parallel_read_threads = 3")
	if w := s.Engine().DDLSettings().Workers; w != 3 {
		t.Fatalf("workers = %d after innodb_parallel_read_threads = 3", w)
	}
	mustExec(t, db, "CREATE INDEX ia ON t (a)")
	mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_worker_cnt = 5")
	if w := s.Engine().DDLSettings().Workers; w != 5 {
		t.Fatalf("workers = %d after tidb_ddl_reorg_worker_cnt = 5", w)
	}
	mustExec(t, db, "CREATE INDEX ia2 ON t (a)")
	expectIndexes(t, db, "t", "PRIMARY", "ia", "ia2")
	_, err := db.Exec("SET GLOBAL tidb_ddl_reorg_worker_cnt = 0")
	if err == nil {
		t.Fatal("worker count 0 accepted")
	}
	_, err = db.Exec("SET GLOBAL tidb_ddl_reorg_batch_size = 20000")
	if err == nil {
		t.Fatal("batch size 20000 accepted")
	}
}

// reorgdb_ddl_ingest_compression is off by default, reaches the build's
// settings when set, and index builds with either value check out.
func TestIngestCompressionSetting(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	defer db.Exec("SET GLOBAL reorgdb_ddl_ingest_compression = DEFAULT")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 2, 'z')")
	setMode(t, db, "ingest")
	if s.Engine().DDLSettings().CompressIngest {
		t.Fatal("ingest compression on by default")
	}
	mustExec(t, db, "CREATE INDEX ia ON t (a)")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_ingest_compression = ON")
	if !s.Engine().DDLSettings().CompressIngest {
		t.Fatal("ingest compression still off after SET GLOBAL ... = ON")
	}
	mustExec(t, db, "CREATE UNIQUE INDEX ub ON t (b)")
	expectIndexes(t, db, "t", "PRIMARY", "ia", "ub")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	expectRows(t, db, "SELECT id FROM t WHERE b = 'y'", "2")
	if _, err := db.Exec("SET GLOBAL reorgdb_ddl_ingest_compression = 'sometimes'"); err == nil {
		t.Fatal("a non-boolean value accepted")
	}
}
