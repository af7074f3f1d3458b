package sql

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// inListLookupMin is the length from which an IN list of literals is
// turned into an index lookup here rather than by go-mysql-server's
// costing, which is quadratic in the list: it checks every pair of ranges
// for overlap (sql.RemoveOverlappingRanges, validateRangeCollection),
// with a collation comparison each time, which for long lists costs far
// more than the lookup itself. Shorter lists go the usual way, which
// also weighs composite indexes against the other filters.
const inListLookupMin = 128

var _ gms.IndexSearchableTable = (*Table)(nil)

// SkipIndexCosting implements sql.IndexSearchable: go-mysql-server's
// costing handles everything LookupForExpressions leaves.
func (t *Table) SkipIndexCosting() bool { return false }

// LookupForExpressions implements sql.IndexSearchable: a long
// "col IN (literal, ...)" becomes a lookup of one point per value on an
// index that starts with col, among those the statement's hints allow.
// The ranges are not sorted nor deduplicated: the spans are (mergeSpans,
// mergeKVSpans). The first range is listed twice, which stops
// go-mysql-server's quadratic overlap check before it drops an ORDER BY
// (replaceIdxSort) at the first pair: the sort stays, on the rows found.
// All the filters stay too (PreciseMatch is false).
func (t *Table) LookupForExpressions(ctx *gms.Context, exprs ...gms.Expression) (gms.IndexLookup, *gms.FuncDepSet, gms.Expression, bool, error) {
	for _, e := range exprs {
		col, vals := t.inList(ctx, e)
		if col < 0 {
			continue
		}
		ix := t.indexStartingWith(ctx, col)
		if ix == nil {
			continue
		}
		types := make([]gms.Type, len(ix.ix.pos))
		for k, p := range ix.ix.pos {
			types[k] = t.m.schema[p].Type
		}
		ranges := make(gms.MySQLRangeCollection, 0, len(vals)+1)
		for _, v := range vals {
			r := make(gms.MySQLRange, len(types))
			r[0] = gms.ClosedRangeColumnExpr(v, v, types[0])
			for k := 1; k < len(types); k++ {
				r[k] = gms.AllRangeColumnExpr(types[k])
			}
			ranges = append(ranges, r)
		}
		ranges = append(gms.MySQLRangeCollection{ranges[0]}, ranges...)
		lookup := gms.NewIndexLookup(ix, ranges, false, false, false, false)
		return lookup, nil, expression.JoinAnd(exprs...), true, nil
	}
	return gms.IndexLookup{}, nil, nil, false, nil
}

// inList returns the column position and values of e when it is
// "col IN (v, ...)" with at least inListLookupMin non-NULL literals of
// col's kind (strings for a string column, numbers for a number one: a
// string column compared with numbers compares as numbers, which no key
// order follows), else -1.
func (t *Table) inList(ctx *gms.Context, e gms.Expression) (int, []any) {
	switch e.(type) {
	case *expression.InTuple, *expression.HashInTuple:
	default:
		return -1, nil
	}
	bin, ok := e.(interface {
		Left() gms.Expression
		Right() gms.Expression
	})
	if !ok {
		return -1, nil
	}
	gf, ok := bin.Left().(*expression.GetField)
	if !ok {
		return -1, nil
	}
	tup, ok := bin.Right().(expression.Tuple)
	if !ok || len(tup) < inListLookupMin {
		return -1, nil
	}
	col := -1
	for i, c := range t.m.schema {
		if strings.EqualFold(c.Name, gf.Name()) {
			col = i
			break
		}
	}
	if col < 0 {
		return -1, nil
	}
	kind := t.m.kinds[col]
	number := kind >= kindInt8 && kind <= kindDecimal
	vals := make([]any, 0, len(tup))
	for _, x := range tup {
		v, lt, ok := literalValue(ctx, x)
		if !ok {
			return -1, nil
		}
		switch {
		case v == nil:
			continue // matches nothing
		case number && types.IsNumber(lt):
		case kind == kindString && types.IsTextOnly(lt):
		case kind == kindBytes && (types.IsTextOnly(lt) || types.IsBinaryType(lt)):
		default:
			return -1, nil
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return -1, nil
	}
	return col, vals
}

// literalValue returns the value and type of a literal, or of a negated
// number literal (the parser's "-5").
func literalValue(ctx *gms.Context, e gms.Expression) (any, gms.Type, bool) {
	switch x := e.(type) {
	case *expression.Literal:
		return x.Value(), x.Type(), true
	case *expression.UnaryMinus:
		if _, ok := x.Child.(*expression.Literal); !ok {
			return nil, nil, false
		}
		v, err := x.Eval(ctx, nil)
		if err != nil {
			return nil, nil, false
		}
		return v, x.Type(), true
	}
	return nil, nil, false
}

// indexStartingWith picks the index to look col's values up in, among
// those GetIndexes offers: one whose first column is col, preferring a
// whole column to a prefix, then a unique index, then fewer columns.
func (t *Table) indexStartingWith(ctx *gms.Context, col int) *Index {
	idxs, err := t.GetIndexes(ctx)
	if err != nil {
		return nil
	}
	var best *Index
	score := func(ix *Index) int {
		s := 0
		if ix.ix.prefix[0] == 0 {
			s += 1000
		}
		if ix.IsUnique() {
			s += 100
		}
		return s - len(ix.ix.pos)
	}
	for _, gi := range idxs {
		ix, ok := gi.(*Index)
		if !ok || len(ix.ix.pos) == 0 || ix.ix.pos[0] != col {
			continue
		}
		if best == nil || score(ix) > score(best) {
			best = ix
		}
	}
	return best
}
