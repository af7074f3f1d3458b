package sql_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestShowCreateDefaults: SHOW CREATE TABLE prints ENUM, SET and DECIMAL
// defaults as MySQL does, and what it prints creates the same table.
func TestShowCreateDefaults(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b') DEFAULT 'b', st SET('p','q','r') DEFAULT 'p,r', d DECIMAL(10,3) DEFAULT -2.5, n INT DEFAULT 7)")
	var create string
	if err := db.QueryRow("SHOW CREATE TABLE t").Scan(new(string), &create); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"enum('a','b') DEFAULT 'b'", "set('p','q','r') DEFAULT 'p,r'", "decimal(10,3) DEFAULT '-2.500'", "int DEFAULT '7'"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, create)
		}
	}
	mustExec(t, db, strings.Replace(create, "CREATE TABLE `t`", "CREATE TABLE `t2`", 1))
	mustExec(t, db, "INSERT INTO t (id) VALUES (1)")
	mustExec(t, db, "INSERT INTO t2 (id) VALUES (1)")
	expectRows(t, db, "SELECT e, st, d, n FROM t2", "b,p,r,-2.500,7")
	expectRows(t, db, "SELECT COUNT(*) FROM t JOIN t2 USING (id, e, st, d, n)", "1")
}

// TestShowCreateNullDefaults: a nullable column without a default shows
// DEFAULT NULL as in MySQL 8 (a TIMESTAMP also NULL; TEXT and BLOB
// nothing), and the text creates the same table.
func TestShowCreateNullDefaults(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b TEXT DEFAULT NULL, c VARCHAR(10) COMMENT 'x', d TIMESTAMP NULL, j JSON, g INT NOT NULL)")
	create := showCreate(t, db, "t")
	for _, want := range []string{"`a` int DEFAULT NULL,", "`b` text,", "`c` varchar(10) DEFAULT NULL COMMENT 'x',", "`d` timestamp NULL DEFAULT NULL,", "`j` json DEFAULT NULL,", "`g` int NOT NULL,"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, create)
		}
	}
	mustExec(t, db, strings.Replace(create, "CREATE TABLE `t`", "CREATE TABLE `t2`", 1))
	if again := showCreate(t, db, "t2"); again != strings.Replace(create, "CREATE TABLE `t`", "CREATE TABLE `t2`", 1) {
		t.Errorf("t2 differs:\n%s\nfrom t:\n%s", again, create)
	}
}

// TestOnUpdateCurrentTimestamp: ON UPDATE CURRENT_TIMESTAMP is kept (SHOW
// CREATE TABLE, EXTRA, a restart) and sets the column when an UPDATE
// does not, in CREATE TABLE, ADD COLUMN and MODIFY COLUMN.
func TestOnUpdateCurrentTimestamp(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT, u DATETIME(3) DEFAULT '2000-01-01 00:00:00' ON UPDATE CURRENT_TIMESTAMP(3), w TIMESTAMP NULL)")
	mustExec(t, db, "ALTER TABLE t ADD COLUMN a TIMESTAMP NULL ON UPDATE CURRENT_TIMESTAMP")
	mustExec(t, db, "ALTER TABLE t MODIFY w TIMESTAMP NULL ON UPDATE CURRENT_TIMESTAMP")
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db = servertest.StartDir(t, dir).DB("app")
	create := showCreate(t, db, "t")
	for _, want := range []string{"ON UPDATE CURRENT_TIMESTAMP(3)", "`w` timestamp NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP", "`a` timestamp NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, create)
		}
	}
	expectRows(t, db, "SELECT column_name, extra FROM information_schema.columns WHERE table_name = 't' AND column_name = 'u'", "u,on update CURRENT_TIMESTAMP(3)")
	mustExec(t, db, "INSERT INTO t (id, v) VALUES (1, 1), (2, 2)")
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE u = '2000-01-01' AND w IS NULL AND a IS NULL", "2")
	mustExec(t, db, "UPDATE t SET v = 10 WHERE id = 1")
	expectRows(t, db, "SELECT id FROM t WHERE u > '2020-01-01' AND w IS NOT NULL AND a IS NOT NULL", "1")
	// A column the UPDATE sets keeps the value it is given.
	mustExec(t, db, "UPDATE t SET v = 20, u = '2001-02-03 04:05:06' WHERE id = 2")
	expectRows(t, db, "SELECT u = '2001-02-03 04:05:06', w IS NOT NULL FROM t WHERE id = 2", "1,1")
	// The update half of INSERT ... ON DUPLICATE KEY UPDATE sets them too,
	// as text and prepared; the insert half does not.
	mustExec(t, db, "INSERT INTO t (id, v) VALUES (3, 3), (4, 4)")
	mustExec(t, db, "INSERT INTO t (id, v) VALUES (3, 30), (5, 5) ON DUPLICATE KEY UPDATE v = VALUES(v)")
	if _, err := db.Exec("INSERT INTO t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = v + 1", 4, 0); err != nil {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT id, v, u > '2020-01-01', a IS NOT NULL FROM t WHERE id >= 3 ORDER BY id", "3,30,1,1", "4,5,1,1", "5,5,0,0")
	mustExec(t, db, "INSERT INTO t (id, v) VALUES (3, 0) ON DUPLICATE KEY UPDATE v = 31, u = '2002-02-02'")
	expectRows(t, db, "SELECT v, u = '2002-02-02' FROM t WHERE id = 3", "31,1")
}
