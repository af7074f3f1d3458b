package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// beginOn opens a transaction on a connection of its own.
func beginOn(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// execAsync runs q in tx in the background; the channel gets its error.
func execAsync(tx *sql.Tx, q string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := tx.Exec(q)
		ch <- err
	}()
	return ch
}

func stillWaiting(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s did not wait (err %v)", what, err)
	case <-time.After(200 * time.Millisecond):
	}
}

func doneWithin(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits", what)
	}
	return nil
}

// scanWithin scans the one row q (with args) returns in tx into dest,
// failing the test if it still waits when doneWithin gives up.
func scanWithin(t *testing.T, tx *sql.Tx, dest any, q string, args ...any) error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- tx.QueryRow(q, args...).Scan(dest) }()
	return doneWithin(t, got, q)
}

// TestForeignKeyChecksShareParent: transactions that insert children of
// one parent do not wait for each other (the parent row's lock is
// shared, as InnoDB's S lock), and a DELETE of the parent waits for them,
// then finds their children (1451).
func TestForeignKeyChecksShareParent(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE status (id INT PRIMARY KEY, name VARCHAR(10))")
	mustExec(t, db, "CREATE TABLE orders (id INT PRIMARY KEY, status_id INT, FOREIGN KEY (status_id) REFERENCES status (id))")
	mustExec(t, db, "INSERT INTO status VALUES (1, 'new'), (2, 'paid')")

	a, b := beginOn(t, db), beginOn(t, db)
	if _, err := a.Exec("INSERT INTO orders VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	// With an exclusive lock on status 1 this would wait for a's commit.
	if err := doneWithin(t, execAsync(b, "INSERT INTO orders VALUES (2, 1)"), "b's insert of another child of status 1"); err != nil {
		t.Fatal(err)
	}
	// a and b insert in opposite orders: no deadlock either.
	if _, err := b.Exec("INSERT INTO orders VALUES (3, 2)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("INSERT INTO orders VALUES (4, 2)"); err != nil {
		t.Fatal(err)
	}

	c := beginOn(t, db)
	del := execAsync(c, "DELETE FROM status WHERE id = 1")
	stillWaiting(t, del, "the parent's DELETE while children are being inserted")
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	stillWaiting(t, del, "the parent's DELETE while b still shares the parent")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	expectErr(t, doneWithin(t, del, "the parent's DELETE"), 1451, "a foreign key constraint fails")
	expectRows(t, db, "SELECT COUNT(*) FROM orders", "4")
	mustExec(t, db, "ADMIN CHECK TABLE orders")
}

// TestSelectForShare: FOR SHARE and LOCK IN SHARE MODE readers of a row
// do not wait for each other; a writer of the row waits for them all, and
// a reader waits for a writer.
func TestSelectForShare(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10)")
	a, b, c := beginOn(t, db), beginOn(t, db), beginOn(t, db)
	var v int
	if err := a.QueryRow("SELECT v FROM t WHERE id = 1 FOR SHARE").Scan(&v); err != nil || v != 10 {
		t.Fatalf("a: %v %d", err, v)
	}
	if err := scanWithin(t, b, &v, "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE"); err != nil {
		t.Fatalf("b's shared read beside a's: %v", err)
	}
	upd := execAsync(c, "UPDATE t SET v = 11 WHERE id = 1")
	stillWaiting(t, upd, "an UPDATE of a row two transactions share")
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	stillWaiting(t, upd, "an UPDATE of a row b still shares")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := doneWithin(t, upd, "the UPDATE"); err != nil {
		t.Fatal(err)
	}
	d := beginOn(t, db)
	got := make(chan error, 1)
	go func() { got <- d.QueryRow("SELECT v FROM t WHERE id = 1 FOR SHARE").Scan(&v) }()
	stillWaiting(t, got, "a shared read of a row being updated")
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := doneWithin(t, got, "the shared read"); err != nil || v != 11 {
		t.Fatalf("shared read after the UPDATE: %v %d", err, v)
	}
}

// TestSelectSkipLocked: the job-queue pattern of MySQL 8 applications.
// Workers that each take the first job no other worker holds get
// different jobs at once instead of waiting for each other.
func TestSelectSkipLocked(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(8)
	// The lookup of state = 'ready' returns the rows by id, so LIMIT 1
	// locks the row it returns only (a plan that sorts would lock every
	// row it sorts, in InnoDB too).
	mustExec(t, db, "CREATE TABLE jobs (id INT PRIMARY KEY, state VARCHAR(10), KEY (state))")
	mustExec(t, db, "INSERT INTO jobs VALUES (1, 'ready'), (2, 'ready'), (3, 'ready')")
	seen := map[int]bool{}
	var txs []*sql.Tx
	for w := 0; w < 3; w++ {
		tx := beginOn(t, db)
		txs = append(txs, tx)
		var id int
		if err := scanWithin(t, tx, &id, "SELECT id FROM jobs WHERE state = 'ready' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"); err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
		if seen[id] {
			t.Fatalf("worker %d got job %d, which another worker holds", w, id)
		}
		seen[id] = true
	}
	// Every job is held: a fourth worker finds none, without waiting.
	tx := beginOn(t, db)
	if err := tx.QueryRow("SELECT id FROM jobs WHERE state = 'ready' FOR UPDATE SKIP LOCKED").Scan(new(int)); err != sql.ErrNoRows {
		t.Fatalf("a fourth worker: %v, want no rows", err)
	}
	// The primary-key path skips too, and an unlocked job is taken.
	if _, err := txs[0].Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	var id int
	if err := tx.QueryRow("SELECT id FROM jobs WHERE id IN (1, 2, 3) ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED").Scan(&id); err != nil || !seen[id] {
		t.Fatalf("after one worker let go: %v, id %d", err, id)
	}
}

// TestSelectNowait: FOR UPDATE NOWAIT and FOR SHARE NOWAIT fail at once
// with 3572 on a row another transaction holds in a conflicting mode,
// leaving the transaction usable; FOR SHARE SKIP LOCKED passes over rows
// held exclusively but reads rows others share.
func TestSelectNowait(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(12)
	mustExec(t, db, "CREATE TABLE jobs (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO jobs VALUES (1, 10), (2, 20), (3, 30)")
	query := func(tx *sql.Tx, q string, args ...any) (int, error) {
		t.Helper()
		var v int
		err := scanWithin(t, tx, &v, q, args...)
		return v, err
	}
	refused := func(tx *sql.Tx, q string, args ...any) {
		t.Helper()
		if _, err := query(tx, q, args...); errCode(err) != 3572 {
			t.Fatalf("%s: %v, want 3572", q, err)
		}
	}
	holder := beginOn(t, db)
	if _, err := query(holder, "SELECT v FROM jobs WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	b := beginOn(t, db)
	refused(b, "SELECT v FROM jobs WHERE id = 1 FOR UPDATE NOWAIT")
	refused(b, "SELECT v FROM jobs WHERE id = ? FOR UPDATE NOWAIT", 1) // prepared
	refused(b, "SELECT v FROM jobs WHERE id = 1 FOR SHARE NOWAIT")
	// The refusal ends the statement only.
	if v, err := query(b, "SELECT v FROM jobs WHERE id = 2 FOR UPDATE NOWAIT"); err != nil || v != 20 {
		t.Fatalf("another row in the same transaction: %d, %v", v, err)
	}
	if _, err := holder.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// Sharers do not refuse each other; a writer is refused by them.
	for range 2 {
		if v, err := query(beginOn(t, db), "SELECT v FROM jobs WHERE id = 1 FOR SHARE NOWAIT"); err != nil || v != 10 {
			t.Fatalf("a second sharer: %d, %v", v, err)
		}
	}
	refused(beginOn(t, db), "SELECT v FROM jobs WHERE id = 1 FOR UPDATE NOWAIT")
	// Row 1 is shared, row 2 held by b, row 3 free.
	rows, err := beginOn(t, db).Query("SELECT id FROM jobs ORDER BY id FOR SHARE SKIP LOCKED")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || fmt.Sprint(ids) != "[1 3]" {
		t.Fatalf("FOR SHARE SKIP LOCKED: %v, %v; want [1 3]", ids, rows.Err())
	}
}

// TestForeignKeySharedLocksRandom: transactions insert and re-parent
// children while others delete and re-create their parents, in random
// orders, with deadlocks and refusals retried or skipped. However they
// interleave, no child is left without its parent.
func TestForeignKeySharedLocksRandom(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	db.SetMaxOpenConns(12)
	mustExec(t, db, "CREATE TABLE parent (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))")
	mustExec(t, db, "INSERT INTO parent VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
	var wg sync.WaitGroup
	var commits atomic.Int64
	errs := make(chan error, 8)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				tx, err := db.Begin()
				if err != nil {
					errs <- err
					return
				}
				ok := true
				for j := 0; j < 3 && ok; j++ {
					p := 1 + (w*7+i*3+j)%4
					var q string
					switch (w + i*2 + j) % 6 {
					case 0, 1:
						q = fmt.Sprintf("INSERT INTO child VALUES (%d, %d)", w*10000+i*10+j, p)
					case 2:
						q = fmt.Sprintf("UPDATE child SET pid = %d WHERE id %% 7 = %d", p, (i+j)%7)
					case 3:
						q = fmt.Sprintf("DELETE FROM child WHERE pid = %d", p)
					case 4:
						q = fmt.Sprintf("DELETE FROM parent WHERE id = %d", p)
					case 5:
						q = fmt.Sprintf("INSERT IGNORE INTO parent VALUES (%d, %d)", p, i)
					}
					if _, err := tx.Exec(q); err != nil {
						switch errCode(err) {
						case 1451, 1452, 1062:
							// refused as MySQL refuses it: the transaction goes on
						case 1213, 1205:
							ok = false // rolled back (deadlock) or to be rolled back
						default:
							errs <- fmt.Errorf("%s: %v", q, err)
							_ = tx.Rollback()
							return
						}
					}
				}
				if ok && tx.Commit() == nil {
					commits.Add(1)
				} else {
					_ = tx.Rollback()
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	expectRows(t, db, "SELECT COUNT(*) FROM child c LEFT JOIN parent p ON c.pid = p.id WHERE p.id IS NULL", "0")
	mustExec(t, db, "ADMIN CHECK TABLE child")
	mustExec(t, db, "ADMIN CHECK TABLE parent")
	if commits.Load() == 0 {
		t.Fatal("no transaction committed")
	}
	t.Logf("%d of 900 transactions committed", commits.Load())
}

// TestForUpdateOf: FOR UPDATE OF locks the rows read of the tables it
// names (by name or alias) and only those; a writer of another table's
// row goes on.
func TestForUpdateOf(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, w INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1), (2, 2)")
	mustExec(t, db, "INSERT INTO u VALUES (1, 10), (2, 20)")
	for _, c := range []struct{ q, locked, free string }{
		{"SELECT * FROM t JOIN u ON t.id = u.id WHERE t.id = 1 FOR UPDATE OF t", "UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE u SET w = w + 1 WHERE id = 1"},
		{"SELECT * FROM t AS a JOIN u AS b ON a.id = b.id WHERE a.id = 2 FOR UPDATE OF b NOWAIT", "UPDATE u SET w = w + 1 WHERE id = 2", "UPDATE t SET v = v + 1 WHERE id = 2"},
		{"SELECT * FROM t JOIN u ON t.id = u.id WHERE t.id = 1 FOR SHARE OF u", "UPDATE u SET w = w + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 1"},
	} {
		holder := beginOn(t, db)
		if _, err := holder.Exec(c.q); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		other := beginOn(t, db)
		if err := doneWithin(t, execAsync(other, c.free), c.free); err != nil {
			t.Fatalf("%s, after %s: %v", c.free, c.q, err)
		}
		waiter := execAsync(other, c.locked)
		stillWaiting(t, waiter, c.locked+" after "+c.q)
		if err := holder.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := doneWithin(t, waiter, c.locked); err != nil {
			t.Fatalf("%s: %v", c.locked, err)
		}
		if err := other.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.Exec("SELECT * FROM t AS a FOR UPDATE OF t")
	expectErr(t, err, 3568, "Unresolved name 't' for FOR UPDATE clause")
	_, err = db.Exec("SELECT * FROM t FOR SHARE OF nosuch SKIP LOCKED")
	expectErr(t, err, 3568, "Unresolved name 'nosuch' for FOR SHARE clause")
}
