package sql

import (
	"sort"
	"sync"
	"unicode/utf8"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/encodings"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The fast path's ORDER BY of a string column sorts as go-mysql-server's
// Sorter does (types.StringType.Compare: the collation's weight of each
// rune in turn, then the shorter string first), with the same comparison
// computed faster: ASCII runes' weights come from a table instead of the
// collation's function, which for utf8mb4_0900_ai_ci is a map lookup, and
// no expression is evaluated per comparison.

// runeOrder compares strings as one collation's StringType.Compare does.
type runeOrder struct {
	weight gms.CollationSorter
	enc    encodings.Encoder
	ascii  [utf8.RuneSelf]int32
}

var runeOrders sync.Map // gms.CollationID -> *runeOrder

func runeOrderOf(c gms.CollationID) *runeOrder {
	if o, ok := runeOrders.Load(c); ok {
		return o.(*runeOrder)
	}
	o := &runeOrder{weight: c.Sorter(), enc: c.CharacterSet().Encoder()}
	if o.weight == nil || o.enc == nil {
		return nil
	}
	for r := range o.ascii {
		o.ascii[r] = o.weight(rune(r))
	}
	runeOrders.Store(c, o)
	return o
}

func (o *runeOrder) next(s string) (w int32, n int) {
	if s[0] < utf8.RuneSelf {
		return o.ascii[s[0]], 1
	}
	r, n := o.enc.NextRune(s)
	return o.weight(r), n
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
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i][pos], rows[j][pos]
		if desc {
			a, b = b, a
		}
		switch {
		case a == nil:
			return b != nil
		case b == nil:
			return false
		}
		return o.compare(a.(string), b.(string)) < 0
	})
	return true
}
