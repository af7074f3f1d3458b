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
