package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestIndexOrderDropsSort: a lookup that fixes an index's first columns
// returns its rows in the order of the next columns and then the primary
// key, so ORDER BY those needs no sort. Every query is checked against the
// same query with an ORDER BY the rule cannot use (id + 0), over random
// rows with duplicates, NULLs and case variants.
func TestIndexOrderDropsSort(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT, KEY ka (a), KEY kab (a, b), UNIQUE KEY uc (c, a))")
	rng := rand.New(rand.NewSource(7))
	words := []string{"x", "X", "y", "Y ", "z", "", "NULL"}
	var vals []string
	for id := 1; id <= 400; id++ {
		a, b := fmt.Sprint(rng.Intn(6)), "'"+words[rng.Intn(len(words))]+"'"
		if rng.Intn(10) == 0 {
			a = "NULL"
		}
		if b == "'NULL'" {
			b = "NULL"
		}
		c := "NULL"
		if rng.Intn(2) == 0 {
			c = fmt.Sprint(id % 50)
		}
		vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s)", id, a, b, c))
	}
	mustExec(t, db, "INSERT IGNORE INTO t VALUES "+strings.Join(vals, ", "))
	cases := []struct {
		q, ref string
		sorts  bool // the plan still sorts
	}{
		{"SELECT id FROM t WHERE a = 3 ORDER BY id", "SELECT id FROM t WHERE a = 3 ORDER BY id + 0", false},
		{"SELECT id FROM t WHERE a = 3 ORDER BY id DESC LIMIT 7", "SELECT id FROM t WHERE a = 3 ORDER BY id + 0 DESC LIMIT 7", false},
		{"SELECT id FROM t WHERE a IS NULL ORDER BY id DESC", "SELECT id FROM t WHERE a IS NULL ORDER BY id + 0 DESC", false},
		{"SELECT id, b FROM t USE INDEX (kab) WHERE a = 2 ORDER BY b, id", "SELECT id, b FROM t WHERE a = 2 ORDER BY b, id + 0", false},
		{"SELECT id FROM t USE INDEX (kab) WHERE a = 2 AND b = 'x' ORDER BY id DESC", "SELECT id FROM t WHERE a = 2 AND b = 'x' ORDER BY id + 0 DESC", false},
		{"SELECT u.id FROM t AS u WHERE u.a = 1 ORDER BY u.id LIMIT 3", "SELECT u.id FROM t AS u WHERE u.a = 1 ORDER BY u.id + 0 LIMIT 3", false},
		{"SELECT id FROM t USE INDEX (kab) WHERE a = 2 AND b > 'x' ORDER BY b, id", "SELECT id FROM t WHERE a = 2 AND b > 'x' ORDER BY b, id + 0", false},
		// Kept: the order is not the index's.
		{"SELECT id FROM t WHERE a IN (1, 2) ORDER BY id", "SELECT id FROM t WHERE a IN (1, 2) ORDER BY id + 0", true},
		{"SELECT id FROM t USE INDEX (kab) WHERE a = 2 ORDER BY id", "SELECT id FROM t WHERE a = 2 ORDER BY id + 0", true},
		{"SELECT id FROM t WHERE a = 2 ORDER BY b, id", "SELECT id FROM t WHERE a = 2 ORDER BY b, id + 0", true},
		{"SELECT id FROM t WHERE a = 2 ORDER BY id, b DESC", "SELECT id FROM t WHERE a = 2 ORDER BY id + 0, b DESC", true},
		{"SELECT c, a FROM t USE INDEX (uc) WHERE c = 7 ORDER BY a, id", "SELECT c, a FROM t WHERE c = 7 ORDER BY a, id + 0", true},
	}
	// FOUND_ROWS() still counts every row the LIMIT cut.
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := rows(t, db, "SELECT COUNT(*) FROM t WHERE a = 3")
	var got string
	if _, err := conn.ExecContext(context.Background(), "SELECT SQL_CALC_FOUND_ROWS id FROM t WHERE a = 3 ORDER BY id LIMIT 2"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(context.Background(), "SELECT FOUND_ROWS()").Scan(&got); err != nil || got != want[0] {
		t.Fatalf("FOUND_ROWS() = %s (%v), want %s", got, err, want[0])
	}
	for _, c := range cases {
		got, want := rows(t, db, c.q), rows(t, db, c.ref)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\n got %v\nwant %v", c.q, got, want)
		}
		plan := strings.Join(rows(t, db, "EXPLAIN PLAN "+c.q), "\n")
		if strings.Contains(plan, "Sort(") != c.sorts || !strings.Contains(plan, "IndexedTableAccess") {
			t.Errorf("%s: sorts %v, want %v:\n%s", c.q, !c.sorts, c.sorts, plan)
		}
	}
}
