package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestStoredFunctions creates stored functions with RETURN and BEGIN ...
// END bodies, calls them from expressions of every kind of statement, and
// checks MySQL's errors, SHOW statements, information_schema.routines and
// that the functions survive a restart.
func TestStoredFunctions(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	c := pinConn(t, s.DB(""))
	c.exec("CREATE DATABASE fx", "USE fx",
		"CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))",
		"INSERT INTO t VALUES (1, 'x'), (2, 'yy'), (3, NULL)",
		"CREATE FUNCTION inc(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
		`CREATE FUNCTION label(x INT, s VARCHAR(10)) RETURNS VARCHAR(30) NO SQL
		 BEGIN
		   DECLARE y INT DEFAULT 0;
		   DECLARE z INT;
		   SET y = x * 2;
		   IF y > 3 THEN RETURN CONCAT(s, '-big-', y);
		   ELSEIF y = 2 THEN RETURN 'two';
		   END IF;
		   RETURN CONCAT('small', IFNULL(z, 'null'));
		 END`,
		"CREATE FUNCTION cnt() RETURNS INT READS SQL DATA BEGIN DECLARE n INT; SELECT COUNT(*) INTO n FROM t; RETURN n; END",
		"CREATE FUNCTION half(x DECIMAL(10,2)) RETURNS DECIMAL(10,3) RETURN x / 2",
		"CREATE FUNCTION fact(n INT) RETURNS BIGINT BEGIN DECLARE r BIGINT DEFAULT 1; WHILE n > 1 DO SET r = r * n; SET n = n - 1; END WHILE; RETURN r; END")
	c.want("SELECT fact(5), fact(0)", "120,1")
	// RETURN bodies with and without a subquery; parameters keep their
	// types (a string compared with a number compares numbers).
	c.exec("CREATE FUNCTION above(x INT) RETURNS INT RETURN (SELECT COUNT(*) FROM t WHERE a > x)",
		"CREATE FUNCTION gt10(s VARCHAR(5), n INT) RETURNS VARCHAR(10) RETURN CONCAT(s > 10, n > 10, s + n)")
	c.want("SELECT above(1), above(a) FROM t WHERE a = 2", "2,1")
	c.want("SELECT gt10('9', '9'), gt10('11', 11.4)", "0018,1122")
	c.exec("CREATE FUNCTION viaq(x INT) RETURNS INT BEGIN IF fx.inc(x) > 2 THEN RETURN fx.inc(fx.inc(x)); END IF; RETURN fx.half(x) * 2; END")
	c.want("SELECT viaq(1), viaq(5)", "1,7")
	c.exec("DROP FUNCTION above", "DROP FUNCTION gt10", "DROP FUNCTION viaq")
	c.exec("CREATE FUNCTION greet(s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, t CHAR(3) CHARSET latin1) RETURNS VARCHAR(50) CHARSET utf8mb4 RETURN CONCAT(s, '/', t)")
	c.want("SELECT greet('héllo', 'ab')", "héllo/ab")
	// As mysqldump writes a function.
	c.exec("CREATE DEFINER=`root`@`localhost` FUNCTION `dumped`(`a` varchar(10)) RETURNS varchar(20) CHARSET utf8mb4 COLLATE utf8mb4_0900_ai_ci\n" +
		"    READS SQL DATA\n    COMMENT 'from a dump'\nlbl: BEGIN\n  DECLARE n INT DEFAULT 0;\n  WHILE n < 3 DO SET n = n + 1; END WHILE;\n  RETURN CONCAT(a, n);\nEND")
	c.want("SELECT dumped('x')", "x3")
	c.want("SELECT ROUTINE_COMMENT, LEFT(ROUTINE_DEFINITION, 10), DEFINER FROM information_schema.routines WHERE ROUTINE_NAME = 'dumped'", "from a dump,lbl: BEGIN,root@localhost")
	c.exec("DROP FUNCTION dumped")
	c.want("SELECT inc(1), inc(NULL), label(0, 'q'), half(2.5)", "2,NULL,smallnull,1.250")
	c.want("SELECT a, inc(a), label(a, b) FROM t ORDER BY inc(a) DESC", "3,4,NULL;2,3,yy-big-4;1,2,two")
	c.want("SELECT a FROM t WHERE inc(a) = cnt()", "2")
	c.exec("UPDATE t SET b = label(a + 1, 'u') WHERE a = 1", "INSERT INTO t VALUES (inc(10), label(2, 'w'))")
	c.want("SELECT a, b FROM t ORDER BY a", "1,u-big-4;2,yy;3,NULL;11,w-big-4")
	// A function reads the calling transaction's rows and does not end it.
	c.exec("BEGIN", "INSERT INTO t VALUES (20, 'tx')")
	c.want("SELECT cnt()", "5")
	c.exec("ROLLBACK")
	c.want("SELECT cnt()", "4")
	c.want("SELECT fx.inc(5)", "6")
	c.exec("CREATE VIEW fv AS SELECT inc(a) AS b FROM t WHERE a < 3", "CREATE PROCEDURE fp(x INT) BEGIN SELECT inc(x) + cnt(); END")
	c.want("SELECT * FROM fv ORDER BY b", "2;3")
	c.want("CALL fp(1)", "6")

	c.wantErr("CREATE FUNCTION inc(x INT) RETURNS INT RETURN x", 1304, "FUNCTION inc already exists")
	c.exec("CREATE FUNCTION IF NOT EXISTS inc(x INT) RETURNS INT RETURN x")
	c.want("SHOW WARNINGS", "Note,1304,FUNCTION inc already exists")
	c.wantErr("SELECT inc(1, 2)", 1318, "Incorrect number of arguments for FUNCTION fx.inc; expected 1, got 2")
	c.wantErr("SELECT nope(1)", 1305, "")
	c.wantErr("CREATE FUNCTION nr(x INT) RETURNS INT BEGIN DECLARE y INT; SET y = x; END", 1320, "No RETURN found in FUNCTION nr")
	c.wantErr("CREATE FUNCTION rs(x INT) RETURNS INT BEGIN SELECT x; RETURN x; END", 1415, "Not allowed to return a result set from a function")
	c.exec("CREATE FUNCTION maybe(x INT) RETURNS INT BEGIN IF x > 1 THEN RETURN 1; END IF; END")
	c.want("SELECT maybe(5)", "1")
	c.wantErr("SELECT maybe(0)", 1321, "FUNCTION maybe ended without RETURN")
	c.exec("CREATE FUNCTION rec(x INT) RETURNS INT RETURN rec(x)")
	c.wantErr("SELECT rec(1)", 1424, "")

	c.want("SELECT ROUTINE_NAME, ROUTINE_TYPE, DATA_TYPE, IS_DETERMINISTIC, SQL_DATA_ACCESS FROM information_schema.routines WHERE ROUTINE_SCHEMA = 'fx' ORDER BY 1",
		"cnt,FUNCTION,int,NO,READS SQL DATA;fact,FUNCTION,bigint,NO,CONTAINS SQL;fp,PROCEDURE,,NO,CONTAINS SQL;greet,FUNCTION,varchar,NO,CONTAINS SQL;half,FUNCTION,decimal,NO,CONTAINS SQL;inc,FUNCTION,int,YES,CONTAINS SQL;label,FUNCTION,varchar,NO,NO SQL;maybe,FUNCTION,int,NO,CONTAINS SQL;rec,FUNCTION,int,NO,CONTAINS SQL")
	if st := c.rows("SHOW FUNCTION STATUS LIKE 'inc'"); !strings.HasPrefix(st, "fx,inc,FUNCTION,root@") {
		t.Errorf("SHOW FUNCTION STATUS: %q", st)
	}
	create := c.rows("SHOW CREATE FUNCTION inc")
	if !strings.HasPrefix(create, "inc,") || !strings.Contains(create, "CREATE DEFINER=`root`@") || !strings.Contains(create, "FUNCTION inc(x INT) RETURNS INT DETERMINISTIC RETURN x + 1") {
		t.Errorf("SHOW CREATE FUNCTION: %q", create)
	}
	c.exec("DROP FUNCTION rec", "DROP FUNCTION IF EXISTS rec")
	c.want("SHOW WARNINGS", "Note,1305,FUNCTION fx.rec does not exist")
	c.wantErr("DROP FUNCTION rec", 1305, "FUNCTION fx.rec does not exist")
	c.wantErr("SHOW CREATE FUNCTION rec", 1305, "")

	// Several statements in one text: each CREATE FUNCTION ends where its body does.
	multi, err := sql.Open("mysql", s.DSN("fx")+"&multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	if _, err := multi.Exec("CREATE FUNCTION m1() RETURNS INT RETURN 7; CREATE FUNCTION m2() RETURNS INT BEGIN RETURN m1() + 1; END; DROP FUNCTION IF EXISTS nothing"); err != nil {
		t.Fatal(err)
	}
	c.want("SELECT m2()", "8")

	s.Close()
	s2 := servertest.StartDir(t, dir)
	c2 := pinConn(t, s2.DB("fx"))
	c2.want("SELECT inc(41), label(3, 'r'), cnt()", "42,r-big-6,4")
	// A qualified call finds the function in its database, from any
	// current database or none.
	c3 := pinConn(t, s2.DB(""))
	c3.want("SELECT fx.inc(1), `fx`.`label`(2, 'q'), fx.cnt() + 0", "2,q-big-4,4")
	c3.wantErr("SELECT fx.nope(1)", 1305, "FUNCTION fx.nope does not exist")
	c3.wantErr("SELECT inc(1)", 1305, "")
	c3.exec("CREATE DATABASE other", "USE other", "CREATE VIEW ov AS SELECT fx.inc(10) AS v")
	c3.want("SELECT * FROM ov", "11")
	// A view calls its database's functions from anywhere, as MySQL's
	// qualifies them.
	c3.want("SELECT * FROM fx.fv ORDER BY b", "2;3")
	c3.exec("USE fx", "CREATE VIEW fv2 AS SELECT `inc`(1) + cnt() AS s, CONCAT('a', 'b') AS c", "USE other")
	c3.want("SELECT * FROM fx.fv2", "6,ab")
	if cols, err := c3.c.QueryContext(t.Context(), "SELECT fx.inc(1)"); err != nil {
		t.Fatal(err)
	} else if names, _ := cols.Columns(); len(names) != 1 || names[0] != "fx.inc(1)" {
		t.Errorf("column name %q, want fx.inc(1)", names)
		cols.Close()
	} else {
		cols.Close()
	}
	c2.wantErr("SELECT rec(1)", 1305, "")
	c2.exec("DROP DATABASE fx", "CREATE DATABASE fx", "USE fx")
	c2.wantErr("SELECT inc(1)", 1305, "")
}
