package server_test

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAddDropPrimaryKey: ADD PRIMARY KEY on a table keyed by a hidden row
// id builds a non-clustered primary key online (both backfill modes),
// making its columns NOT NULL; NULLs and duplicates fail it with MySQL's
// errors and leave the table as it was; DROP PRIMARY KEY drops it, and
// refuses a clustered integer primary key before changing anything.
func TestAddDropPrimaryKey(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("pk")
	for _, mode := range []string{"ON", "OFF"} {
		mustExecDB(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = "+mode,
			"DROP TABLE IF EXISTS t",
			"CREATE TABLE t (a VARCHAR(20), b INT, c INT)",
			"INSERT INTO t VALUES ('x', 1, 10), ('y', 2, 20), ('z', 2, 30)")
		mustExecDB(t, db, "ALTER TABLE t ADD PRIMARY KEY (a)")
		create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]
		if !strings.Contains(create, "`a` varchar(20) NOT NULL,") || !strings.Contains(create, "PRIMARY KEY (`a`)") {
			t.Fatalf("%s: SHOW CREATE TABLE after ADD PRIMARY KEY: %s", mode, create)
		}
		fkErr(t, db, "INSERT INTO t VALUES ('x', 9, 9)", 1062, "Duplicate entry 'x' for key 't.PRIMARY'")
		fkErr(t, db, "INSERT INTO t VALUES (NULL, 9, 9)", 1048, "Column 'a' cannot be null")
		fkErr(t, db, "ALTER TABLE t ADD PRIMARY KEY (b)", 1068, "Multiple primary key defined")
		if got := fkRows(t, db, "EXPLAIN SELECT b FROM t WHERE a = 'y'"); !strings.Contains(got, ",PRIMARY,") {
			t.Errorf("%s: EXPLAIN point lookup: %s, want key PRIMARY", mode, got)
		}
		if got := fkRows(t, db, "SELECT b FROM t WHERE a = 'y'"); got != "2" {
			t.Errorf("%s: lookup by the new primary key: %s", mode, got)
		}
		if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
			t.Errorf("%s: ADMIN CHECK TABLE: %s", mode, got)
		}

		// A duplicate fails with 1062 for key PRIMARY and changes nothing.
		mustExecDB(t, db, "ALTER TABLE t DROP PRIMARY KEY")
		create = rowStrings(t, db, "SHOW CREATE TABLE t")[1]
		if strings.Contains(create, "PRIMARY KEY") || !strings.Contains(create, "`a` varchar(20) NOT NULL,") {
			t.Fatalf("%s: SHOW CREATE TABLE after DROP PRIMARY KEY: %s", mode, create)
		}
		fkErr(t, db, "ALTER TABLE t DROP PRIMARY KEY", 1091, "Can't DROP 'PRIMARY'; check that column/key exists")
		fkErr(t, db, "ALTER TABLE t ADD PRIMARY KEY (b)", 1062, "Duplicate entry '2' for key 't.PRIMARY'")
		// A NULL fails with 1138 and leaves the column nullable.
		mustExecDB(t, db, "UPDATE t SET c = NULL WHERE a = 'y'")
		fkErr(t, db, "ALTER TABLE t ADD PRIMARY KEY (c)", 1138, "Invalid use of NULL value")
		create = rowStrings(t, db, "SHOW CREATE TABLE t")[1]
		if strings.Contains(create, "PRIMARY KEY") || strings.Contains(create, "`c` int NOT NULL") {
			t.Fatalf("%s: SHOW CREATE TABLE after failed ADD PRIMARY KEY: %s", mode, create)
		}
		// Several columns, some nullable: they become NOT NULL.
		mustExecDB(t, db, "UPDATE t SET c = 20 WHERE a = 'y'", "ALTER TABLE t ADD PRIMARY KEY (b, c)")
		create = rowStrings(t, db, "SHOW CREATE TABLE t")[1]
		if !strings.Contains(create, "`c` int NOT NULL") || !strings.Contains(create, "PRIMARY KEY (`b`,`c`)") {
			t.Fatalf("%s: SHOW CREATE TABLE after ADD PRIMARY KEY (b, c): %s", mode, create)
		}
		if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
			t.Errorf("%s: ADMIN CHECK TABLE: %s", mode, got)
		}
	}
	mustExecDB(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = ON")

	// A clustered integer primary key is refused before anything changes.
	mustExecDB(t, db, "CREATE TABLE ci (id INT PRIMARY KEY, v INT)", "INSERT INTO ci VALUES (1, 1)")
	fkErr(t, db, "ALTER TABLE ci DROP PRIMARY KEY", 1235,
		"This version of ReorgDB doesn't yet support 'ALTER TABLE ... DROP PRIMARY KEY of a clustered integer primary key (the rows are keyed by it)'")
	if create := rowStrings(t, db, "SHOW CREATE TABLE ci")[1]; !strings.Contains(create, "PRIMARY KEY (`id`)") {
		t.Errorf("SHOW CREATE TABLE ci after refused DROP: %s", create)
	}

	// The primary key survives a restart.
	s.Close()
	s = servertest.StartDir(t, dir)
	db = s.DB("pk")
	if create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]; !strings.Contains(create, "PRIMARY KEY (`b`,`c`)") {
		t.Errorf("SHOW CREATE TABLE after restart: %s", create)
	}
	fkErr(t, db, "INSERT INTO t VALUES ('w', 1, 10)", 1062, "Duplicate entry '1-10' for key 't.PRIMARY'")

	// Both in one statement: the old key goes, the new one is built.
	mustExecDB(t, db, "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a)")
	if create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]; !strings.Contains(create, "PRIMARY KEY (`a`)") || strings.Contains(create, "PRIMARY KEY (`b`") {
		t.Errorf("SHOW CREATE TABLE after DROP, ADD PRIMARY KEY: %s", create)
	}
	mustExecDB(t, db, "INSERT INTO t VALUES ('w', 1, 10)")
	if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
		t.Errorf("ADMIN CHECK TABLE after DROP, ADD PRIMARY KEY: %s", got)
	}
}

// TestAddPrimaryKeyConcurrentDML: ADD PRIMARY KEY runs online while
// writers insert, update and delete, in both backfill modes; the writers
// see no error and the table checks clean afterwards.
func TestAddPrimaryKeyConcurrentDML(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("pkc")
	for _, mode := range []string{"ON", "OFF"} {
		mustExecDB(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = "+mode, "SET GLOBAL tidb_ddl_reorg_batch_size = 32", "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 5",
			"DROP TABLE IF EXISTS t", "CREATE TABLE t (k INT NOT NULL, v INT, KEY iv (v))")
		var vals []string
		for i := 0; i < 2000; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d)", i, i))
		}
		mustExecDB(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var writes atomic.Int64
		errs := make(chan error, 4)
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					k := 100000*(w+1) + i
					for _, q := range []string{
						fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", k, i),
						fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", (i*7+w)%2000),
						fmt.Sprintf("UPDATE t SET k = %d WHERE k = %d", k+50000, k),
						fmt.Sprintf("DELETE FROM t WHERE k = %d", k+50000-3),
					} {
						if _, err := db.Exec(q); err != nil {
							errs <- fmt.Errorf("%s: %w", q, err)
							return
						}
						writes.Add(1)
					}
				}
			}(w)
		}
		for writes.Load() < 50 {
			time.Sleep(time.Millisecond)
		}
		_, alterErr := db.Exec("ALTER TABLE t ADD PRIMARY KEY (k)")
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: writer: %v", mode, err)
		}
		if alterErr != nil {
			t.Fatalf("%s: ADD PRIMARY KEY: %v", mode, alterErr)
		}
		if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
			t.Errorf("%s: ADMIN CHECK TABLE: %s", mode, got)
		}
		if got := fkRows(t, db, "SELECT COUNT(*) = COUNT(DISTINCT k) FROM t"); got != "1" {
			t.Errorf("%s: keys not unique: %s", mode, got)
		}
		if create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]; !strings.Contains(create, "PRIMARY KEY (`k`)") {
			t.Errorf("%s: SHOW CREATE TABLE: %s", mode, create)
		}
		t.Logf("%s: %d writes during the build", mode, writes.Load())
	}
	mustExecDB(t, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = ON", "SET GLOBAL tidb_ddl_reorg_batch_size = 256", "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
}

// TestDropPrimaryKeyForeignKey: a primary key that a foreign key needs
// cannot be dropped (1553), as MySQL refuses.
func TestDropPrimaryKeyForeignKey(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("pkfk")
	mustExecDB(t, db,
		"CREATE TABLE p (code VARCHAR(10) PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, code VARCHAR(10), FOREIGN KEY fk_code (code) REFERENCES p (code))",
		"INSERT INTO p VALUES ('a')", "INSERT INTO c VALUES (1, 'a')")
	fkErr(t, db, "ALTER TABLE p DROP PRIMARY KEY", 1553, "Cannot drop index 'PRIMARY': needed in a foreign key constraint")
	if create := rowStrings(t, db, "SHOW CREATE TABLE p")[1]; !strings.Contains(create, "PRIMARY KEY (`code`)") {
		t.Errorf("SHOW CREATE TABLE p after refused DROP: %s", create)
	}
	// With another index on the column, the primary key can go.
	mustExecDB(t, db, "ALTER TABLE p ADD UNIQUE INDEX ucode (code)", "ALTER TABLE p DROP PRIMARY KEY")
	_, err := db.Exec("INSERT INTO c VALUES (2, 'zz')")
	wantCode(t, "child row without parent after DROP PRIMARY KEY", err, 1452)
}

// TestAddPrimaryKeySurvivesRestart: a server stopped while ADD PRIMARY
// KEY backfills resumes the job when it starts again, and the table ends
// with its primary key and checks clean.
func TestAddPrimaryKeySurvivesRestart(t *testing.T) {
	t.Cleanup(func() {
		gms.SystemVariables.AssignValues(map[string]any{"reorgdb_ddl_reorg_batch_delay_ms": 0, "tidb_ddl_reorg_batch_size": 256, "tidb_ddl_enable_fast_reorg": 1})
	})
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("pkr")
	mustExecDB(t, db, "CREATE TABLE t (k INT NOT NULL, v INT)")
	var vals []string
	for i := 0; i < 4000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i%7))
	}
	mustExecDB(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","),
		"SET GLOBAL tidb_ddl_enable_fast_reorg = OFF", "SET GLOBAL tidb_ddl_reorg_batch_size = 32",
		"SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 20")
	go db.Exec("ALTER TABLE t ADD PRIMARY KEY (k)") //nolint:errcheck // its connection goes with the server
	waitPKJob(t, db, func(state string, rows int64) bool { return state == "running" && rows > 0 })
	db.Close()
	s.Close()

	s = servertest.StartDir(t, dir)
	db = s.DB("pkr")
	mustExecDB(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	waitPKJob(t, db, func(state string, _ int64) bool { return state == "synced" })
	if create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]; !strings.Contains(create, "PRIMARY KEY (`k`)") {
		t.Fatalf("SHOW CREATE TABLE after the resumed job: %s", create)
	}
	if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
		t.Errorf("ADMIN CHECK TABLE: %s", got)
	}
	fkErr(t, db, "INSERT INTO t VALUES (3999, 0)", 1062, "Duplicate entry '3999' for key 't.PRIMARY'")
}

// waitPKJob waits until the newest DDL job's state and rows done satisfy
// cond.
func waitPKJob(t *testing.T, db *sql.DB, cond func(state string, rows int64) bool) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var id, tableID, rows, total int64
		var dbn, table, typ, schema, created string
		var start, end, comment, errText sql.NullString
		err := db.QueryRow("ADMIN SHOW DDL JOBS 1").Scan(&id, &dbn, &table, &typ, &schema, &tableID, &rows, &total, &created, &start, &end, &state, &comment, &errText)
		if err == sql.ErrNoRows { // not submitted yet
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if cond(state, rows) {
			return
		}
	}
	t.Fatalf("timed out waiting for the job; last state %s", state)
}

// TestAddPrimaryKeyRefusesNullWhileBuilding: while ADD PRIMARY KEY
// builds, a write of NULL into its columns gets 1048 (the columns are
// becoming NOT NULL), and the build goes on to the end.
func TestAddPrimaryKeyRefusesNullWhileBuilding(t *testing.T) {
	t.Cleanup(func() {
		gms.SystemVariables.AssignValues(map[string]any{"reorgdb_ddl_reorg_batch_delay_ms": 0, "tidb_ddl_reorg_batch_size": 256, "tidb_ddl_enable_fast_reorg": 1})
	})
	s := servertest.Start(t)
	db := s.DB("pkn")
	mustExecDB(t, db, "CREATE TABLE t (a INT, b INT)")
	var vals []string
	for i := 0; i < 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i))
	}
	mustExecDB(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","),
		"SET GLOBAL tidb_ddl_enable_fast_reorg = OFF", "SET GLOBAL tidb_ddl_reorg_batch_size = 32",
		"SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 10")
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD PRIMARY KEY (a)"); done <- err }()
	waitPKJob(t, db, func(state string, rows int64) bool { return state == "running" && rows > 0 })
	fkErr(t, db, "INSERT INTO t VALUES (NULL, 1)", 1048, "Column 'a' cannot be null")
	mustExecDB(t, db, "INSERT INTO t VALUES (5000, 1)", "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 0")
	if err := <-done; err != nil {
		t.Fatalf("ADD PRIMARY KEY: %v", err)
	}
	if create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]; !strings.Contains(create, "`a` int NOT NULL") || !strings.Contains(create, "PRIMARY KEY (`a`)") {
		t.Errorf("SHOW CREATE TABLE: %s", create)
	}
	if got := fkRows(t, db, "SELECT COUNT(*) FROM t"); got != "3001" {
		t.Errorf("rows: %s, want 3001", got)
	}
}
