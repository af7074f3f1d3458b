package server_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestViewWithoutCurrentDatabase reads views by qualified name on a
// connection with no current database: the view's own tables resolve in
// its database, and the query's unqualified names still get 1046.
func TestViewWithoutCurrentDatabase(t *testing.T) {
	s := servertest.Start(t)
	setup := pinConn(t, s.DB(""))
	setup.exec("CREATE DATABASE vd", "USE vd", "CREATE TABLE t (a INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)",
		"CREATE VIEW v AS SELECT a FROM t", "CREATE VIEW vq AS SELECT a * 10 AS b FROM vd.t", "CREATE VIEW vc AS SELECT 7 AS c",
		"CREATE VIEW vv AS SELECT b FROM vq WHERE b > 10")

	c := pinConn(t, s.DB(""))
	c.want("SELECT * FROM vd.v ORDER BY a", "1;2")
	c.want("SELECT * FROM vd.vq ORDER BY b", "10;20")
	c.want("SELECT * FROM vd.vc", "7")
	c.want("SELECT * FROM vd.vv", "20")
	c.want("SELECT DATABASE(), COUNT(*) FROM vd.v", "NULL,2")
	c.want("SELECT x.a, y.b FROM vd.v x JOIN vd.vq y ON y.b = x.a * 10 ORDER BY 1", "1,10;2,20")
	c.wantErr("SELECT * FROM vd.v JOIN t", 1046, "No database selected")
	c.want("SELECT DATABASE()", "NULL")
	// The collation is the creating connection's (go-sql-driver announces
	// utf8mb4_general_ci).
	if got := c.rows("SHOW CREATE VIEW vd.v"); got != "v,CREATE VIEW `v` AS SELECT a FROM t,utf8mb4,utf8mb4_general_ci" {
		t.Errorf("SHOW CREATE VIEW: %q", got)
	}
	c.want("SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.views WHERE TABLE_SCHEMA = 'vd' ORDER BY 1",
		"v,SELECT a FROM t;vc,SELECT 7 AS c;vq,SELECT a * 10 AS b FROM vd.t;vv,SELECT b FROM vq WHERE b > 10")
	setup.exec("CREATE DATABASE other", "USE other", "CREATE TABLE t (z INT PRIMARY KEY)")
	setup.want("SELECT COUNT(*), DATABASE() FROM information_schema.views WHERE TABLE_SCHEMA = 'vd'", "4,other")
}

// TestTriggerFromOtherDatabase writes to a table with triggers from a
// connection whose current database is another one, or none: the
// trigger's table and functions are those of its database, as in MySQL,
// and SHOW CREATE TRIGGER from its database reads as written.
func TestTriggerFromOtherDatabase(t *testing.T) {
	s := servertest.Start(t)
	c := pinConn(t, s.DB(""))
	c.exec("CREATE DATABASE td", "CREATE DATABASE other", "USE td", "CREATE TABLE t (a INT PRIMARY KEY, b INT)",
		"CREATE FUNCTION tenfold(x INT) RETURNS INT RETURN x * 10",
		"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.b = tenfold(NEW.a)",
		"USE other", "INSERT INTO td.t (a) VALUES (1)")
	none := pinConn(t, s.DB(""))
	none.exec("INSERT INTO td.t (a) VALUES (2)")
	none.want("SELECT * FROM td.t ORDER BY a", "1,10;2,20")
	c.exec("USE td")
	if got := c.rows("SHOW CREATE TRIGGER tr"); !strings.Contains(got, "BEFORE INSERT ON t FOR EACH ROW SET NEW.b = tenfold(NEW.a)") {
		t.Errorf("SHOW CREATE TRIGGER: %q", got)
	}
}
