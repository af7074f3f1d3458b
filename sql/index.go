package sql

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/internal/collate"
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

// Order says whether the index yields rows in go-mysql-server's order of
// its columns, which lets the planner drop a sort or merge-join on it. It
// does not when a column is a prefix (the key holds only the first
// characters) or a string in a PAD SPACE collation: its keys ignore
// trailing spaces, while go-mysql-server's comparison puts 'a\t' between
// 'a' and 'a ', which no key order consistent with 'a' = 'a' can do.
func (i *Index) Order() gms.IndexOrder {
	for k, p := range i.ix.pos {
		if i.ix.prefix[k] > 0 {
			return gms.IndexOrderNone
		}
		if c := i.m.colls[p]; c != 0 && i.m.kinds[p] == kindString && collate.PadSpace(c) {
			return gms.IndexOrderNone
		}
	}
	return gms.IndexOrderAsc
}
func (i *Index) Reversible() bool { return true }
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
	return mergeSpans(spans), nil
}

// mergeSpans sorts spans and joins the ones that overlap or touch. The
// planner's ranges are disjoint, but their spans need not be once
// widened (a dropped bound, a PAD SPACE bound), and a row in two spans
// would be returned twice.
func mergeSpans(spans []keySpan) []keySpan {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b keySpan) int { return bytes.Compare(a.start, b.start) })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if last.end == nil || bytes.Compare(sp.start, last.end) <= 0 {
			if last.end != nil && (sp.end == nil || bytes.Compare(sp.end, last.end) > 0) {
				last.end = sp.end
			}
			continue
		}
		out = append(out, sp)
	}
	return out
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
		if lb, ok := ce.LowerBound.(gms.Below); ok && i.ix.prefix[c] > 0 {
			// A prefix column: the entries hold the key of the value's
			// first characters, the same for every value equal to the
			// bound unless PAD SPACE trims what the cut leaves at its end
			// (see prefixKey); then the bounds below take a range.
			if ub, ok := ce.UpperBound.(gms.Above); ok && !i.padSpaceColumn(c) {
				lv, lok := boundValue(ctx, kind, typ, lb.Key)
				uv, uok := boundValue(ctx, kind, typ, ub.Key)
				if lok && uok && lv != nil && uv != nil {
					lk, lerr := i.prefixKey(c, lv, false, i.ix.prefix[c])
					uk, uerr := i.prefixKey(c, uv, false, i.ix.prefix[c])
					if lerr == nil && uerr == nil && bytes.Equal(lk, uk) {
						prefix, _ = codec.EncodeKey(prefix, lk)
						continue
					}
				}
			}
		} else if lb, ok := ce.LowerBound.(gms.Below); ok {
			if ub, ok := ce.UpperBound.(gms.Above); ok && i.ix.prefix[c] == 0 {
				lv, lok := boundValue(ctx, kind, typ, lb.Key)
				uv, uok := boundValue(ctx, kind, typ, ub.Key)
				if lok && uok && i.exactEqual(c, lv) && i.exactEqual(c, uv) {
					le, err := i.encodeBound(nil, c, lv)
					if err != nil {
						return keySpan{}, false, err
					}
					ue, err := i.encodeBound(nil, c, uv)
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

// encodeBound appends the key encoding of a bound's canonical value v for
// column c of the index: a string's collation sort key, like the entries.
func (i *Index) encodeBound(dst []byte, c int, v any) ([]byte, error) {
	p := i.ix.pos[c]
	if s, ok := v.(string); ok && i.m.kinds[p] == kindString {
		if coll := i.m.colls[p]; coll != 0 && !collate.Bytewise(coll) {
			return codec.EncodeKey(dst, collate.Key(nil, coll, s))
		}
	}
	return codec.EncodeKey(dst, v)
}

// cutBound converts a range bound of column c as boundValue does, and
// returns with it the length to cut it to, in characters (bytes for a
// binary string), 0 for none: the index's prefix length, or the column's
// length for a string longer than the column holds. Such a string fails
// boundValue (it does not convert), but its first characters still bound
// the column's values: as for a prefix index, every value at or above it
// is at or above its cut, and every value at or below it is at or below
// its cut or starts with it (prefixKey). Without that, one long value in
// an IN list made the whole lookup a full index scan.
func (i *Index) cutBound(ctx context.Context, c int, key any) (any, int64, bool) {
	p := i.ix.pos[c]
	kind, typ := i.m.kinds[p], i.m.schema[p].Type
	if v, ok := boundValue(ctx, kind, typ, key); ok {
		return v, i.ix.prefix[c], true
	}
	if b, ok := key.([]byte); ok {
		key = string(b)
	}
	s, isStr := key.(string)
	st, isST := typ.(gms.StringType)
	if !isStr || !isST || (kind != kindString && kind != kindBytes) {
		return nil, 0, false
	}
	var cut string
	var n int64
	if kind == kindBytes {
		n = st.MaxByteLength()
		if n <= 0 || int64(len(s)) <= n {
			return nil, 0, false
		}
		cut = s[:n]
	} else {
		n = st.MaxCharacterLength()
		if n <= 0 {
			return nil, 0, false
		}
		if cut = truncateRunes(s, n); len(cut) == len(s) {
			return nil, 0, false
		}
	}
	v, ok := boundValue(ctx, kind, typ, cut)
	if !ok || v == nil {
		return nil, 0, false
	}
	if pn := i.ix.prefix[c]; pn > 0 && pn < n {
		n = pn
	}
	return v, n, true
}

// prefixKey returns what an entry of a column cut to n characters (bytes
// for a binary string) holds for the value v: the collation key of v's
// first n characters, as keyValue builds it. For a lower bound under PAD
// SPACE, v is first cut by collate.LowerBound.
//
// Cutting keeps order: a value at or above v (go-mysql-server's order)
// cuts to a key at or above the lower key, and one at or below v cuts to a
// key at or below the upper key or starting with it, because keys compare
// like weight strings and a cut is a prefix. Under PAD SPACE the key also
// drops the trailing spaces the cut may leave ('ab c' cut to 3 is 'ab '),
// which makes it shorter, never greater: the upper bound must take every
// key starting with it, and a point is not a single key (a cut 'a\x01'
// keeps its last character, whose weight is a space's, while an equal
// 'a ' loses it).
func (i *Index) prefixKey(c int, v any, lower bool, n int64) ([]byte, error) {
	p := i.ix.pos[c]
	kind, coll := i.m.kinds[p], i.m.colls[p]
	if s, ok := v.(string); ok && lower && kind == kindString && coll != 0 && collate.PadSpace(coll) {
		v, _ = collate.LowerBound(coll, s)
	}
	k, err := keyValue(kind, coll, v, n, nil)
	if err != nil {
		return nil, err
	}
	switch x := k.(type) {
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("reorgdb: prefix key of %T", k)
}

// padSpaceColumn reports whether column c of the index is a string in a
// PAD SPACE collation.
func (i *Index) padSpaceColumn(c int) bool {
	p := i.ix.pos[c]
	coll := i.m.colls[p]
	return i.m.kinds[p] == kindString && coll != 0 && collate.PadSpace(coll)
}

// exactEqual reports whether the key of bound value v holds exactly the
// values go-mysql-server calls equal to v (collate.EqualIsExact).
func (i *Index) exactEqual(c int, v any) bool {
	s, coll, ok := i.padSpaceString(c, v)
	return !ok || collate.EqualIsExact(coll, s)
}

// padSpaceString returns v as a string when column c is a string in a PAD
// SPACE collation, whose keys go-mysql-server's order does not follow near
// trailing spaces (collate.LowerBound, collate.UpperIsPrefix).
func (i *Index) padSpaceString(c int, v any) (string, gms.CollationID, bool) {
	p := i.ix.pos[c]
	s, ok := v.(string)
	if !ok || i.m.kinds[p] != kindString {
		return "", 0, false
	}
	coll := i.m.colls[p]
	if coll == 0 || !collate.PadSpace(coll) {
		return "", 0, false
	}
	return s, coll, true
}

func (i *Index) lowerKey(ctx context.Context, prefix []byte, c int, cut gms.MySQLRangeCut) ([]byte, error) {
	start := append([]byte(nil), prefix...)
	switch b := cut.(type) {
	case gms.BelowNull:
		return start, nil
	case gms.AboveNull:
		nullKey, _ := codec.EncodeKey(start, nil)
		return codec.PrefixEnd(nullKey), nil
	case gms.Below, gms.Above:
		v, n, ok := i.cutBound(ctx, c, gms.GetMySQLRangeCutKey(b))
		if !ok {
			// Not exact: start after the NULLs when the bound excludes
			// them, else at the beginning.
			nullKey, _ := codec.EncodeKey(start, nil)
			return codec.PrefixEnd(nullKey), nil
		}
		if n > 0 && v != nil {
			// Inclusive whatever the range says: the cut loses it.
			k, err := i.prefixKey(c, v, true, n)
			if err != nil {
				return nil, err
			}
			return codec.EncodeKey(start, k)
		}
		if s, coll, ok := i.padSpaceString(c, v); ok {
			// Inclusive, from a cut of the bound: see collate.LowerBound.
			lb, _ := collate.LowerBound(coll, s)
			return codec.EncodeKey(start, collate.Key(nil, coll, lb))
		}
		k, err := i.encodeBound(start, c, v)
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
	switch b := cut.(type) {
	case gms.AboveAll:
		return codec.PrefixEnd(prefix), nil
	case gms.AboveNull:
		nullKey, _ := codec.EncodeKey(append([]byte(nil), prefix...), nil)
		return codec.PrefixEnd(nullKey), nil
	case gms.BelowNull:
		return append([]byte(nil), prefix...), nil
	case gms.Below, gms.Above:
		v, n, ok := i.cutBound(ctx, c, gms.GetMySQLRangeCutKey(b))
		if !ok {
			return codec.PrefixEnd(prefix), nil
		}
		if n > 0 && v != nil {
			// Every key starting with the cut bound's key, whatever the
			// range says (see prefixKey).
			k, err := i.prefixKey(c, v, false, n)
			if err != nil {
				return nil, err
			}
			return codec.PrefixEnd(codec.EncodeBytesPrefix(append([]byte(nil), prefix...), k)), nil
		}
		if s, coll, ok := i.padSpaceString(c, v); ok && collate.UpperIsPrefix(coll, s) {
			// Every key starting with the bound's key: see
			// collate.UpperIsPrefix.
			return codec.PrefixEnd(codec.EncodeBytesPrefix(append([]byte(nil), prefix...), collate.Key(nil, coll, s))), nil
		}
		k, err := i.encodeBound(append([]byte(nil), prefix...), c, v)
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
