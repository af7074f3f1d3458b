package sql_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestIndexLookupsMatchFullScan checks, for random predicates, that the
// rows a query returns through the primary key or a secondary index are
// exactly those a Go filter over all rows returns.
func TestIndexLookupsMatchFullScan(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testLookups(t, seed) })
	}
}

type lrow struct {
	id int
	k  int
	c  string
	n  *int
}

func testLookups(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	s := servertest.Start(t)
	db := s.DB("app")
	// The model below compares strings as Go does, bytewise: the table's
	// collation must be too (collation_test.go covers the others).
	mustExec(t, db, `CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NOT NULL, n INT NULL,
		KEY k_1 (k), KEY c_1 (c), KEY kc (k, c), KEY n_1 (n), KEY cp (c(2)), KEY cpk (c(2), k)) COLLATE utf8mb4_0900_bin`)
	var all []lrow
	words := []string{"", "a", "ab", "abc", "b", "ba", "z", "zz", "a\x00b", "é"}
	used := map[int]bool{}
	for len(all) < 300 {
		id := rng.Intn(2000) - 1000
		if used[id] {
			continue
		}
		used[id] = true
		r := lrow{id: id, k: rng.Intn(40) - 20, c: words[rng.Intn(len(words))]}
		if rng.Intn(4) > 0 {
			n := rng.Intn(10)
			r.n = &n
		}
		all = append(all, r)
	}
	var b strings.Builder
	for i, r := range all {
		if i > 0 {
			b.WriteString(",")
		}
		n := "NULL"
		if r.n != nil {
			n = fmt.Sprint(*r.n)
		}
		fmt.Fprintf(&b, "(%d,%d,'%s',%s)", r.id, r.k, strings.ReplaceAll(r.c, "\x00", "\\0"), n)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())

	type pred struct {
		sql string
		fn  func(lrow) bool
	}
	gen := func() pred {
		a, z := rng.Intn(50)-25, rng.Intn(50)-25
		if a > z {
			a, z = z, a
		}
		w := words[rng.Intn(len(words))]
		qw := "'" + strings.ReplaceAll(w, "\x00", "\\0") + "'"
		nv := rng.Intn(10)
		switch rng.Intn(14) {
		case 0:
			return pred{fmt.Sprintf("id = %d", a*40), func(r lrow) bool { return r.id == a*40 }}
		case 1:
			return pred{fmt.Sprintf("id BETWEEN %d AND %d", a*40, z*40), func(r lrow) bool { return r.id >= a*40 && r.id <= z*40 }}
		case 2:
			return pred{fmt.Sprintf("id > %d AND id < %d", a*40, z*40), func(r lrow) bool { return r.id > a*40 && r.id < z*40 }}
		case 3:
			return pred{fmt.Sprintf("k = %d", a), func(r lrow) bool { return r.k == a }}
		case 4:
			return pred{fmt.Sprintf("k >= %d AND k < %d", a, z), func(r lrow) bool { return r.k >= a && r.k < z }}
		case 5:
			return pred{fmt.Sprintf("k IN (%d, %d, 3)", a, z), func(r lrow) bool { return r.k == a || r.k == z || r.k == 3 }}
		case 6:
			return pred{fmt.Sprintf("c = %s", qw), func(r lrow) bool { return r.c == w }}
		case 7:
			return pred{fmt.Sprintf("c > %s", qw), func(r lrow) bool { return r.c > w }}
		case 8:
			return pred{fmt.Sprintf("k = %d AND c >= %s", a, qw), func(r lrow) bool { return r.k == a && r.c >= w }}
		case 9:
			return pred{"n IS NULL", func(r lrow) bool { return r.n == nil }}
		case 10:
			return pred{fmt.Sprintf("n > %d", nv), func(r lrow) bool { return r.n != nil && *r.n > nv }}
		case 11:
			return pred{fmt.Sprintf("n <= %d OR n IS NULL", nv), func(r lrow) bool { return r.n == nil || *r.n <= nv }}
		case 12:
			f := float64(a) + 0.5
			return pred{fmt.Sprintf("k > %g", f), func(r lrow) bool { return float64(r.k) > f }}
		default:
			return pred{fmt.Sprintf("c LIKE 'a%%'"), func(r lrow) bool { return strings.HasPrefix(r.c, "a") }}
		}
	}
	for i := 0; i < 150; i++ {
		p := gen()
		var want []string
		for _, r := range all {
			if p.fn(r) {
				want = append(want, fmt.Sprint(r.id))
			}
		}
		sort.Strings(want)
		// The planner's choice, then each index forced (a scan when it
		// cannot serve): every access path returns the same rows.
		for _, hint := range []string{"", "FORCE INDEX (cp)", "FORCE INDEX (cpk)", "FORCE INDEX (c_1)", "FORCE INDEX (kc)", "FORCE INDEX (k_1)", "FORCE INDEX (n_1)", "FORCE INDEX (`PRIMARY`)"} {
			got := rows(t, db, "SELECT id FROM t "+hint+" WHERE "+p.sql)
			sort.Strings(got)
			if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%s WHERE %s:\n got %v\nwant %v", hint, p.sql, got, want)
			}
		}
	}
	// ORDER BY ... LIMIT through the primary key, both directions.
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	lo := all[10].id
	expectRows(t, db, fmt.Sprintf("SELECT id FROM t WHERE id >= %d ORDER BY id LIMIT 3", lo),
		fmt.Sprint(all[10].id), fmt.Sprint(all[11].id), fmt.Sprint(all[12].id))
	expectRows(t, db, fmt.Sprintf("SELECT id FROM t WHERE id <= %d ORDER BY id DESC LIMIT 2", lo),
		fmt.Sprint(all[10].id), fmt.Sprint(all[9].id))
	// The planner really uses the indexes.
	for _, q := range []string{"SELECT * FROM t WHERE id BETWEEN 5 AND 9", "SELECT * FROM t WHERE k = 5", "SELECT * FROM t WHERE c = 'a'"} {
		plan := strings.Join(rows(t, db, "EXPLAIN PLAN "+q), "\n")
		if !strings.Contains(plan, "IndexedTableAccess") {
			t.Fatalf("%s does not use an index:\n%s", q, plan)
		}
	}
}
