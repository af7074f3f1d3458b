package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// tempConn is one pinned connection of a test.
type tempConn struct {
	t *testing.T
	c *sql.Conn
}

func pinConn(t *testing.T, db *sql.DB) *tempConn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &tempConn{t, c}
}

func (c *tempConn) exec(qs ...string) {
	c.t.Helper()
	for _, q := range qs {
		if _, err := c.c.ExecContext(context.Background(), q); err != nil {
			c.t.Fatalf("%s: %v", q, err)
		}
	}
}

// rows is the query's rows, each as its columns joined by ",".
func (c *tempConn) rows(q string, args ...any) string {
	c.t.Helper()
	rs, err := c.c.QueryContext(context.Background(), q, args...)
	if err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	return joinRows(c.t, rs)
}

func joinRows(t *testing.T, rs *sql.Rows) string {
	t.Helper()
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var cells []string
		for _, v := range vals {
			if v.Valid {
				cells = append(cells, v.String)
			} else {
				cells = append(cells, "NULL")
			}
		}
		out = append(out, strings.Join(cells, ","))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ";")
}

func (c *tempConn) want(q, want string, args ...any) {
	c.t.Helper()
	if got := c.rows(q, args...); got != want {
		c.t.Errorf("%s: got %q, want %q", q, got, want)
	}
}

// wantPlan checks that EXPLAIN's row for q has the fields want.
func (c *tempConn) wantPlan(q, want string) {
	c.t.Helper()
	if got := c.rows("EXPLAIN " + q); !strings.Contains(got, ","+want+",") {
		c.t.Errorf("EXPLAIN %s: got %q, want %q in it", q, got, want)
	}
}

func (c *tempConn) wantErr(q string, code uint16, msg string) {
	c.t.Helper()
	_, err := c.c.ExecContext(context.Background(), q)
	if msg == "" && !isMySQLErrorCode(err, code) || msg != "" && !isMySQLError(err, code, msg) {
		c.t.Errorf("%s: %v, want %d %q", q, err, code, msg)
	}
}

// tempKeys counts the keys of every temporary table in the store.
func tempKeys(t *testing.T, store *kv.Store) int {
	t.Helper()
	txn := store.Begin()
	defer txn.Rollback()
	lo := codec.TablePrefix(catalog.TempIDBase)
	it := txn.NewIter(lo, codec.PrefixEnd(codec.TablePrefix(math.MaxInt64)), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTemporaryTables: CREATE TEMPORARY TABLE makes a table only its
// session sees, that shadows a table of the same name there, is left out
// of SHOW TABLES and information_schema, takes indexes, CREATE ... AS
// SELECT and LIKE, joins with ordinary tables, and goes with DROP
// [TEMPORARY] TABLE; errors are MySQL's.
func TestTemporaryTables(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	a, b := pinConn(t, db), pinConn(t, db)
	a.exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO t VALUES (1, 'perm'), (2, 'perm2')",
		"CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(10), KEY v_idx (v))",
		"INSERT INTO t VALUES (1, 'tmp'), (3, 'tmp3')",
		"CREATE TEMPORARY TABLE tt (a INT PRIMARY KEY, b VARCHAR(10) NOT NULL, UNIQUE KEY b_u (b)) COMMENT 'scratch'",
		"INSERT INTO tt VALUES (1, 'x'), (2, 'y'), (3, 'z')")
	a.want("SELECT id, v FROM t ORDER BY id", "1,tmp;3,tmp3")
	b.want("SELECT id, v FROM t ORDER BY id", "1,perm;2,perm2")
	a.want("SELECT id FROM t WHERE v = 'tmp3'", "3")
	a.wantPlan("SELECT id FROM t WHERE v = 'tmp3'", "t,NULL,ref,v_idx,v_idx")
	a.want("SELECT t.v, tt.b FROM t JOIN tt ON tt.a = t.id ORDER BY t.id", "tmp,x;tmp3,z")
	a.want("SELECT d.t.v, tt.b FROM tt LEFT JOIN d.t ON d.t.id = tt.a ORDER BY tt.a", "tmp,x;NULL,y;tmp3,z")
	a.want("SHOW TABLES", "t")
	a.want("SELECT table_name FROM information_schema.tables WHERE table_schema = 'd'", "t")
	a.want("SELECT index_name FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 't'", "PRIMARY")
	a.want("SHOW CREATE TABLE tt", "tt,CREATE TEMPORARY TABLE `tt` (\n  `a` int NOT NULL,\n  `b` varchar(10) NOT NULL,\n  PRIMARY KEY (`a`),\n  UNIQUE KEY `b_u` (`b`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci COMMENT='scratch'")
	b.wantErr("SELECT * FROM tt", 1146, "Table 'd.tt' doesn't exist")
	a.wantErr("INSERT INTO tt VALUES (4, 'x')", 1062, "Duplicate entry 'x' for key 'tt.b_u'")
	a.wantErr("INSERT INTO tt VALUES (5, 'q'), (6)", 1136, "Column count doesn't match value count at row 2")
	a.wantErr("INSERT INTO tt VALUES ('x', 'y')", 1366, "Incorrect integer value: 'x' for column 'a' at row 1")
	a.exec("UPDATE tt SET b = 'w' WHERE a = 2", "DELETE FROM tt WHERE a = 3")
	a.want("SELECT a, b FROM tt ORDER BY a", "1,x;2,w")

	a.want("OPTIMIZE TABLE tt", "d.tt,optimize,status,OK")
	a.want("ANALYZE TABLE t", "d.t,analyze,status,OK")
	a.exec("ADMIN CHECK TABLE tt, t")
	b.wantErr("ADMIN CHECK TABLE tt", 1146, "")
	a.wantErr("CREATE TEMPORARY TABLE tt (a INT)", 1050, "Table 'tt' already exists")
	a.exec("CREATE TEMPORARY TABLE IF NOT EXISTS tt (a INT)")
	// A temporary table may shadow one made later, too.
	b.exec("CREATE TABLE tt (a INT PRIMARY KEY)", "INSERT INTO tt VALUES (100)")
	a.want("SELECT a FROM tt ORDER BY a", "1;2")

	a.exec("CREATE TEMPORARY TABLE t2 AS SELECT id, v FROM t WHERE id > 1",
		"CREATE TEMPORARY TABLE t3 LIKE tt",
		"INSERT INTO t3 SELECT * FROM tt")
	a.want("SELECT id, v FROM t2", "3,tmp3")
	a.want("SELECT a, b FROM t3 ORDER BY a", "1,x;2,w")
	a.wantErr("INSERT INTO t3 VALUES (5, 'x')", 1062, "Duplicate entry 'x' for key 't3.b_u'")
	b.wantErr("SELECT * FROM t2", 1146, "Table 'd.t2' doesn't exist")
	a.exec("CREATE TEMPORARY TABLE pt LIKE t")
	a.want("SELECT COUNT(*) FROM pt", "0")

	// ALTER TABLE changes it at once.
	a.exec("ALTER TABLE tt ADD COLUMN c INT NOT NULL DEFAULT 7",
		"ALTER TABLE tt ADD INDEX c_idx (c, a)",
		"ALTER TABLE tt RENAME COLUMN b TO bb")
	a.want("SELECT a, bb, c FROM tt WHERE c = 7 ORDER BY a", "1,x,7;2,w,7")
	a.wantPlan("SELECT a FROM tt WHERE c = 7", "tt,NULL,ref,c_idx,c_idx")
	a.wantErr("ALTER TABLE tt ADD UNIQUE INDEX c_u (c)", 1062, "Duplicate entry '7' for key 'tt.c_u'")
	a.exec("INSERT INTO tt VALUES (3, 'v', 8)", "ALTER TABLE tt DROP INDEX c_idx")
	a.want("SELECT a FROM tt WHERE c = 8", "3")
	a.exec("ALTER TABLE t2 RENAME TO t4")
	a.want("SELECT id FROM t4", "3")
	a.wantErr("SELECT id FROM t2", 1146, "Table 'd.t2' doesn't exist")

	// DROP TABLE drops the temporary table first; DROP TEMPORARY TABLE
	// drops only temporary ones.
	a.exec("DROP TABLE t")
	a.want("SELECT id, v FROM t ORDER BY id", "1,perm;2,perm2")
	a.wantErr("DROP TEMPORARY TABLE t", 1051, "Unknown table 'd.t'")
	a.wantErr("DROP TEMPORARY TABLE nosuch", 1051, "Unknown table 'd.nosuch'")
	a.exec("DROP TEMPORARY TABLE IF EXISTS nosuch", "DROP TEMPORARY TABLE tt, t3, t4")
	a.want("SELECT a FROM tt", "100")
	b.want("SELECT id FROM t ORDER BY id", "1;2")

	// A table made while a temporary one has its name gets its own
	// indexes, and shows once the temporary one is gone.
	a.exec("CREATE TEMPORARY TABLE n (id INT)",
		"CREATE TABLE n (id INT PRIMARY KEY, v INT, KEY v_idx (v))",
		"INSERT INTO n VALUES (1)")
	a.want("SELECT id FROM n", "1")
	b.want("SELECT COUNT(*) FROM n", "0")
	a.exec("DROP TEMPORARY TABLE n")
	a.want("SHOW INDEX FROM n", "n,0,PRIMARY,1,id,A,0,NULL,NULL,,BTREE,,,YES,NULL;n,1,v_idx,1,v,A,0,NULL,NULL,YES,BTREE,,,YES,NULL")
}

// TestTemporaryTableObjects: as in MySQL, a view cannot refer to a
// temporary table (1352) nor a trigger be on one (1361), a trigger on the
// table a temporary table shadows does not fire for it, and read_only
// lets an account without SUPER write temporary tables only.
func TestTemporaryTableObjects(t *testing.T) {
	s := servertest.Start(t)
	resetGlobals(t, s, "super_read_only = OFF", "read_only = OFF")
	db := s.DB("d")
	a := pinConn(t, db)
	a.exec("CREATE TABLE t (id INT PRIMARY KEY)", "CREATE TABLE log (id INT)",
		"CREATE TRIGGER t_ins AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.id)",
		"CREATE TEMPORARY TABLE t (id INT PRIMARY KEY)",
		"CREATE TEMPORARY TABLE tt (id INT)")
	a.wantErr("CREATE VIEW v AS SELECT id FROM tt", 1352, "View's SELECT refers to a temporary table 'tt'")
	a.wantErr("CREATE VIEW v AS SELECT log.id FROM log JOIN d.tt ON tt.id = log.id", 1352, "View's SELECT refers to a temporary table 'tt'")
	a.wantErr("CREATE TRIGGER tt_ins BEFORE INSERT ON tt FOR EACH ROW SET NEW.id = 1", 1361, "Trigger's 'tt' is view or temporary table")
	a.exec("INSERT INTO t VALUES (1)")
	a.want("SELECT COUNT(*) FROM log", "0")
	a.want("SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = 'd'", "t_ins")
	a.exec("DROP TEMPORARY TABLE t", "INSERT INTO t VALUES (2)")
	a.want("SELECT id FROM log", "2")

	a.exec("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'", "GRANT ALL ON d.* TO 'app'@'%'", "SET GLOBAL read_only = ON")
	defer a.exec("SET GLOBAL read_only = OFF")
	app, err := sql.Open("mysql", "app:pw@tcp("+s.Addr()+")/d")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ac := pinConn(t, app)
	ac.exec("CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v INT)",
		"INSERT INTO tmp VALUES (1, 1), (2, 2)",
		"UPDATE tmp SET v = 5 WHERE id = 1",
		"DELETE FROM tmp WHERE id = 2",
		"INSERT INTO tmp SELECT id + 10, id FROM log")
	ac.want("SELECT id, v FROM tmp ORDER BY id", "1,5;12,2")
	ac.exec("CREATE TEMPORARY TABLE tmp2 SELECT id FROM log")
	ac.want("SELECT id FROM tmp2", "2")
	const roMsg = "The MySQL server is running with the --read-only option so it cannot execute this statement"
	ac.wantErr("INSERT INTO log SELECT id FROM tmp", 1290, roMsg)
	ac.wantErr("UPDATE log SET id = 3", 1290, roMsg)
	ac.exec("DROP TEMPORARY TABLE tmp")
}

// TestTemporaryTableTransactions: rows written to a temporary table are
// undone by ROLLBACK, and CREATE / DROP TEMPORARY TABLE leave the
// transaction open, as in MySQL; a READ ONLY transaction may write one.
func TestTemporaryTableTransactions(t *testing.T) {
	s := servertest.Start(t)
	a := pinConn(t, s.DB("d"))
	a.exec("CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY, v INT, KEY v_idx (v))",
		"INSERT INTO tt VALUES (1, 10)",
		"BEGIN",
		"INSERT INTO tt VALUES (2, 20)",
		"UPDATE tt SET v = 11 WHERE id = 1",
		"INSERT INTO p VALUES (1)",
		"CREATE TEMPORARY TABLE t2 (id INT)",
		"INSERT INTO t2 VALUES (1)",
		"ROLLBACK")
	a.want("SELECT id, v FROM tt ORDER BY id", "1,10")
	a.want("SELECT id FROM tt WHERE v = 11", "")
	a.want("SELECT COUNT(*) FROM p", "0")
	a.want("SELECT COUNT(*) FROM t2", "0")
	a.exec("BEGIN", "INSERT INTO p VALUES (2)", "DROP TEMPORARY TABLE t2", "ROLLBACK")
	a.want("SELECT COUNT(*) FROM p", "0")
	a.exec("SET autocommit = 0", "INSERT INTO tt VALUES (3, 30)", "COMMIT", "INSERT INTO tt VALUES (4, 40)", "ROLLBACK", "SET autocommit = 1")
	a.want("SELECT id FROM tt ORDER BY id", "1;3")
	a.exec("START TRANSACTION READ ONLY", "INSERT INTO tt VALUES (5, 50)", "COMMIT")
	a.want("SELECT id FROM tt WHERE v = 50", "5")
	a.exec("START TRANSACTION READ ONLY")
	a.wantErr("INSERT INTO p VALUES (3)", 1792, "")
	a.exec("ROLLBACK")
}

// TestTemporaryTableFastPath: prepared and text statements that the fast
// path serves reach the session's temporary table when it shadows a table,
// also when they were prepared before it existed, and the table again once
// it is dropped.
func TestTemporaryTableFastPath(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	a, b := pinConn(t, db), pinConn(t, db)
	a.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 100), (2, 200)")
	ctx := context.Background()
	sel, err := a.c.PrepareContext(ctx, "SELECT v FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	upd, err := a.c.PrepareContext(ctx, "UPDATE t SET v = v + 1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer upd.Close()
	ins, err := a.c.PrepareContext(ctx, "INSERT INTO t (id, v) VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	// Not a shape the fast path serves: go-mysql-server binds it again.
	slow, err := a.c.PrepareContext(ctx, "SELECT COUNT(*) FROM t WHERE v > ?")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	one := func(st *sql.Stmt, id int) string {
		t.Helper()
		rs, err := st.QueryContext(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return joinRows(t, rs)
	}
	if got := one(sel, 1); got != "100" {
		t.Fatalf("before: %q", got)
	}
	a.want("SELECT v FROM t WHERE id = 2", "200")
	a.exec("CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 5)")
	hits := s.FastPathHits()
	if got := one(sel, 1); got != "5" {
		t.Errorf("prepared SELECT on the shadowed name: %q, want 5", got)
	}
	if got := one(slow, 0); got != "1" {
		t.Errorf("prepared SELECT COUNT(*) on the shadowed name: %q, want 1", got)
	}
	if _, err := upd.ExecContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ins.ExecContext(ctx, 3, 7); err != nil {
		t.Fatal(err)
	}
	a.want("SELECT v FROM t WHERE id = 1", "6")
	a.want("SELECT v FROM t WHERE id = 3", "7")
	a.want("SELECT v FROM t WHERE id = 2", "")
	if s.FastPathHits() == hits {
		t.Error("the fast path served none of the statements on the temporary table")
	}
	b.want("SELECT id, v FROM t ORDER BY id", "1,100;2,200")
	a.exec("DROP TEMPORARY TABLE t")
	if got := one(sel, 1); got != "100" {
		t.Errorf("prepared SELECT after DROP TEMPORARY TABLE: %q, want 100", got)
	}
	a.want("SELECT v FROM t WHERE id = 3", "")
}

// TestTemporaryTableSessionEnd: a session's temporary tables and every key
// they had go when its connection is closed or killed.
func TestTemporaryTableSessionEnd(t *testing.T) {
	s := servertest.Start(t)
	store := s.Engine().Store()
	s.DB("d")
	for _, end := range []string{"close", "kill"} {
		other, err := sql.Open("mysql", s.DSN("d"))
		if err != nil {
			t.Fatal(err)
		}
		c := pinConn(t, other)
		c.exec("CREATE TEMPORARY TABLE tt (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), KEY (v))",
			"INSERT INTO tt (v) VALUES ('a'), ('b')",
			"CREATE TEMPORARY TABLE nopk (v INT)", "INSERT INTO nopk VALUES (1)",
			// The transaction writes the dropped table's row when it commits.
			"CREATE TEMPORARY TABLE gone (id INT PRIMARY KEY)",
			"BEGIN", "INSERT INTO gone VALUES (1)", "DROP TEMPORARY TABLE gone", "COMMIT")
		if n := tempKeys(t, store); n == 0 {
			t.Fatalf("%s: no keys for the temporary tables", end)
		}
		if end == "close" {
			c.c.Close()
			other.Close()
		} else {
			var id int64
			if err := c.c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			pinConn(t, s.DB("d")).exec(fmt.Sprintf("KILL %d", id))
			defer other.Close()
		}
		deadline := time.Now().Add(10 * time.Second)
		for tempKeys(t, store) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d keys of temporary tables left", end, tempKeys(t, store))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	pinConn(t, s.DB("d")).wantErr("SELECT * FROM tt", 1146, "Table 'd.tt' doesn't exist")
}

// TestTemporaryTableRestart: what temporary tables of a server that died
// left in the store is gone when it starts again, and a new temporary
// table does not see it.
func TestTemporaryTableRestart(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	a := pinConn(t, s.DB("d"))
	a.exec("CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY, v INT, KEY (v))", "INSERT INTO tt VALUES (1, 1), (2, 2)")
	// Keep what a crash would leave: the keys as they are now.
	type kvp struct{ k, v []byte }
	var left []kvp
	txn := s.Engine().Store().Begin()
	it := txn.NewIter(codec.TablePrefix(catalog.TempIDBase), codec.PrefixEnd(codec.TablePrefix(math.MaxInt64)), false)
	for ; it.Valid(); it.Next() {
		left = append(left, kvp{append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)})
	}
	it.Close()
	txn.Rollback()
	if len(left) != 4 {
		t.Fatalf("%d keys for a temporary table of 2 rows and an index, want 4", len(left))
	}
	a.c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := kv.Open(kv.Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w := store.Begin()
	for _, p := range left {
		if err := w.Set(p.k, p.v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	store.Close()

	s2 := servertest.StartDir(t, dir)
	if n := tempKeys(t, s2.Engine().Store()); n != 0 {
		t.Fatalf("%d keys of temporary tables left after a restart", n)
	}
	b := pinConn(t, s2.DB("d"))
	b.wantErr("SELECT * FROM tt", 1146, "Table 'd.tt' doesn't exist")
	b.exec("CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY, v INT, KEY (v))")
	b.want("SELECT COUNT(*) FROM tt", "0")
	b.want("SELECT id FROM tt WHERE v = 1", "")
}

// TestTemporaryTablePrivileges: as in MySQL, CREATE TEMPORARY TABLES is
// the privilege to make one, and its session then uses it without any
// table privilege, through the fast path too; other tables still need
// theirs.
func TestTemporaryTablePrivileges(t *testing.T) {
	s := servertest.Start(t)
	root := pinConn(t, s.DB("d"))
	root.exec("CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE USER 'tmp'@'%' IDENTIFIED BY 'pw'", "GRANT CREATE TEMPORARY TABLES ON d.* TO 'tmp'@'%'",
		"CREATE USER 'ro'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON d.* TO 'ro'@'%'")
	open := func(user string) *tempConn {
		db, err := sql.Open("mysql", user+":pw@tcp("+s.Addr()+")/d")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return pinConn(t, db)
	}
	u := open("tmp")
	u.exec("CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY, v INT)",
		"INSERT INTO tt VALUES (1, 1), (2, 2)",
		"UPDATE tt SET v = 10 WHERE id = 1",
		"DELETE FROM tt WHERE id = 2",
		"ALTER TABLE tt ADD INDEX v_idx (v)")
	u.want("SELECT id, v FROM tt WHERE v = 10", "1,10")
	st, err := u.c.PrepareContext(context.Background(), "SELECT v FROM tt WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var v int
	if err := st.QueryRowContext(context.Background(), 1).Scan(&v); err != nil || v != 10 {
		t.Errorf("prepared SELECT of the temporary table: %d, %v", v, err)
	}
	if _, err := u.c.QueryContext(context.Background(), "SELECT * FROM t"); err == nil {
		t.Error("SELECT of a table without the privilege succeeded")
	}
	u.wantErr("INSERT INTO t SELECT id FROM tt", 1142, "INSERT command denied to user 'tmp'@'%' for table 't'")
	u.exec("DROP TEMPORARY TABLE tt")
	open("ro").wantErr("CREATE TEMPORARY TABLE tt (id INT)", 1044, "Access denied for user 'ro'@'%' to database 'd'")
}
