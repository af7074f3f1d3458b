package server

import (
	"strings"
	"testing"
	"unicode"
)

// statementType names a statement by its first keyword in any case, after
// blanks, parentheses and comments; anything else, or a longer word that
// starts like a keyword, is "other".
func TestStatementType(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                        "select",
		"  (select 1)":                    "select",
		"/* hint */ InSeRt INTO t VALUES": "insert",
		"/* a */ /* b */ update t set":    "update",
		"Describe t":                      "describe",
		"desc t":                          "desc",
		"ROLLBACK":                        "rollback",
		"selects":                         "other",
		"describes t":                     "other",
		"truncated":                       "other",
		"CALL p()":                        "other",
		"":                                "other",
		"/* unterminated":                 "other",
		"sélect 1":                        "other",
	} {
		if got := statementType(q); got != want {
			t.Errorf("statementType(%q) = %q, want %q", q, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { statementType("SELECT c FROM sbtest1 WHERE id=?") }); n != 0 {
		t.Errorf("statementType allocates %v times", n)
	}
}

// spelledOtherwise never says no where lowering the query would find the
// alias in another spelling: checked against the definition on queries
// built from a few fragments in every case.
func TestSpelledOtherwise(t *testing.T) {
	frags := []string{"select ", "a.x ", "A.x ", "ab ", "aB ", "from t as ", "tAb", "é", "ta", "b"}
	for i := range 1 << 16 {
		var q strings.Builder
		for j := 0; j < 4; j++ {
			q.WriteString(frags[(i>>(4*j))&15%len(frags)])
		}
		query := q.String()
		for _, lower := range []string{"a", "ab", "tab"} {
			want := false
			lq := strings.ToLower(query)
			for k := 0; k+len(lower) <= len(lq); k++ {
				if lq[k:k+len(lower)] == lower && query[k:k+len(lower)] != lower {
					want = true
				}
			}
			if want && !spelledOtherwise(query, lower) {
				t.Fatalf("spelledOtherwise(%q, %q) = false, but it is spelled otherwise", query, lower)
			}
			if !want && spelledOtherwise(query, lower) && !strings.ContainsFunc(query, func(r rune) bool { return r > unicode.MaxASCII }) {
				t.Fatalf("spelledOtherwise(%q, %q) = true for an ASCII query that spells it only in lower case", query, lower)
			}
		}
	}
}
