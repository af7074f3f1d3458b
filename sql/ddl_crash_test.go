package sql_test

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestCrashDuringMergeUnderWriters SIGKILLs the server while an ingest
// build of a plain and a UNIQUE index merges its change logs, with writers
// swapping unique values, deleting and re-inserting rows and setting
// NULLs. After the restart the job must finish with indexes that match
// the table exactly, and every acknowledged write must be there.
// REORGDB_CRASH_TRIALS sets the number of trials (default 2).
func TestCrashDuringMergeUnderWriters(t *testing.T) {
	n := 2
	if v, err := strconv.Atoi(os.Getenv("REORGDB_CRASH_TRIALS")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < n; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) { crashDuringMerge(t, int64(i)) })
	}
}

const mergeCrashRows = 20000

func crashDuringMerge(t *testing.T, seed int64) {
	dir := t.TempDir()
	child, dsn := startChild(t, dir, "nullable")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "SET GLOBAL innodb_ddl_buffer_size = 65536")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = 'merge'")
	go db.Exec("ALTER TABLE t ADD INDEX a_idx (a), ADD UNIQUE INDEX c_u (c)")

	// The writers start with the build and go on while it merges.
	ws := newRowWriters(db, 4, seed)
	ws.start(t)
	waitJob(t, db, func(x jobRow) bool { return strings.Contains(x.comment, "stalled=merge") }, "stalled at merge")
	time.Sleep(time.Duration(300+rand.New(rand.NewSource(seed)).Intn(1200)) * time.Millisecond)
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''") // the merge runs under the writers
	time.Sleep(time.Duration(rand.New(rand.NewSource(seed+1)).Intn(30)) * time.Millisecond)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	ws.stop()
	db.Close()

	s := servertest.StartDir(t, dir)
	db2 := s.DB("app")
	j := waitJob(t, db2, func(x jobRow) bool { return x.state == "synced" || x.state == "rollback done" }, "finished")
	if j.state != "synced" {
		t.Fatalf("job ended %q: %s", j.state, j.errText)
	}
	expectIndexes(t, db2, "t", "PRIMARY", "a_idx", "c_u")
	if _, err := db2.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatalf("ADMIN CHECK TABLE after %d acknowledged writes: %v", ws.acked(), err)
	}
	ws.verify(t, db2)
	t.Logf("%d acknowledged writes, %d rows checked", ws.acked(), len(ws.want))
}

// startChild runs TestCrashChildServer in a child process and returns it
// with its DSN.
func startChild(t *testing.T, dir, schema string) (*exec.Cmd, string) {
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChildServer$")
	child.Env = append(os.Environ(), "REORGDB_CRASH_CHILD_DIR="+dir, "REORGDB_CRASH_CHILD_SCHEMA="+schema)
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "DSN "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return child, v
		}
	}
	t.Fatal("child did not start")
	return nil, ""
}

// loadNullable creates t with a nullable, unique-able c ('v<id>').
func loadNullable(t *testing.T, db *sql.DB, n int) {
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, c VARCHAR(20) NULL)")
	var b strings.Builder
	for i := 0; i < n; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'v%d')", i, i%1000, i)
		if (i+1)%5000 == 0 || i == n-1 {
			mustExec(t, db, "INSERT INTO t VALUES "+b.String())
			b.Reset()
		}
	}
}

// rowWriters run random transactions on disjoint sets of rows (writer w
// owns the ids with id % n == w) and remember what each acknowledged
// commit left, so that a crash's survivors can be checked.
type rowWriters struct {
	db   *sql.DB
	n    int
	seed int64
	wg   sync.WaitGroup
	quit chan struct{}

	mu   sync.Mutex
	want map[int]*string // id -> c after the last acknowledged commit (nil: NULL); missing row: absent key with gone[id]
	gone map[int]bool
	// maybe holds, per writer, the rows of the transaction in flight,
	// with their values should it have committed.
	maybe map[int]map[int]rowState
	count int
}

type rowState struct {
	c    *string
	gone bool
}

func newRowWriters(db *sql.DB, n int, seed int64) *rowWriters {
	return &rowWriters{db: db, n: n, seed: seed, quit: make(chan struct{}),
		want: map[int]*string{}, gone: map[int]bool{}, maybe: map[int]map[int]rowState{}}
}

func (ws *rowWriters) start(t *testing.T) {
	for w := 0; w < ws.n; w++ {
		ws.wg.Add(1)
		go ws.run(t, w)
	}
}

func (ws *rowWriters) stop() {
	close(ws.quit)
	ws.wg.Wait()
}

func (ws *rowWriters) acked() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.count
}

func strp(s string) *string { return &s }

// current returns what writer-owned row id holds now, as this writer
// knows it.
func (ws *rowWriters) current(id int) rowState {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.gone[id] {
		return rowState{gone: true}
	}
	if c, ok := ws.want[id]; ok {
		return rowState{c: c}
	}
	return rowState{c: strp(fmt.Sprintf("v%d", id))}
}

func (ws *rowWriters) run(t *testing.T, w int) {
	defer ws.wg.Done()
	rnd := rand.New(rand.NewSource(ws.seed*100 + int64(w)))
	pick := func() int { return rnd.Intn(mergeCrashRows/ws.n)*ws.n + w }
	seq := 0
	for {
		select {
		case <-ws.quit:
			return
		default:
		}
		a, b := pick(), pick()
		if a == b {
			continue
		}
		sa, sb := ws.current(a), ws.current(b)
		after := map[int]rowState{}
		var stmts []string
		switch op := rnd.Intn(4); {
		case op == 0 && !sa.gone && !sb.gone:
			// Exchange the two rows' values through a third one.
			stmts = []string{
				fmt.Sprintf("UPDATE t SET c = 'tmp-%d' WHERE id = %d", w, a),
				fmt.Sprintf("UPDATE t SET c = %s WHERE id = %d", sqlStr(sa.c), b),
				fmt.Sprintf("UPDATE t SET c = %s WHERE id = %d", sqlStr(sb.c), a),
			}
			after[a], after[b] = rowState{c: sb.c}, rowState{c: sa.c}
		case op == 1 && !sa.gone:
			stmts = []string{fmt.Sprintf("DELETE FROM t WHERE id = %d", a)}
			after[a] = rowState{gone: true}
		case op == 1 && sa.gone:
			seq++
			c := fmt.Sprintf("r%d-%d", w, seq)
			stmts = []string{fmt.Sprintf("INSERT INTO t VALUES (%d, %d, '%s')", a, rnd.Intn(1000), c)}
			after[a] = rowState{c: strp(c)}
		case op == 2 && !sa.gone:
			stmts = []string{fmt.Sprintf("UPDATE t SET c = NULL, a = a + 1 WHERE id = %d", a)}
			after[a] = rowState{}
		case op == 3 && !sa.gone && !sb.gone:
			// Delete a row and give its value to a re-inserted one.
			stmts = []string{
				fmt.Sprintf("DELETE FROM t WHERE id = %d", b),
				fmt.Sprintf("UPDATE t SET c = %s WHERE id = %d", sqlStr(sb.c), a),
			}
			if sa.c != nil {
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, 7, %s)", b, sqlStr(sa.c)))
				after[b] = rowState{c: sa.c}
			} else {
				after[b] = rowState{gone: true}
			}
			after[a] = rowState{c: sb.c}
		default:
			continue
		}
		ws.mu.Lock()
		ws.maybe[w] = after
		ws.mu.Unlock()
		err := execTxn(ws.db, stmts)
		ws.mu.Lock()
		if err == nil {
			for id, st := range after {
				ws.gone[id] = st.gone
				if !st.gone {
					ws.want[id] = st.c
				}
			}
			ws.count++
			delete(ws.maybe, w)
		}
		ws.mu.Unlock()
		var me *mysql.MySQLError
		switch {
		case err == nil:
		case errors.As(err, &me) && me.Number == 1213:
			ws.mu.Lock()
			delete(ws.maybe, w)
			ws.mu.Unlock()
		case errors.As(err, &me):
			t.Errorf("writer %d: %v (%q)", w, err, stmts)
			return
		default:
			return // the server is gone; the transaction may or may not have committed
		}
	}
}

func sqlStr(s *string) string {
	if s == nil {
		return "NULL"
	}
	return "'" + *s + "'"
}

func execTxn(db *sql.DB, stmts []string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// verify checks every row a writer changed against its last acknowledged
// state, or the state of the transaction in flight at the crash.
func (ws *rowWriters) verify(t *testing.T, db *sql.DB) {
	got := map[int]rowState{}
	rows, err := db.Query("SELECT id, c FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		var c sql.NullString
		if err := rows.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		st := rowState{}
		if c.Valid {
			st.c = strp(c.String)
		}
		got[id] = st
	}
	rows.Close()
	same := func(a, b rowState) bool {
		return a.gone == b.gone && (a.c == nil) == (b.c == nil) && (a.c == nil || *a.c == *b.c)
	}
	for id := 0; id < mergeCrashRows; id++ {
		g, ok := got[id]
		if !ok {
			g = rowState{gone: true}
		}
		w := ws.current(id)
		if same(g, w) {
			continue
		}
		if m, ok := ws.maybe[id%ws.n][id]; ok && same(g, m) {
			continue
		}
		t.Errorf("row %d: got %+v (c=%s), want %+v (c=%s)", id, g, sqlStr(g.c), w, sqlStr(w.c))
	}
}
