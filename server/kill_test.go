package server_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// hugeIn is a SELECT with an IN list of n values on the primary key,
// which go-mysql-server alone would plan in quadratic time.
func hugeIn(n int) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM t WHERE id IN (")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString(")")
	return b.String()
}

// hugeUnion is a UNION of n SELECTs, whose analysis time in
// go-mysql-server grows much faster than n.
//
// The tests use sizes whose abandoned analysis ends within a minute, not
// to burn the CPUs for the rest of the package's tests; the mechanism
// does not depend on the size.
func hugeUnion(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(" UNION ")
		}
		fmt.Fprintf(&b, "SELECT %d", i)
	}
	return b.String()
}

func connID(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var id int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func conn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// queryErr runs q on c in the background; the channel gets its error.
func queryErr(c *sql.Conn, q string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(context.Background(), q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		ch <- err
	}()
	return ch
}

func wantCode(t *testing.T, what string, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Fatalf("%s: got %v, want error %d", what, err, code)
	}
}

// waitRunning waits until connection id runs a statement (the process
// list shows its command as Query).
func waitRunning(t *testing.T, db *sql.DB, id int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ? AND command = 'Query'", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			time.Sleep(100 * time.Millisecond) // well into the statement
			return
		}
	}
	t.Fatalf("connection %d runs no statement", id)
}

// within waits for ch at most 5 s.
func within(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not end within 5 s", what)
		return nil
	}
}

// TestKillHugeStatements: KILL QUERY and KILL stop a statement that
// go-mysql-server spends minutes analysing, within a second or so, with
// 1317; the server stays usable.
func TestKillHugeStatements(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	// A long IN list, once as slow to plan as the UNION below, is now
	// planned by ReorgDB itself and just answers.
	if _, err := db.Exec("INSERT INTO t VALUES (7, 1), (29999, 2), (40000, 3)"); err != nil {
		t.Fatal(err)
	}
	inList := make(chan error, 1)
	go func() {
		var n int
		err := db.QueryRow("SELECT count(*) FROM (" + hugeIn(30000) + ") x").Scan(&n)
		if err == nil && n != 2 {
			err = fmt.Errorf("count %d, want 2", n)
		}
		inList <- err
	}()
	if err := within(t, "IN list of 30000", inList); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, query, kill string
	}{
		{"UNION of 400, KILL QUERY", hugeUnion(400), "KILL QUERY %d"},
		{"UNION of 400, KILL", hugeUnion(400), "KILL %d"},
	} {
		victim := conn(t, db)
		id := connID(t, victim)
		ch := queryErr(victim, tc.query)
		waitRunning(t, db, id)
		start := time.Now()
		if _, err := db.Exec(fmt.Sprintf(tc.kill, id)); err != nil {
			t.Fatalf("%s: %v", tc.kill, err)
		}
		err := within(t, tc.name, ch)
		if strings.HasPrefix(tc.kill, "KILL QUERY") {
			wantCode(t, tc.name, err, 1317)
		} else if err == nil {
			t.Fatalf("%s: killed connection's statement succeeded", tc.name)
		}
		t.Logf("%s: ended %v after %s: %v", tc.name, time.Since(start), tc.kill, err)
		var one int
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after %s: %v", tc.name, err)
		}
	}
}

// TestMaxAllowedPacketFunctions: SPACE, REPEAT, LPAD and RPAD return NULL
// with warning 1301 instead of a result longer than max_allowed_packet.
func TestMaxAllowedPacketFunctions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	c := conn(t, db)
	ctx := context.Background()
	var maxPacket int64
	if err := c.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ expr, fn string }{
		{"SPACE(2000000000)", "space"},
		{fmt.Sprintf("SPACE(%d)", maxPacket+1), "space"},
		{"REPEAT('ab', 1000000000)", "repeat"},
		{"LPAD('x', 2000000000, 'y')", "lpad"},
		{"RPAD('x', 2000000000, 'y')", "rpad"},
	} {
		start := time.Now()
		var v sql.NullString
		if err := c.QueryRowContext(ctx, "SELECT "+tc.expr).Scan(&v); err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if v.Valid {
			t.Fatalf("%s: got %d bytes, want NULL", tc.expr, len(v.String))
		}
		var level, msg string
		var code int
		if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
			t.Fatalf("%s: SHOW WARNINGS: %v", tc.expr, err)
		}
		want := fmt.Sprintf("Result of %s() was larger than max_allowed_packet (%d) - truncated", tc.fn, maxPacket)
		if code != 1301 || msg != want {
			t.Fatalf("%s: warning %d %q, want 1301 %q", tc.expr, code, msg, want)
		}
		t.Logf("%s: %v", tc.expr, time.Since(start))
	}
	// Results within the limit are go-mysql-server's as before.
	var sp, rep, lp, rp string
	var n int64
	if err := c.QueryRowContext(ctx, "SELECT CONCAT('[', SPACE(3), ']'), REPEAT('ab', 3), LPAD('x', 4, 'yz'), RPAD('hello', 3, '-'), LENGTH(SPACE(1000000))").Scan(&sp, &rep, &lp, &rp, &n); err != nil {
		t.Fatal(err)
	}
	if sp != "[   ]" || rep != "ababab" || lp != "yzyx" || rp != "hel" || n != 1000000 {
		t.Fatalf("got %q %q %q %q %d", sp, rep, lp, rp, n)
	}
	// A smaller max_allowed_packet (of new sessions) lowers the limit.
	if _, err := db.Exec("SET GLOBAL max_allowed_packet = 1048576"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec(fmt.Sprintf("SET GLOBAL max_allowed_packet = %d", maxPacket))
	db2, err := sql.Open("mysql", s.DSN("d"))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var small sql.NullInt64
	if err := db2.QueryRow("SELECT LENGTH(SPACE(2000000))").Scan(&small); err != nil || small.Valid {
		t.Fatalf("SPACE(2000000) with a 1 MiB max_allowed_packet: %v %v", small, err)
	}
	var null sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT REPEAT(NULL, 3)").Scan(&null); err != nil || null.Valid {
		t.Fatalf("REPEAT(NULL, 3): %v %v", null, err)
	}
}

// TestMaxExecutionTime: the session variable and the optimizer hint stop
// a SELECT with 3024; other statements and a 0 limit are not affected.
func TestMaxExecutionTime(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	c := conn(t, db)
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err := c.ExecContext(ctx, "SELECT /*+ MAX_EXECUTION_TIME(300) */ SLEEP(10)")
	wantCode(t, "hint", err, 3024)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("hint: stopped after %v", d)
	}
	var me *mysql.MySQLError
	errors.As(err, &me)
	if me.Message != "Query execution was interrupted, maximum statement execution time exceeded" {
		t.Fatalf("message %q", me.Message)
	}

	if _, err := c.ExecContext(ctx, "SET SESSION max_execution_time = 300"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = c.ExecContext(ctx, "SELECT SLEEP(10)")
	wantCode(t, "session variable", err, 3024)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("session variable: stopped after %v", d)
	}
	// A statement go-mysql-server analyses for minutes without looking
	// at its context is answered in time too. (Its connection's next
	// command would wait for that analysis to end.)
	huge := conn(t, db)
	if _, err := huge.ExecContext(ctx, "SET SESSION max_execution_time = 500"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = huge.ExecContext(ctx, hugeUnion(400))
	wantCode(t, "huge UNION", err, 3024)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("huge UNION: stopped after %v", d)
	}
	// Not a SELECT: the limit does not apply.
	if _, err := c.ExecContext(ctx, "SET @x = SLEEP(0.5)"); err != nil {
		t.Fatalf("SET @x = SLEEP under max_execution_time: %v", err)
	}
	// The hint overrides the variable.
	if _, err := c.ExecContext(ctx, "SELECT /*+ MAX_EXECUTION_TIME(5000) */ SLEEP(0.5)"); err != nil {
		t.Fatalf("hint above the variable: %v", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION max_execution_time = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "SELECT SLEEP(0.5)"); err != nil {
		t.Fatalf("no limit: %v", err)
	}

	// The global value is the default of new sessions.
	if _, err := db.Exec("SET GLOBAL max_execution_time = 200"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("SET GLOBAL max_execution_time = 0")
	db2, err := sql.Open("mysql", s.DSN("d"))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c2 := conn(t, db2) // a new session
	_, err = c2.ExecContext(ctx, "SELECT SLEEP(10)")
	wantCode(t, "global variable", err, 3024)
	if _, err := c2.ExecContext(ctx, "INSERT INTO t VALUES (1, 1)"); err != nil {
		t.Fatalf("insert after a timed-out select: %v", err)
	}
}

// TestKillReleasesMetadataLock: a statement holding the metadata lock
// makes ALTER TABLE wait; KILL of its connection releases the lock and
// the ALTER completes. The same for a client that disconnects.
func TestKillReleasesMetadataLock(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1), (2, 2)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i, how := range []string{"KILL", "disconnect"} {
		var ch <-chan error
		var id int64
		var raw *rawConn
		q := hugeUnion(400) + " UNION SELECT v FROM t"
		if how == "KILL" {
			victim := conn(t, db)
			id = connID(t, victim)
			ch = queryErr(victim, q)
		} else {
			raw = dialRaw(t, s.Addr(), "d")
			id = int64(raw.id)
			raw.command(comQuery, []byte(q))
		}
		waitRunning(t, db, id)

		alter := make(chan error, 1)
		go func() {
			_, err := db.Exec(fmt.Sprintf("ALTER TABLE t ADD INDEX k%d (v)", i))
			alter <- err
		}()
		select {
		case err := <-alter:
			t.Fatalf("%s: ALTER did not wait for the lease: %v", how, err)
		case <-time.After(1500 * time.Millisecond):
		}

		switch how {
		case "KILL":
			if _, err := db.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatal(err)
			}
			if err := within(t, "killed statement", ch); err == nil {
				t.Fatal("killed statement succeeded")
			}
		case "disconnect":
			raw.c.Close()
		}
		if err := within(t, how+": ALTER", alter); err != nil {
			t.Fatalf("%s: ALTER: %v", how, err)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE v = 2").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: after ALTER: %d %v", how, n, err)
		}
	}
}

// TestDisconnectCancelsStatement: a client that goes away while its
// statement runs has the statement stopped and its transaction and
// metadata lock released.
func TestDisconnectCancelsStatement(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	raw := dialRaw(t, s.Addr(), "d")
	raw.command(comQuery, []byte("SELECT SLEEP(60) FROM t UNION ALL SELECT SLEEP(60)"))
	waitRunning(t, db, int64(raw.id))
	if n := s.Engine().ActiveTransactions(); n == 0 {
		t.Fatal("the running statement holds no transaction")
	}
	raw.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", raw.id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 && s.Engine().ActiveTransactions() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the disconnect: %d processes, %d transactions", n, s.Engine().ActiveTransactions())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := db.Exec("ALTER TABLE t ADD INDEX v (v)"); err != nil {
		t.Fatal(err)
	}
}

// TestKillQueryInTransaction: KILL QUERY ends the statement with 1317 but,
// as in MySQL, not the transaction around it.
func TestKillQueryInTransaction(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	c := conn(t, db)
	id := connID(t, c)
	ctx := context.Background()
	for _, q := range []string{"BEGIN", "INSERT INTO t VALUES (1, 1)"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	ch := queryErr(c, "SELECT SLEEP(60)")
	waitRunning(t, db, id)
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "killed SLEEP", within(t, "killed SLEEP", ch), 1317)
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after COMMIT: %d rows, %v", n, err)
	}
}

// TestKillPreparedExecution: KILL QUERY stops the execution of a
// prepared statement that go-mysql-server analyses for long.
func TestKillPreparedExecution(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	raw := dialRaw(t, s.Addr(), "d")
	id, n, perr := raw.prepare(hugeUnion(400))
	if perr != nil {
		t.Fatal(perr)
	}
	ch := make(chan *rawError, 1)
	go func() { ch <- raw.execute(id, n, nil, nil).err }()
	waitRunning(t, db, int64(raw.id))
	start := time.Now()
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", raw.id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ch:
		if err == nil || err.code != 1317 {
			t.Fatalf("killed execution: %v, want 1317", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("killed execution did not end within 5 s")
	}
	t.Logf("execution ended %v after KILL QUERY", time.Since(start))
}
