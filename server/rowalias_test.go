package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// INSERT ... AS alias [(columns)] ON DUPLICATE KEY UPDATE, MySQL 8.0.19's
// replacement for VALUES(col), and a UNION of DISTINCT selects under ORDER
// BY and LIMIT, which go-mysql-server once answered with "max1Row
// iterator returned more than one row".
func TestInsertRowAliasAndDistinctUnion(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExecDB(t, db, "CREATE TABLE u (id INT PRIMARY KEY, a INT)",
		"INSERT INTO u VALUES (1, 1) AS new ON DUPLICATE KEY UPDATE a = new.a + 10",
		"INSERT INTO u VALUES (1, 5) AS new ON DUPLICATE KEY UPDATE a = new.a + 10",
		"INSERT INTO u VALUES (2, 7) AS n (x, y) ON DUPLICATE KEY UPDATE a = n.y",
		"INSERT INTO u VALUES (2, 8) AS n (x, y) ON DUPLICATE KEY UPDATE a = n.y + a")
	query(t, db, "SELECT group_concat(concat(id, ':', a) ORDER BY id) FROM u", "1:15,2:15")
	query(t, db, "SELECT group_concat(a) FROM ((SELECT DISTINCT a FROM u) UNION (SELECT DISTINCT id FROM u) ORDER BY 1 LIMIT 2) x", "1,2")
}
