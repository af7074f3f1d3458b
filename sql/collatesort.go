package sql

import (
	"cmp"
	"slices"
	"sync"
	"unicode/utf8"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/encodings"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/reorgdb/reorgdb/internal/collate"
)

// The fast path's ORDER BY of a string column sorts as go-mysql-server's
// Sorter does (types.StringType.Compare: the collation's weight of each
// rune in turn, then the shorter string first), with the same comparison
// computed faster: most weights come from collate.Weights' table instead of
// the collation's function, and no expression is evaluated per comparison.

// runeOrder compares strings as one collation's StringType.Compare does.
type runeOrder struct {
	weights *collate.Weights
	enc     encodings.Encoder
}

var runeOrders sync.Map // gms.CollationID -> *runeOrder

func runeOrderOf(c gms.CollationID) *runeOrder {
	if o, ok := runeOrders.Load(c); ok {
		return o.(*runeOrder)
	}
	o := &runeOrder{weights: collate.WeightsOf(c), enc: c.CharacterSet().Encoder()}
	if o.weights == nil || o.enc == nil {
		return nil
	}
	runeOrders.Store(c, o)
	return o
}

func (o *runeOrder) next(s string) (w int32, n int) {
	if s[0] < utf8.RuneSelf {
		return o.weights.Of(rune(s[0])), 1
	}
	r, n := o.enc.NextRune(s)
	return o.weights.Of(r), n
}

func (o *runeOrder) compare(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		aw, an := o.next(a)
		bw, bn := o.next(b)
		switch {
		case aw < bw:
			return -1
		case aw > bw:
			return 1
		}
		a, b = a[an:], b[bn:]
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// sortByString sorts rows stably by their string column pos as
// go-mysql-server's Sorter would (NULLs first ascending, last descending);
// ok is false, rows untouched, when that column is not a collated string
// of valid text in every row.
func sortByString(rows []gms.Row, pos int, typ gms.Type, desc bool) (ok bool) {
	st, isString := typ.(types.StringType)
	if !isString || types.IsBinaryType(st) {
		return false
	}
	o := runeOrderOf(st.Collation())
	if o == nil {
		return false
	}
	for _, r := range rows {
		switch v := r[pos].(type) {
		case nil:
		case string:
			if !utf8.ValidString(v) {
				return false
			}
		default:
			return false
		}
	}
	entries := make([]sortEntry, len(rows))
	for i, r := range rows {
		e := &entries[i]
		e.i = int32(i)
		if r[pos] == nil {
			e.null = true
			continue
		}
		e.s = r[pos].(string)
		o.prefix(e)
	}
	slices.SortFunc(entries, func(a, b sortEntry) int {
		c := 0
		if desc {
			c = o.compareEntries(&b, &a)
		} else {
			c = o.compareEntries(&a, &b)
		}
		if c == 0 {
			return cmp.Compare(a.i, b.i) // stable
		}
		return c
	})
	sorted := make([]gms.Row, len(rows))
	for k, e := range entries {
		sorted[k] = rows[e.i]
	}
	copy(rows, sorted)
	return true
}

// sortEntry is a row's sort column with the weights of its first runes,
// which decide most comparisons without decoding the strings again.
type sortEntry struct {
	w    [4]int32
	n    int // runes in w; fewer than len(w) when the string ends there
	null bool
	i    int32 // the row's position before sorting
	s    string
}

func (o *runeOrder) prefix(e *sortEntry) {
	s := e.s
	for e.n < len(e.w) && len(s) > 0 {
		w, n := o.next(s)
		e.w[e.n] = w
		e.n++
		s = s[n:]
	}
}

// compareEntries is compare of the entries' strings, NULL first.
func (o *runeOrder) compareEntries(a, b *sortEntry) int {
	if a.null || b.null {
		return cmp.Compare(b2i(b.null), b2i(a.null))
	}
	for k := range min(a.n, b.n) {
		if c := cmp.Compare(a.w[k], b.w[k]); c != 0 {
			return c
		}
	}
	if a.n < len(a.w) || b.n < len(b.w) {
		// One string ended within the prefix: the shorter is first.
		return cmp.Compare(a.n, b.n)
	}
	return o.compare(a.s, b.s)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
