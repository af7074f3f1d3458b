package server

import (
	"testing"

	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// normalized parses and normalizes q as fastQuery's parser path does.
func normalized(t *testing.T, q string) (string, map[string]*querypb.BindVariable) {
	t.Helper()
	stmt, err := sqlparser.Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	vars := map[string]*querypb.BindVariable{}
	sqlparser.Normalize(stmt, vars, "v")
	return sqlparser.String(stmt), vars
}

// reparsed is q's statement as the parser prints it.
func reparsed(t *testing.T, q string) string {
	t.Helper()
	stmt, err := sqlparser.Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return sqlparser.String(stmt)
}

// TestTextShapes: a mapping recorded from one statement binds a later
// statement with the same token key to exactly what the parser reads in
// it, or refuses; statements whose mapping is uncertain record none.
func TestTextShapes(t *testing.T) {
	for _, tc := range []struct {
		first   string
		record  bool     // first's mapping is recorded
		later   []string // same token key as first
		refused []string // same key, but bind must refuse
	}{
		{first: "SELECT c FROM t WHERE id = 1", record: true,
			later: []string{"SELECT c FROM t WHERE id=2", "SELECT  c  FROM t WHERE id = 9223372036854775807"}},
		{first: "SELECT c FROM t WHERE id = 18446744073709551615", record: false},
		{first: "SELECT c, pad FROM t WHERE id BETWEEN 3 AND 7", record: true,
			later:   []string{"SELECT c, pad FROM t WHERE id BETWEEN 7 AND 3"},
			refused: []string{"SELECT c, pad FROM t WHERE id BETWEEN 5 AND 5"}},
		// equal values share a variable in a SELECT: not recorded
		{first: "SELECT c, pad FROM t WHERE id BETWEEN 5 AND 5", record: false},
		{first: "INSERT INTO t (id, k, c, pad) VALUES (1, 2, 'a''b', 'c\\'d')", record: true,
			later: []string{
				"INSERT INTO t (id, k, c, pad) VALUES (7, 8, 'x', 'y')",
				"INSERT INTO t (id, k, c, pad) VALUES (0, 1, '', \"dq\")",
				"INSERT INTO t (id, k, c, pad) VALUES (3, 4, 'caf\xc3\xa9', '\\\\')",
			},
			refused: []string{"INSERT INTO t (id, k, c, pad) VALUES (7, 7, 'x', 'y')"}},
		{first: "UPDATE t SET c = 'x' WHERE id = 4", record: true,
			later: []string{"UPDATE t SET c = '5' WHERE id = 5"}},
		{first: "DELETE FROM t WHERE id = 10", record: true,
			later: []string{"DELETE FROM t WHERE id = 11"}},
		// a minus sign folds into the literal Normalize sees
		{first: "SELECT c FROM t WHERE id = -3", record: false},
		// LIMIT m OFFSET n is printed offset first
		{first: "SELECT c FROM t WHERE k = 1 LIMIT 10 OFFSET 20", record: false},
		{first: "SELECT c FROM t WHERE k = 1 LIMIT 10, 20", record: true,
			later: []string{"SELECT c FROM t WHERE k = 2 LIMIT 0, 1"}},
		{first: "SELECT c FROM t ORDER BY 1", record: false},
	} {
		key, lits, ok := textTokens(tc.first, false)
		if !ok {
			t.Fatalf("%s: no token key", tc.first)
		}
		norm, vars := normalized(t, tc.first)
		sh := shapeOf(&fastEntry{}, lits, norm, vars)
		if (sh != nil) != tc.record {
			t.Fatalf("%s: recorded=%v, want %v", tc.first, sh != nil, tc.record)
		}
		if sh == nil {
			continue
		}
		tmpl := sqlparser.NewParsedQuery(mustParse(t, norm))
		for _, q := range tc.later {
			k2, lits2, ok := textTokens(q, false)
			if !ok || k2 != key {
				t.Fatalf("%s: token key differs from %s's", q, tc.first)
			}
			bound, ok := sh.bind(lits2)
			if !ok {
				t.Fatalf("%s: bind refused", q)
			}
			got, err := tmpl.GenerateQuery(bound, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reparsed(t, got), reparsed(t, q); g != w {
				t.Errorf("%s: bound to %s, the parser reads %s", q, g, w)
			}
		}
		for _, q := range tc.refused {
			k2, lits2, _ := textTokens(q, false)
			if k2 != key {
				t.Fatalf("%s: token key differs from %s's", q, tc.first)
			}
			if _, ok := sh.bind(lits2); ok {
				t.Errorf("%s: bound, want refused", q)
			}
		}
	}
}

func mustParse(t *testing.T, q string) sqlparser.Statement {
	t.Helper()
	stmt, err := sqlparser.Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return stmt
}

// TestTextTokensRefuse: statements the token cache leaves to the parser.
func TestTextTokensRefuse(t *testing.T) {
	for _, q := range []string{
		"SELECT c FROM t WHERE id = ?",
		"SELECT c FROM t WHERE id = :name",
		"SELECT c FROM t WHERE id = 1 # comment",
		"SELECT c FROM t WHERE id = 1 -- comment",
		"SELECT c FROM t WHERE id = 'unterminated",
	} {
		if _, _, ok := textTokens(q, false); ok {
			t.Errorf("%s: token key made", q)
		}
	}
	// ANSI_QUOTES reads "c" as a column: another key than the string's.
	k1, _, _ := textTokens(`SELECT "c" FROM t WHERE id = 1`, true)
	k2, _, _ := textTokens(`SELECT "c" FROM t WHERE id = 1`, false)
	if k1 == k2 {
		t.Error("ANSI_QUOTES does not change the token key")
	}
}
