package sql

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server has one TIME type, TIME(6), that refuses TIME(0..5) and
// prints only the fractions that are not zero. TimeType is MySQL's
// TIME(n): values are rounded to n fractional digits when stored (or cut,
// under sql_mode TIME_TRUNCATE_FRACTIONAL) and always printed with n
// digits. It keeps go-mysql-server's value, types.Timespan (microseconds),
// so the codec, index keys and every function taking a TIME value work
// unchanged. DDL gets it through timeParser, catalog text through
// parseType.

// TimeType is TIME(Precision).
type TimeType struct{ Precision uint8 }

var (
	_            types.TimeType         = TimeType{}
	_            gms.CollationCoercible = TimeType{}
	timespanType                        = reflect.TypeOf(types.Timespan(0))
)

// maxTimespan is 838:59:59, TIME's largest value, in microseconds.
const maxTimespan = 3020399000000

// NewTimeType is TIME(p) for p in 0..6; column names the column in the
// error for any other p.
func NewTimeType(p int, column string) (TimeType, error) {
	if p < 0 || p > 6 {
		return TimeType{}, mysql.NewSQLError(1426, "42000", // ER_TOO_BIG_PRECISION
			"Too-big precision %d specified for '%s'. Maximum is 6.", p, column)
	}
	return TimeType{Precision: uint8(p)}, nil
}

func (t TimeType) String() string {
	if t.Precision == 0 {
		return "time"
	}
	return fmt.Sprintf("time(%d)", t.Precision)
}

func (t TimeType) Type() query.Type        { return sqltypes.Time }
func (t TimeType) ValueType() reflect.Type { return timespanType }
func (t TimeType) Zero() any               { return types.Timespan(0) }
func (t TimeType) Promote() gms.Type       { return TimeType{Precision: 6} }

// MaxTextResponseByteLength is MySQL's display width: hh:mm:ss with a
// sign, plus the point and digits.
func (t TimeType) MaxTextResponseByteLength(*gms.Context) uint32 {
	if t.Precision == 0 {
		return 10
	}
	return 11 + uint32(t.Precision)
}

// Equals holds for every TIME: go-mysql-server unifies the types of
// COALESCE's, IF's and CASE's branches through it, and makes any two
// types that differ text, which a TIME value cannot be converted to.
func (t TimeType) Equals(o gms.Type) bool {
	_, ok := o.(TimeType)
	return ok || types.IsTimespan(o)
}

func (t TimeType) Compare(ctx context.Context, a, b any) (int, error) {
	return types.Time.Compare(ctx, a, b)
}

func (t TimeType) CollationCoercibility(*gms.Context) (gms.CollationID, byte) {
	return gms.Collation_binary, 5
}

func (t TimeType) Convert(ctx context.Context, v any) (any, gms.ConvertInRange, error) {
	if v == nil {
		return nil, gms.InRange, nil
	}
	ts, err := timespanOf(v)
	if err == nil && (ts == maxTimespan || ts == -maxTimespan) && pastMaxHours(v) {
		// go-mysql-server clips it; MySQL's strict mode refuses it.
		err = types.ErrConvertingToTimeType.New(v)
	}
	if err != nil {
		return nil, gms.OutOfRange, err
	}
	return t.round(ctx, ts), gms.InRange, nil
}

// timespanOf is go-mysql-server's conversion to TIME, plus MySQL's
// "D hh:mm:ss" form with a count of days, which it refuses.
func timespanOf(v any) (types.Timespan, error) {
	str, ok := v.(string)
	if !ok {
		return types.Time.ConvertToTimespan(v)
	}
	body := strings.TrimSpace(str)
	neg := strings.HasPrefix(body, "-")
	d, rest, found := strings.Cut(strings.TrimPrefix(body, "-"), " ")
	days, err := strconv.Atoi(d)
	if !found || err != nil || days < 0 || days > 34 || strings.HasPrefix(rest, "-") {
		return types.Time.ConvertToTimespan(v)
	}
	ts, err := types.Time.ConvertToTimespan(rest)
	if err != nil {
		return 0, types.ErrConvertingToTimeType.New(v)
	}
	// Clipped as go-mysql-server clips; Convert refuses what is past
	// 838 hours.
	us := min(int64(ts)+int64(days)*24*3600*1_000_000, maxTimespan)
	if neg {
		us = -us
	}
	return types.Timespan(us), nil
}

// pastMaxHours reports whether a TIME written as text or as a number
// ([-][D ]H:MM:SS or [-]HHMMSS) has more than 838 hours.
func pastMaxHours(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		s = fmt.Sprint(x)
	default:
		return false
	}
	s = strings.TrimPrefix(strings.TrimSpace(s), "-")
	days := 0
	if d, rest, ok := strings.Cut(s, " "); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return false
		}
		days, s = n, rest
	}
	hours := 0
	if h, _, ok := strings.Cut(s, ":"); ok {
		n, err := strconv.Atoi(h)
		if err != nil {
			return false
		}
		hours = n
	} else {
		whole, _, _ := strings.Cut(s, ".")
		n, err := strconv.Atoi(whole)
		if err != nil {
			return false
		}
		hours = n / 10000
	}
	return days*24+hours > 838
}

// round brings ts to the type's precision as MySQL stores it: half away
// from zero, or cut under TIME_TRUNCATE_FRACTIONAL; never past 838:59:59.
func (t TimeType) round(ctx context.Context, ts types.Timespan) types.Timespan {
	unit := int64(pow10[6-t.Precision])
	if unit == 1 {
		return ts
	}
	us := int64(ts)
	neg := us < 0
	if neg {
		us = -us
	}
	rem := us % unit
	us -= rem
	if rem*2 >= unit && !truncateFractional(ctx) {
		us += unit
	}
	if us > maxTimespan {
		us = maxTimespan
	}
	if neg {
		us = -us
	}
	return types.Timespan(us)
}

var pow10 = [7]int{1, 10, 100, 1000, 10000, 100000, 1000000}

func truncateFractional(ctx context.Context) bool {
	c, ok := ctx.(*gms.Context)
	return ok && c != nil && c.Session != nil && gms.LoadSqlMode(c).ModeEnabled("TIME_TRUNCATE_FRACTIONAL")
}

func (t TimeType) ConvertToTimespan(v any) (types.Timespan, error) {
	ts, err := timespanOf(v)
	if err != nil {
		return 0, err
	}
	return t.round(context.Background(), ts), nil
}

func (t TimeType) ConvertToTimeDuration(v any) (time.Duration, error) {
	ts, err := t.ConvertToTimespan(v)
	if err != nil {
		return 0, err
	}
	return ts.AsTimeDuration(), nil
}

func (t TimeType) MicrosecondsToTimespan(us int64) types.Timespan {
	return types.Time.MicrosecondsToTimespan(us)
}

// SQL prints the value with exactly Precision fractional digits.
func (t TimeType) SQL(ctx *gms.Context, dest []byte, v any) (sqltypes.Value, error) {
	if v == nil {
		return sqltypes.NULL, nil
	}
	ts, err := timespanOf(v)
	if err != nil {
		return sqltypes.Value{}, err
	}
	return sqltypes.MakeTrusted(sqltypes.Time, t.appendText(dest, t.round(ctx, ts))), nil
}

func (t TimeType) appendText(dst []byte, ts types.Timespan) []byte {
	us := int64(ts)
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	secs := us / 1_000_000
	dst = appendPadded(dst, secs/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, secs/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, secs%60, 2)
	if t.Precision > 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, us%1_000_000/int64(pow10[6-t.Precision]), int(t.Precision))
	}
	return dst
}

func appendPadded(dst []byte, v int64, width int) []byte {
	s := strconv.AppendInt(nil, v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// timeTypeOf parses a TIME column's type text ("time", "time(3)"); ok is
// false for any other type.
func timeTypeOf(s string) (TimeType, bool, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "time" {
		return TimeType{}, true, nil
	}
	rest, found := strings.CutPrefix(s, "time(")
	if !found || !strings.HasSuffix(rest, ")") {
		return TimeType{}, false, nil
	}
	p, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(rest, ")")))
	if err != nil {
		return TimeType{}, false, nil
	}
	t, err := NewTimeType(p, "time")
	return t, true, err
}

// resolveTimeColumns gives every TIME column a DDL statement defines its
// TimeType, which go-mysql-server then takes as the column's type
// (ColumnType.ResolvedType) instead of refusing TIME(0..5).
func resolveTimeColumns(stmt ast.Statement) error {
	switch s := stmt.(type) {
	case *ast.DDL:
		return resolveTimeSpec(s.TableSpec)
	case *ast.AlterTable:
		for _, d := range s.Statements {
			if err := resolveTimeSpec(d.TableSpec); err != nil {
				return err
			}
		}
	}
	return nil
}

func resolveTimeSpec(spec *ast.TableSpec) error {
	if spec == nil {
		return nil
	}
	for _, cd := range spec.Columns {
		ct := &cd.Type
		if ct.ResolvedType != nil || !strings.EqualFold(ct.Type, "time") {
			continue
		}
		p := 0
		if ct.Length != nil {
			n, err := strconv.Atoi(string(ct.Length.Val))
			if err != nil {
				return err
			}
			p = n
		}
		t, err := NewTimeType(p, cd.Name.String())
		if err != nil {
			return err
		}
		ct.ResolvedType = t
	}
	return nil
}

// timeParser is go-mysql-server's parser with resolveTimeColumns applied
// to what it parses. A statement that fails it is not returned: callers
// go on with a statement they get even with an error.
type timeParser struct{ gms.Parser }

func (p timeParser) ParseSimple(q string) (ast.Statement, error) {
	stmt, err := p.Parser.ParseSimple(q)
	return resolved(stmt, err)
}

func (p timeParser) Parse(ctx *gms.Context, q string, multi bool) (ast.Statement, string, string, error) {
	stmt, s, rest, err := p.Parser.Parse(ctx, q, multi)
	stmt, err = resolved(stmt, err)
	return stmt, s, rest, err
}

func (p timeParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, s, rest, err := p.Parser.ParseWithOptions(ctx, q, delim, multi, o)
	stmt, err = resolved(stmt, err)
	return stmt, s, rest, err
}

func (p timeParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	stmt, n, err := p.Parser.ParseOneWithOptions(ctx, q, o)
	stmt, err = resolved(stmt, err)
	return stmt, n, err
}

func resolved(stmt ast.Statement, err error) (ast.Statement, error) {
	if err == nil {
		err = resolveTimeColumns(stmt)
	}
	if err != nil {
		return nil, err
	}
	return stmt, nil
}

// defaultText is the text of col's default as the catalog keeps it.
// go-mysql-server turns a literal default into a value of the column's
// type, which for a TIME prints unquoted and would not parse back.
func defaultText(ctx *gms.Context, col *gms.Column) string {
	d := col.Default
	if tt, ok := col.Type.(TimeType); ok && d.IsLiteral() {
		if v, err := d.Eval(ctx, nil); err == nil && v != nil {
			if ts, err := tt.ConvertToTimespan(v); err == nil {
				return "'" + string(tt.appendText(nil, ts)) + "'"
			}
		}
	}
	return d.String()
}
