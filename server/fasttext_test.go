package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// rawResponse sends q as COM_QUERY and returns every packet of the
// answer as sent; db's name in column definitions and errors becomes "sl", so that
// answers from databases "fa" and "sl" compare byte for byte.
func rawResponse(rc *rawConn, q string) [][]byte {
	rc.t.Helper()
	rc.command(comQuery, []byte(q))
	p := rc.readPacket()
	out := [][]byte{bytes.Replace(p, []byte("'fa."), []byte("'sl."), 1)}
	if p[0] == 0x00 || p[0] == 0xff {
		return out
	}
	n, _ := lenEnc(p)
	for i := uint64(0); i < n; i++ {
		out = append(out, bytes.Replace(rc.readPacket(), []byte("\x02fa"), []byte("\x02sl"), 1))
	}
	out = append(out, rc.readPacket()) // EOF after the columns
	for {
		p := rc.readPacket()
		out = append(out, p)
		if p[0] == 0xfe && len(p) < 9 || p[0] == 0xff {
			return out
		}
	}
}

// text runs text statement q on both sides of p, on "fa" with the fast
// path on and on "sl" with it off, and fails unless the clients get the
// same bytes and the sessions the same warnings, ROW_COUNT(),
// FOUND_ROWS(), LAST_INSERT_ID() and status counters. It returns the
// answer's first packet and whether the fast path served the statement.
func (p *dmlPair) text(q string) ([]byte, bool) {
	p.t.Helper()
	const after = "SHOW WARNINGS; SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(); " +
		"SHOW SESSION STATUS LIKE 'Handler_%'; SHOW SESSION STATUS LIKE 'Com\\_%'; SHOW SESSION STATUS LIKE 'Questions'"
	state := func(rc *rawConn) string {
		var b strings.Builder
		for _, a := range strings.Split(after, "; ") {
			b.WriteString(textRows(rc, a))
		}
		return b.String()
	}
	h0 := p.s.FastPathHits()
	fast := rawResponse(p.fast, q)
	hit := p.s.FastPathHits() > h0
	fastState := state(p.fast)
	p.s.SetFastPath(false)
	slow := rawResponse(p.slow, q)
	p.s.SetFastPath(true)
	slowState := state(p.slow)
	if !reflect.DeepEqual(fast, slow) {
		p.t.Fatalf("%s:\nfast path (hit=%v) %q\nslow path %q", q, hit, fast, slow)
	}
	if fastState != slowState {
		p.t.Fatalf("%s: session afterwards\nfast path (hit=%v):\n%s\nslow path:\n%s", q, hit, fastState, slowState)
	}
	return fast[0], hit
}

// TestFastPathText: text statements (COM_QUERY) of the fast path's shapes
// are served by it and answer byte for byte what go-mysql-server answers,
// errors included, leaving the same rows and consistent indexes; literals
// whose meaning a bind variable would not carry exactly, and statements
// the fast path does not serve, go to go-mysql-server.
func TestFastPathText(t *testing.T) {
	s := servertest.Start(t)
	p := newDMLPair(t, s, 0, dmlTable, dmlRows)
	type step struct {
		q   string
		hit bool
		err string // error code, "" = none
	}
	run := func(steps []step) {
		t.Helper()
		for _, st := range steps {
			first, hit := p.text(st.q)
			if hit != st.hit {
				t.Errorf("%s: fast path served=%v, want %v", st.q, hit, st.hit)
			}
			code := ""
			if first[0] == 0xff {
				code = fmt.Sprint(int(first[1]) | int(first[2])<<8)
			}
			if code != st.err {
				t.Errorf("%s: error %q, want %q (%q)", st.q, code, st.err, first)
			}
		}
	}
	run([]step{
		// reads
		{"SELECT * FROM t WHERE id=1", true, ""},
		{"select c, k FROM t WHERE id = '2'", true, ""},
		{"SELECT pad FROM t WHERE 3 = id;", true, ""},
		{"SELECT * FROM t WHERE id=4", true, ""},
		{"SELECT c FROM t WHERE id=-3", true, ""},
		{"SELECT * FROM t WHERE id BETWEEN 1 AND 3", true, ""},
		{"SELECT DISTINCT k FROM t WHERE id BETWEEN 0 AND 10", true, ""},
		{"SELECT DISTINCT id FROM t WHERE id BETWEEN 0 AND 10", false, ""},
		{"SELECT DISTINCT c, pad FROM t WHERE id BETWEEN 0 AND 10", true, ""},
		{"SELECT id FROM t WHERE id BETWEEN 0 AND 10", false, ""},
		// go-mysql-server's PRI_KEY and AUTO_INCREMENT column flags
		// depend on its plan for the projection
		{"SELECT c, id FROM t WHERE id BETWEEN 0 AND 10", false, ""},
		{"SELECT id, c FROM t WHERE id = 1", false, ""},
		{"SELECT id, k, c, pad, u FROM t WHERE id = 1", false, ""},
		{"SELECT k, c, pad, u FROM t WHERE id = 1", true, ""},
		// go-mysql-server's column flags with ORDER BY depend on its plan
		{"SELECT * FROM t WHERE id BETWEEN 0 AND 10 ORDER BY id", false, ""},
		{"SELECT id, c FROM t WHERE id BETWEEN 1 AND 5 ORDER BY c DESC", false, ""},
		{"SELECT c FROM t WHERE id = 18446744073709551615", false, ""},
		{"SELECT c FROM t WHERE id = ' 1'", false, ""},
		{"SELECT c FROM t WHERE id = '1abc'", false, "1366"},
		{"SELECT c FROM t WHERE id = 1.0", false, ""},
		{"SELECT c FROM t WHERE id = 1e0", false, ""},
		{"SELECT c FROM t WHERE id = 0x01", false, ""},
		{"SELECT c FROM t WHERE id = x'01'", false, ""},
		{"SELECT c FROM t WHERE id = b'1'", false, ""},
		{"SELECT c FROM t WHERE id = TRUE", false, ""},
		{"SELECT c FROM t WHERE id = NULL", false, ""},
		{"SELECT c FROM t WHERE id = _utf8mb4'1'", false, ""},
		{"SELECT c FROM t WHERE id = -(1)", false, ""},
		{"SELECT c FROM t WHERE id IN (1, 2)", false, ""},
		{"SELECT c FROM t WHERE id = 1 LIMIT 1", false, ""},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN 1 AND 3", false, ""},
		{"SELECT /*+ NO_INDEX(t) */ c FROM t WHERE id = 1", false, ""},
		{"SELECT c FROM t WHERE id = 1; SELECT 1", false, "1064"},
		{"SELECT c FROM t WHERE id = ?", false, "1105"},
		{"SELECT c FROM nosuch WHERE id = 1", false, "1146"},
		{"SELECT nosuch FROM t WHERE id = 1", false, "1054"},

		// writes
		{"UPDATE t SET c='uno' WHERE id=1", true, ""},
		{"UPDATE t SET c = 'uno' WHERE id = 1", true, ""}, // matched, not changed
		{"UPDATE t SET c='two' WHERE id=1", true, "1062"},
		{"UPDATE t SET c='much too long' WHERE id=1", false, "1406"},
		{"UPDATE t SET c=NULL WHERE id=1", false, "1048"},
		{"UPDATE t SET pad=NULL WHERE id=1", false, ""},
		{"UPDATE t SET pad='it''s' WHERE id=2", true, ""},
		{`UPDATE t SET pad='a\'b' WHERE id=3`, true, ""},
		{"UPDATE t SET u=256 WHERE id=5", false, "1264"},
		{"UPDATE t SET u=200 WHERE id=5", true, ""},
		{"UPDATE t SET u='9' WHERE id=5", false, ""},
		{"UPDATE t SET k=-7 WHERE id=5", true, ""},
		{"UPDATE t SET k=1.5 WHERE id=5", false, ""},
		{"UPDATE t SET k=0x10 WHERE id=5", false, ""},
		{"UPDATE t SET c=x'41' WHERE id=5", false, ""},
		{"UPDATE t SET c=_utf8mb4'intro' WHERE id=5", false, ""},
		{"UPDATE t SET k=TRUE WHERE id=2", false, ""},
		{"UPDATE t SET k=k+1 WHERE id=1", false, ""}, // the increment becomes a parameter: no fast shape
		{"DELETE FROM t WHERE id=5", true, ""},
		{"DELETE FROM t WHERE id=5", true, ""}, // gone
		{"DELETE FROM t WHERE id='7'", true, ""},
		{"DELETE FROM t WHERE id=NULL", false, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (5, 55, 'cinq', 'p', 3)", true, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (6, 66, 'six', NULL, NULL)", false, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (7, 77, 'six', 'q', 1)", true, "1062"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (5, 77, 'seven', 'q', 1)", true, "1062"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (8, 1, 'much too long', 'x', 1)", false, "1406"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (8, 1, 'eight', 'x', 300)", false, "1264"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (8, 1, 'eight', 'x', -1)", false, "1264"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (8, '12', 'eight', 'x', 1)", false, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (9, 1.5, 'nine', 'x', 1)", false, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (10, 'x', 'ten', 'x', 1)", false, "1366"},
		{"INSERT INTO t (k, c, pad, u) VALUES (1, 'auto', 'a', 1)", true, ""},
		{"INSERT INTO t (k, c, pad, u) VALUES (1, 'auto', 'a', 1)", true, "1062"},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (0, 1, 'zero', 'z', 1)", true, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (100, 1, 'hundred', 'h', 1)", true, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (400, 1, 'a', 'b', 1), (401, 1, 'c', 'd', 1)", false, ""},
		{"INSERT INTO t (c, id, u, pad, k) VALUES ('ord', 200, 4, 'q', 2)", true, ""},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (-5, 1, 'minus', 'm', 1)", false, ""},
		{"INSERT INTO t VALUES (402, 1, 'noncols', 'n', 1)", false, ""},
	})
	p.same("t")

	// In a transaction, and with sql_select_limit (which the fast path
	// leaves to go-mysql-server).
	p.query("BEGIN")
	run([]step{
		{"INSERT INTO t (id, k, c, pad, u) VALUES (300, 3, 'txn', 't', 1)", true, ""},
		{"UPDATE t SET c='txn2' WHERE id=300", true, ""},
		{"SELECT * FROM t WHERE id=300", true, ""},
	})
	p.query("ROLLBACK")
	p.query("SET sql_select_limit = 1")
	run([]step{{"SELECT * FROM t WHERE id BETWEEN 1 AND 10", false, ""}})
	p.query("SET sql_select_limit = DEFAULT")
	// ANSI_QUOTES: "c" is a column, not a string.
	p.query("SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')")
	run([]step{
		{`SELECT "c" FROM t WHERE id = 1`, true, ""},
		{`UPDATE t SET pad = "c" WHERE id = 1`, false, ""},
	})
	// A string literal is in character_set_client, not UTF-8.
	p.query("SET NAMES latin1")
	// Served or not, the answers must be go-mysql-server's.
	p.text("UPDATE t SET pad='caf\xe9' WHERE id=1")
	p.text("INSERT INTO t (id, k, c, pad, u) VALUES (500, 5, 'na\xefve', '\xe0', 1)")
	run([]step{
		{"SELECT c, pad FROM t WHERE id=500", true, ""},
		{"SELECT k, c, pad FROM t WHERE id BETWEEN 1 AND 500", true, ""},
	})
	p.query("SET NAMES utf8mb4")
	p.same("t")
}

// TestFastPathTextInterpolated: go-sql-driver with interpolateParams
// sends its statements as text, which the fast path serves.
func TestFastPathTextInterpolated(t *testing.T) {
	s := servertest.Start(t)
	s.DB("ip").Close()
	db, err := sql.Open("mysql", strings.Replace(s.DSN("ip"), "interpolateParams=false", "interpolateParams=true", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, pad VARCHAR(20))",
		"INSERT INTO t VALUES (1, 10, 'one', 'p')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	h0 := s.FastPathHits()
	if _, err := db.Exec("INSERT INTO t (id, k, c, pad) VALUES (?, ?, ?, ?)", 2, 20, "it's \"two\"", `back\slash`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE t SET c = ? WHERE id = ?", "uno", 1); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range []int{1, 2} {
		var c, pad string
		if err := db.QueryRow("SELECT c, pad FROM t WHERE id = ?", id).Scan(&c, &pad); err != nil {
			t.Fatal(err)
		}
		got = append(got, c+"|"+pad)
	}
	if n := s.FastPathHits() - h0; n != 4 {
		t.Errorf("fast path served %d of 4 interpolated statements", n)
	}
	if want := []string{"uno|p", `it's "two"|back\slash`}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	s.SetFastPath(false)
	slow := collect(db.Query("SELECT * FROM t WHERE id BETWEEN ? AND ?", 1, 2))
	s.SetFastPath(true)
	h0 = s.FastPathHits()
	fast := collect(db.Query("SELECT * FROM t WHERE id BETWEEN ? AND ?", 1, 2))
	if s.FastPathHits() == h0 {
		t.Error("interpolated range select not served by the fast path")
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("fast path %v\nslow path %v", fast, slow)
	}
}

// TestKillFastText: KILL QUERY stops a text statement the fast path
// serves (here one waiting for a row lock) with 1317, as it stops any.
func TestKillFastText(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	holder := conn(t, db)
	for _, q := range []string{"BEGIN", "UPDATE t SET v = 2 WHERE id = 1"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c := conn(t, db)
	id := connID(t, c)
	h0 := s.FastPathHits()
	ch := queryErr(c, "UPDATE t SET v = 3 WHERE id = 1")
	waitRunning(t, db, id)
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "killed UPDATE", within(t, "killed UPDATE", ch), 1317)
	if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// The connection's next statement waits for the killed one to end.
	var v int
	if err := c.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("after KILL QUERY: v=%d, %v", v, err)
	}
	if n := s.FastPathHits() - h0; n != 2 {
		t.Errorf("fast path served %d of the killed UPDATE and the SELECT", n)
	}
}

// TestFastPathTextMultiStatements: a client that may send several
// statements in one COM_QUERY gets the fast path for a text holding one.
func TestFastPathTextMultiStatements(t *testing.T) {
	s := servertest.Start(t)
	const clientMultiStatements = 1 << 16
	p := newDMLPair(t, s, clientMultiStatements, dmlTable, dmlRows)
	for _, st := range []struct {
		q   string
		hit bool
	}{
		{"SELECT * FROM t WHERE id = 1", true},
		{"  SELECT * FROM t WHERE id BETWEEN 1 AND 3 ;  ", true},
		{"UPDATE t SET c = 'uno' WHERE id = 1", true},
		{"UPDATE t SET c = 'two' WHERE id = 1", true}, // 1062
		{"INSERT INTO t (id, k, c, pad, u) VALUES (6, 66, 'six', 'p', 1)", true},
		{"DELETE FROM t WHERE id = 6;", true},
		{"SELECT c FROM t WHERE id = 1.0", false},
		// Past the fast path's length limit, even a shape it serves.
		{"SELECT * FROM t WHERE" + strings.Repeat(" ", 9000) + "id = 1", false},
		{"INSERT INTO t (id, k, c, pad, u) VALUES (7, 7, 'a', 'p', 1)" + strings.Repeat(", (7, 7, 'a', 'p', 1)", 600), false}, // 1062
	} {
		if _, hit := p.text(st.q); hit != st.hit {
			t.Errorf("%s: fast path served=%v, want %v", st.q, hit, st.hit)
		}
	}
	p.same("t")
}

// TestFastPathTextShapes: statements recognised by their token key, without
// parsing, answer as go-mysql-server does, including values that a SELECT's
// normalization would have shared in one variable.
func TestFastPathTextShapes(t *testing.T) {
	s := servertest.Start(t)
	p := newDMLPair(t, s, 0, dmlTable, dmlRows)
	h0 := s.TextShapeHits()
	for _, q := range []string{
		"SELECT k, c FROM t WHERE id BETWEEN 1 AND 3",
		"SELECT k, c FROM t WHERE id BETWEEN 2 AND 2",
		"SELECT k, c FROM t WHERE id BETWEEN 3 AND 1",
		"SELECT k, c FROM t WHERE id BETWEEN 1 AND 5",
		"SELECT k, c FROM t WHERE id BETWEEN 5 AND 5",
		"SELECT c FROM t WHERE id = 1",
		"SELECT c FROM t WHERE id = 2",
		"SELECT c FROM t WHERE id = 18446744073709551615",
		"SELECT c FROM t WHERE id = '3'",
		"SELECT c FROM t WHERE id = '5'",
		"UPDATE t SET c='a' WHERE id=1",
		"UPDATE t SET c='b' WHERE id=2",
		"UPDATE t SET c='a' WHERE id=2",
		"UPDATE t SET c='2' WHERE id=2",
		"INSERT INTO t (id, k, c, pad, u) VALUES (10, 11, 'ten', 'p', 1)",
		"INSERT INTO t (id, k, c, pad, u) VALUES (11, 11, 'eleven', 'p', 1)",
		"INSERT INTO t (id, k, c, pad, u) VALUES (12, 13, 'ten', 'p', 1)",
		"INSERT INTO t (id, k, c, pad, u) VALUES (13, 14, 'thirteen!!', 'p', 300)",
		"DELETE FROM t WHERE id=10",
		"DELETE FROM t WHERE id=11",
		"SELECT * FROM t WHERE id BETWEEN 0 AND 20 ORDER BY id",
		"SELECT * FROM t WHERE id BETWEEN 0 AND 30 ORDER BY id",
	} {
		p.text(q)
	}
	if s.TextShapeHits() == h0 {
		t.Error("no statement was recognised by its token key")
	}
	p.same("t")
}

// TestFastPathResultsCharset: strings the fast path sends without a copy
// are the ones already in the client's character set; under SET NAMES
// latin1 a utf8mb4 column's value is converted as go-mysql-server does.
func TestFastPathResultsCharset(t *testing.T) {
	s := servertest.Start(t)
	p := newDMLPair(t, s, 0, dmlTable, dmlRows)
	p.query("INSERT INTO t (id, k, c, pad, u) VALUES (600, 6, 'naïve', 'à', 1)")
	for _, names := range []string{"utf8mb4", "latin1", "binary"} {
		p.query("SET NAMES " + names)
		for _, q := range []string{"SELECT c, pad FROM t WHERE id=600", "SELECT k, c, pad FROM t WHERE id BETWEEN 500 AND 700"} {
			if _, hit := p.text(q); !hit {
				t.Errorf("SET NAMES %s; %s: not served by the fast path", names, q)
			}
		}
		want := "naïve|à\n"
		if names == "latin1" {
			want = "na\xefve|\xe0\n"
		}
		for _, rc := range []*rawConn{p.fast, p.slow} {
			if got := textRows(rc, "SELECT c, pad FROM t WHERE id=600"); got != want {
				t.Errorf("SET NAMES %s: row %q, want %q", names, got, want)
			}
		}
	}
}
