package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestApplicationSchemaEndToEnd loads an application's schema and data as
// MySQL 8's mysqldump writes them (utf8mb4_0900_ai_ci headers, VARCHAR keys,
// per-column collations and charsets, prefix keys, generated columns,
// comments with 4-byte characters) with the mariadb command-line client,
// then runs an ORM-style workload of explicit transactions, a third of
// them rolled back, and checks every table against what was committed.
func TestApplicationSchemaEndToEnd(t *testing.T) {
	client, err := exec.LookPath("mariadb")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the mariadb client is not installed; .ci/run installs it")
		}
		t.Skip("the mariadb client is not installed (apt-get install mariadb-client)")
	}
	s := servertest.Start(t)
	db := s.DB("shop")
	host, port, _ := net.SplitHostPort(s.Addr())
	load := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "shop")
	dump, err := os.Open("../sql/testdata/app-dump.sql")
	if err != nil {
		t.Fatal(err)
	}
	defer dump.Close()
	load.Stdin = dump
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s", err, out)
	}

	// The collations of the dump hold: keys compare case- and
	// accent-insensitively where the columns say so.
	query(t, db, "SELECT id FROM customers WHERE email = 'BOB@example.COM'", "2")
	query(t, db, "SELECT id FROM sessions WHERE id = 'abc123'", "AbC123")
	query(t, db, "SELECT count(*) FROM order_lines WHERE sku = 'MUG'", "2")
	query(t, db, "SELECT sum(total_cents) FROM order_lines", "5450")
	query(t, db, "SELECT table_comment FROM information_schema.tables WHERE table_name = 'customers'", "Kunden 🛒")
	_, err = db.Exec("INSERT INTO customers (email, name) VALUES ('ANN@EXAMPLE.com', 'Ann again')")
	expectCode(t, err, 1062)
	_, err = db.Exec("INSERT INTO sessions VALUES ('ABC123', NULL, '{}', 1)")
	expectCode(t, err, 1062)

	// The workload: each transaction registers a customer with an order of
	// two lines; every third one is rolled back.
	var (
		mu        sync.Mutex
		committed = map[string]int{} // order ref -> total in cents
		wg        sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 40; i++ {
				ref := fmt.Sprintf("%d-%d", w, i)
				qty, price := 1+rnd.Intn(5), 100+rnd.Intn(900)
				total, err := placeOrder(db, ref, qty, price, i%3 == 2)
				var me *mysql.MySQLError
				switch {
				case err == nil && i%3 != 2:
					mu.Lock()
					committed[ref] = total
					mu.Unlock()
				case err == nil:
				case errors.As(err, &me) && me.Number == 1213:
				default:
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()

	want := 5450
	for _, total := range committed {
		want += total
	}
	query(t, db, "SELECT sum(total_cents) FROM order_lines", fmt.Sprint(want))
	query(t, db, "SELECT count(*) FROM customers", fmt.Sprint(4+len(committed)))
	query(t, db, "SELECT count(*) FROM order_lines", fmt.Sprint(3+2*len(committed)))
	for ref, total := range committed {
		query(t, db, fmt.Sprintf("SELECT sum(total_cents) FROM order_lines WHERE order_ref = '%s'", ref), fmt.Sprint(total))
		query(t, db, fmt.Sprintf("SELECT count(*) FROM customers WHERE email = 'USER%s@example.com'", ref), "1")
	}
	for _, table := range []string{"customers", "sessions", "order_lines"} {
		if _, err := db.Exec("ADMIN CHECK TABLE " + table); err != nil {
			t.Fatalf("ADMIN CHECK TABLE %s: %v", table, err)
		}
	}
}

// placeOrder inserts a customer and an order of two lines in one
// transaction, as an ORM's unit of work would, and commits or rolls back.
func placeOrder(db *sql.DB, ref string, qty, price int, rollback bool) (int, error) {
	tx, err := db.Begin()
	if err != nil {
		return 0, err
	}
	steps := []struct {
		q    string
		args []any
	}{
		{"INSERT INTO customers (email, name, country) VALUES (?, ?, ?)", []any{"user" + ref + "@example.com", "User " + ref, "NO"}},
		{"INSERT INTO order_lines (order_ref, sku, qty, unit_cents) VALUES (?, ?, ?, ?)", []any{ref, "mug", qty, price}},
		{"INSERT INTO order_lines (order_ref, sku, qty, unit_cents) VALUES (?, ?, ?, ?)", []any{ref, "tea", 1, price}},
		{"UPDATE order_lines SET qty = qty + 1 WHERE order_ref = ? AND sku = 'MUG'", []any{ref}},
	}
	for _, st := range steps {
		if _, err := tx.Exec(st.q, st.args...); err != nil {
			tx.Rollback()
			return 0, err
		}
	}
	if rollback {
		return 0, tx.Rollback()
	}
	return (qty+1)*price + price, tx.Commit()
}

func query(t *testing.T, db *sql.DB, q, want string) {
	t.Helper()
	var got string
	if err := db.QueryRow(q).Scan(&got); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if got != want {
		t.Fatalf("%s: got %q, want %q", q, got, want)
	}
}

func expectCode(t *testing.T, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Fatalf("got %v, want error %d", err, code)
	}
}
