package server_test

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func wantErr(t *testing.T, what string, r rawResult, code uint16, msg string) {
	t.Helper()
	if r.err == nil {
		t.Errorf("%s: no error, want %d", what, code)
		return
	}
	if r.err.code != code || msg != "" && r.err.msg != msg {
		t.Errorf("%s: got %v, want %d %q", what, r.err, code, msg)
	}
}

// TestFormerPanics: statements and commands that used to panic inside
// the server now get MySQL's error or the right result.
func TestFormerPanics(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	rc := dialRaw(t, s.Addr(), "d")
	rc.mustQuery("CREATE TABLE t (id int primary key, v varchar(5))")

	rc.mustQuery("START TRANSACTION READ ONLY")
	for _, q := range []string{"INSERT INTO t VALUES (1, 'a')", "UPDATE t SET v = 'b'", "DELETE FROM t", "REPLACE INTO t VALUES (1, 'a')"} {
		wantErr(t, q, rc.query(q), 1792, "Cannot execute statement in a READ ONLY transaction.")
	}
	rc.mustQuery("SELECT * FROM t")
	rc.mustQuery("COMMIT")
	rc.mustQuery("INSERT INTO t VALUES (1, 'a')")

	for _, q := range []string{"SELECT @@", "SELECT @@session.", "SELECT 1, @@global.", "SET @@ = 1"} {
		r := rc.query(q)
		wantErr(t, q, r, 1064, "")
		if r.err != nil && !strings.HasPrefix(r.err.msg, "You have an error in your SQL syntax") {
			t.Errorf("%s: %v", q, r.err)
		}
	}
	// Not fooled by quotes and comments.
	rc.mustQuery("SELECT '@@', `v` FROM t /* @@ */")
	rc.mustQuery("SELECT @@autocommit, @@session.autocommit")

	// 65,535 placeholders: MySQL's maximum, where vitess's NULL-bitmap
	// size overflows 16 bits.
	q := "SELECT ?" + strings.Repeat(",?", 65534)
	id, n, perr := rc.prepare(q)
	if perr != nil {
		t.Fatal(perr)
	}
	if n != 65535 {
		t.Fatalf("%d parameters", n)
	}
	if r := rc.execute(id, n, nil, nil); r.err != nil || len(r.rows) != 1 || r.cols != 65535 {
		t.Fatalf("execute with 65535 NULLs: err %v, %d rows, %d columns", r.err, len(r.rows), r.cols)
	}
	// Typed values: parameter i is the integer i as LONGLONG, except the
	// last, a string.
	types := make([]byte, 0, 2*n)
	var vals []byte
	for i := 0; i < n-1; i++ {
		types = append(types, 8, 0)
		vals = binary.LittleEndian.AppendUint64(vals, uint64(i))
	}
	types = append(types, 0xfd, 0)
	vals = append(vals, 3, 'e', 'n', 'd')
	if r := rc.execute(id, n, types, vals); r.err != nil || len(r.rows) != 1 {
		t.Fatalf("execute with 65535 values: %+v", r.err)
	}
	// One more than MySQL allows is refused at prepare time (vitess
	// counted placeholders in 16 bits and announced 0 parameters).
	if _, _, perr := rc.prepare(q + ",?"); perr == nil || perr.code != 1390 {
		t.Fatalf("prepare with 65536 placeholders: %v", perr)
	}
	rc.mustQuery("SELECT 1")
	// A truncated packet is refused, and the connection lives on.
	rc.seq = 0
	rc.command(0x17, binary.LittleEndian.AppendUint32(nil, id))
	wantErr(t, "truncated COM_STMT_EXECUTE", rc.readBinaryResult(), 1835, "")
	rc.mustQuery("SELECT 1")

	// Long data for a parameter a statement does not have: MySQL ignores
	// the packet and fails the next execution with 1210.
	id, n, perr = rc.prepare("SELECT ? FROM t")
	if perr != nil {
		t.Fatal(perr)
	}
	long := binary.LittleEndian.AppendUint32(nil, id)
	long = binary.LittleEndian.AppendUint16(long, 65000)
	rc.command(0x18, append(long, "data"...))
	wantErr(t, "execute after long data for parameter 65000", rc.execute(id, n, nil, nil), 1210, "Incorrect arguments to mysqld_stmt_send_long_data")
	if r := rc.execute(id, n, nil, nil); r.err != nil || len(r.rows) != 1 {
		t.Fatalf("second execute: %+v", r)
	}
	// ... and long data for a statement that does not exist changes nothing.
	rc.command(0x18, []byte{99, 0, 0, 0, 0, 0, 'x'})
	rc.mustQuery("SELECT 1")
	// A syntax error in COM_STMT_PREPARE is MySQL's 1064, an empty one 1065.
	if _, _, perr := rc.prepare("SELEC ?"); perr == nil || perr.code != 1064 || perr.msg != "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC ?' at line 1" {
		t.Errorf("prepare SELEC ?: %v", perr)
	}
	if _, _, perr := rc.prepare(""); perr == nil || perr.code != 1065 {
		t.Errorf("prepare of nothing: %v", perr)
	}
	rc.mustQuery("SELECT 1")
	// Unknown statements get 1243, and the connection lives on.
	rc.command(0x17, []byte{0xe7, 3, 0, 0, 0, 1, 0, 0, 0})
	wantErr(t, "COM_STMT_EXECUTE of statement 999", rc.readBinaryResult(), 1243, "Unknown prepared statement handler (999) given to mysqld_stmt_execute")
	rc.command(0x1a, []byte{0xe7, 3, 0, 0})
	wantErr(t, "COM_STMT_RESET of statement 999", rc.readResult(), 1243, "Unknown prepared statement handler (999) given to mysqld_stmt_reset")
	rc.command(0x1a, binary.LittleEndian.AppendUint32(nil, id))
	if r := rc.readResult(); r.err != nil {
		t.Fatalf("COM_STMT_RESET of statement %d: %v", id, r.err)
	}
	rc.mustQuery("SELECT 1")
	// Long data for a parameter that exists still works.
	id, n, perr = rc.prepare("SELECT ?")
	if perr != nil {
		t.Fatal(perr)
	}
	long = binary.LittleEndian.AppendUint32(nil, id)
	long = binary.LittleEndian.AppendUint16(long, 0)
	rc.command(0x18, append(long, "chunk"...))
	if r := rc.execute(id, n, []byte{0xfc, 0}, nil); r.err != nil || len(r.rows) != 1 {
		t.Fatalf("execute with long data: %+v", r)
	}
}

// TestPreparedManyCols is go-sql-driver/mysql's test of the same name,
// run against ReorgDB: 65,535 placeholders bound to NULLs, then to empty
// strings.
func TestPreparedManyCols(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	const numParams = 65535
	stmt, err := db.Prepare("SELECT ?" + strings.Repeat(",?", numParams-1))
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	params := make([]any, numParams)
	rows, err := stmt.Query(params...)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if len(cols) != numParams || !rows.Next() {
		t.Fatalf("%d columns, rows.Next false: %v", len(cols), rows.Err())
	}
	rows.Close()
	for i := range params {
		params[i] = ""
	}
	rows, err = stmt.Query(params...)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, numParams)
	ptrs := make([]any, numParams)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	if b, ok := vals[numParams-1].([]byte); !ok || len(b) != 0 {
		t.Fatalf("last column %#v, want an empty string", vals[numParams-1])
	}
	rows.Close()
}

// TestKill: KILL and COM_PROCESS_KILL end the connection named, and an
// unknown id gets 1094.
func TestKill(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	rc := dialRaw(t, s.Addr(), "d")
	victim := dialRaw(t, s.Addr(), "d")
	victim.mustQuery("SELECT 1")

	wantErr(t, "KILL 999999", rc.query("KILL 999999"), 1094, "Unknown thread id: 999999")
	wantErr(t, "KILL QUERY 999999", rc.query("KILL QUERY 999999"), 1094, "Unknown thread id: 999999")
	rc.command(0x0c, binary.LittleEndian.AppendUint32(nil, 999999))
	wantErr(t, "COM_PROCESS_KILL 999999", rc.readResult(), 1094, "Unknown thread id: 999999")

	rc.command(0x0c, binary.LittleEndian.AppendUint32(nil, victim.id))
	if r := rc.readResult(); r.err != nil {
		t.Fatalf("COM_PROCESS_KILL %d: %v", victim.id, r.err)
	}
	victim.c.SetDeadline(time.Now().Add(5 * time.Second))
	victim.seq = 0
	victim.writePacket(append([]byte{0x03}, "SELECT 1"...))
	var hdr [4]byte
	if _, err := ioReadFull(victim.r, hdr[:]); err == nil {
		// An error packet is fine; a result is not.
		p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
		ioReadFull(victim.r, p)
		if p[0] != 0xff {
			t.Fatalf("killed connection answered %x", p)
		}
	}
	rc.mustQuery("SELECT 1")

	// go-sql-driver sees the same error.
	db := s.DB("d")
	_, err := db.Exec("KILL 424242")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1094 {
		t.Fatalf("KILL 424242 through the driver: %v", err)
	}
	var _ *sql.DB = db
}

// TestCreateUser: CREATE USER used to panic (go-mysql-server had nowhere
// to persist accounts); accounts now work and survive a restart.
func TestCreateUser(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("d")
	if _, err := db.Exec("CREATE USER 'app'@'%' IDENTIFIED BY 'secret'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("GRANT SELECT ON d.* TO 'app'@'%'"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec("CREATE USER 'app'@'%' IDENTIFIED BY 'secret'")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1396 {
		t.Fatalf("second CREATE USER: %v", err)
	}
	login := func(s *servertest.Server, pass string) error {
		c, err := sql.Open("mysql", "app:"+pass+"@tcp("+s.Addr()+")/d")
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Ping()
	}
	if err := login(s, "secret"); err != nil {
		t.Fatalf("login as app: %v", err)
	}
	if err := login(s, "wrong"); err == nil {
		t.Fatal("login with a wrong password succeeded")
	}
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartDir(t, dir)
	if err := login(s2, "secret"); err != nil {
		t.Fatalf("login as app after restart: %v", err)
	}
	if err := s2.DB("").Ping(); err != nil {
		t.Fatalf("root after restart: %v", err)
	}
}

// TestCursorStatus: a prepared statement executed with a read-only cursor
// answers with the cursor flags vitess sets and the session's own.
func TestCursorStatus(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	rc := dialRaw(t, s.Addr(), "d")
	rc.mustQuery("CREATE TABLE t (id int primary key)")
	rc.mustQuery("INSERT INTO t VALUES (1), (2), (3)")
	id, _, perr := rc.prepare("SELECT id FROM t")
	if perr != nil {
		t.Fatal(perr)
	}
	for _, inTxn := range []bool{false, true} {
		want := uint16(statusAutocommit)
		if inTxn {
			rc.mustQuery("BEGIN")
			want |= statusInTrans
		}
		b := binary.LittleEndian.AppendUint32(nil, id)
		b = append(b, 1) // CURSOR_TYPE_READ_ONLY
		b = binary.LittleEndian.AppendUint32(b, 1)
		rc.command(0x17, b)
		p := rc.readPacket()
		if p[0] == 0xff {
			t.Fatalf("execute: %v", rc.errOf(p))
		}
		rc.readPacket() // the column
		eof := rc.readPacket()
		if st := binary.LittleEndian.Uint16(eof[3:]); st&0x40 == 0 || st&sessionMask != want {
			t.Errorf("cursor opened (txn %v): status %#04x, want cursor-exists and %#04x", inTxn, st, want)
		}
		fetch := binary.LittleEndian.AppendUint32(nil, id)
		fetch = binary.LittleEndian.AppendUint32(fetch, 100)
		rc.command(0x1c, fetch)
		rows := 0
		for {
			p := rc.readPacket()
			if p[0] == 0xfe && len(p) < 9 {
				if st := binary.LittleEndian.Uint16(p[3:]); st&0x80 == 0 || st&sessionMask != want {
					t.Errorf("fetch (txn %v): status %#04x, want last-row-sent and %#04x", inTxn, st, want)
				}
				break
			}
			rows++
		}
		if rows != 3 {
			t.Errorf("fetched %d rows", rows)
		}
		if inTxn {
			if r := rc.mustQuery("COMMIT"); r.status != statusAutocommit {
				t.Errorf("COMMIT: status %#04x", r.status)
			}
		}
	}
}

const sessionMask = statusInTrans | statusAutocommit | statusNoBackslash | statusInTransRO

// TestMultiStatementPrecheck: with CLIENT_MULTI_STATEMENTS, the checks
// apply to each statement of a multi-statement query.
func TestMultiStatementPrecheck(t *testing.T) {
	s := servertest.Start(t)
	s.DB("d")
	db, err := sql.Open("mysql", s.DSN("d")+"&multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols, parts []string
	for i := 0; i < 17; i++ {
		cols = append(cols, fmt.Sprintf("c%d int", i))
		parts = append(parts, fmt.Sprintf("c%d", i))
	}
	_, err = db.Exec("CREATE TABLE w (" + strings.Join(cols, ", ") + ", KEY k (" + strings.Join(parts, ", ") + ")); SELECT 1")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1070 {
		t.Fatalf("multi-statement CREATE TABLE with a 17-part key: %v", err)
	}
	if _, err := db.Exec("SELECT 1; KILL 98765"); !errors.As(err, &me) || me.Number != 1094 {
		t.Fatalf("KILL as the second statement: %v", err)
	}
}
