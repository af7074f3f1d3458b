package server_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestStatusFlags reads the status flags of the handshake and of the OK
// and EOF packets through a session's life, as MySQL 8 sets them.
func TestStatusFlags(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	rc := dialRaw(t, s.Addr(), "d")
	if rc.status != statusAutocommit {
		t.Fatalf("handshake status %#04x, want SERVER_STATUS_AUTOCOMMIT (0x0002)", rc.status)
	}
	rc.mustQuery("CREATE TABLE t (id int primary key)")
	steps := []struct {
		q    string
		want uint16
	}{
		{"SELECT 1", statusAutocommit}, // EOF of a result set
		{"INSERT INTO t VALUES (1)", statusAutocommit},
		{"BEGIN", statusAutocommit | statusInTrans},
		{"INSERT INTO t VALUES (2)", statusAutocommit | statusInTrans},
		{"SELECT * FROM t", statusAutocommit | statusInTrans},
		{"COMMIT", statusAutocommit},
		{"START TRANSACTION READ ONLY", statusAutocommit | statusInTrans | statusInTransRO},
		{"SELECT * FROM t", statusAutocommit | statusInTrans | statusInTransRO},
		{"ROLLBACK", statusAutocommit},
		{"SET autocommit=0", 0},
		{"INSERT INTO t VALUES (3)", statusInTrans},
		{"COMMIT", 0},
		{"INSERT INTO t VALUES (4)", statusInTrans},
		{"ROLLBACK", 0},
		{"SET autocommit=1", statusAutocommit},
		{"SET sql_mode='NO_BACKSLASH_ESCAPES'", statusAutocommit | statusNoBackslash},
		{"SELECT 'a\\b'", statusAutocommit | statusNoBackslash},
		{"BEGIN", statusAutocommit | statusInTrans | statusNoBackslash},
		{"COMMIT", statusAutocommit | statusNoBackslash},
		{"SET sql_mode=DEFAULT", statusAutocommit},
	}
	for _, st := range steps {
		r := rc.mustQuery(st.q)
		// MySQL marks the transaction only once it has one; go-mysql-server
		// opens one for any statement, so IN_TRANS is allowed after SET
		// autocommit=0 (the server does hold a transaction then).
		got := r.status
		if st.q == "SET autocommit=0" {
			got &^= statusInTrans
		}
		if got != st.want {
			t.Errorf("%s: status %#04x, want %#04x", st.q, r.status, st.want)
		}
		if r.cols > 0 && r.fieldsStatus != st.want {
			t.Errorf("%s: status %#04x in the EOF after the columns, want %#04x", st.q, r.fieldsStatus, st.want)
		}
	}
	// A statement that fails leaves the flags right for the next packet
	// that carries them (COM_PING's OK here).
	rc.mustQuery("BEGIN")
	if r := rc.query("INSERT INTO t VALUES (1)"); r.err == nil || r.err.code != 1062 {
		t.Fatalf("duplicate insert: %+v", r)
	}
	rc.command(comPing, nil)
	if r := rc.readResult(); r.err != nil || r.status != statusAutocommit|statusInTrans {
		t.Errorf("ping inside a transaction: status %#04x, err %v", r.status, r.err)
	}
	rc.mustQuery("ROLLBACK")
	rc.command(comInitDB, []byte("d"))
	if r := rc.readResult(); r.err != nil || r.status != statusAutocommit {
		t.Errorf("COM_INIT_DB: status %#04x, err %v", r.status, r.err)
	}
	// SET statements report 0 affected rows, as in MySQL.
	for _, q := range []string{"SET @v = 'x'", "SET autocommit = 1", "SET @a = 1, @b = 2"} {
		if r := rc.mustQuery(q); r.affected != 0 {
			t.Errorf("%s: %d rows affected, want 0", q, r.affected)
		}
	}

	// Prepared statements' OK packets carry the flags too.
	rc.mustQuery("BEGIN")
	id, n, perr := rc.prepare("INSERT INTO t VALUES (10)")
	if perr != nil {
		t.Fatal(perr)
	}
	if r := rc.execute(id, n, nil, nil); r.err != nil || r.status != statusAutocommit|statusInTrans {
		t.Errorf("prepared INSERT in a transaction: status %#04x, err %v", r.status, r.err)
	}
	rc.mustQuery("COMMIT")

	// COM_RESET_CONNECTION ends the transaction and restores the
	// session's defaults; its OK packet says so.
	rc.mustQuery("SET autocommit = 0")
	rc.mustQuery("SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
	rc.mustQuery("INSERT INTO t VALUES (11)")
	rc.command(comResetConn, nil)
	if r := rc.readResult(); r.err != nil || r.status != statusAutocommit {
		t.Errorf("COM_RESET_CONNECTION: status %#04x, err %v", r.status, r.err)
	}
	if r := rc.mustQuery("SELECT count(*) FROM t WHERE id = 11"); *r.rows[0][0] != "0" || r.status != statusAutocommit {
		t.Errorf("after reset: uncommitted row count %s, status %#04x", *r.rows[0][0], r.status)
	}

	// DROP DATABASE of the current database says so in its OK packet.
	rc.mustQuery("CREATE DATABASE other")
	if r := rc.mustQuery("DROP DATABASE other"); r.status != statusAutocommit {
		t.Errorf("DROP DATABASE of another database: status %#04x", r.status)
	}
	rc.mustQuery("CREATE DATABASE gone")
	rc.mustQuery("USE gone")
	if r := rc.mustQuery("DROP DATABASE gone"); r.status != statusAutocommit|0x0100 {
		t.Errorf("DROP DATABASE of the current database: status %#04x, want 0x0102", r.status)
	}
	if r := rc.mustQuery("SELECT 1"); r.status != statusAutocommit {
		t.Errorf("after DROP DATABASE: status %#04x", r.status)
	}
	rc.mustQuery("USE d")

	// A client connecting after SET GLOBAL autocommit=0 is told so.
	rc.mustQuery("SET GLOBAL autocommit = 0")
	rc2 := dialRaw(t, s.Addr(), "")
	rc.mustQuery("SET GLOBAL autocommit = 1")
	if rc2.status&statusAutocommit != 0 {
		t.Errorf("handshake after SET GLOBAL autocommit=0: status %#04x", rc2.status)
	}
	if r := rc2.mustQuery("SELECT @@autocommit"); r.rows[0][0] == nil || *r.rows[0][0] != "0" {
		t.Errorf("session autocommit after SET GLOBAL autocommit=0: %v", *r.rows[0][0])
	}
}

const statusInTransRO = 0x2000

// pythonWithPyMySQL returns python3 if it can import pymysql. Outside CI a
// machine without them skips the test; in CI (CI=true) .ci/run installs
// them, so their absence fails.
func pythonWithPyMySQL(t *testing.T) string {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import pymysql").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 with pymysql is required in CI (.ci/run installs it): %v", err)
		}
		t.Skipf("python3 with pymysql not available (pip install pymysql): %v", err)
	}
	return py
}

// TestPyMySQLRollback is issue 17's scenario: PyMySQL with autocommit=False
// trusts the handshake's SERVER_STATUS_AUTOCOMMIT to decide whether to
// send SET autocommit=0, so rollback() undoes the INSERT only if the flag
// is right.
func TestPyMySQLRollback(t *testing.T) {
	py := pythonWithPyMySQL(t)
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id int primary key, v varchar(10))"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(s.Addr(), ":")
	script := `
import sys, pymysql
c = pymysql.connect(host=sys.argv[1], port=int(sys.argv[2]), user="root", password="", database="d", autocommit=False)
print("server_status=%d" % c.server_status)
cur = c.cursor()
cur.execute("INSERT INTO t VALUES (1, 'rolled')")
c.rollback()
cur.execute("INSERT INTO t VALUES (2, 'kept')")
c.commit()
cur.execute("SELECT id FROM t ORDER BY id")
print("rows=%s" % ",".join(str(r[0]) for r in cur.fetchall()))
c.autocommit(True)
cur.execute("INSERT INTO t VALUES (3, 'auto')")
c.rollback()
cur.execute("SELECT count(*) FROM t")
print("count=%d" % cur.fetchone()[0])
cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
cur.execute("INSERT INTO t VALUES (%s, %s)", (4, "a\\b'c"))
cur.execute("SELECT v FROM t WHERE id = 4")
print("v=%s" % cur.fetchone()[0])
c.close()
`
	out, err := exec.Command(py, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	got := string(out)
	t.Log(got)
	for _, want := range []string{"rows=2\n", "count=2\n", "v=a\\b'c\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("PyMySQL output lacks %q:\n%s", want, got)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t WHERE id = 1").Scan(&n); err != nil || n != 0 {
		t.Errorf("rolled-back row present: n=%d err=%v", n, err)
	}
}

// TestNoBackslashEscapes: with the mode on (and announced), a backslash in
// a string literal is an ordinary character, as in MySQL.
func TestNoBackslashEscapes(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	rc := dialRaw(t, s.Addr(), "d")
	if r := rc.mustQuery(`SELECT 'a\tb'`); *r.rows[0][0] != "a\tb" {
		t.Fatalf("default mode: %q", *r.rows[0][0])
	}
	rc.mustQuery("SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
	for q, want := range map[string]string{
		`SELECT 'a\'`:                             `a\`,
		`SELECT 'a\tb'`:                           `a\tb`,
		`SELECT 'it''s\\'`:                        `it's\\`,
		`SELECT "x\" /* \ */`:                     `x\`,
		"SELECT 'a\\' -- it's \\ \n":              `a\`,
		"SELECT `a\\` FROM (SELECT 1 AS `a\\`) t": "1",
	} {
		r := rc.query(q)
		if r.err != nil || len(r.rows) != 1 || r.rows[0][0] == nil || *r.rows[0][0] != want {
			t.Errorf("%s: got %+v (err %v), want %q", q, r.rows, r.err, want)
		}
	}
	// Prepared statements' text too.
	id, n, err := rc.prepare(`SELECT 'p\'`)
	if err != nil {
		t.Fatal(err)
	}
	if r := rc.execute(id, n, nil, nil); r.err != nil || len(r.rows) != 1 {
		t.Fatalf("prepared: %+v", r)
	}
	rc.mustQuery("SET sql_mode = DEFAULT")
	if r := rc.mustQuery(`SELECT 'a\\'`); *r.rows[0][0] != `a\` {
		t.Fatalf("default mode again: %q", *r.rows[0][0])
	}
}

// TestPyMySQLTypes: PyMySQL decodes BIT(n) as bytes (the column is sent
// with the binary character set, as MySQL does), DATETIME(6) with its
// microseconds and YEAR as a number.
func TestPyMySQLTypes(t *testing.T) {
	py := pythonWithPyMySQL(t)
	s := servertest.Start(t)
	db := s.DB("d")
	for _, q := range []string{
		"CREATE TABLE t (id int primary key, b BIT(8), dt DATETIME(6), y YEAR)",
		"INSERT INTO t VALUES (1, b'101', '2024-01-02 03:04:05.123456', 2024)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	host, port, _ := strings.Cut(s.Addr(), ":")
	script := `
import sys, pymysql
c = pymysql.connect(host=sys.argv[1], port=int(sys.argv[2]), user="root", password="", database="d")
cur = c.cursor()
cur.execute("SELECT b, dt, y FROM t")
print(repr(cur.fetchone()))
cur.execute("SELECT b FROM t WHERE id = %s", (1,))
print(repr(cur.fetchone()))
`
	out, err := exec.Command(py, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	want := "(b'\\x05', datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), 2024)\n(b'\\x05',)\n"
	if string(out) != want {
		t.Fatalf("PyMySQL read\n%s\nwant\n%s", out, want)
	}
}

// TestVersion: VERSION(), @@version and the handshake give one version, and
// @@version_comment names ReorgDB.
func TestVersion(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	var v, vv, comment string
	if err := db.QueryRow("SELECT VERSION(), @@version, @@version_comment").Scan(&v, &vv, &comment); err != nil {
		t.Fatal(err)
	}
	if v != server.Version || vv != server.Version || comment != "ReorgDB" {
		t.Fatalf("VERSION() %q, @@version %q, @@version_comment %q; want %q, %q, ReorgDB", v, vv, comment, server.Version, server.Version)
	}
}
