package sql

import (
	"context"
	"fmt"
	"math"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// laxValue is what MySQL's ALTER TABLE copy stores, with a warning,
// without strict mode, for a value v that type to cannot hold: a number
// out of range becomes the nearest end of the range, text that is not a
// number its numeric prefix (0 if none), text too long its first
// characters, a number too wide for a BIT every bit set, and NULL in a NOT NULL column the type's implicit value (0,
// the empty string, ...): for the rows the job finds and for those statements write into
// the old column while it runs alike. ok is false for the other kinds
// (dates, ENUM, ...), whose conversion fails as in strict mode.
func laxValue(v any, to gms.Type) (out any, ok bool) {
	var lax any
	switch k := kindOf(to); {
	case v == nil:
		lax = implicitValue(to)
	case isIntKind(k), k == kindDecimal, k == kindFloat32, k == kindFloat64:
		lax = clampNumber(laxNumber(v), to)
	case k == kindString, k == kindBytes:
		lax = cutText(v, to)
	case k == kindBit:
		lax = uint64(math.MaxUint64) >> (64 - to.(types.BitType).NumberOfBits()) // every bit set
	default:
		return nil, false
	}
	if lax == nil {
		return nil, false
	}
	c, _, err := to.Convert(context.Background(), lax)
	return c, err == nil
}

// laxNumber reads v as a number: text by its numeric prefix.
func laxNumber(v any) decimal.Decimal {
	var text string
	switch x := v.(type) {
	case string:
		text = numberPrefix.FindString(strings.TrimLeft(x, " \t\n\r"))
	case []byte:
		text = numberPrefix.FindString(strings.TrimLeft(string(x), " \t\n\r"))
	case decimal.Decimal:
		return x
	case float32:
		return decimal.NewFromFloat32(x)
	case float64:
		return decimal.NewFromFloat(x)
	default:
		text = fmt.Sprint(x)
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Zero // no numeric prefix
	}
	return d
}

// clampNumber is d at the nearest point of to's range, rounded to its
// scale.
func clampNumber(d decimal.Decimal, to gms.Type) any {
	if lo, hi, ok := intRange(to); ok {
		b := d.Round(0).BigInt()
		switch {
		case b.Cmp(lo) < 0:
			b = lo
		case b.Cmp(hi) > 0:
			b = hi
		}
		if b.IsInt64() {
			return b.Int64()
		}
		return b.Uint64()
	}
	if dt, ok := to.(gms.DecimalType); ok {
		scale := int32(dt.Scale())
		limit := decimal.New(1, int32(dt.Precision())-scale).Sub(decimal.New(1, -scale))
		d = d.Round(scale)
		if unsigned := types.IsUnsigned(to); unsigned && d.IsNegative() {
			return decimal.Zero
		}
		switch {
		case d.GreaterThan(limit):
			d = limit
		case d.LessThan(limit.Neg()):
			d = limit.Neg()
		}
		return d
	}
	f, _ := d.Float64()
	if to.Type() == sqltypes.Float32 {
		f = math.Max(-math.MaxFloat32, math.Min(math.MaxFloat32, f))
	}
	return f
}

// cutText is v as text cut to the length of string type to.
func cutText(v any, to gms.Type) any {
	st, ok := to.(gms.StringType)
	if !ok {
		return nil
	}
	s, _, err := types.LongText.Convert(context.Background(), v)
	if err != nil {
		return nil
	}
	text, ok := s.(string)
	if !ok {
		return nil
	}
	if kindOf(to) == kindBytes {
		if n := int(st.MaxByteLength()); len(text) > n {
			text = text[:n]
		}
		return text
	}
	return truncateRunes(text, st.MaxCharacterLength())
}
