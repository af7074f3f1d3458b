package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// RewriteAlterCharset writes the word CHARSET of an ALTER statement as
// CHARACTER SET, which is all vitess's grammar takes there, where MySQL
// takes both (ALTER TABLE t [DEFAULT] CHARSET [=] x, CONVERT TO CHARSET x,
// ALTER DATABASE d CHARSET x). Other statements, and CHARSET in quotes or
// comments, are left as they are.
func RewriteAlterCharset(q string) string {
	if !MayAlterCharset(q) {
		return q
	}
	toks, ok := lockTokens(q)
	if !ok || len(toks) == 0 || toks[0].typ != sqlparser.ALTER {
		return q
	}
	var b strings.Builder
	last := 0
	for _, t := range toks {
		if t.typ != sqlparser.CHARSET {
			continue
		}
		b.WriteString(q[last:t.start])
		b.WriteString("CHARACTER SET")
		last = t.end
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// MayAlterCharset is a cheap test that q begins with ALTER and holds the
// word CHARSET in any case.
func MayAlterCharset[T string | []byte](q T) bool {
	i := 0
	for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\r' || q[i] == '\n') {
		i++
	}
	if len(q)-i < 5 || !foldEqual(q[i:i+5], "alter") {
		return false
	}
	for ; i+7 <= len(q); i++ {
		if q[i]|0x20 == 'c' && foldEqual(q[i:i+7], "charset") {
			return true
		}
	}
	return false
}
