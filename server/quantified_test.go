package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// quantSets are the subquery results TestQuantifiedComparisons compares
// against, by group: empty, with and without NULLs.
var quantSets = map[int][]*int{
	1: {},
	2: {iptr(2)},
	3: {iptr(2), nil},
	4: {nil},
	5: {iptr(1), iptr(2), iptr(3)},
	6: {iptr(1), nil, iptr(3)},
}

func iptr(v int) *int { return &v }

// quantWant is MySQL's x op ANY|ALL (set): 1, 0 or "NULL".
func quantWant(x *int, op string, all bool, set []*int) string {
	sawNull, sawTrue, sawFalse := false, false, false
	for _, s := range set {
		if x == nil || s == nil {
			sawNull = true
			continue
		}
		if cmpInts(*x, op, *s) {
			sawTrue = true
		} else {
			sawFalse = true
		}
	}
	switch {
	case !all && sawTrue, all && !sawFalse && !sawNull:
		return "1"
	case !all && !sawNull, all && sawFalse:
		return "0"
	}
	return "NULL"
}

func cmpInts(a int, op string, b int) bool {
	switch op {
	case "=":
		return a == b
	case "<>", "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	}
	return a >= b
}

// TestQuantifiedComparisons checks x op ANY|SOME|ALL (subquery) for every
// comparison against MySQL's three-valued rule, with NULL operands, NULL
// rows and empty subqueries, correlated and not.
func TestQuantifiedComparisons(t *testing.T) {
	s := servertest.Start(t)
	c := pinConn(t, s.DB(""))
	c.exec("CREATE DATABASE q", "USE q", "CREATE TABLE s (id INT PRIMARY KEY AUTO_INCREMENT, grp INT, v INT)",
		"CREATE TABLE g (grp INT PRIMARY KEY)", "CREATE TABLE xs (id INT PRIMARY KEY, x INT)",
		"INSERT INTO xs VALUES (0, NULL), (1, 1), (2, 2), (3, 3), (4, 4)")
	for grp, set := range quantSets {
		c.exec(fmt.Sprintf("INSERT INTO g VALUES (%d)", grp))
		for _, v := range set {
			val := "NULL"
			if v != nil {
				val = fmt.Sprint(*v)
			}
			c.exec(fmt.Sprintf("INSERT INTO s (grp, v) VALUES (%d, %s)", grp, val))
		}
	}
	// The same with an aggregate as the left operand, in a grouped query.
	c.exec("CREATE TABLE xg (id INT PRIMARY KEY, g INT, a INT)",
		"INSERT INTO xg VALUES (1, 0, NULL), (2, 1, 1), (3, 2, 1), (4, 2, 1), (5, 3, 3), (6, 4, 2), (7, 4, 2)")
	xs := []*int{nil, iptr(1), iptr(2), iptr(3), iptr(4)}
	for _, op := range []string{"=", "<>", "<", ">="} {
		for _, quant := range []string{"ANY", "ALL"} {
			for grp := 1; grp <= len(quantSets); grp++ {
				var want []string
				for i, x := range xs {
					want = append(want, fmt.Sprintf("%d,%s", i, quantWant(x, op, quant == "ALL", quantSets[grp])))
				}
				q := fmt.Sprintf("SELECT g, SUM(a) %s %s (SELECT v FROM s WHERE grp = %d) FROM xg GROUP BY g ORDER BY g", op, quant, grp)
				c.want(q, strings.Join(want, ";"))
			}
		}
	}
	for _, op := range []string{"=", "<>", "!=", "<", "<=", ">", ">="} {
		for _, quant := range []string{"ANY", "SOME", "ALL"} {
			var want []string
			for grp := 1; grp <= len(quantSets); grp++ {
				for i, x := range xs {
					want = append(want, fmt.Sprintf("%d,%d,%s", grp, i, quantWant(x, op, quant == "ALL", quantSets[grp])))
				}
			}
			q := fmt.Sprintf("SELECT g.grp, xs.id, xs.x %s %s (SELECT v FROM s WHERE s.grp = g.grp) FROM g, xs ORDER BY 1, 2", op, quant)
			c.want(q, strings.Join(want, ";"))
			// Not correlated, in WHERE, with the subquery in its own parentheses.
			for grp := 1; grp <= len(quantSets); grp++ {
				var ids []string
				for i, x := range xs {
					if quantWant(x, op, quant == "ALL", quantSets[grp]) == "1" {
						ids = append(ids, fmt.Sprint(i))
					}
				}
				q := fmt.Sprintf("SELECT id FROM xs WHERE id >= 0 AND x %s %s ((SELECT v FROM s WHERE grp = %d)) ORDER BY id", op, quant, grp)
				c.want(q, strings.Join(ids, ";"))
			}
		}
	}
}

// TestQuantifiedShapes checks quantified comparisons nested, with
// compound operands, in prepared statements, and text that only looks
// like one.
func TestQuantifiedShapes(t *testing.T) {
	s := servertest.Start(t)
	c := pinConn(t, s.DB(""))
	c.exec("CREATE DATABASE q", "USE q", "CREATE TABLE t (a INT PRIMARY KEY, b INT)",
		"INSERT INTO t VALUES (1, 10), (2, 20), (3, NULL)")
	c.want("SELECT a FROM t WHERE a + 1 > ALL (SELECT a FROM t WHERE a < 2) ORDER BY a", "1;2;3")
	c.want("SELECT a FROM t WHERE a > ANY (SELECT a FROM t WHERE a >= ALL (SELECT a FROM t)) ORDER BY a", "")
	c.want("SELECT a FROM t WHERE a < ANY (SELECT a FROM t WHERE a >= ALL (SELECT a FROM t)) ORDER BY a", "1;2")
	c.want("SELECT a FROM t WHERE (a > ANY (SELECT 1)) = ALL (SELECT 1) ORDER BY a", "2;3")
	c.want("SELECT a, COALESCE(b, 0) * 2 >= SOME (SELECT b FROM t UNION SELECT 40) FROM t ORDER BY a", "1,1;2,1;3,NULL")
	c.want("SELECT CASE WHEN a = 1 THEN 5 ELSE 0 END > ALL (SELECT a FROM t) FROM t ORDER BY a", "1;0;0")
	c.want("SELECT a FROM t WHERE NOT a = ANY (SELECT a FROM t WHERE a <> 2) ORDER BY a", "2")
	c.want("SELECT 'x > ANY (SELECT 1)', `b` <> ALL (SELECT 7) FROM t WHERE a = 1", "x > ANY (SELECT 1),1")
	c.want("SELECT a FROM t WHERE a > ANY (SELECT a FROM t WHERE b > ?) ORDER BY a", "3", 10)
	c.want("SELECT a FROM t WHERE b IS NOT NULL AND b <= ALL (SELECT b FROM t WHERE b IS NOT NULL)", "1")
	c.wantErr("SELECT 1 > ANY (SELECT 1, 2)", 1241, "Operand should contain 1 column(s)")
	c.wantErr("SELECT 1 > ANY (())", 1064, "")
	c.wantErr("SELECT 1 > ALL ((", 1064, "")
	c.wantErr("SELECT 1 = ANY (SELECT 1, 2)", 1241, "Operand should contain 1 column(s)")
	c.exec("CREATE VIEW v AS SELECT a FROM t WHERE a > ANY (SELECT a FROM t)")
	c.want("SELECT * FROM v ORDER BY a", "2;3")

	// An unaliased comparison's column is named by its text, as in MySQL.
	rows, err := s.DB("q").Query("SELECT a, a >= ALL (SELECT a FROM t) , (SELECT 3 > ANY (SELECT a FROM t)) AS x FROM t")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if want := "a|a >= ALL (SELECT a FROM t)|x"; strings.Join(cols, "|") != want {
		t.Fatalf("columns %q, want %q", strings.Join(cols, "|"), want)
	}
}
