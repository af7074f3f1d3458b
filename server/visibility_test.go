package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestIndexVisibility: ALTER INDEX ... INVISIBLE hides an index from the
// planner (EXPLAIN, index hints) while DML keeps it up to date, the
// catalog views show it as invisible, the flag survives a restart, and
// the primary key and unknown indexes get MySQL's errors.
func TestIndexVisibility(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("vis")
	mustExecDB(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, KEY ib (b), KEY ia (a))",
		"INSERT INTO t VALUES (1, 10, 100), (2, 20, 200), (3, 30, 300)")
	explain := "EXPLAIN SELECT id FROM t WHERE b = 200"
	if got := fkRows(t, db, explain); !strings.Contains(got, ",ib,") {
		t.Fatalf("visible: %s = %s, want key ib", explain, got)
	}
	mustExecDB(t, db, "ALTER TABLE t ALTER INDEX ib INVISIBLE")
	if got := fkRows(t, db, explain); strings.Contains(got, ",ib,") {
		t.Errorf("invisible: %s = %s, uses ib", explain, got)
	}
	fkErr(t, db, "SELECT id FROM t FORCE INDEX (ib) WHERE b = 200", 1176, "Key 'ib' doesn't exist in table 't'")
	if got := fkRows(t, db, "SELECT id FROM t WHERE b = 200"); got != "2" {
		t.Errorf("query on invisible index column: %s", got)
	}
	wantVisibility(t, db, "NO")

	// DML maintains the invisible index.
	mustExecDB(t, db, "INSERT INTO t VALUES (4, 40, 400)", "UPDATE t SET b = 201 WHERE id = 2", "DELETE FROM t WHERE id = 3")

	s.Close()
	s = servertest.StartDir(t, dir)
	db = s.DB("vis")
	wantVisibility(t, db, "NO")
	mustExecDB(t, db, "ALTER TABLE t ALTER INDEX ib VISIBLE")
	wantVisibility(t, db, "YES")
	if got := fkRows(t, db, "ADMIN CHECK TABLE t"); strings.Contains(got, "rror") {
		t.Errorf("ADMIN CHECK TABLE after DML on the invisible index: %s", got)
	}
	if got := fkRows(t, db, "SELECT id FROM t FORCE INDEX (ib) WHERE b IN (201, 300, 400) ORDER BY id"); got != "2;4" {
		t.Errorf("lookup through ib after DML while invisible: %s, want 2;4", got)
	}

	fkErr(t, db, "ALTER TABLE t ALTER INDEX `PRIMARY` INVISIBLE", 3522, "A primary key index cannot be invisible")
	fkErr(t, db, "ALTER TABLE t ALTER INDEX nope INVISIBLE", 1176, "Key 'nope' doesn't exist in table 't'")
	fkErr(t, db, "ALTER TABLE nope ALTER INDEX ib INVISIBLE", 1146, "Table 'vis.nope' doesn't exist")
	fkErr(t, db, "ALTER TABLE t ALTER INDEX ib INVISIBLE, ADD COLUMN c INT", 1235,
		"This version of ReorgDB doesn't yet support 'ALTER INDEX together with other ALTER TABLE clauses'")
	// Several clauses in one statement.
	mustExecDB(t, db, "ALTER TABLE vis.t ALTER INDEX ia INVISIBLE, ALTER INDEX `ib` INVISIBLE")
	if got := fkRows(t, db, "SELECT INDEX_NAME, IS_VISIBLE FROM information_schema.statistics WHERE TABLE_SCHEMA = 'vis' AND TABLE_NAME = 't' ORDER BY INDEX_NAME"); got != "ia,NO;ib,NO;PRIMARY,YES" {
		t.Errorf("statistics after two clauses: %s", got)
	}
	// Prepared, the statement would do nothing: refused as MySQL refuses
	// what it cannot prepare.
	if _, err := db.Prepare("ALTER TABLE t ALTER INDEX ia VISIBLE"); err == nil {
		t.Error("PREPARE of ALTER INDEX succeeded")
	} else {
		wantCode(t, "PREPARE ALTER INDEX", err, 1295)
	}
	// An invisible index can be dropped and renamed like any other.
	mustExecDB(t, db, "DROP INDEX ia ON t", "ALTER TABLE t RENAME INDEX ib TO ib2")
	if got := fkRows(t, db, "SELECT INDEX_NAME, IS_VISIBLE FROM information_schema.statistics WHERE TABLE_SCHEMA = 'vis' AND TABLE_NAME = 't' ORDER BY INDEX_NAME"); got != "ib2,NO;PRIMARY,YES" {
		t.Errorf("statistics after DROP INDEX and RENAME INDEX: %s", got)
	}
}

// wantVisibility checks ib's visibility in SHOW INDEX,
// information_schema.statistics and SHOW CREATE TABLE.
func wantVisibility(t *testing.T, db *sql.DB, want string) {
	t.Helper()
	rows := fkRows(t, db, "SHOW INDEX FROM t")
	if !strings.Contains(rows, "t,1,ib,1,b,A,") || !strings.Contains(rows, ","+want+",NULL") {
		t.Errorf("SHOW INDEX: %s, want ib with Visible %s", rows, want)
	}
	if got := fkRows(t, db, "SELECT IS_VISIBLE FROM information_schema.statistics WHERE TABLE_SCHEMA = 'vis' AND TABLE_NAME = 't' AND INDEX_NAME = 'ib'"); got != want {
		t.Errorf("information_schema.statistics IS_VISIBLE: %s, want %s", got, want)
	}
	create := rowStrings(t, db, "SHOW CREATE TABLE t")[1]
	invisible := strings.Contains(create, "KEY `ib` (`b`) /*!80000 INVISIBLE */,")
	if invisible != (want == "NO") || !strings.Contains(create, "KEY `ib` (`b`)") {
		t.Errorf("SHOW CREATE TABLE: %s", create)
	}
}

// TestInvisibleInDefinitions: INVISIBLE in CREATE TABLE, ADD INDEX and
// CREATE INDEX makes the new index invisible; on a primary key it is
// refused with 3522.
func TestInvisibleInDefinitions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("visdef")
	mustExecDB(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT, KEY ia (a) INVISIBLE, UNIQUE KEY (b) INVISIBLE)",
		"INSERT INTO t VALUES (1, 1, 1, 1), (2, 2, 2, 2)",
		"ALTER TABLE t ADD INDEX ic (c) INVISIBLE, ADD INDEX iac (a, c)",
		"CREATE INDEX ica ON t (c, a) INVISIBLE")
	got := fkRows(t, db, "SELECT INDEX_NAME, IS_VISIBLE FROM information_schema.statistics WHERE TABLE_SCHEMA = 'visdef' AND SEQ_IN_INDEX = 1 ORDER BY INDEX_NAME")
	if want := "b,NO;ia,NO;iac,YES;ic,NO;ica,NO;PRIMARY,YES"; got != want {
		t.Errorf("visibility: %s, want %s", got, want)
	}
	if got := fkRows(t, db, "EXPLAIN SELECT id FROM t WHERE c = 2"); strings.Contains(got, ",ic,") || strings.Contains(got, ",ica,") {
		t.Errorf("EXPLAIN uses an invisible index: %s", got)
	}
	fkErr(t, db, "CREATE TABLE p (a INT, PRIMARY KEY (a) INVISIBLE)", 3522, "A primary key index cannot be invisible")
	mustExecDB(t, db, "CREATE TABLE h (a INT NOT NULL)")
	fkErr(t, db, "ALTER TABLE h ADD PRIMARY KEY (a) INVISIBLE", 3522, "A primary key index cannot be invisible")
	mustExecDB(t, db, "CREATE TEMPORARY TABLE tt (a INT, KEY ia (a))")
	fkErr(t, db, "ALTER TABLE tt ALTER INDEX ia INVISIBLE", 1235, "This version of ReorgDB doesn't yet support 'ALTER INDEX on a temporary table'")
}
