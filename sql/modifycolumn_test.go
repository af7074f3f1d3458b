package sql_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestModifyColumnInstant: renames, defaults, comments, positions, NULL
// and widening types change only the catalog; rows, indexes and the
// values read are as before, and the new definition survives a restart.
func TestModifyColumnInstant(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a SMALLINT NOT NULL, s VARCHAR(5) DEFAULT 'x', u TINYINT UNSIGNED, KEY ka (a), UNIQUE KEY us (s))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 'p', 1), (2, 20, 'q', 2)")

	mustExec(t, db, "ALTER TABLE t RENAME COLUMN a TO b")
	expectRows(t, db, "SELECT id FROM t WHERE b = 20", "2")
	expectRows(t, db, "SELECT id, b FROM t FORCE INDEX (ka) WHERE b >= 10 ORDER BY b", "1,10", "2,20")
	mustExec(t, db, "ALTER TABLE t ALTER COLUMN s SET DEFAULT 'y'")
	mustExec(t, db, "INSERT INTO t (id, b) VALUES (3, 30)")
	expectRows(t, db, "SELECT s FROM t WHERE id = 3", "y")
	mustExec(t, db, "ALTER TABLE t ALTER COLUMN s DROP DEFAULT")
	mustExec(t, db, "INSERT INTO t (id, b) VALUES (4, 40)")
	expectRows(t, db, "SELECT s FROM t WHERE id = 4", "NULL")
	// Wider types in place: values and index keys are stored alike.
	mustExec(t, db, "ALTER TABLE t MODIFY b BIGINT NOT NULL COMMENT 'wide'")
	expectRows(t, db, "SELECT column_comment FROM information_schema.columns WHERE table_name = 't' AND column_name = 'b'", "wide")
	mustExec(t, db, "INSERT INTO t (id, b, s) VALUES (5, 5000000000, 'long')")
	mustExec(t, db, "ALTER TABLE t CHANGE s str VARCHAR(50) DEFAULT 'z' FIRST")
	mustExec(t, db, "INSERT INTO t (id, b, str) VALUES (6, 60, 'a string longer than five')")
	mustExec(t, db, "ALTER TABLE t MODIFY u INT UNSIGNED AFTER id")
	// NOT NULL to NULL.
	mustExec(t, db, "ALTER TABLE t MODIFY b BIGINT NULL")
	mustExec(t, db, "INSERT INTO t (id, b) VALUES (7, NULL)")
	expectRows(t, db, "SELECT * FROM t ORDER BY id",
		"p,1,1,10", "q,2,2,20", "y,3,NULL,30", "NULL,4,NULL,40", "long,5,NULL,5000000000",
		"a string longer than five,6,NULL,60", "z,7,NULL,NULL")
	_, err := db.Exec("INSERT INTO t (id, b, str) VALUES (8, 1, 'q')")
	expectErr(t, err, 1062, "us")
	expectRows(t, db, "SELECT id FROM t WHERE b = 5000000000", "5")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	expectRows(t, db, "SELECT job_type, state FROM information_schema.ddl_jobs WHERE job_type = 'modify column' LIMIT 1", "modify column,synced")

	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db = servertest.StartDir(t, dir).DB("app")
	var create string
	if err := db.QueryRow("SHOW CREATE TABLE t").Scan(new(string), &create); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`str` varchar(50) DEFAULT 'z'", "`id` int NOT NULL", "`u` int unsigned", "`b` bigint DEFAULT NULL,", "KEY `ka` (`b`)", "UNIQUE KEY `us` (`str`)"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE after restart lacks %q:\n%s", want, create)
		}
	}
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE str IS NULL OR b IS NULL", "2")
}

// TestModifyColumnRefused: what cannot be changed online (a column a
// generated column uses, a type outside the converted ones) is refused
// with 1235 and changes nothing, not even the definition the server has
// cached.
func TestModifyColumnRefused(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(10) DEFAULT 'x', g INT AS (a + 1) STORED, ch CHAR(4))")
	mustExec(t, db, "INSERT INTO t (id, a, s, ch) VALUES (1, 1, 'p', 'c')")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE t MODIFY a VARCHAR(10)", 1235, "generated column g"},
		{"ALTER TABLE t MODIFY a SMALLINT", 1235, "generated column g"},
		{"ALTER TABLE t MODIFY a INT UNSIGNED", 1235, "generated column g"},
		{"ALTER TABLE t MODIFY a INT NOT NULL", 1235, "generated column g"},
		{"ALTER TABLE t MODIFY ch DATE", 1292, "Incorrect date value: 'c' for column 'ch' at row 1"},
		{"ALTER TABLE t MODIFY ch BIT(8)", 1235, "only numbers, strings"},
		{"ALTER TABLE t MODIFY g BIGINT AS (a + 1) STORED", 1235, "generated column g"},
		{"ALTER TABLE t RENAME COLUMN a TO b", 1235, "generated column g"},
		{"ALTER TABLE t RENAME COLUMN s TO id", 1060, "Duplicate column name"},
		{"ALTER TABLE t MODIFY nosuch INT", 1054, "nosuch"},
		{"ALTER TABLE t MODIFY id INT NULL", 1171, "PRIMARY KEY must be NOT NULL"},
		{"ALTER TABLE t MODIFY a INT PRIMARY KEY", 0, ""},
		{"ALTER TABLE t ALTER COLUMN s SET DEFAULT 'much too long for ten'", 1067, "Invalid default value for 's'"},
	} {
		_, err := db.Exec(c.q)
		if err == nil {
			t.Errorf("%s: succeeded", c.q)
			continue
		}
		if c.code != 0 && (errCode(err) != c.code || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s: got %v, want %d %q", c.q, err, c.code, c.msg)
		}
	}
	mustExec(t, db, "INSERT INTO t (id, a) VALUES (2, 2)")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,1,p,2,c", "2,2,x,3,NULL")
}

// TestDropColumnInstant: DROP COLUMN of a column no index holds changes
// only the catalog; old rows keep the value under an ID nobody reads, a
// column added later with the same name starts empty, and what cannot be
// dropped is refused with MySQL's errors and changes nothing.
func TestDropColumnInstant(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), g INT AS (a + 1) STORED, c INT, KEY kc (c))")
	mustExec(t, db, "INSERT INTO t (id, a, b, c) VALUES (1, 1, 'one', 10), (2, 2, 'two', 20)")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"ALTER TABLE t DROP COLUMN nosuch", 1091, "Can't DROP 'nosuch'"},
		{"ALTER TABLE t DROP COLUMN id", 1235, "PRIMARY"},
		{"ALTER TABLE t DROP COLUMN a", 3108, "generated column dependency"},
	} {
		_, err := db.Exec(c.q)
		if err == nil || errCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %d %q", c.q, err, c.code, c.msg)
		}
	}
	mustExec(t, db, "ALTER TABLE t DROP COLUMN b")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,1,2,10", "2,2,3,20")
	mustExec(t, db, "INSERT INTO t (id, a, c) VALUES (3, 3, 30)")
	mustExec(t, db, "UPDATE t SET a = 5 WHERE id = 1")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN b VARCHAR(10)")
	expectRows(t, db, "SELECT id, b FROM t ORDER BY id", "1,NULL", "2,NULL", "3,NULL")
	mustExec(t, db, "ALTER TABLE t DROP INDEX kc")
	mustExec(t, db, "ALTER TABLE t DROP c")
	expectRows(t, db, "SELECT job_type, state, schema_state FROM information_schema.ddl_jobs WHERE job_type = 'drop column' ORDER BY job_id DESC LIMIT 1", "drop column,synced,public")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db = servertest.StartDir(t, dir).DB("app")
	expectRows(t, db, "SELECT * FROM t ORDER BY id", "1,5,6,NULL", "2,2,3,NULL", "3,3,4,NULL")
	mustExec(t, db, "CREATE TABLE one (x INT)")
	_, err := db.Exec("ALTER TABLE one DROP COLUMN x")
	expectErr(t, err, 1090, "use DROP TABLE instead")
}

// TestModifyPrimaryKeyColumnInstant: widening a primary-key column (INT
// to BIGINT for a clustered integer key, a longer VARCHAR for another)
// is metadata only; a MODIFY that does not repeat NOT NULL keeps the
// column NOT NULL as MySQL does, and only an explicit NULL gets 1171.
func TestModifyPrimaryKeyColumnInstant(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, db, "CREATE TABLE u (k VARCHAR(10) PRIMARY KEY, a INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1), (2147483647, 2)")
	mustExec(t, db, "INSERT INTO u VALUES ('abc', 1)")
	mustExec(t, db, "ALTER TABLE t MODIFY id BIGINT")
	mustExec(t, db, "ALTER TABLE u CHANGE k k VARCHAR(40) COMMENT 'wider'")
	_, err := db.Exec("ALTER TABLE t MODIFY id BIGINT NULL")
	expectErr(t, err, 1171, "PRIMARY KEY must be NOT NULL")
	_, err = db.Exec("ALTER TABLE u MODIFY COLUMN `k` VARCHAR(40) NULL, MODIFY a INT")
	expectErr(t, err, 1171, "PRIMARY KEY must be NOT NULL")
	_, err = db.Exec("ALTER TABLE u MODIFY k VARCHAR(40) DEFAULT NULL")
	expectErr(t, err, 1067, "Invalid default value for 'k'")
	for table, want := range map[string]string{"t": "`id` bigint NOT NULL", "u": "`k` varchar(40) NOT NULL COMMENT 'wider'"} {
		if got := showCreate(t, db, table); !strings.Contains(got, want) {
			t.Errorf("SHOW CREATE TABLE %s lacks %q:\n%s", table, want, got)
		}
	}
	mustExec(t, db, "INSERT INTO t VALUES (5000000000, 3)")
	mustExec(t, db, "INSERT INTO u VALUES ('a key longer than ten', 2)")
	expectRows(t, db, "SELECT id FROM t WHERE id > 2000000000 ORDER BY id", "2147483647", "5000000000")
	expectRows(t, db, "SELECT a FROM u WHERE k = 'a key longer than ten'", "2")
	expectRows(t, db, "SELECT job_type, state FROM information_schema.ddl_jobs ORDER BY job_id LIMIT 2", "modify column,synced", "modify column,synced")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "ADMIN CHECK TABLE u")
}

// TestAlgorithmInstant: ALGORITHM=INSTANT is met by the column changes
// that are metadata only and refused, with MySQL's 1846 and nothing
// changed, by those that rewrite values or drop an indexed column; COPY
// and LOCK=SHARED run the online change.
func TestAlgorithmInstant(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20), k INT, KEY kk (k))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'x', 1)")
	before := showCreate(t, db, "t")
	for _, q := range []string{
		"ALTER TABLE t MODIFY s VARCHAR(5), ALGORITHM=INSTANT",
		"ALTER TABLE t MODIFY a INT NOT NULL, ALGORITHM = INSTANT",
		"ALTER TABLE t DROP COLUMN k, ALGORITHM=INSTANT",
	} {
		_, err := db.Exec(q)
		expectErr(t, err, 1846, "ALGORITHM=INSTANT is not supported. Reason: ")
	}
	if got := showCreate(t, db, "t"); got != before {
		t.Fatalf("refused changes left\n%s", got)
	}
	mustExec(t, db, "ALTER TABLE t MODIFY s VARCHAR(40), ALGORITHM=INSTANT")
	mustExec(t, db, "ALTER TABLE t RENAME COLUMN a TO b, ALGORITHM=INSTANT, LOCK=NONE")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INSTANT")
	mustExec(t, db, "ALTER TABLE t DROP COLUMN c, ALGORITHM=INSTANT")
	mustExec(t, db, "ALTER TABLE t MODIFY s VARCHAR(5), ALGORITHM=COPY, LOCK=SHARED")
	mustExec(t, db, "ALTER TABLE t DROP COLUMN k, ALGORITHM=INPLACE, LOCK=EXCLUSIVE")
	expectRows(t, db, "SELECT * FROM t", "1,1,x")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestModifyColumnExpressionDefault: a MODIFY or ALTER COLUMN that gives
// a column an expression default changes what later inserts get, and no
// stored row, as in MySQL.
func TestModifyColumnExpressionDefault(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, at DATETIME, u VARCHAR(36) DEFAULT 'none')")
	mustExec(t, db, "INSERT INTO t (id) VALUES (1)")
	mustExec(t, db, "ALTER TABLE t MODIFY at DATETIME DEFAULT CURRENT_TIMESTAMP")
	mustExec(t, db, "ALTER TABLE t ALTER COLUMN u SET DEFAULT (UUID())")
	mustExec(t, db, "INSERT INTO t (id) VALUES (2), (3)")
	expectRows(t, db, "SELECT id, at IS NULL, u FROM t WHERE id = 1", "1,1,none")
	expectRows(t, db, "SELECT COUNT(*), COUNT(DISTINCT u) FROM t WHERE id > 1 AND at IS NOT NULL AND LENGTH(u) = 36", "2,2")
	create := rows(t, db, "SHOW CREATE TABLE t")[0]
	if !strings.Contains(create, "DEFAULT CURRENT_TIMESTAMP") || !strings.Contains(create, "DEFAULT (uuid())") {
		t.Errorf("SHOW CREATE TABLE:\n%s", create)
	}
}
