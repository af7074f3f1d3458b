package sql

import (
	"bytes"
	"context"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/codec"
)

// Index exposes one ReorgDB index to go-mysql-server's planner.
type Index struct {
	m  *tableMeta
	ix *indexMeta
}

var (
	_ gms.Index        = (*Index)(nil)
	_ gms.OrderedIndex = (*Index)(nil)
)

func newIndex(m *tableMeta, ix *indexMeta) *Index { return &Index{m: m, ix: ix} }

func (i *Index) ID() string       { return i.ix.name() }
func (i *Index) Database() string { return i.m.dbName }
func (i *Index) Table() string    { return i.m.def.Name }
func (i *Index) Expressions() []string {
	out := make([]string, len(i.ix.pos))
	for k, p := range i.ix.pos {
		out[k] = i.m.def.Name + "." + i.m.schema[p].Name
	}
	return out
}
func (i *Index) IsUnique() bool    { return i.ix.unique() }
func (i *Index) IsSpatial() bool   { return false }
func (i *Index) IsFullText() bool  { return false }
func (i *Index) IsVector() bool    { return false }
func (i *Index) IsGenerated() bool { return false }
func (i *Index) Comment() string {
	if i.ix.def == nil {
		return ""
	}
	return i.ix.def.Comment
}
func (i *Index) IndexType() string { return "BTREE" }
func (i *Index) ColumnExpressionTypes() []gms.ColumnExpressionType {
	out := make([]gms.ColumnExpressionType, len(i.ix.pos))
	for k, p := range i.ix.pos {
		out[k] = gms.ColumnExpressionType{Expression: i.m.def.Name + "." + i.m.schema[p].Name, Type: i.m.schema[p].Type}
	}
	return out
}
func (i *Index) CanSupport(*gms.Context, ...gms.Range) bool { return true }
func (i *Index) CanSupportOrderBy(expr gms.Expression) bool { return false }
func (i *Index) Order() gms.IndexOrder                      { return gms.IndexOrderAsc }
func (i *Index) Reversible() bool                           { return true }
func (i *Index) PrefixLengths() []uint16 {
	has := false
	out := make([]uint16, len(i.ix.prefix))
	for k, p := range i.ix.prefix {
		out[k] = uint16(p)
		has = has || p > 0
	}
	if !has {
		return nil
	}
	return out
}

// keySpan is a half-open range [start, end) of encoded index-column tuples
// (without the table/index prefix).
type keySpan struct{ start, end []byte }

// spansFor turns the planner's ranges into spans of encoded key tuples.
// Spans may be wider than the ranges (go-mysql-server re-applies the
// filter since PreciseMatch is false), never narrower.
func (i *Index) spansFor(ctx context.Context, ranges gms.MySQLRangeCollection) ([]keySpan, error) {
	spans := make([]keySpan, 0, len(ranges))
	for _, r := range ranges {
		sp, empty, err := i.spanFor(ctx, r)
		if err != nil {
			return nil, err
		}
		if !empty {
			spans = append(spans, sp)
		}
	}
	return spans, nil
}

func (i *Index) spanFor(ctx context.Context, r gms.MySQLRange) (keySpan, bool, error) {
	var prefix []byte
	for c, ce := range r {
		if c >= len(i.ix.pos) {
			break
		}
		p := i.ix.pos[c]
		kind := i.m.kinds[p]
		typ := i.m.schema[p].Type
		// A column fixed to one value extends the common prefix.
		if lb, ok := ce.LowerBound.(gms.Below); ok {
			if ub, ok := ce.UpperBound.(gms.Above); ok && i.ix.prefix[c] == 0 {
				lv, lok := boundValue(ctx, kind, typ, lb.Key)
				uv, uok := boundValue(ctx, kind, typ, ub.Key)
				if lok && uok {
					le, err := codec.EncodeKey(nil, lv)
					if err != nil {
						return keySpan{}, false, err
					}
					ue, err := codec.EncodeKey(nil, uv)
					if err != nil {
						return keySpan{}, false, err
					}
					if bytes.Equal(le, ue) {
						prefix = append(prefix, le...)
						continue
					}
				}
			}
		}
		if _, ok := ce.LowerBound.(gms.BelowNull); ok {
			if _, ok := ce.UpperBound.(gms.AboveNull); ok {
				// IS NULL: a fixed value too.
				prefix, _ = codec.EncodeKey(prefix, nil)
				continue
			}
		}
		start, err := i.lowerKey(ctx, prefix, c, ce.LowerBound)
		if err != nil {
			return keySpan{}, false, err
		}
		end, err := i.upperKey(ctx, prefix, c, ce.UpperBound)
		if err != nil {
			return keySpan{}, false, err
		}
		if end != nil && bytes.Compare(start, end) >= 0 {
			return keySpan{}, true, nil
		}
		return keySpan{start, end}, false, nil
	}
	return keySpan{start: prefix, end: codec.PrefixEnd(prefix)}, false, nil
}

// boundValue converts a range bound to the column's canonical value, and
// reports false when that is not exact (then the bound is dropped, which
// only widens the scan).
func boundValue(ctx context.Context, kind valueKind, typ gms.Type, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	cv, inRange, err := typ.Convert(ctx, v)
	if err != nil || inRange != gms.InRange {
		return nil, false
	}
	if cmp, err := typ.Compare(ctx, cv, v); err != nil || cmp != 0 {
		return nil, false
	}
	c, err := toCanonical(kind, cv)
	if err != nil {
		return nil, false
	}
	return c, true
}

func (i *Index) lowerKey(ctx context.Context, prefix []byte, c int, cut gms.MySQLRangeCut) ([]byte, error) {
	p := i.ix.pos[c]
	kind, typ := i.m.kinds[p], i.m.schema[p].Type
	start := append([]byte(nil), prefix...)
	switch b := cut.(type) {
	case gms.BelowNull:
		return start, nil
	case gms.AboveNull:
		nullKey, _ := codec.EncodeKey(start, nil)
		return codec.PrefixEnd(nullKey), nil
	case gms.Below, gms.Above:
		v, ok := boundValue(ctx, kind, typ, gms.GetMySQLRangeCutKey(b))
		if !ok || i.ix.prefix[c] > 0 {
			// Not exact, or a prefix index: start after the NULLs when the
			// bound excludes them, else at the beginning.
			nullKey, _ := codec.EncodeKey(start, nil)
			return codec.PrefixEnd(nullKey), nil
		}
		k, err := codec.EncodeKey(start, v)
		if err != nil {
			return nil, err
		}
		if _, above := b.(gms.Above); above {
			return codec.PrefixEnd(k), nil
		}
		return k, nil
	}
	return start, nil
}

func (i *Index) upperKey(ctx context.Context, prefix []byte, c int, cut gms.MySQLRangeCut) ([]byte, error) {
	p := i.ix.pos[c]
	kind, typ := i.m.kinds[p], i.m.schema[p].Type
	switch b := cut.(type) {
	case gms.AboveAll:
		return codec.PrefixEnd(prefix), nil
	case gms.AboveNull:
		nullKey, _ := codec.EncodeKey(append([]byte(nil), prefix...), nil)
		return codec.PrefixEnd(nullKey), nil
	case gms.BelowNull:
		return append([]byte(nil), prefix...), nil
	case gms.Below, gms.Above:
		v, ok := boundValue(ctx, kind, typ, gms.GetMySQLRangeCutKey(b))
		if !ok || i.ix.prefix[c] > 0 {
			return codec.PrefixEnd(prefix), nil
		}
		k, err := codec.EncodeKey(append([]byte(nil), prefix...), v)
		if err != nil {
			return nil, err
		}
		if _, above := b.(gms.Above); above {
			return codec.PrefixEnd(k), nil
		}
		return k, nil
	}
	return codec.PrefixEnd(prefix), nil
}

func (i *Index) String() string { return strings.ToLower(i.ix.name()) }

// handleBounds turns a range on the integer PK into inclusive handle bounds.
func (i *Index) handleBounds(ctx context.Context, r gms.MySQLRange) (lo, hi int64, empty bool) {
	lo, hi = minInt64, maxInt64
	if len(r) == 0 {
		return lo, hi, false
	}
	ce := r[0]
	p := i.ix.pos[0]
	kind, typ := i.m.kinds[p], i.m.schema[p].Type
	toInt := func(v any) (int64, bool) {
		c, ok := boundValue(ctx, kind, typ, v)
		if !ok || c == nil {
			return 0, false
		}
		switch x := c.(type) {
		case int64:
			return x, true
		case uint64:
			if x > maxInt64 {
				return 0, false
			}
			return int64(x), true
		}
		return 0, false
	}
	switch b := ce.LowerBound.(type) {
	case gms.Below:
		if v, ok := toInt(b.Key); ok {
			lo = v
		}
	case gms.Above:
		if v, ok := toInt(b.Key); ok {
			if v == maxInt64 {
				return 0, 0, true
			}
			lo = v + 1
		}
	case gms.AboveAll:
		return 0, 0, true
	}
	switch b := ce.UpperBound.(type) {
	case gms.Above:
		if v, ok := toInt(b.Key); ok {
			hi = v
		}
	case gms.Below:
		if v, ok := toInt(b.Key); ok {
			if v == minInt64 {
				return 0, 0, true
			}
			hi = v - 1
		}
	case gms.AboveNull, gms.BelowNull:
		// The handle column is NOT NULL: "IS NULL" matches nothing.
		return 0, 0, true
	}
	return lo, hi, lo > hi
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)
