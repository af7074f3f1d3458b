package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestModifyPrimaryKeyColumnOnline: a type change of a column of a
// primary key that is not the rows' integer handle (a composite or
// non-integer key, a unique index over a hidden handle) rewrites the
// column and rebuilds the key online, as for any indexed column, while
// writers insert, update and delete through the key. The key then has
// the new type, enforces uniqueness over the new values, serves lookups,
// and survives a restart.
func TestModifyPrimaryKeyColumnOnline(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, v INT, PRIMARY KEY (a, b), KEY kb (b))")
	const n = 2000
	model := map[[2]int]int{}
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d,%d,%d)", i%4, i, i)
		model[[2]int{i % 4, i}] = i
	}
	mustExec(t, db, "INSERT INTO t VALUES "+sb.String())
	mustExec(t, db, "SET GLOBAL tidb_ddl_reorg_batch_size = 32")
	mustExec(t, db, "SET GLOBAL reorgdb_ddl_reorg_batch_delay_ms = 2")

	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Writer w owns the keys (w, b): no ordering between writers.
				k := [2]int{w, r.Intn(n+400)/4*4 + w}
				v := r.Intn(1_000_000)
				var err error
				op := r.Intn(3)
				switch op {
				case 0:
					_, err = db.Exec("REPLACE INTO t VALUES (?, ?, ?)", k[0], k[1], v)
				case 1:
					_, err = db.Exec("UPDATE t SET v = ? WHERE a = ? AND b = ?", v, k[0], k[1])
				default:
					_, err = db.Exec("DELETE FROM t WHERE a = ? AND b = ?", k[0], k[1])
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				mu.Lock()
				_, ok := model[k]
				switch {
				case op == 0, op == 1 && ok:
					model[k] = v
				case op == 2:
					delete(model, k)
				}
				mu.Unlock()
			}
		}()
	}
	_, err := db.Exec("ALTER TABLE t MODIFY b VARCHAR(12) NOT NULL")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		create := showCreate(t, db, "t")
		if !strings.Contains(create, "`b` varchar(12) NOT NULL") || !strings.Contains(create, "PRIMARY KEY (`a`,`b`)") {
			t.Fatalf("after the change:\n%s", create)
		}
		got := rows(t, db, "SELECT a, b, v FROM t ORDER BY a, b")
		var want []string
		for k, v := range model {
			want = append(want, fmt.Sprintf("%d,%d,%d", k[0], k[1], v))
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		have := map[string]bool{}
		for _, r := range got {
			have[r] = true
		}
		for _, r := range want {
			if !have[r] {
				t.Errorf("row %s missing", r)
			}
		}
		mustExec(t, db, "ADMIN CHECK TABLE t")
		expectRows(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_name = 't' AND index_name = 'PRIMARY'", "2")
	}
	check()
	// The key is the new column's: a string key, unique, found by lookups.
	mustExec(t, db, "INSERT INTO t VALUES (9, 'x1', 1)")
	if _, err := db.Exec("INSERT INTO t VALUES (9, 'x1', 2)"); errCode(err) != 1062 || !strings.Contains(err.Error(), "t.PRIMARY") {
		t.Fatalf("duplicate key: %v", err)
	}
	expectRows(t, db, "SELECT v FROM t WHERE a = 9 AND b = 'x1'", "1")
	mustExec(t, db, "DELETE FROM t WHERE a = 9")
	s.Close()
	s = servertest.StartDir(t, dir)
	db = s.DB("app")
	check()
}

// TestModifyPrimaryKeyColumnDuplicate: a type change under which two rows'
// keys become equal fails with 1062 and leaves the table as it was.
func TestModifyPrimaryKeyColumnDuplicate(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (d DECIMAL(5,2) PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1.20, 1), (1.40, 2), (3.00, 3)")
	refusedUnchanged(t, db, "t", "ALTER TABLE t MODIFY d INT", 1062, "23000", "for key 't.PRIMARY'")
	expectRows(t, db, "SELECT d, v FROM t ORDER BY d", "1.20,1", "1.40,2", "3.00,3")
	mustExec(t, db, "ADMIN CHECK TABLE t")
	mustExec(t, db, "ALTER TABLE t MODIFY d DECIMAL(6,3)")
	expectRows(t, db, "SELECT d FROM t WHERE d = 1.4", "1.400")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}

// TestDropPrimaryKeyColumn: DROP COLUMN of a column of a primary key that
// is not the rows' integer handle does what MySQL does: a composite key is
// rebuilt over its other columns (1062 if they are not unique, the table
// as it was), and the only column of a non-integer key takes the key with
// it. The clustered integer key's column is refused.
func TestDropPrimaryKeyColumn(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE c (id INT, k INT, v INT, PRIMARY KEY (id, k), KEY kv (k, v))")
	mustExec(t, db, "INSERT INTO c VALUES (1, 1, 1), (1, 2, 2), (2, 1, 3)")
	refusedUnchanged(t, db, "c", "ALTER TABLE c DROP COLUMN k", 1062, "23000", "for key 'c.PRIMARY'")
	mustExec(t, db, "ADMIN CHECK TABLE c")

	mustExec(t, db, "DELETE FROM c WHERE k = 2")
	mustExec(t, db, "ALTER TABLE c DROP COLUMN k")
	if got := showCreate(t, db, "c"); !strings.Contains(got, "PRIMARY KEY (`id`)") || strings.Contains(got, "`k`") {
		t.Fatalf("after DROP COLUMN k:\n%s", got)
	}
	if _, err := db.Exec("INSERT INTO c VALUES (1, 5)"); errCode(err) != 1062 {
		t.Fatalf("duplicate id: %v", err)
	}
	expectRows(t, db, "SELECT id, v FROM c ORDER BY id", "1,1", "2,3")
	mustExec(t, db, "ADMIN CHECK TABLE c")

	mustExec(t, db, "CREATE TABLE b (id VARCHAR(10) PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO b VALUES ('x', 1), ('y', 2)")
	mustExec(t, db, "ALTER TABLE b DROP COLUMN id")
	if got := showCreate(t, db, "b"); strings.Contains(got, "PRIMARY") {
		t.Fatalf("after DROP COLUMN id:\n%s", got)
	}
	mustExec(t, db, "INSERT INTO b VALUES (1)")
	expectRows(t, db, "SELECT v FROM b ORDER BY v", "1", "1", "2")
	mustExec(t, db, "ADMIN CHECK TABLE b")

	mustExec(t, db, "CREATE TABLE h (id INT PRIMARY KEY, v INT)")
	if _, err := db.Exec("ALTER TABLE h DROP COLUMN id"); errCode(err) != 1235 {
		t.Fatalf("drop of the clustered key's column: %v", err)
	}
}

// TestModifyClusteredKeyColumn: the column of a clustered integer primary
// key, by which the rows are keyed, changes to another integer type
// online: the values are checked (1264 if one does not fit, the table as
// it was) and the rows keep their keys. AUTO_INCREMENT goes on from where
// it was; a non-integer type is refused.
func TestModifyClusteredKeyColumn(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE a (id BIGINT PRIMARY KEY AUTO_INCREMENT, v INT, KEY kvi (v, id))")
	mustExec(t, db, "INSERT INTO a (v) VALUES (1), (2), (3)")
	mustExec(t, db, "INSERT INTO a VALUES (100000, 4)")
	refusedUnchanged(t, db, "a", "ALTER TABLE a MODIFY id SMALLINT AUTO_INCREMENT", 1264, "22003", "Out of range value for column 'id' at row 4")
	_, err := db.Exec("ALTER TABLE a MODIFY id VARCHAR(10) AUTO_INCREMENT")
	if errCode(err) == 0 {
		t.Fatal("a clustered key became a string")
	}
	mustExec(t, db, "ALTER TABLE a MODIFY id INT UNSIGNED AUTO_INCREMENT")
	if got := showCreate(t, db, "a"); !strings.Contains(got, "`id` int unsigned NOT NULL AUTO_INCREMENT") || !strings.Contains(got, "PRIMARY KEY (`id`)") {
		t.Fatalf("after the change:\n%s", got)
	}
	mustExec(t, db, "INSERT INTO a (v) VALUES (5)")
	expectRows(t, db, "SELECT id, v FROM a ORDER BY id", "1,1", "2,2", "3,3", "100000,4", "100001,5")
	expectRows(t, db, "SELECT v FROM a WHERE id = 100001", "5")
	expectRows(t, db, "SELECT id FROM a FORCE INDEX (kvi) WHERE v = 4", "100000")
	_, err = db.Exec("INSERT INTO a VALUES (-1, 6)")
	expectErr(t, err, 1264, "")
	mustExec(t, db, "ADMIN CHECK TABLE a")
	s.Close()
	db = servertest.StartDir(t, dir).DB("app")
	expectRows(t, db, "SELECT v FROM a WHERE id = 3", "3")
	mustExec(t, db, "ADMIN CHECK TABLE a")
}

// TestModifyClusteredKeyColumnCrash: the change of the clustered key's
// type, killed mid-backfill and at its swap under a writer, resumes after
// the restart and keeps every acknowledged write.
func TestModifyClusteredKeyColumnCrash(t *testing.T) {
	for _, at := range []string{"backfill", "swap"} {
		t.Run(at, func(t *testing.T) {
			s, w := crashAlter(t, at, "ALTER TABLE t MODIFY id INT UNSIGNED")
			db := s.DB("app")
			if got := showCreate(t, db, "t"); !strings.Contains(got, "`id` int unsigned NOT NULL") {
				t.Fatalf("id not converted:\n%s", got)
			}
			w.check(t, db)
			mustExec(t, db, "ADMIN CHECK TABLE t")
			expectRows(t, db, "SELECT COUNT(*) FROM t WHERE id BETWEEN 100 AND 199", "100")
		})
	}
}
