package sql

import (
	"fmt"
	"math"
	"slices"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MODIFY COLUMN between numbers and temporal types reads them as MySQL
// does in a numeric context: a DATE is the number YYYYMMDD, a DATETIME or
// TIMESTAMP YYYYMMDDhhmmss[.ffffff], a TIME [-]hhmmss[.ffffff], and back
// (my_time.cc's number_to_datetime and number_to_time), two-digit years
// included.

// isNumberKind reports whether k is a numeric kind.
func isNumberKind(k valueKind) bool { return k >= kindInt8 && k <= kindDecimal }

// temporalNumber is the number a DATE, DATETIME or TIMESTAMP value t of
// type from reads as.
func temporalNumber(from gms.Type, t time.Time) decimal.Decimal {
	n := decimal.NewFromInt(int64(t.Year())*10000 + int64(t.Month())*100 + int64(t.Day()))
	if from.Type() == sqltypes.Date {
		return n
	}
	hms := int64(t.Hour())*10000 + int64(t.Minute())*100 + int64(t.Second())
	n = n.Mul(decimal.NewFromInt(1000000)).Add(decimal.NewFromInt(hms))
	if p := Precision(from); p > 0 {
		n = n.Add(decimal.New(int64(t.Nanosecond()/1000), -6)).Truncate(int32(p))
	}
	return n
}

// timespanNumber is the number TIME value ts reads as: [-]hhmmss.ffffff.
func timespanNumber(ts types.Timespan, prec int) decimal.Decimal {
	us := int64(ts)
	neg := us < 0
	if neg {
		us = -us
	}
	sec := us / 1e6
	n := decimal.NewFromInt(sec/3600*10000 + sec/60%60*100 + sec%60)
	if prec > 0 {
		n = n.Add(decimal.New(us%1e6, -6)).Truncate(int32(prec))
	}
	if neg {
		n = n.Neg()
	}
	return n
}

// timeOfDay is the TIME that a DATE or DATETIME value reads as: its time
// of day (midnight for a DATE).
func timeOfDay(t time.Time) types.Timespan {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	return types.Timespan(t.Sub(day).Microseconds())
}

// numberDateForms are the ways MySQL's number_to_datetime reads a number
// in [lo, hi] as YYYYMMDDhhmmss: (n + add) * mul. Numbers between the
// ranges are no date.
var numberDateForms = []struct{ lo, hi, add, mul int64 }{
	{0, 0, 0, 1},                                    // the zero date
	{101, 691231, 20000000, 1000000},                // YYMMDD, 2000-2069
	{700101, 991231, 19000000, 1000000},             // YYMMDD, 1970-1999
	{10000101, 99991231, 0, 1000000},                // YYYYMMDD
	{101000000, 691231235959, 20000000000000, 1},    // YYMMDDhhmmss, 2000-2069
	{700101000000, 991231235959, 19000000000000, 1}, // YYMMDDhhmmss, 1970-1999
	{991231235960, math.MaxInt64, 0, 1},             // YYYYMMDDhhmmss
}

// numberDatetime is number v as the text of a date and time, ok false
// when it is not one (MySQL's number_to_datetime).
func numberDatetime(v any) (string, bool) {
	d, ok := numberValue(v)
	if !ok || d.IsNegative() {
		return "", false
	}
	nr := d.IntPart()
	micros := d.Sub(decimal.NewFromInt(nr)).Shift(6).IntPart()
	i := slices.IndexFunc(numberDateForms, func(f struct{ lo, hi, add, mul int64 }) bool { return f.lo <= nr && nr <= f.hi })
	if i < 0 {
		return "", false
	}
	nr = (nr + numberDateForms[i].add) * numberDateForms[i].mul
	date, clock := nr/1000000, nr%1000000
	y, mo, dd := date/10000, date/100%100, date%100
	h, mi, s := clock/10000, clock/100%100, clock%100
	if y > 9999 || mo > 12 || dd > 31 || h > 23 || mi > 59 || s > 59 {
		return "", false
	}
	if mo > 0 && dd > 0 && time.Date(int(y), time.Month(mo), int(dd), 0, 0, 0, 0, time.UTC).Day() != int(dd) {
		return "", false // no such day in that month
	}
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", y, mo, dd, h, mi, s, micros), true
}

// numberTimespan is number v as a TIME, [-]hhmmss[.ffffff], ok false when
// its minutes or seconds pass 59 (MySQL's number_to_time).
func numberTimespan(v any) (types.Timespan, bool) {
	d, ok := numberValue(v)
	if !ok {
		return 0, false
	}
	neg := d.IsNegative()
	d = d.Abs()
	nr := d.IntPart()
	micros := d.Sub(decimal.NewFromInt(nr)).Shift(6).IntPart()
	h, mi, s := nr/10000, nr/100%100, nr%100
	if mi > 59 || s > 59 || h > 838 {
		return 0, false
	}
	us := ((h*60+mi)*60+s)*1e6 + micros
	if neg {
		us = -us
	}
	return types.Timespan(us), true
}

// numberValue is v, a number of any kind, as a decimal.
func numberValue(v any) (decimal.Decimal, bool) {
	switch x := v.(type) {
	case string, []byte, time.Time, types.Timespan, nil:
		return decimal.Decimal{}, false
	case decimal.Decimal:
		return x, true
	case float32:
		return decimal.NewFromFloat32(x), true
	case float64:
		return decimal.NewFromFloat(x), true
	}
	d, err := decimal.NewFromString(fmt.Sprint(v))
	return d, err == nil
}
