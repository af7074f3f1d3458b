package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// statusDelta runs q on one connection and returns how much each named
// session status counter grew.
func statusDelta(t *testing.T, db querier, names []string, run func()) []int {
	t.Helper()
	read := func() []int {
		out := make([]int, len(names))
		for i, n := range names {
			r := rows(t, db, "SHOW SESSION STATUS LIKE '"+n+"'")
			if len(r) != 1 {
				t.Fatalf("status %s: %q", n, r)
			}
			v, err := strconv.Atoi(r[0][strings.IndexByte(r[0], ',')+1:])
			if err != nil {
				t.Fatal(err)
			}
			out[i] = v
		}
		return out
	}
	before := read()
	run()
	after := read()
	for i := range after {
		after[i] -= before[i]
	}
	return after
}

// TestPrefixIndexInLookupIsBounded is issue 12 item 11.4: an IN list on a
// prefix index reads, per value, the entries sharing the value's prefix,
// not the whole index; and it returns what a scan returns, in every
// indexable kind of collation (NO PAD, PAD SPACE, binary).
func TestPrefixIndexInLookupIsBounded(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	conn, err := s.DB("app").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rng := rand.New(rand.NewSource(7))
	const n = 4000
	special := []string{"abcdef", "ABCDEF", "abcxyz", "abcd", "abc", "abcd  ", "abcd\tx", "abc de", "ab", "ABCX", "abcé", "abce", "zzzz1", "zzzz"}
	vals := make([]string, 0, n)
	vals = append(vals, special...)
	letters := "abcdefghijklmnopqrstuvwxyz"
	for len(vals) < n {
		var b strings.Builder
		for k := 0; k < 4+rng.Intn(6); k++ {
			b.WriteByte(letters[rng.Intn(len(letters))])
		}
		vals = append(vals, b.String())
	}
	// The last value is longer than the column holds: it still bounds
	// the lookup by its first characters.
	in := []string{"abcdef", "abcxyz", "ABCD", "abc", "abcd ", "zzzz", "qq", "abcé", "abcdefghijklmnopqrstuvwxyz"}
	quoted := make([]string, len(in))
	for i, v := range in {
		quoted[i] = "'" + v + "'"
	}
	inList := strings.Join(quoted, ", ")
	for _, tc := range []struct{ name, typ string }{
		{"noPad", "VARCHAR(20) COLLATE utf8mb4_0900_ai_ci"},
		{"padSpace", "VARCHAR(20) COLLATE utf8mb4_general_ci"},
		{"bin", "VARCHAR(20) COLLATE utf8mb4_bin"},
		{"bytes", "VARBINARY(20)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tbl := range []string{"t", "scan"} {
				mustExec(t, conn, "DROP TABLE IF EXISTS "+tbl)
				key := ", KEY p (c(4))"
				if tbl == "scan" {
					key = ""
				}
				mustExec(t, conn, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, c %s%s)", tbl, tc.typ, key))
				for lo := 0; lo < len(vals); lo += 1000 {
					var b strings.Builder
					for i := lo; i < lo+1000 && i < len(vals); i++ {
						if i > lo {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, "(%d, '%s')", i, vals[i])
					}
					mustExec(t, conn, "INSERT INTO "+tbl+" VALUES "+b.String())
				}
			}
			q := "SELECT id, c FROM %s WHERE c IN (" + inList + ") ORDER BY id"
			assertIndexed(t, conn, fmt.Sprintf(q, "t"))
			want := rows(t, conn, fmt.Sprintf(q, "scan"))
			if len(want) < 3 {
				t.Fatalf("the scan finds too little to test: %q", want)
			}
			var got []string
			d := statusDelta(t, conn, []string{"Handler_read_next", "Handler_read_rnd_next"}, func() {
				got = rows(t, conn, fmt.Sprintf(q, "t"))
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("IN on the prefix index:\n got %q\nwant %q", got, want)
			}
			// The entries whose first 4 characters match a value's, in
			// any of these collations: a bound far below the table's n.
			bound := 0
			for _, v := range vals {
				for _, w := range in {
					if strings.HasPrefix(strings.ToLower(v), strings.ToLower(w[:min(len(w), 3)])) {
						bound++
						break
					}
				}
			}
			if d[0] == 0 || d[0] > bound || d[1] != 0 {
				t.Fatalf("IN on the prefix index read %d index entries and %d table rows; want 1..%d entries (of %d) and no scan", d[0], d[1], bound, n)
			}
			// A range on the prefix column is bounded too.
			q = "SELECT id FROM %s WHERE c BETWEEN 'abc' AND 'abd' ORDER BY id"
			want = rows(t, conn, fmt.Sprintf(q, "scan"))
			d = statusDelta(t, conn, []string{"Handler_read_next"}, func() {
				got = rows(t, conn, fmt.Sprintf(q, "t"))
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("BETWEEN on the prefix index:\n got %q\nwant %q", got, want)
			}
			if d[0] > bound {
				t.Fatalf("BETWEEN on the prefix index read %d entries, want at most %d", d[0], bound)
			}
			mustExec(t, conn, "ADMIN CHECK TABLE t")
		})
	}
}
