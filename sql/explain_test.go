package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reorgdb/reorgdb/server/servertest"
	rsql "github.com/reorgdb/reorgdb/sql"
)

// explainRow is one row of plain EXPLAIN.
type explainRow struct {
	table, typ, key, ref, extra string
}

// explain runs plain EXPLAIN q and returns its rows; NULL reads as "".
func explain(t *testing.T, db querier, q string) []explainRow {
	t.Helper()
	r, err := db.QueryContext(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer r.Close()
	cols, _ := r.Columns()
	want := []string{"id", "select_type", "table", "partitions", "type", "possible_keys", "key", "key_len", "ref", "rows", "filtered", "Extra"}
	if !reflect.DeepEqual(cols, want) {
		t.Fatalf("EXPLAIN columns %q, want %q", cols, want)
	}
	var out []explainRow
	for r.Next() {
		v := make([]sql.NullString, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := r.Scan(p...); err != nil {
			t.Fatalf("EXPLAIN %s: %v", q, err)
		}
		out = append(out, explainRow{table: v[2].String, typ: v[4].String, key: v[6].String, ref: v[8].String, extra: v[11].String})
	}
	if err := r.Err(); err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	return out
}

// expectAccess checks the access type and key of the only table of q.
func expectAccess(t *testing.T, db querier, q, typ, key string) {
	t.Helper()
	rs := explain(t, db, q)
	if len(rs) != 1 || rs[0].typ != typ || rs[0].key != key {
		t.Fatalf("EXPLAIN %s:\n got %+v\nwant type %q key %q", q, rs, typ, key)
	}
}

func hintsTable(t *testing.T, db execer) {
	t.Helper()
	mustExec(t, db, `CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c VARCHAR(20),
		KEY ia (a), KEY ib (b), KEY ab (a, b), KEY p (c(4)))`)
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d, %d, 'v%03d')", i, i%10, i%7, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
}

// TestIndexHints is issue 12 item 11.1: USE / IGNORE / FORCE INDEX act as
// in MySQL 8, seen in EXPLAIN's key column, and never change results.
func TestIndexHints(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	hintsTable(t, db)

	// The planner's own choice, which the hints then move.
	expectAccess(t, db, "SELECT * FROM t WHERE a = 1", "ref", "ab")
	// IGNORE INDEX: never the named ones.
	expectAccess(t, db, "SELECT * FROM t IGNORE INDEX (ab) WHERE a = 1", "ref", "ia")
	expectAccess(t, db, "SELECT * FROM t IGNORE INDEX (ab, ia) WHERE a = 1", "ALL", "")
	expectAccess(t, db, "SELECT * FROM t IGNORE INDEX (ib) WHERE b = 1", "ALL", "")
	expectAccess(t, db, "SELECT * FROM t IGNORE INDEX (`PRIMARY`) WHERE id = 5", "ALL", "")
	// USE INDEX: only the named ones, else a scan.
	expectAccess(t, db, "SELECT * FROM t USE INDEX (ia) WHERE a = 1", "ref", "ia")
	expectAccess(t, db, "SELECT * FROM t USE INDEX (ib) WHERE a = 1", "ALL", "")
	expectAccess(t, db, "SELECT * FROM t USE INDEX (ib, ia) WHERE a = 1 AND b = 2", "ref", "ia")
	// FORCE INDEX: the named index whenever it can serve.
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (ia) WHERE a = 1", "ref", "ia")
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (ia) WHERE a > 8", "range", "ia")
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (ab) WHERE a IN (1, 2)", "range", "ab")
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (p) WHERE c = 'v001'", "ref", "p")
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (ib) WHERE a = 1", "ALL", "") // ib cannot serve
	// ... and for ORDER BY.
	expectAccess(t, db, "SELECT a FROM t FORCE INDEX (ia) ORDER BY a", "index", "ia")
	expectAccess(t, db, "SELECT a FROM t FORCE INDEX (ia) WHERE b = 1 ORDER BY a", "index", "ia")
	expectAccess(t, db, "SELECT a FROM t FORCE INDEX (ia) ORDER BY a DESC LIMIT 3", "index", "ia")
	expectRows(t, db, "SELECT a FROM t FORCE INDEX (ia) WHERE b = 1 ORDER BY a", rows(t, db, "SELECT a FROM t IGNORE INDEX (ia, ab) WHERE b = 1 ORDER BY a")...)
	expectRows(t, db, "SELECT a FROM t FORCE INDEX (ia) ORDER BY a DESC LIMIT 3", "9", "9", "9")
	if rs := explain(t, db, "SELECT a FROM t IGNORE INDEX (ia, ab) ORDER BY a"); len(rs) != 1 || rs[0].key != "" || rs[0].extra != "Using filesort" {
		t.Fatalf("IGNORE INDEX for ORDER BY: %+v", rs)
	}
	// PRIMARY, which go-mysql-server's grammar reserves, unquoted too.
	expectAccess(t, db, "SELECT * FROM t FORCE INDEX (PRIMARY) WHERE id > 190 AND a = 1", "range", "PRIMARY")
	expectAccess(t, db, "SELECT * FROM t IGNORE INDEX (primary) WHERE id = 5", "ALL", "")
	expectRows(t, db, "SELECT id FROM t FORCE INDEX (PRIMARY) WHERE id > 190 AND a = 1", "191")
	expectRows(t, db, "SELECT 'FORCE INDEX (primary)' FROM t USE INDEX (Primary) WHERE id = 5", "FORCE INDEX (primary)") // a literal is data
	expectRows(t, db, "SELECT 'use index (primary)'", "use index (primary)")
	// (A prepared statement is parsed before ReorgDB sees it: there
	// PRIMARY needs its backquotes.)
	var id int
	if err := db.QueryRow("SELECT id FROM t FORCE INDEX (`PRIMARY`) WHERE id = ?", 7).Scan(&id); err != nil || id != 7 {
		t.Fatalf("prepared FORCE INDEX (`PRIMARY`): %d, %v", id, err)
	}
	// Case does not matter; the hint of a qualified name applies.
	expectAccess(t, db, "SELECT * FROM app.t Ignore Index (AB, Ia) WHERE a = 1", "ALL", "")
	// EXPLAIN of an UPDATE, and a hint inside a subquery.
	expectAccess(t, db, "UPDATE t FORCE INDEX (ib) SET c = c WHERE b = 2", "ref", "ib")
	rs := explain(t, db, "SELECT id FROM t WHERE id = (SELECT MAX(id) FROM t AS s IGNORE INDEX (ia, ab) WHERE a = 3)")
	var sub *explainRow
	for i := range rs {
		if rs[i].table == "s" {
			sub = &rs[i]
		}
	}
	if sub == nil || sub.typ != "ALL" {
		t.Fatalf("IGNORE INDEX in a subquery: %+v", rs)
	}

	// Results never change.
	for _, q := range []string{
		"SELECT id FROM t %s WHERE a = 1 ORDER BY id",
		"SELECT id FROM t %s WHERE a > 8 AND b < 3 ORDER BY id",
		"SELECT id FROM t %s WHERE c IN ('v001', 'v150', 'x') ORDER BY id",
		"SELECT a FROM t %s ORDER BY a, id",
	} {
		want := rows(t, db, fmt.Sprintf(q, ""))
		if len(want) == 0 {
			t.Fatalf("%s: no rows to compare", q)
		}
		for _, h := range []string{"IGNORE INDEX (ia, ab, p)", "USE INDEX (ib)", "FORCE INDEX (ia)", "FORCE INDEX (p)", "USE INDEX (ab)"} {
			expectRows(t, db, fmt.Sprintf(q, h), want...)
		}
	}
	mustExec(t, db, "UPDATE t FORCE INDEX (ib) SET c = 'upd' WHERE b = 2")
	expectRows(t, db, "SELECT COUNT(*) FROM t IGNORE INDEX (p) WHERE c = 'upd'", "29")

	// A name the table does not have fails, as in MySQL.
	for _, h := range []string{"USE", "IGNORE", "FORCE"} {
		_, err := db.Exec("SELECT * FROM t " + h + " INDEX (nope) WHERE a = 1")
		expectErr(t, err, 1176, "Key 'nope' doesn't exist in table 't'")
	}
	// A table named twice with different hints: the hints are left out,
	// the statement still answers.
	expectRows(t, db, "SELECT COUNT(*) FROM t t1 FORCE INDEX (ia) JOIN t t2 IGNORE INDEX (ib) ON t1.id = t2.id WHERE t1.a = 1 AND t2.b = 1", "3")
	// A hint with prepared statements (the text has placeholders).
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t IGNORE INDEX (ia, ab) WHERE a = ?", 1).Scan(&n); err != nil || n != 20 {
		t.Fatalf("prepared with hint: %d, %v", n, err)
	}
}

// TestExplainFormats is issue 12 item 11.2: EXPLAIN, EXPLAIN FORMAT=TREE
// and EXPLAIN PLAN print a plan for a long IN list and for queries that
// return at most one row.
func TestExplainFormats(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	hintsTable(t, db)
	var in, sin []string
	for i := 0; i < 3000; i++ {
		in = append(in, fmt.Sprint(i))
		sin = append(sin, fmt.Sprintf("'v%03d'", i))
	}
	for _, q := range []string{
		"SELECT * FROM t WHERE a IN (" + strings.Join(in, ",") + ")",
		"SELECT * FROM t WHERE c IN (" + strings.Join(sin, ",") + ")",
		"SELECT COUNT(*) FROM t WHERE a BETWEEN 1 AND 3",
		"SELECT COUNT(*) FROM t",
		"SELECT * FROM t WHERE id = 7",
	} {
		for _, f := range []string{"EXPLAIN FORMAT=TREE ", "EXPLAIN PLAN "} {
			r := rows(t, db, f+q)
			if len(r) != 1 {
				t.Fatalf("%s%.60s: %d rows, want the plan in one", f, q, len(r))
			}
			plan := r[0]
			if !utf8.ValidString(plan) || strings.Contains(plan, "\uFFFD") {
				t.Fatalf("%s%.60s: invalid text", f, q)
			}
			lines := strings.Split(plan, "\n")
			for _, l := range lines {
				// Every line is a node, an item or a continuation of the tree.
				if strings.TrimSpace(l) == "" {
					t.Fatalf("%s%.60s: empty line in\n%s", f, q, plan)
				}
			}
			if strings.Contains(q, "IN (") && !strings.Contains(plan, "2999") {
				t.Fatalf("%s%.60s: the IN list is cut:\n%.2000s", f, q, plan)
			}
			if !strings.Contains(plan, "IndexedTableAccess(t)") && q != "SELECT COUNT(*) FROM t" {
				t.Fatalf("%s%.60s: no index access in\n%.2000s", f, q, plan)
			}
		}
		if len(explain(t, db, q)) != 1 {
			t.Fatalf("EXPLAIN %.60s: want one row", q)
		}
	}
	// The tree keeps its shape: the index access under the filter.
	plan := rows(t, db, "EXPLAIN FORMAT=TREE SELECT COUNT(*) FROM t WHERE a BETWEEN 1 AND 3")[0]
	for _, want := range []string{"GroupBy", "Filter", "((t.a >= 1) AND (t.a <= 3))", "IndexedTableAccess(t)", "index: [t.a]", "filters: [{[1, 3]}]"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan lacks %q:\n%s", want, plan)
		}
	}
	if strings.Index(plan, "Filter") > strings.Index(plan, "IndexedTableAccess") {
		t.Fatalf("plan out of order:\n%s", plan)
	}

	// Plain EXPLAIN: MySQL's columns, one row per table.
	expectAccess(t, db, "SELECT COUNT(*) FROM t WHERE a BETWEEN 1 AND 3", "range", "ia")
	expectAccess(t, db, "SELECT * FROM t WHERE id = 7", "const", "PRIMARY")
	expectAccess(t, db, "SELECT * FROM t WHERE a IN ("+strings.Join(in, ",")+")", "range", "ia") // LookupForExpressions: the narrowest index
	expectAccess(t, db, "SELECT * FROM t WHERE c = 'v001'", "ref", "p")
	expectAccess(t, db, "SELECT * FROM t WHERE c > 'v1'", "range", "p")
	if rs := explain(t, db, "SELECT 1"); len(rs) != 1 || rs[0].table != "" || rs[0].extra != "No tables used" {
		t.Fatalf("EXPLAIN SELECT 1: %+v", rs)
	}
	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, x INT, KEY ux (x))")
	rs := explain(t, db, "SELECT * FROM t JOIN u ON t.a = u.x WHERE t.b = 3")
	if len(rs) != 2 || rs[0].table == rs[1].table {
		t.Fatalf("EXPLAIN of a join: %+v", rs)
	}
	rs = explain(t, db, "SELECT * FROM t WHERE a = 1 UNION SELECT * FROM t WHERE b = 2")
	if len(rs) != 2 || rs[0].key != "ab" || rs[1].key != "ib" {
		t.Fatalf("EXPLAIN of a UNION: %+v", rs)
	}
	// Subqueries and derived tables come after the statement's tables;
	// INSERT ... SELECT shows its target and its source; nothing runs.
	rs = explain(t, db, "SELECT (SELECT MAX(x) FROM u WHERE u.x = t.a) FROM t")
	if len(rs) != 2 || rs[0].table != "t" || rs[1].table != "u" || rs[1].key != "ux" {
		t.Fatalf("EXPLAIN with a subquery: %+v", rs)
	}
	rs = explain(t, db, "SELECT * FROM (SELECT a FROM t WHERE a > 8) d")
	if len(rs) != 2 || rs[0].table != "<derived2>" || rs[1].table != "t" || rs[1].key != "ia" {
		t.Fatalf("EXPLAIN with a derived table: %+v", rs)
	}
	rs = explain(t, db, "INSERT INTO u SELECT id, a FROM t WHERE a = 1")
	if len(rs) != 2 || rs[0].table != "u" || rs[1].table != "t" || rs[1].typ != "ref" {
		t.Fatalf("EXPLAIN INSERT ... SELECT: %+v", rs)
	}
	expectRows(t, db, "SELECT COUNT(*) FROM u", "0")
}

// TestShowIndexSubPart is issue 12 item 11.3: SHOW INDEX shows a prefix
// key part's length (in characters) and counts the distinct values.
func TestShowIndexSubPart(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, `CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(20) CHARACTER SET utf8mb4, bl BLOB,
		KEY p (c(4)), KEY m (a, c(3)), KEY w (c), KEY bp (bl(5)))`)
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 'éééé-1', 'x'), (2, 1, 'éééé-2', 'y'), (3, 2, 'abc', 'z'), (4, 2, 'abd', 'z'), (5, NULL, NULL, NULL)")
	got := rows(t, db, "SHOW INDEX FROM t")
	var short []string
	for _, r := range got {
		f := strings.Split(r, ",")
		// Key_name, Seq_in_index, Column_name, Collation, Cardinality, Sub_part
		short = append(short, strings.Join([]string{f[2], f[3], f[4], f[5], f[6], f[7]}, " "))
	}
	want := []string{
		"PRIMARY 1 id A 5 NULL",
		"p 1 c A 4 4",    // 'éééé' twice, 'abc', 'abd', NULL
		"m 1 a A 3 NULL", // 1, 2, NULL
		"m 2 c A 4 3",    // (1,'ééé'), (2,'abc'), (2,'abd'), NULL
		"w 1 c A 5 NULL",
		"bp 1 bl A 4 5",
	}
	if !reflect.DeepEqual(short, want) {
		t.Fatalf("SHOW INDEX:\n got %q\nwant %q", short, want)
	}
	// information_schema.statistics says the same.
	expectRows(t, db, "SELECT index_name, seq_in_index, cardinality, sub_part FROM information_schema.statistics WHERE table_schema = 'app' AND table_name = 't' ORDER BY index_name, seq_in_index",
		"bp,1,4,5", "m,1,3,NULL", "m,2,4,3", "p,1,4,4", "PRIMARY,1,5,NULL", "w,1,5,NULL")
}

// TestShowIndexCardinalityEstimate: past the entries SHOW INDEX reads, the
// count is scaled by the index's size on disk; before the data reach the
// disk it is not known (NULL), never 0.
func TestShowIndexCardinalityEstimate(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, KEY ia (a), KEY ab (a, b))")
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d, %d)", i, i%500, i)
	}
	mustExec(t, db, "INSERT INTO t VALUES "+b.String())
	card := func() []string {
		var out []string
		for _, r := range rows(t, db, "SHOW INDEX FROM t") {
			out = append(out, strings.Split(r, ",")[6])
		}
		return out
	}
	want := []float64{20000, 500, 500, 20000}
	check := func(nullOK bool) {
		t.Helper()
		for i, g := range card() {
			if g == "NULL" && nullOK {
				continue
			}
			v, err := strconv.ParseFloat(g, 64)
			if err != nil || v < want[i]*0.5 || v > want[i]*2 {
				t.Fatalf("cardinality of key part %d: %s, want about %v", i, g, want[i])
			}
		}
	}
	check(true) // unknown (NULL) while the rows are in the memtable
	if err := s.Engine().Store().DB().Flush(); err != nil {
		t.Fatal(err)
	}
	check(false)
}

// TestUnionOfPointLookups: go-mysql-server flags a one-unique-key lookup
// as returning at most one row, and kept the flag when it was a branch of
// a UNION, which then failed ("max1Row iterator returned more than one
// row"); so did EXPLAIN of it.
func TestUnionOfPointLookups(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	hintsTable(t, db)
	expectRows(t, db, "SELECT id FROM t WHERE id = 1 UNION SELECT id FROM t WHERE id = 2", "1", "2")
	expectRows(t, db, "SELECT COUNT(*) FROM t WHERE a = 1 UNION ALL SELECT COUNT(*) FROM t WHERE a = 2", "20", "20")
	expectRows(t, db, "SELECT id FROM t WHERE id = 3", "3")
	expectRows(t, db, "SELECT COUNT(*) FROM t", "200")
	if rs := explain(t, db, "SELECT id FROM t WHERE id = 1 UNION SELECT id FROM t WHERE id = 2"); len(rs) != 2 || rs[0].typ != "const" || rs[1].typ != "const" {
		t.Fatalf("EXPLAIN of a UNION of points: %+v", rs)
	}
}

func TestQuotePrimaryInHints(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT * FROM t FORCE INDEX (PRIMARY) WHERE id > 1", "SELECT * FROM t FORCE INDEX (`PRIMARY`) WHERE id > 1"},
		{"select * from t force index(primary, ia) join u use index (`PRIMARY`) on 1", "select * from t force index(`PRIMARY`, ia) join u use index (`PRIMARY`) on 1"},
		{"SELECT 'x FORCE INDEX (PRIMARY)' FROM t FORCE INDEX (Primary)", "SELECT 'x FORCE INDEX (PRIMARY)' FROM t FORCE INDEX (`PRIMARY`)"},
		{"SELECT \"use index (primary)\", `ignore index (primary)` FROM t", "SELECT \"use index (primary)\", `ignore index (primary)` FROM t"},
		{"SELECT 1 /* force index (primary) */ FROM t -- use index (primary)\n", "SELECT 1 /* force index (primary) */ FROM t -- use index (primary)\n"},
		{"SELECT 'it''s', 'a\\'b' FROM t IGNORE INDEX (primary)", "SELECT 'it''s', 'a\\'b' FROM t IGNORE INDEX (`PRIMARY`)"},
		{"SELECT * FROM t IGNORE INDEX (primary_key, my_primary)", "SELECT * FROM t IGNORE INDEX (primary_key, my_primary)"},
		{"SELECT * FROM t", "SELECT * FROM t"},
	} {
		if got := rsql.QuotePrimaryInHints(c.in); got != c.want {
			t.Errorf("QuotePrimaryInHints(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
