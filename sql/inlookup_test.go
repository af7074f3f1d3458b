package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestLongInListLookup: an IN list of hundreds of literals (planned by
// ReorgDB, not go-mysql-server's quadratic costing) reads the index
// entries of its values only and returns what a scan returns, with
// repeats, NULLs, inexact numbers, collation-equal strings and strings
// longer than the column.
func TestLongInListLookup(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	conn, err := s.DB("app").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tbl := range []string{"t", "scan"} {
		keys := ", KEY ka (a), KEY kc (c), KEY kp (d(3)), KEY kac (a, c)"
		if tbl == "scan" {
			keys = ""
		}
		mustExec(t, conn, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, a INT, c VARCHAR(10) COLLATE utf8mb4_general_ci, d VARCHAR(10) COLLATE utf8mb4_0900_ai_ci%s)", tbl, keys))
	}
	rng := rand.New(rand.NewSource(3))
	words := []string{"a", "A", "a ", "b", "ab", "AB ", "abc", "abcd", "ABCDEFGH", "é", "e", "zz", ""}
	var b strings.Builder
	const n = 3000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		a := fmt.Sprint(rng.Intn(2000))
		if rng.Intn(20) == 0 {
			a = "NULL"
		}
		w := words[rng.Intn(len(words))] + fmt.Sprint(rng.Intn(50))
		fmt.Fprintf(&b, "(%d, %s, '%s', '%s')", i, a, w, w)
	}
	for _, tbl := range []string{"t", "scan"} {
		mustExec(t, conn, "INSERT INTO "+tbl+" VALUES "+b.String())
	}
	list := func(gen func() string) string {
		var parts []string
		for i := 0; i < 300; i++ {
			parts = append(parts, gen())
		}
		return strings.Join(parts, ", ")
	}
	ints := list(func() string {
		switch rng.Intn(30) {
		case 0:
			return "NULL"
		case 1:
			return "7" // repeated
		case 2:
			return fmt.Sprintf("%d.5", rng.Intn(2000)) // inexact: a wider span
		}
		return fmt.Sprint(rng.Intn(2000))
	})
	ids := list(func() string {
		if rng.Intn(10) == 0 {
			return "42"
		}
		return fmt.Sprint(rng.Intn(4000) - 500)
	})
	strs := list(func() string {
		w := words[rng.Intn(len(words))] + fmt.Sprint(rng.Intn(50))
		switch rng.Intn(10) {
		case 0:
			w = strings.ToUpper(w) + "  "
		case 1:
			w += "-longer-than-the-column"
		}
		return "'" + w + "'"
	})
	// Repeats (of one literal type, which go-mysql-server leaves as they
	// are): each row once. With an inexact value, whose span is wider.
	var rep []string
	for i := 0; i < 200; i++ {
		rep = append(rep, fmt.Sprint(i%50-3))
	}
	for _, where := range []string{"id IN (%s)", "a IN (%s)", "id IN (%s, 7.5)", "a IN (%s, 7.5)"} {
		q := "SELECT id FROM %s WHERE " + fmt.Sprintf(where, strings.Join(rep, ", ")) + " ORDER BY id"
		expectRows(t, conn, fmt.Sprintf(q, "t"), rows(t, conn, fmt.Sprintf(q, "scan"))...)
	}
	for _, c := range []struct {
		where, key string
		exact      bool   // no inexact value: the reads are about the IN list's matches (a PAD SPACE value ending in spaces also reads the keys it prefixes)
		in         string // the IN list alone, when where has more
	}{
		{"id IN (" + ids + ")", "PRIMARY", true, ""},
		{"a IN (" + ints + ")", "ka", false, ""},
		{"c IN (" + strs + ")", "kc", true, ""},
		{"d IN (" + strs + ")", "kp", false, ""},
		{"a IN (" + ids + ") AND c > 'b'", "ka", true, "a IN (" + ids + ")"},
	} {
		if c.in == "" {
			c.in = c.where
		}
		matches := len(rows(t, conn, "SELECT id FROM scan WHERE "+c.in))
		q := "SELECT id, a, c FROM %s WHERE " + c.where
		want := rows(t, conn, fmt.Sprintf(q, "scan")+" ORDER BY id")
		if len(want) < 10 {
			t.Fatalf("%.40s: too few matches to test: %d", c.where, len(want))
		}
		rs := explain(t, conn, fmt.Sprintf(q, "t"))
		if len(rs) != 1 || rs[0].key != c.key {
			t.Fatalf("EXPLAIN %.60s: %+v, want key %s", c.where, rs, c.key)
		}
		var got []string
		d := statusDelta(t, conn, []string{"Handler_read_key", "Handler_read_next", "Handler_read_rnd_next"}, func() {
			got = rows(t, conn, fmt.Sprintf(q, "t"))
		})
		sort.Slice(got, func(i, j int) bool { return idOf(got[i]) < idOf(got[j]) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%.60s:\n got %d rows %.300q\nwant %d rows %.300q", c.where, len(got), got, len(want), want)
		}
		if d[2] != 0 || d[0] == 0 || d[0] > 301 {
			t.Fatalf("%.60s: %d seeks, %d table rows read: want at most one seek per value and no scan", c.where, d[0], d[2])
		}
		if c.exact && c.key != "PRIMARY" && d[1] > 2*matches {
			t.Fatalf("%.60s: read %d index entries for %d matches", c.where, d[1], matches)
		}
		if !c.exact && d[1] >= n {
			t.Fatalf("%.60s: read %d index entries: the whole index", c.where, d[1])
		}
		// ORDER BY on the column: the sort stays, the order is right.
		qo := "SELECT id FROM %s WHERE " + c.where + " ORDER BY a, c, id"
		expectRows(t, conn, fmt.Sprintf(qo, "t"), rows(t, conn, fmt.Sprintf(qo, "scan"))...)
		// The hints still apply.
		rs = explain(t, conn, "SELECT id FROM t IGNORE INDEX (`"+c.key+"`, kac) WHERE "+c.where)
		if len(rs) != 1 || rs[0].key == c.key {
			t.Fatalf("IGNORE INDEX (%s): %+v", c.key, rs)
		}
	}
}

func idOf(r string) int {
	var id int
	fmt.Sscan(strings.SplitN(r, ",", 2)[0], &id)
	return id
}

// TestLongInListRepeats: a value repeated in a long IN list returns its
// row once, through the primary key and a secondary index.
func TestLongInListRepeats(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(10), KEY ka (a), KEY kac (a, c))")
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d, 'x')", i, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	var in, want []string
	for i := 0; i < 200; i++ {
		in = append(in, fmt.Sprint(i%50-3))
	}
	for i := 0; i <= 46; i++ {
		want = append(want, fmt.Sprint(i))
	}
	for _, col := range []string{"id", "a"} {
		q := "SELECT id FROM t WHERE " + col + " IN (" + strings.Join(in, ",") + ")"
		if rs := explain(t, db, q); len(rs) != 1 || rs[0].typ != "range" {
			t.Fatalf("EXPLAIN %s IN: %+v", col, rs)
		}
		got := rows(t, db, q)
		sort.Slice(got, func(i, j int) bool { return idOf(got[i]) < idOf(got[j]) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s IN with repeats: got %q", col, got)
		}
	}
	// DML through the same lookup: each row once.
	r := mustExec(t, db, "UPDATE t SET c = CONCAT(c, 'y') WHERE id IN ("+strings.Join(in, ",")+")")
	if n, _ := r.RowsAffected(); n != 47 {
		t.Fatalf("UPDATE with repeats: %d rows", n)
	}
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE c = 'xy'", "47")
	r = mustExec(t, db, "DELETE FROM t WHERE a IN ("+strings.Join(in, ",")+")")
	if n, _ := r.RowsAffected(); n != 47 {
		t.Fatalf("DELETE with repeats: %d rows", n)
	}
	expectRows(t, db, "SELECT COUNT(*) FROM t", "2953")
	mustExec(t, db, "ADMIN CHECK TABLE t")
}
