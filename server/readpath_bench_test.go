package server_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// The statements of sysbench's oltp_read_only, prepared and run over a real
// connection against a table shaped like sbtest1. With -benchmem the
// allocations per statement show what the read path allocates per row
// (the client's share is small and constant).
func BenchmarkReadPath(b *testing.B) {
	s := servertest.Start(b)
	db := s.DB("sbtest")
	db.SetMaxOpenConns(1)
	loadSbtest(b, db, 10000)
	shapes := []struct{ name, query string }{
		{"point", "SELECT c FROM sbtest1 WHERE id=?"},
		{"simple_range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"sum_range", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"order_range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{"distinct_range", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			stmt, err := db.Prepare(sh.query)
			if err != nil {
				b.Fatal(err)
			}
			defer stmt.Close()
			rng := rand.New(rand.NewSource(1))
			b.ResetTimer()
			for range b.N {
				lo := 1 + rng.Intn(9900)
				args := []any{lo, lo + 99}
				if sh.name == "point" {
					args = args[:1]
				}
				rows, err := stmt.Query(args...)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				rows.Close()
				if n == 0 {
					b.Fatal("no rows")
				}
			}
		})
	}
}

// loadSbtest creates sbtest1 as sysbench's oltp_common.lua does and fills
// it with n rows of sysbench-like values.
func loadSbtest(b *testing.B, db *sql.DB, n int) {
	b.Helper()
	benchExec(b, db, `CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT,
		k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL,
		pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))`)
	rng := rand.New(rand.NewSource(2))
	digits := func(groups int) string {
		parts := make([]string, groups)
		for i := range parts {
			parts[i] = fmt.Sprintf("%011d", rng.Int63n(1e11))
		}
		return strings.Join(parts, "-")
	}
	for lo := 1; lo <= n; lo += 500 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
		for id := lo; id < lo+500 && id <= n; id++ {
			if id > lo {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, "(%d,%d,'%s','%s')", id, rng.Intn(n), digits(10), digits(5))
		}
		benchExec(b, db, sb.String())
	}
	benchExec(b, db, "CREATE INDEX k_1 ON sbtest1(k)")
}

func benchExec(b *testing.B, db *sql.DB, q string) {
	b.Helper()
	if _, err := db.Exec(q); err != nil {
		b.Fatalf("%s: %v", q[:min(len(q), 60)], err)
	}
}
