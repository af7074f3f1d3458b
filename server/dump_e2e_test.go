package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// A statement that reads a view must not commit the open transaction:
// go-mysql-server flagged it as DDL (binding the view's CREATE VIEW), which
// committed the transaction and dropped its savepoints, so ROLLBACK kept
// the rows and mariadb-dump --single-transaction failed on its first view.
func TestViewReadKeepsTransaction(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExecDB(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO t VALUES (1, 'a')", "CREATE VIEW vv AS SELECT * FROM t")
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, read := range []string{"SELECT count(*) FROM vv", "SHOW CREATE TABLE vv", "SHOW FIELDS FROM vv",
		"INSERT INTO t SELECT id + 10, v FROM vv"} {
		mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (2, 'b')", "SAVEPOINT sp", read, "ROLLBACK TO SAVEPOINT sp", "ROLLBACK")
		query(t, db, "SELECT count(*) FROM t", "1")
	}
	// DDL still commits implicitly, as in MySQL.
	mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (3, 'c')", "CREATE VIEW v2 AS SELECT 1", "ROLLBACK")
	query(t, db, "SELECT count(*) FROM t", "2")
}

func TestChecksumTable(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExecDB(t, db,
		"CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10), n DOUBLE)",
		"CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(10), n DOUBLE)",
		"INSERT INTO a VALUES (1, 'x', 1.5), (2, NULL, NULL), (3, '', 0)",
		"INSERT INTO b VALUES (3, '', 0), (1, 'x', 1.5), (2, NULL, NULL)")
	sum := func(q string) map[string]any {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		out := map[string]any{}
		for rows.Next() {
			var name string
			var v any
			if err := rows.Scan(&name, &v); err != nil {
				t.Fatal(err)
			}
			out[name] = v
		}
		return out
	}
	got := sum("CHECKSUM TABLE a, b, app.nosuch")
	if got["app.a"] == nil || got["app.a"] != got["app.b"] {
		t.Fatalf("equal rows in another order: %v", got)
	}
	if got["app.nosuch"] != nil {
		t.Fatalf("missing table: %v", got)
	}
	// A NULL is not an empty string.
	mustExecDB(t, db, "UPDATE b SET v = '' WHERE id = 2")
	if got := sum("CHECKSUM TABLE a, b EXTENDED"); got["app.a"] == got["app.b"] {
		t.Fatalf("different rows, same checksum: %v", got)
	}
	_, err := s.DB("").Exec("CHECKSUM TABLE a")
	expectCode(t, err, 1046)
}

// mariadb-dump --single-transaction of a database with every kind of
// column, indexes, defaults, AUTO_INCREMENT, a foreign key, a check, a
// view, a trigger and a procedure loads into a new server with the
// mariadb client, and every table has the same rows (CHECKSUM TABLE),
// definition and constraints there.
func TestDumpRestoreRoundTrip(t *testing.T) {
	dump, err := exec.LookPath("mariadb-dump")
	client, err2 := exec.LookPath("mariadb")
	if err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mariadb-dump or mariadb is not installed; .ci/run installs mariadb-client")
		}
		t.Skip("mariadb-client is not installed")
	}
	src, dst := servertest.Start(t), servertest.Start(t)
	db := src.DB("app")
	mustExecDB(t, db,
		`CREATE TABLE ty (id INT AUTO_INCREMENT PRIMARY KEY, a TINYINT, b SMALLINT UNSIGNED, c BIGINT,
			d DECIMAL(10,3) DEFAULT 1.5, e FLOAT, f DOUBLE, g CHAR(5), h VARCHAR(30) DEFAULT 'x', i TEXT,
			j BLOB, k DATE, l DATETIME(3), m TIMESTAMP NULL, n TIME(2), o YEAR, p ENUM('a','b') DEFAULT 'b',
			q SET('x','y'), r BIT(5), s JSON, u VARBINARY(10), KEY (h), UNIQUE KEY (g)) COMMENT 'types 🛒'`,
		`INSERT INTO ty (a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,u) VALUES
			(1,2,3,4.5,1.25,2.5,'g','h','it''s',x'00ff27','2024-01-02','2024-01-02 03:04:05.678',
			 '2024-01-02 03:04:05','12:34:56.78',2024,'a','x,y',b'101','{"k":[1,"two"]}',x'ff00'),
			(-1,NULL,-9223372036854775808,-0.001,NULL,-1e300,'g2',NULL,'',NULL,NULL,NULL,NULL,'-838:59:59',NULL,NULL,'',NULL,NULL,NULL)`,
		"CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(50) COLLATE utf8mb4_general_ci, KEY (msg))",
		"CREATE TRIGGER ty_ins AFTER INSERT ON ty FOR EACH ROW INSERT INTO log (msg) VALUES (CONCAT('ty ', NEW.id))",
		"INSERT INTO ty (g) VALUES ('g3')",
		"CREATE VIEW tv AS SELECT id, h FROM ty WHERE h IS NOT NULL",
		"CREATE PROCEDURE count_ty(OUT n INT) SELECT count(*) INTO n FROM ty",
		// Dumped before its parent (tables go in name order).
		`CREATE TABLE a_ord (id INT PRIMARY KEY, ty_id INT, qty INT CHECK (qty > 0),
			CONSTRAINT fk_ty FOREIGN KEY (ty_id) REFERENCES ty (id) ON DELETE CASCADE)`,
		"INSERT INTO a_ord VALUES (1, 1, 5), (2, 3, 1)")

	host, port, _ := net.SplitHostPort(src.Addr())
	var out, errOut bytes.Buffer
	cmd := exec.Command(dump, "-h"+host, "-P"+port, "-uroot", "--skip-ssl", "--single-transaction",
		"--routines", "--triggers", "--databases", "app")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, errOut.String())
	}
	host, port, _ = net.SplitHostPort(dst.Addr())
	load := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "--skip-ssl")
	load.Stdin = &out
	if b, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s", err, b)
	}

	restored := dst.DB("app")
	for _, table := range []string{"ty", "log", "a_ord"} {
		want := rowStrings(t, db, "CHECKSUM TABLE "+table)
		if got := rowStrings(t, restored, "CHECKSUM TABLE "+table); got[1] != want[1] || want[1] == "" {
			t.Errorf("CHECKSUM TABLE %s: source %v, restored %v", table, want, got)
		}
		want = rowStrings(t, db, "SHOW CREATE TABLE "+table)
		if got := rowStrings(t, restored, "SHOW CREATE TABLE "+table); got[1] != want[1] {
			t.Errorf("SHOW CREATE TABLE %s:\nsource   %s\nrestored %s", table, want[1], got[1])
		}
	}
	query(t, restored, "SELECT count(*) FROM tv", "2")
	mustExecDB(t, restored, "INSERT INTO ty (g) VALUES ('g4')", "CALL count_ty(@n)")
	query(t, restored, "SELECT @n", "4")
	query(t, restored, "SELECT count(*) FROM log", "2")
	// The constraints hold in the restored database.
	_, err = restored.Exec("INSERT INTO a_ord VALUES (3, 99, 1)")
	expectCode(t, err, 1452)
	_, err = restored.Exec("INSERT INTO a_ord VALUES (3, 1, 0)")
	expectCode(t, err, 3819)
	mustExecDB(t, restored, "DELETE FROM ty WHERE id = 1")
	query(t, restored, "SELECT count(*) FROM a_ord", "1")
}

func mustExecDB(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rowStrings is the first row of q's result, NULL as "".
func rowStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", q, rows.Err())
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(cols))
	for i, v := range vals {
		out[i] = v.String
	}
	return out
}

// mariadb-dump --all-databases --single-transaction of a server with two
// databases and an extra account loads into a new server with the
// mariadb client: the tables have the same rows, and the dumped mysql
// tables are skipped with a warning (accounts go through a dump with
// --system=users: TestDumpUsersRoundTrip).
func TestDumpAllDatabases(t *testing.T) {
	dump, err := exec.LookPath("mariadb-dump")
	client, err2 := exec.LookPath("mariadb")
	if err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mariadb-dump or mariadb is not installed; .ci/run installs mariadb-client")
		}
		t.Skip("mariadb-client is not installed")
	}
	src, dst := servertest.Start(t), servertest.Start(t)
	mustExecDB(t, src.DB(""),
		"CREATE DATABASE shop", "CREATE DATABASE crm",
		"CREATE TABLE shop.item (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2))",
		"INSERT INTO shop.item (name, price) VALUES ('pen', 1.50), ('ink\\ttab', NULL)",
		"CREATE TABLE crm.client (id INT PRIMARY KEY, email VARCHAR(50) UNIQUE)",
		"INSERT INTO crm.client VALUES (1, 'a@example.com'), (2, 'b@example.com')",
		"CREATE USER 'clerk'@'%' IDENTIFIED BY 'secret'",
		"GRANT SELECT, INSERT ON shop.* TO 'clerk'@'%'")

	host, port, _ := net.SplitHostPort(src.Addr())
	var out, errOut bytes.Buffer
	cmd := exec.Command(dump, "-h"+host, "-P"+port, "-uroot", "--skip-ssl", "--single-transaction", "--all-databases")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, errOut.String())
	}
	host, port, _ = net.SplitHostPort(dst.Addr())
	load := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "--skip-ssl")
	load.Stdin = bytes.NewReader(out.Bytes())
	if b, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s", err, b)
	}
	restored := dst.DB("")
	for _, table := range []string{"shop.item", "crm.client"} {
		want := rowStrings(t, src.DB(""), "CHECKSUM TABLE "+table)
		if got := rowStrings(t, restored, "CHECKSUM TABLE "+table); got[1] != want[1] || want[1] == "" {
			t.Errorf("CHECKSUM TABLE %s: source %v, restored %v", table, want, got)
		}
	}
	// The mysql schema's tables are skipped: the account is not restored,
	// the grant tables are untouched, and the skipping is a warning.
	query(t, restored, "SELECT count(*) FROM mysql.user WHERE user = 'clerk'", "0")
	c, err := restored.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec(t, c, "USE mysql", "DROP TABLE IF EXISTS `user`")
	var level, msg string
	var code int
	if err := c.QueryRowContext(context.Background(), "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil ||
		code != 1235 || !strings.Contains(msg, "--system=users") {
		t.Fatalf("warning of the skipped DROP TABLE: %d %q, %v", code, msg, err)
	}
	query(t, restored, "SELECT count(*) FROM mysql.user WHERE user = 'root'", "1")
	// A dump's INSERT (no column list) is skipped; one with a column list
	// still writes the grant table.
	mustExec(t, c, "INSERT INTO `user` VALUES ('%','dumped')",
		"INSERT INTO mysql.user (Host, User) VALUES ('%', 'by_hand')")
	query(t, restored, "SELECT group_concat(user ORDER BY user) FROM mysql.user WHERE user LIKE 'by%' OR user = 'dumped'", "by_hand")
	// An account without the privilege is refused as in MySQL.
	mustExecDB(t, restored, "CREATE USER 'low'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON shop.* TO 'low'@'%'")
	low, err := sql.Open("mysql", "low:pw@tcp("+dst.Addr()+")/shop")
	if err != nil {
		t.Fatal(err)
	}
	defer low.Close()
	_, err = low.Exec("DROP TABLE IF EXISTS mysql.user")
	expectCode(t, err, 1142)
	// Outside the mysql schema, the statements run as usual.
	mustExec(t, c, "USE shop")
	_, err = c.ExecContext(context.Background(), "CREATE TABLE item (id INT)")
	expectCode(t, err, 1050)
}

// Account statements on accounts that do not exist get MySQL's codes
// instead of 1105.
func TestAccountStatementErrors(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	_, err := db.Exec("SHOW GRANTS FOR nobody")
	expectCode(t, err, 1141)
	_, err = db.Exec("ALTER USER nobody IDENTIFIED BY 'x'")
	expectCode(t, err, 1396)
	_, err = db.Exec("RENAME USER nobody TO b")
	expectCode(t, err, 1396)
}

// mariadbTools returns the paths of mariadb-dump and mariadb, skipping
// the test where they are not installed (CI installs them).
func mariadbTools(t *testing.T) (dump, client string) {
	t.Helper()
	dump, err := exec.LookPath("mariadb-dump")
	client, err2 := exec.LookPath("mariadb")
	if err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mariadb-dump or mariadb is not installed; .ci/run installs mariadb-client")
		}
		t.Skip("mariadb-client is not installed")
	}
	return dump, client
}

// runTool runs a mariadb client program against s with args, feeding it
// stdin, and returns its output.
func runTool(t *testing.T, s *servertest.Server, prog string, stdin []byte, args ...string) []byte {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.Addr())
	cmd := exec.Command(prog, append([]string{"-h" + host, "-P" + port, "-uroot", "--skip-ssl"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, errOut.String())
	}
	return out.Bytes()
}

// mariadb-dump --all-databases --system=users --insert-ignore of a server
// with accounts (passwords of both plugins, REQUIRE SSL, global, database
// and table privileges, roles granted and not) loads into a new server with the
// mariadb client: the accounts log in there with their passwords and have
// the same SHOW GRANTS and SHOW CREATE USER, and the data is there.
func TestDumpUsersRoundTrip(t *testing.T) {
	dump, client := mariadbTools(t)
	src, dst := servertest.Start(t), servertest.Start(t)
	mustExecDB(t, src.DB(""),
		"CREATE DATABASE shop", "CREATE TABLE shop.item (id INT PRIMARY KEY)", "INSERT INTO shop.item VALUES (1)",
		"CREATE USER 'clerk'@'%' IDENTIFIED BY 'secret'", "GRANT SELECT, INSERT ON shop.* TO 'clerk'@'%'",
		"CREATE USER 'ops'@'localhost' IDENTIFIED BY 'pw2' REQUIRE SSL",
		"GRANT PROCESS ON *.* TO 'ops'@'localhost'", "GRANT UPDATE ON shop.item TO 'ops'@'localhost'",
		"CREATE ROLE remover", "GRANT DELETE ON shop.* TO remover", "GRANT remover TO 'clerk'@'%'",
		"CREATE ROLE unused", "GRANT SELECT ON shop.item TO unused",
		"CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'shapw'", "GRANT SELECT ON shop.item TO sha",
		"CREATE USER 'o''brien'@'%' IDENTIFIED BY 'it''s'")
	out := runTool(t, src, dump, nil, "--all-databases", "--system=users", "--insert-ignore", "--single-transaction")
	runTool(t, dst, client, out)

	accounts := []string{"'clerk'@'%'", "'ops'@'localhost'", "'remover'@'%'", "'unused'@'%'", "'sha'@'%'",
		"'o\\'brien'@'%'", "'root'@'localhost'"}
	for _, a := range accounts {
		want := strings.Join(queryStrings(t, src.DB(""), "SHOW GRANTS FOR "+a), "\n")
		if got := strings.Join(queryStrings(t, dst.DB(""), "SHOW GRANTS FOR "+a), "\n"); got != want {
			t.Errorf("SHOW GRANTS FOR %s:\nsource   %s\nrestored %s", a, want, got)
		}
	}
	for _, a := range accounts[:6] {
		want := rowStrings(t, src.DB(""), "SHOW CREATE USER "+a)[0]
		if got := rowStrings(t, dst.DB(""), "SHOW CREATE USER "+a)[0]; got != want {
			t.Errorf("SHOW CREATE USER %s:\nsource   %s\nrestored %s", a, want, got)
		}
	}
	clerk := openDSN(t, "clerk:secret@tcp("+dst.Addr()+")/shop")
	query(t, clerk, "SELECT count(*) FROM item", "1")
	execT(t, clerk, "DELETE FROM item WHERE id = 2") // through the role
	query(t, clerk, "SELECT CURRENT_ROLE()", "`remover`@`%`")
	expectDenied(t, loginErr(t, dst, "ops", "pw2", ""), "ops")
	if err := loginErr(t, dst, "ops", "pw2", "skip-verify"); err != nil {
		t.Fatalf("restored REQUIRE SSL account over TLS: %v", err)
	}
	if err := loginErr(t, dst, "sha", "shapw", "skip-verify"); err != nil {
		t.Fatalf("restored caching_sha2_password account over TLS: %v", err)
	}
	if err := loginErr(t, dst, "o'brien", "it's", ""); err != nil {
		t.Fatalf("restored account with quotes: %v", err)
	}
	query(t, dst.DB(""), "SELECT count(*) FROM mysql.user WHERE user = 'mariadb_dump_import_role'", "0")
	// A role is a locked account with no password, and stays locked.
	if err := loginErr(t, dst, "unused", "", ""); err == nil {
		t.Fatal("the restored role unused logged in")
	}
}
