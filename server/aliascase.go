package server

import (
	"strings"

	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// aliasCase gives result columns the table alias as the statement spells
// it: go-mysql-server lowercases aliases (SELECT * FROM (SELECT 1 AS one)
// AS A says table "a"), where MySQL keeps the spelling, which clients show
// (go-sql-driver's columnsWithAlias names the column "A.one").
func aliasCase(fields []*querypb.Field, query string) {
	lq := ""
	for _, f := range fields {
		if f.Table == "" || strings.ToLower(f.Table) != f.Table || !spelledOtherwise(query, f.Table) {
			continue
		}
		if lq == "" {
			lq = strings.ToLower(query)
		}
		if s := spelling(query, lq, f.Table); s != "" {
			f.Table = s
		}
	}
}

// spelledOtherwise reports whether query may spell lower in other cases,
// without lowering the whole query, which most statements (every
// execution of a prepared one) would do for nothing. A query with non-ASCII
// bytes may, since lowering it can move its offsets.
func spelledOtherwise(query, lower string) bool {
	for i := 0; i < len(query); i++ {
		if query[i] >= 0x80 {
			return true
		}
		if i+len(lower) <= len(query) && query[i]|0x20 == lower[0]|0x20 {
			if w := query[i : i+len(lower)]; w != lower && strings.EqualFold(w, lower) {
				return true
			}
		}
	}
	return false
}

// spelling is how query spells the alias lower where it defines it (AS
// lower) or qualifies a column with it (lower.col), when that differs
// from lower; lq is query in lower case. Other words of the same letters
// (a column A) are not taken for the alias.
func spelling(query, lq, lower string) string {
	for i := 0; ; {
		j := strings.Index(lq[i:], lower)
		if j < 0 {
			return ""
		}
		start, end := i+j, i+j+len(lower)
		i = start + 1
		word := query[start:end]
		if word == lower || (start > 0 && identByte(query[start-1])) || (end < len(query) && identByte(query[end])) {
			continue
		}
		if (end < len(query) && query[end] == '.') || strings.HasSuffix(strings.TrimRight(lq[:start], " \t\r\n"), " as") {
			return word
		}
	}
}

func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}
