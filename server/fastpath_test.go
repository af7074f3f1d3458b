package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// result is what a client sees of one execution.
type result struct {
	Cols []string
	Rows [][]any
	Err  string
}

func (r result) String() string { return fmt.Sprintf("cols=%v rows=%v err=%q", r.Cols, r.Rows, r.Err) }

func collect(rows *sql.Rows, err error) result {
	if err != nil {
		return result{Err: err.Error()}
	}
	defer rows.Close()
	var r result
	cts, err := rows.ColumnTypes()
	if err != nil {
		return result{Err: err.Error()}
	}
	for _, ct := range cts {
		n, _ := ct.Nullable()
		l, _ := ct.Length()
		p, s, _ := ct.DecimalSize()
		r.Cols = append(r.Cols, fmt.Sprintf("%s:%s:null=%v:len=%d:dec=%d,%d", ct.Name(), ct.DatabaseTypeName(), n, l, p, s))
	}
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return result{Err: err.Error()}
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = nil
			} else {
				row[i] = string(v)
			}
		}
		r.Rows = append(r.Rows, row)
	}
	if err := rows.Err(); err != nil {
		r.Err = err.Error()
	}
	return r
}

// both runs a prepared statement with the fast path on and then off and
// fails unless the client sees the same; it returns the result and
// whether the fast path served the first execution.
func both(t *testing.T, s *servertest.Server, st *sql.Stmt, args ...any) (result, bool) {
	t.Helper()
	h0 := s.FastPathHits()
	fast := collect(st.Query(args...))
	hit := s.FastPathHits() > h0
	s.SetFastPath(false)
	slow := collect(st.Query(args...))
	s.SetFastPath(true)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("args %v: fast path (hit=%v) %v\nslow path %v", args, hit, fast, slow)
	}
	return fast, hit
}

func TestFastPathPointSelect(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("fp")
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE t (id INT PRIMARY KEY, c CHAR(20) NOT NULL, k INT, n VARCHAR(10), d DECIMAL(10,2), ts DATETIME, u INT UNSIGNED, KEY k_idx (k))`,
		`INSERT INTO t VALUES (1, 'one', 10, 'x', 1.50, '2024-01-02 03:04:05', 7), (2, 'two', 20, NULL, NULL, NULL, NULL), (-3, 'minus three', 30, '', 0, '2000-01-01 00:00:00', 0)`,
		`CREATE TABLE h (a VARCHAR(10) PRIMARY KEY, b INT)`,
		`INSERT INTO h VALUES ('1', 1)`,
		`CREATE TABLE big (id BIGINT UNSIGNED PRIMARY KEY, v INT)`,
		`INSERT INTO big VALUES (5, 5)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type tc struct {
		q    string
		args []any
		hit  bool // the fast path must serve it
		rows int
	}
	cases := []tc{
		{"SELECT c FROM t WHERE id=?", []any{1}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{int64(2)}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{-3}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{4}, true, 0},
		{"SELECT c FROM t WHERE id=?", []any{nil}, true, 0},
		{"SELECT c FROM t WHERE id=?", []any{"2"}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{"002"}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{"-3"}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{[]byte("1")}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{uint64(1)}, true, 1},
		{"SELECT c FROM t WHERE id=?", []any{uint64(1 << 63)}, true, 0},
		{"SELECT c FROM t WHERE id=?", []any{int64(1 << 40)}, true, 0},
		{"SELECT c FROM t WHERE id=?", []any{"1.0"}, false, 1},
		{"SELECT c FROM t WHERE id=?", []any{" 1"}, false, 1},
		{"SELECT c FROM t WHERE id=?", []any{"abc"}, false, -1}, // an error, as from go-mysql-server
		{"SELECT c FROM t WHERE id=?", []any{1.0}, false, 1},
		{"SELECT c FROM t WHERE id=?", []any{1.5}, false, 0},
		{"SELECT c FROM t WHERE id=?", []any{true}, true, 1},
		{"SELECT * FROM t WHERE id = ?", []any{1}, true, 1},
		{"SELECT * FROM t WHERE id = ?", []any{2}, true, 1},
		{"SELECT n, d, ts, u, c FROM t WHERE ? = id", []any{1}, true, 1},
		{"SELECT n, d, ts, u, c FROM t WHERE ? = id", []any{2}, true, 1},
		{"select T.C from T where T.ID = ?", []any{1}, true, 1},
		{"SELECT c FROM fp.t WHERE fp.t.id = ?", []any{1}, true, 1},
		{"SELECT id, k FROM t WHERE id = ?", []any{-3}, true, 1},
		// not the shape: served by go-mysql-server
		{"SELECT c FROM t WHERE k = ?", []any{10}, false, 1},
		{"SELECT c AS x FROM t WHERE id = ?", []any{1}, false, 1},
		{"SELECT c, c FROM t WHERE id = ?", []any{1}, false, 1},
		{"SELECT c FROM t WHERE id = ? LIMIT 0", []any{1}, false, 0},
		{"SELECT c FROM t WHERE id = ? FOR UPDATE", []any{1}, false, 1},
		{"SELECT c FROM t x WHERE x.id = ?", []any{1}, false, 1},
		{"SELECT c FROM t WHERE id = ? + 0", []any{1}, false, 1},
		{"SELECT b FROM h WHERE a = ?", []any{"1"}, false, 1},
		{"SELECT v FROM big WHERE id = ?", []any{5}, false, 1},
		{"SELECT nope FROM t WHERE id = ?", []any{1}, false, -2},
	}
	for _, c := range cases {
		st, err := db.Prepare(c.q)
		if err != nil {
			if c.rows == -2 {
				continue
			}
			t.Fatalf("prepare %s: %v", c.q, err)
		}
		r, hit := both(t, s, st, c.args...)
		if hit != c.hit {
			t.Errorf("%s %v: fast path served=%v, want %v", c.q, c.args, hit, c.hit)
		}
		if c.rows >= 0 && (r.Err != "" || len(r.Rows) != c.rows) {
			t.Errorf("%s %v: %v, want %d rows", c.q, c.args, r, c.rows)
		}
		st.Close()
	}
}

// TestFastPathSchemaAndSessions: the fast path follows schema changes,
// the current database, sql_select_limit, transactions and privileges.
func TestFastPathSchemaAndSessions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("fp")
	other := s.DB("fp2")
	for _, q := range []string{
		`CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))`,
		`INSERT INTO t VALUES (1, 'fp'), (2, 'two')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Exec(`CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`INSERT INTO t VALUES (1, 'fp2')`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	star, err := conn.PrepareContext(ctx, "SELECT * FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	one, err := conn.PrepareContext(ctx, "SELECT c FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	want := func(st *sql.Stmt, wantHit bool, wantRows ...[]any) {
		t.Helper()
		r, hit := both(t, s, st, 1)
		if hit != wantHit || r.Err != "" || !reflect.DeepEqual(r.Rows, wantRows) {
			t.Fatalf("got %v hit=%v, want rows %v hit=%v", r, hit, wantRows, wantHit)
		}
	}
	want(star, true, []any{"1", "fp"})
	want(one, true, []any{"fp"})

	// A new index: the statement follows the new table definition.
	if _, err := db.Exec("ALTER TABLE t ADD INDEX c_idx (c)"); err != nil {
		t.Fatal(err)
	}
	want(one, true, []any{"fp"})
	want(star, true, []any{"1", "fp"})
	// The table recreated with other columns: SELECT * describes the new
	// ones; a table whose key is no longer the integer handle goes to
	// go-mysql-server.
	for _, q := range []string{"DROP TABLE t", "CREATE TABLE t (id BIGINT PRIMARY KEY, z DECIMAL(5,1), c TEXT)", "INSERT INTO t VALUES (1, 2.5, 'fp'), (2, NULL, 'two')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	want(star, true, []any{"1", "2.5", "fp"})
	want(one, true, []any{"fp"})
	for _, q := range []string{"DROP TABLE t", "CREATE TABLE t (id VARCHAR(5) PRIMARY KEY, c TEXT)", "INSERT INTO t VALUES ('1', 'fp'), ('2', 'two')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	want(star, false, []any{"1", "fp"})
	want(one, false, []any{"fp"})
	for _, q := range []string{"DROP TABLE t", "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))", "INSERT INTO t VALUES (1, 'fp'), (2, 'two')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	want(one, true, []any{"fp"})

	// The current database decides which table an unqualified name means.
	if _, err := conn.ExecContext(ctx, "USE fp2"); err != nil {
		t.Fatal(err)
	}
	r, _ := both(t, s, one, 1)
	if len(r.Rows) != 1 || r.Rows[0][0] != "fp2" {
		t.Fatalf("after USE fp2: %v", r)
	}
	if _, err := conn.ExecContext(ctx, "USE fp"); err != nil {
		t.Fatal(err)
	}

	// sql_select_limit applies to the statement: the slow path.
	if _, err := conn.ExecContext(ctx, "SET sql_select_limit = 0"); err != nil {
		t.Fatal(err)
	}
	if r, hit := both(t, s, one, 1); hit || len(r.Rows) != 0 {
		t.Fatalf("sql_select_limit=0: %v hit=%v", r, hit)
	}
	if _, err := conn.ExecContext(ctx, "SET sql_select_limit = DEFAULT"); err != nil {
		t.Fatal(err)
	}

	// Inside a transaction the statement reads the transaction's snapshot
	// and its own writes.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	want(one, true, []any{"fp"})
	if _, err := db.Exec("UPDATE t SET c = 'committed' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	want(one, true, []any{"fp"}) // snapshot
	if _, err := conn.ExecContext(ctx, "UPDATE t SET c = 'mine' WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if r, hit := both(t, s, one, 2); !hit || !reflect.DeepEqual(r.Rows, [][]any{{"mine"}}) {
		t.Fatalf("own write: %v hit=%v", r, hit)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	want(one, true, []any{"committed"})
	if r, _ := both(t, s, one, 2); !reflect.DeepEqual(r.Rows, [][]any{{"two"}}) {
		t.Fatalf("after rollback: %v", r)
	}

	// No transaction is left open by the fast path (the pool's other
	// connections are idle).
	if got := s.Engine().ActiveTransactions(); got != 0 {
		t.Fatalf("%d transactions left open", got)
	}
	// A dropped table gives the slow path's error.
	if _, err := db.Exec("DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	if r, hit := both(t, s, one, 1); hit || !strings.Contains(r.Err, "doesn't exist") {
		t.Fatalf("dropped table: %v hit=%v", r, hit)
	}
}

// TestFastPathPrivileges: a user without SELECT on the table is refused
// as on the slow path.
func TestFastPathPrivileges(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("fp")
	for _, q := range []string{
		`CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))`,
		`CREATE TABLE u (id INT PRIMARY KEY, c VARCHAR(20))`,
		`INSERT INTO t VALUES (1, 'x')`,
		`CREATE USER 'low'@'%' IDENTIFIED BY 'pw'`,
		`GRANT SELECT ON fp.u TO 'low'@'%'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Skipf("%s: %v", q, err)
		}
	}
	low, err := sql.Open("mysql", strings.Replace(s.DSN("fp"), "root:", "low:pw", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer low.Close()
	st, err := low.Prepare("SELECT c FROM u WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if r, hit := both(t, s, st, 1); !hit || r.Err != "" {
		t.Fatalf("granted table: %v hit=%v", r, hit)
	}
	st2, err := low.Prepare("SELECT c FROM t WHERE id = ?")
	if err != nil {
		return // refused at PREPARE already
	}
	if r, hit := both(t, s, st2, 1); hit || r.Err == "" {
		t.Fatalf("table without grant: %v hit=%v", r, hit)
	}
}

// TestFastPathConcurrentAddIndex: point selects through the fast path
// stay correct while an index is added and while rows change.
func TestFastPathConcurrentAddIndex(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("fp")
	if _, err := db.Exec(`CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20))`); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'c%d')", i, i*2, i)
	}
	if _, err := db.Exec("INSERT INTO t VALUES " + b.String()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st, err := db.Prepare("SELECT k, c FROM t WHERE id = ?")
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := i%(n+10) + 1
				var k int
				var c string
				err := st.QueryRow(id).Scan(&k, &c)
				switch {
				case id > n && err == sql.ErrNoRows:
				case id <= n && err == nil && k == id*2 && c == fmt.Sprintf("c%d", id):
				default:
					bad.Add(1)
					t.Errorf("id %d: k=%d c=%q err=%v", id, k, c, err)
				}
				reads.Add(1)
			}
		}(w)
	}
	time.Sleep(200 * time.Millisecond)
	h0 := s.FastPathHits()
	if _, err := db.Exec("ALTER TABLE t ADD INDEX k_idx (k)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE t ADD UNIQUE INDEX c_idx (c)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d wrong reads of %d", bad.Load(), reads.Load())
	}
	if s.FastPathHits() == h0 {
		t.Fatal("the fast path served nothing during the index builds")
	}
	if err := s.Engine().CheckTable("fp", "t"); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads, %d by the fast path", reads.Load(), s.FastPathHits())
}

// TestFastPathRanges: sysbench's range selects (without SUM), compared
// with go-mysql-server's answers, with collation ties, NULLs and results
// longer than one batch.
func TestFastPathRanges(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("fp")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), b VARCHAR(20) COLLATE utf8mb4_bin, u TINYINT UNSIGNED, n BIGINT, big BIGINT UNSIGNED, KEY k_idx (k))`); err != nil {
		t.Fatal(err)
	}
	vals := []string{"a", "A", "b", "a ", "B", "", "ä", "c"}
	var sb strings.Builder
	for i := 1; i <= 400; i++ {
		if sb.Len() > 0 {
			sb.WriteString(",")
		}
		c := "'" + vals[(i*7)%len(vals)] + "'"
		if i%13 == 0 {
			c = "NULL"
		}
		n := fmt.Sprint(int64(i) << 50)
		if i%11 == 0 {
			n = "NULL"
		}
		fmt.Fprintf(&sb, "(%d, %d, %s, %s, %d, %s, %d)", i*2-100, i%5, c, c, i%256, n, uint64(i)<<60)
	}
	if _, err := db.Exec("INSERT INTO t VALUES " + sb.String()); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		q   string
		hit bool
	}
	queries := []tc{
		{"SELECT c FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", true},
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", true},
		{"SELECT DISTINCT b FROM t WHERE id BETWEEN ? AND ? ORDER BY b", true},
		{"SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT id, c FROM t WHERE id BETWEEN ? AND ? ORDER BY c DESC", true},
		{"SELECT id, b FROM t WHERE id BETWEEN ? AND ? ORDER BY b desc", true},
		{"SELECT * FROM t WHERE id BETWEEN ? AND ? ORDER BY k", true},
		{"SELECT DISTINCT k, c FROM t WHERE t.id BETWEEN ? AND ? ORDER BY t.k", true},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", true},
		{"select sum( K ) from t where id between ? and ?", true},
		{"SELECT SUM(id) FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT SUM(u) FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT SUM(n) FROM t WHERE id BETWEEN ? AND ?", true},
		{"SELECT SUM(big) FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT SUM(c) FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT SUM(DISTINCT k) FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT SUM(k) AS s FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT SUM(k), c FROM t WHERE id BETWEEN ? AND ?", false},
		{"SELECT SUM(k) FROM t WHERE id IN (?, ?)", false},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY k", false},
		{"SELECT c FROM t WHERE id NOT BETWEEN ? AND ?", false},
		{"SELECT c FROM t WHERE k BETWEEN ? AND ?", false},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c, id", false},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ? LIMIT 5", false},
	}
	ranges := []struct {
		lo, hi any
		hit    bool
	}{
		{1, 100, true}, {-98, -98, true}, {-1000, 5000, true}, {10, 3, true}, {nil, 10, true}, {10, nil, true},
		{"1", "50", true}, {int64(-1 << 62), uint64(1 << 63), true}, {uint64(1 << 63), 5, true},
		{"1.5", 20, false}, {1, 20.5, false},
	}
	for _, q := range queries {
		st, err := db.Prepare(q.q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q.q, err)
		}
		for _, r := range ranges {
			res, hit := both(t, s, st, r.lo, r.hi)
			if want := q.hit && r.hit; hit != want {
				t.Errorf("%s [%v, %v]: fast path served=%v, want %v", q.q, r.lo, r.hi, hit, want)
			}
			if res.Err != "" {
				t.Errorf("%s [%v, %v]: %s", q.q, r.lo, r.hi, res.Err)
			}
		}
		st.Close()
	}
	// A range inside a transaction sees its own writes.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t VALUES (-99, 1, 'new', 'new', 1, 1, 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM t WHERE id = -98"); err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare("SELECT id, c FROM t WHERE id BETWEEN ? AND ? ORDER BY c")
	if err != nil {
		t.Fatal(err)
	}
	res, hit := both(t, s, st, -100, -90)
	if !hit || len(res.Rows) != 5 || res.Rows[4][0] != "-99" {
		t.Fatalf("in transaction: %v hit=%v", res, hit)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}
