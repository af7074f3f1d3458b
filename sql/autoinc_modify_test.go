package sql_test

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestModifyAddsAutoIncrement loads a table the way phpMyAdmin exports
// one (WordPress's wp_posts): no keys in CREATE TABLE, then ADD PRIMARY
// KEY, then MODIFY ... AUTO_INCREMENT with the table's AUTO_INCREMENT=.
func TestModifyAddsAutoIncrement(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("wp")
	mustExec(t, db, "CREATE TABLE wp_posts (ID bigint(20) UNSIGNED NOT NULL, post_title text NOT NULL, post_name varchar(200) NOT NULL DEFAULT '') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci")
	mustExec(t, db, "INSERT INTO wp_posts (ID, post_title, post_name) VALUES (1, 'Hello world!', 'hello-world'), (2, 'Sample Page', 'sample-page')")
	mustExec(t, db, "ALTER TABLE wp_posts ADD PRIMARY KEY (ID), ADD KEY post_name (post_name(191))")
	mustExec(t, db, "ALTER TABLE wp_posts MODIFY ID bigint(20) UNSIGNED NOT NULL AUTO_INCREMENT, AUTO_INCREMENT=3")
	mustExec(t, db, "INSERT INTO wp_posts (post_title) VALUES ('third')")
	expectRows(t, db, "SELECT ID FROM wp_posts WHERE post_title = 'third'", "3")
	expectRows(t, db, "SELECT ID FROM wp_posts WHERE post_name = 'HELLO-WORLD'", "1")
	mustExec(t, db, "ADMIN CHECK TABLE wp_posts")

	// Without a table option the counter starts above the largest value.
	mustExec(t, db, "CREATE TABLE x (id INT PRIMARY KEY, v VARCHAR(5), k INT, KEY (k), n INT)")
	mustExec(t, db, "INSERT INTO x VALUES (5, 'a', 1, 1), (100, 'b', 2, 2)")
	mustExec(t, db, "ALTER TABLE x MODIFY id INT NOT NULL AUTO_INCREMENT")
	mustExec(t, db, "INSERT INTO x (v) VALUES ('c')")
	expectRows(t, db, "SELECT id FROM x WHERE v = 'c'", "101")

	// MySQL's refusals: one auto column, and it must be a key's first.
	_, err := db.Exec("ALTER TABLE x MODIFY k INT AUTO_INCREMENT")
	expectErr(t, err, 1075, "there can be only one auto column")
	_, err = db.Exec("ALTER TABLE x MODIFY n INT AUTO_INCREMENT")
	expectErr(t, err, 1075, "must be defined as a key")

	// Taking AUTO_INCREMENT away leaves the values and the key.
	mustExec(t, db, "ALTER TABLE x MODIFY id INT NOT NULL")
	_, err = db.Exec("INSERT INTO x (v) VALUES ('d')")
	expectErr(t, err, 1364, "Field 'id' doesn't have a default value")
	expectRows(t, db, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'x' AND auto_increment IS NULL", "1")
	// ... and it can be given again.
	mustExec(t, db, "ALTER TABLE x MODIFY id INT NOT NULL AUTO_INCREMENT")
	mustExec(t, db, "INSERT INTO x (v) VALUES ('e')")
	expectRows(t, db, "SELECT COUNT(*) FROM x WHERE v = 'e' AND id > 101", "1")

	// A row holding 0 would be renumbered by MySQL: refused, table as it was.
	mustExec(t, db, "CREATE TABLE z (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO z VALUES (0, 1), (7, 2)")
	_, err = db.Exec("ALTER TABLE z MODIFY id INT NOT NULL AUTO_INCREMENT")
	expectErr(t, err, 1235, "holds 0 or NULL")
	_, err = db.Exec("INSERT INTO z (v) VALUES (3)")
	expectErr(t, err, 1364, "")
}

// TestModifyAddsAutoIncrementUnderInserts: rows inserted with explicit
// IDs while the change runs, through its wait for older transactions, are
// never handed out again as generated IDs.
func TestModifyAddsAutoIncrementUnderInserts(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, who VARCHAR(10))")
	var next atomic.Int64
	next.Store(1000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.Exec("INSERT INTO t VALUES (?, 'explicit')", next.Add(1)); err != nil {
					t.Errorf("explicit insert: %v", err)
					return
				}
			}
		}()
	}
	for next.Load() < 1200 {
	}
	mustExec(t, db, "ALTER TABLE t MODIFY id BIGINT NOT NULL AUTO_INCREMENT")
	// Explicit and generated IDs from concurrent sessions may collide in
	// MySQL too: the explicit writers stop before IDs are generated.
	close(stop)
	wg.Wait()
	for i := 0; i < 200; i++ {
		if _, err := db.Exec("INSERT INTO t (who) VALUES ('generated')"); err != nil {
			t.Fatalf("generated insert %d: %v", i, err)
		}
	}
	var explicit, generated, minGen int64
	if err := db.QueryRow("SELECT SUM(who = 'explicit'), SUM(who = 'generated'), MIN(CASE WHEN who = 'generated' THEN id END) FROM t").Scan(&explicit, &generated, &minGen); err != nil {
		t.Fatal(err)
	}
	if generated != 200 || explicit < 200 || minGen <= 1200 {
		t.Fatalf("%d explicit and %d generated rows, first generated ID %d", explicit, generated, minGen)
	}
	mustExec(t, db, "ADMIN CHECK TABLE t")
	t.Logf("%d explicit rows raced the change", explicit)
}

// TestModifyAddsAutoIncrementAfterOlderTransaction: a transaction that
// began before the change inserts an explicit ID and commits while the
// change waits for it; the first generated ID is above it.
func TestModifyAddsAutoIncrementAfterOlderTransaction(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, who VARCHAR(10))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'first')")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t VALUES (5000, 'older')"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec("ALTER TABLE t MODIFY id BIGINT NOT NULL AUTO_INCREMENT")
		done <- err
	}()
	// The change has published its version and waits for tx.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(rows(t, db, "SHOW CREATE TABLE t"), ""), "AUTO_INCREMENT") {
		if time.Now().After(deadline) {
			t.Fatal("the change was not published")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the change ended (%v) before the older transaction did", err)
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO t (who) VALUES ('generated')")
	expectRows(t, db, "SELECT id FROM t WHERE who = 'generated'", "5001")
}

// TestModifyAutoIncrementNullable: MODIFY ... AUTO_INCREMENT of a nullable
// column makes it NOT NULL, as MySQL does; a NULL or 0 in it is refused
// (MySQL would renumber it) and the table stays as it was.
func TestModifyAutoIncrementNullable(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE a (x INT DEFAULT NULL, y INT, KEY (x))")
	mustExec(t, db, "INSERT INTO a VALUES (3, 1), (5, 2)")
	mustExec(t, db, "ALTER TABLE a MODIFY x INT AUTO_INCREMENT")
	mustExec(t, db, "INSERT INTO a (y) VALUES (3)")
	expectRows(t, db, "SELECT x FROM a WHERE y = 3", "6")
	expectRows(t, db, "SELECT is_nullable, extra FROM information_schema.columns WHERE table_name = 'a' AND column_name = 'x'", "NO,auto_increment")
	mustExec(t, db, "ADMIN CHECK TABLE a")
	// CHANGE renames the column as it goes.
	mustExec(t, db, "CREATE TABLE c (x INT, y INT, KEY (x))")
	mustExec(t, db, "INSERT INTO c VALUES (4, 1)")
	mustExec(t, db, "ALTER TABLE c CHANGE x z INT AUTO_INCREMENT FIRST")
	mustExec(t, db, "INSERT INTO c (y) VALUES (2)")
	expectRows(t, db, "SELECT z FROM c WHERE y = 2", "5")

	for _, bad := range []string{"NULL", "0"} {
		mustExec(t, db, "DROP TABLE IF EXISTS b")
		mustExec(t, db, "CREATE TABLE b (x INT, y INT, KEY (x))")
		mustExec(t, db, "INSERT INTO b VALUES ("+bad+", 1), (5, 2)")
		_, err := db.Exec("ALTER TABLE b MODIFY x INT AUTO_INCREMENT")
		expectErr(t, err, 1235, "holds 0 or NULL")
		expectRows(t, db, "SELECT is_nullable, extra FROM information_schema.columns WHERE table_name = 'b' AND column_name = 'x'", "YES,")
		mustExec(t, db, "INSERT INTO b VALUES (NULL, 3)")
	}
}

// TestColumnExtra: SHOW COLUMNS and information_schema.columns show EXTRA
// as MySQL does, which ORMs read to find the generated key.
func TestColumnExtra(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, g INT AS (v + 1) VIRTUAL, st INT AS (v + 2) STORED, ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP)")
	expectRows(t, db, "SELECT column_name, extra FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position",
		"id,auto_increment", "v,", "g,VIRTUAL GENERATED", "st,STORED GENERATED", "ts,DEFAULT_GENERATED")
	var got []string
	for _, r := range rows(t, db, "SHOW COLUMNS FROM t") {
		f := strings.Split(r, ",")
		got = append(got, f[0]+","+f[len(f)-1])
	}
	if want := []string{"id,auto_increment", "v,", "g,VIRTUAL GENERATED", "st,STORED GENERATED", "ts,DEFAULT_GENERATED"}; !slices.Equal(got, want) {
		t.Fatalf("SHOW COLUMNS: got %q, want %q", got, want)
	}
}
