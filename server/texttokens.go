package server

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A text statement seen before is recognised without parsing it again.
// go-mysql-server's parser is a yacc machine whose deep stack makes every
// call grow its goroutine's stack, which for a one-row INSERT costs more
// than executing it. The statement's tokens, with each integer and string
// literal replaced by a hole, key a per-connection cache that maps the
// holes, in text order, to the bind variables sqlparser.Normalize would
// have made of them.
//
// Why that is exact: two statements with the same token key differ only in
// the values of those literals, and the grammar does not look at a
// literal's value, so they parse to the same tree with the same literals
// in the same places, and Normalize (which walks that tree) names them
// alike. The mapping is recorded from a statement that went through the
// parser and Normalize, and only when its literal values are pairwise
// distinct: then each hole's variable is the one holding that hole's
// value, with no ambiguity. Within a SELECT, Normalize shares one
// variable between equal values, so a statement whose literals are not
// distinct takes the parser's path.

// textLit is one literal hole of a statement's token key.
type textLit struct {
	typ int // sqlparser.INTEGRAL or sqlparser.STRING
	val []byte
}

// textTokens is the token key of q and its literals; ok is false for a
// statement the cache does not take (comments, placeholders of its own,
// a lexical error).
func textTokens(q string, ansiQuotes bool) (key string, lits []textLit, ok bool) {
	var tkn *sqlparser.Tokenizer
	if ansiQuotes {
		tkn = sqlparser.NewStringTokenizerForAnsiQuotes(q)
	} else {
		tkn = sqlparser.NewStringTokenizer(q)
	}
	var b strings.Builder
	b.Grow(len(q))
	if ansiQuotes {
		b.WriteByte('"')
	}
	var n [binary.MaxVarintLen64]byte
	for {
		typ, val := tkn.Scan()
		switch typ {
		case 0:
			return b.String(), lits, true
		case sqlparser.LEX_ERROR, sqlparser.COMMENT, sqlparser.VALUE_ARG, sqlparser.LIST_ARG:
			return "", nil, false
		}
		b.Write(n[:binary.PutUvarint(n[:], uint64(typ))])
		if typ == sqlparser.INTEGRAL || typ == sqlparser.STRING {
			lits = append(lits, textLit{typ: typ, val: val})
			continue
		}
		b.Write(n[:binary.PutUvarint(n[:], uint64(len(val)))])
		b.Write(val)
	}
}

// bindVar is the bind variable Normalize makes of the literal.
func (l textLit) bindVar() (*querypb.BindVariable, bool) {
	t := sqltypes.VarBinary
	if l.typ == sqlparser.INTEGRAL {
		t = sqltypes.Int64
	}
	v, err := sqltypes.NewValue(t, l.val)
	if err != nil {
		return nil, false
	}
	return sqltypes.ValueBindVariable(v), true
}

// textShape is a cached token key: the fast statement and, for each
// literal hole, the name of its bind variable.
type textShape struct {
	e     *fastEntry
	names []string
}

// bind makes the bind variables of a statement with the shape's key. It
// refuses literals with equal values, which Normalize would have shared
// in one variable in a SELECT: go-mysql-server plans `BETWEEN 2 AND 2`
// otherwise than `BETWEEN ? AND ?`.
func (s *textShape) bind(lits []textLit) (map[string]*querypb.BindVariable, bool) {
	if len(lits) != len(s.names) || !distinct(lits) {
		return nil, false
	}
	vars := make(map[string]*querypb.BindVariable, len(lits))
	for i, l := range lits {
		bv, ok := l.bindVar()
		if !ok {
			return nil, false
		}
		vars[s.names[i]] = bv
	}
	return vars, true
}

// distinct says no two literals have the same type and value.
func distinct(lits []textLit) bool {
	for i := range lits {
		for j := i + 1; j < len(lits); j++ {
			if lits[i].typ == lits[j].typ && bytes.Equal(lits[i].val, lits[j].val) {
				return false
			}
		}
	}
	return true
}

// shapeOf records how the literals of a statement map to the variables
// Normalize made (normalized is its normalized text); nil when the
// mapping is not certain.
func shapeOf(e *fastEntry, lits []textLit, normalized string, vars map[string]*querypb.BindVariable) *textShape {
	if !distinct(lits) {
		return nil
	}
	var names []string
	tkn := sqlparser.NewStringTokenizer(normalized)
	for {
		typ, val := tkn.Scan()
		if typ == 0 {
			break
		}
		if typ == sqlparser.LIST_ARG || typ == sqlparser.LEX_ERROR {
			return nil
		}
		if typ == sqlparser.VALUE_ARG {
			names = append(names, strings.TrimPrefix(string(val), ":"))
		}
	}
	if len(names) != len(lits) || len(vars) != len(lits) {
		return nil
	}
	for i, l := range lits {
		bv, ok := l.bindVar()
		if !ok || vars[names[i]] == nil || !sameBindVar(vars[names[i]], bv) {
			return nil
		}
	}
	return &textShape{e: e, names: names}
}

func sameBindVar(a, b *querypb.BindVariable) bool {
	return a.Type == b.Type && bytes.Equal(a.Value, b.Value)
}

// litsBindable says Normalize turns every literal into a bind variable
// (it leaves an integer that does not fit in 64 bits as it is).
func litsBindable(lits []textLit) bool {
	for _, l := range lits {
		if _, ok := l.bindVar(); !ok {
			return false
		}
	}
	return true
}
