package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func mustExec(t *testing.T, c *sql.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// execErr runs q on c in the background; the channel gets its error.
func execErr(c *sql.Conn, q string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := c.ExecContext(context.Background(), q)
		ch <- err
	}()
	return ch
}

// blocked asserts that a statement started on ch is still waiting.
func blocked(t *testing.T, what string, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s did not wait for the lock: %v", what, err)
	case <-time.After(300 * time.Millisecond):
	}
}

func value(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var v int
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func lockingServer(t *testing.T) (*servertest.Server, *sql.DB) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, u INT, KEY (v), UNIQUE KEY (u))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (1, 0, 1), (2, 0, 2), (3, 0, 3)"); err != nil {
		t.Fatal(err)
	}
	return s, db
}

// An UPDATE of a row another transaction has updated waits for it and
// then applies to the row as that transaction left it: no lost update,
// no error.
func TestUpdateWaitsForRowLock(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	mustExec(t, a, "BEGIN", "UPDATE t SET v = v + 1 WHERE id = 1")
	ch := execErr(b, "UPDATE t SET v = v + 10 WHERE id = 1")
	blocked(t, "the second UPDATE", ch)
	mustExec(t, a, "COMMIT")
	if err := within(t, "the second UPDATE", ch); err != nil {
		t.Fatal(err)
	}
	if v := value(t, db, "SELECT v FROM t WHERE id = 1"); v != 11 {
		t.Fatalf("v = %d after +1 and +10, want 11", v)
	}
	// Through a secondary index: the row is read as it is now.
	mustExec(t, a, "BEGIN", "UPDATE t SET v = 20 WHERE id = 2")
	ch = execErr(b, "UPDATE t SET v = v + 1 WHERE v = 0")
	blocked(t, "UPDATE by index", ch)
	mustExec(t, a, "COMMIT")
	if err := within(t, "UPDATE by index", ch); err != nil {
		t.Fatal(err)
	}
	if v := value(t, db, "SELECT v FROM t WHERE id = 2"); v != 20 {
		t.Fatalf("row 2 no longer matched v = 0 but was updated: v = %d", v)
	}
	if v := value(t, db, "SELECT v FROM t WHERE id = 3"); v != 1 {
		t.Fatalf("row 3: v = %d, want 1", v)
	}
	checkTable(t, db)
}

// SELECT ... FOR UPDATE locks what it reads and reads the newest version;
// a plain SELECT in the same transaction keeps its snapshot.
func TestSelectForUpdate(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	ctx := context.Background()
	mustExec(t, a, "BEGIN")
	var v int
	if err := a.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE t SET v = 5 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if err := a.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1 FOR UPDATE").Scan(&v); err != nil || v != 5 {
		t.Fatalf("FOR UPDATE read %d, %v; want the committed 5", v, err)
	}
	if err := a.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 0 {
		t.Fatalf("snapshot read %d, %v; want 0 (REPEATABLE READ)", v, err)
	}
	ch := execErr(b, "UPDATE t SET v = 6 WHERE id = 1")
	blocked(t, "UPDATE of a row locked FOR UPDATE", ch)
	mustExec(t, a, "COMMIT")
	if err := within(t, "UPDATE", ch); err != nil {
		t.Fatal(err)
	}
}

// innodb_lock_wait_timeout ends a wait with 1205 and rolls back only the
// statement; the transaction goes on.
func TestLockWaitTimeout(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	mustExec(t, a, "BEGIN", "UPDATE t SET v = 1 WHERE id = 1")
	mustExec(t, b, "SET innodb_lock_wait_timeout = 1", "BEGIN", "UPDATE t SET v = 2 WHERE id = 2")
	start := time.Now()
	_, err := b.ExecContext(context.Background(), "UPDATE t SET v = 2 WHERE id = 1")
	wantCode(t, "UPDATE of a locked row", err, 1205)
	if d := time.Since(start); d < 900*time.Millisecond || d > 5*time.Second {
		t.Fatalf("the wait lasted %v, want about 1 s", d)
	}
	mustExec(t, b, "COMMIT")
	mustExec(t, a, "COMMIT")
	if v := value(t, db, "SELECT v FROM t WHERE id = 2"); v != 2 {
		t.Fatalf("row 2: v = %d, the transaction's earlier statement was lost", v)
	}
	if v := value(t, db, "SELECT v FROM t WHERE id = 1"); v != 1 {
		t.Fatalf("row 1: v = %d, want a's 1", v)
	}
}

// Two transactions waiting for each other: one gets 1213 at once and is
// rolled back whole; the other goes on.
func TestDeadlockVictim(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	mustExec(t, a, "BEGIN", "UPDATE t SET v = 1 WHERE id = 1")
	mustExec(t, b, "BEGIN", "UPDATE t SET v = 2 WHERE id = 2")
	ch := execErr(a, "UPDATE t SET v = 1 WHERE id = 2")
	blocked(t, "a's UPDATE", ch)
	_, err := b.ExecContext(context.Background(), "UPDATE t SET v = 2 WHERE id = 1")
	wantCode(t, "the UPDATE closing the cycle", err, 1213)
	if err := within(t, "a's UPDATE", ch); err != nil {
		t.Fatal(err)
	}
	mustExec(t, a, "COMMIT")
	// b's transaction is gone: its first UPDATE was rolled back, and its
	// next statement runs on its own.
	mustExec(t, b, "UPDATE t SET v = 3 WHERE id = 3", "ROLLBACK")
	for id, want := range map[int]int{1: 1, 2: 1, 3: 3} {
		if v := value(t, db, "SELECT v FROM t WHERE id = "+string(rune('0'+id))); v != want {
			t.Fatalf("row %d: v = %d, want %d", id, v, want)
		}
	}
}

// A unique key being inserted by an open transaction: a second insert of
// it waits, then fails with 1062 if the first commits and succeeds if it
// rolls back.
func TestUniqueInsertWaits(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	mustExec(t, a, "BEGIN", "INSERT INTO t VALUES (10, 0, 100)")
	ch := execErr(b, "INSERT INTO t VALUES (11, 0, 100)")
	blocked(t, "the second insert", ch)
	mustExec(t, a, "COMMIT")
	wantCode(t, "the second insert", within(t, "insert", ch), 1062)

	mustExec(t, a, "BEGIN", "INSERT INTO t VALUES (12, 0, 200)")
	ch = execErr(b, "INSERT INTO t VALUES (13, 0, 200)")
	blocked(t, "the insert", ch)
	mustExec(t, a, "ROLLBACK")
	if err := within(t, "insert", ch); err != nil {
		t.Fatal(err)
	}
	// The same primary key.
	mustExec(t, a, "BEGIN", "INSERT INTO t VALUES (20, 0, NULL)")
	ch = execErr(b, "INSERT INTO t VALUES (20, 1, NULL)")
	blocked(t, "insert of the same id", ch)
	mustExec(t, a, "COMMIT")
	wantCode(t, "insert of the same id", within(t, "insert", ch), 1062)
	checkTable(t, db)
}

// READ COMMITTED reads each statement's own snapshot.
func TestReadCommitted(t *testing.T) {
	_, db := lockingServer(t)
	a := conn(t, db)
	ctx := context.Background()
	read := func() int {
		var v int
		if err := a.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	mustExec(t, a, "SET SESSION transaction_isolation = 'READ-COMMITTED'", "BEGIN")
	read()
	if _, err := db.Exec("UPDATE t SET v = 7 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if v := read(); v != 7 {
		t.Fatalf("READ COMMITTED read %d after another commit, want 7", v)
	}
	mustExec(t, a, "COMMIT", "SET SESSION transaction_isolation = 'REPEATABLE-READ'", "BEGIN")
	read()
	if _, err := db.Exec("UPDATE t SET v = 8 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if v := read(); v != 7 {
		t.Fatalf("REPEATABLE READ read %d after another commit, want 7", v)
	}
	mustExec(t, a, "COMMIT")
}

// Many connections incrementing the same rows in transactions, in a
// consistent order: every increment commits, none is lost, and nobody
// sees an error.
func TestConcurrentIncrements(t *testing.T) {
	_, db := lockingServer(t)
	const workers, rounds = 16, 30
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			// A wait this long means a lock nobody lets go of.
			if _, err := c.ExecContext(context.Background(), "SET innodb_lock_wait_timeout = 10"); err != nil {
				errs <- err
				return
			}
			for i := 0; i < rounds; i++ {
				for _, q := range []string{"BEGIN", "UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 2", "COMMIT", "UPDATE t SET v = v + 1 WHERE id = 3"} {
					if _, err := c.ExecContext(context.Background(), q); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id := 1; id <= 3; id++ {
		if v := value(t, db, "SELECT v FROM t WHERE id = "+string(rune('0'+id))); v != workers*rounds {
			t.Fatalf("row %d: v = %d, want %d", id, v, workers*rounds)
		}
	}
	checkTable(t, db)
}

func checkTable(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("ADMIN CHECK TABLE t")
	if err != nil {
		t.Fatalf("ADMIN CHECK TABLE: %v", err)
	}
	rows.Close()
}

// KILL QUERY ends a lock wait at once with 1317; the waiting transaction
// goes on, as in MySQL.
func TestKillLockWait(t *testing.T) {
	_, db := lockingServer(t)
	a, b := conn(t, db), conn(t, db)
	mustExec(t, a, "BEGIN", "UPDATE t SET v = 1 WHERE id = 1")
	mustExec(t, b, "BEGIN", "UPDATE t SET v = 2 WHERE id = 2")
	id := connID(t, b)
	ch := execErr(b, "UPDATE t SET v = 2 WHERE id = 1")
	blocked(t, "UPDATE of a locked row", ch)
	start := time.Now()
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "killed lock wait", within(t, "killed lock wait", ch), 1317)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("KILL QUERY took %v to end the wait", d)
	}
	mustExec(t, b, "COMMIT")
	mustExec(t, a, "COMMIT")
	if v := value(t, db, "SELECT v FROM t WHERE id = 2"); v != 2 {
		t.Fatalf("row 2: v = %d, b's transaction lost its earlier statement", v)
	}
	if v := value(t, db, "SELECT v FROM t WHERE id = 1"); v != 1 {
		t.Fatalf("row 1: v = %d, want a's 1", v)
	}
}
