package sql

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// go-mysql-server describes result columns from their types but gives a
// TIMESTAMP(n) or a TIME(n) no decimals, the length of a DATETIME(6) to
// every DATETIME, and prints DATETIME(n) values without their trailing
// zero digits. Clients of the binary protocol format fractions by the
// column's decimals, so TIMESTAMP(2) lost its fraction there. The server
// has only the column definitions it sends, so the rule
// noteResultPrecisions keeps, per session, the fractional precision of
// each column of the statement it last planned, which FixFields applies.

const ruleResultPrecisions analyzer.RuleId = 10011

// resultPrecisions is the fractional precision of the temporal columns of
// query's result, -1 for other columns.
type resultPrecisions struct {
	query string
	precs []int8
}

// noteResultPrecisions records the precisions of the top-level result.
func noteResultPrecisions(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	sess, ok := ctx.Session.(*Session)
	if !ok || scope != nil {
		return n, transform.SameTree, nil
	}
	var rp *resultPrecisions
	for i, c := range n.Schema() {
		p := Precision(c.Type)
		if p < 0 {
			continue
		}
		if rp == nil {
			rp = &resultPrecisions{query: gms.RemoveSpaceAndDelimiter(ctx.Query(), ';'), precs: make([]int8, len(n.Schema()))}
			for j := range rp.precs {
				rp.precs[j] = -1
			}
		}
		rp.precs[i] = int8(p)
	}
	sess.precs.Store(rp)
	return n, transform.SameTree, nil
}

// Precision is the fractional-seconds precision of a TIME, DATETIME or
// TIMESTAMP type, -1 for any other type.
func Precision(t gms.Type) int {
	switch tt := t.(type) {
	case TimeType:
		return int(tt.Precision)
	case gms.DatetimeType:
		if t.Type() != sqltypes.Date {
			return tt.Precision()
		}
	}
	if types.IsTimespan(t) {
		return 6
	}
	return -1
}

// ResultPrecisions returns what noteResultPrecisions recorded for query,
// nil if that is not the statement it saw last.
func (s *Session) ResultPrecisions(query string) []int8 {
	rp := s.precs.Load()
	if rp == nil || rp.query != gms.RemoveSpaceAndDelimiter(query, ';') {
		return nil
	}
	return rp.precs
}

// FixFields gives result columns the metadata MySQL sends: character set
// 63 for numbers, temporal types and BIT (so that drivers return a BIT's
// bytes rather than a string), MySQL's lengths and flags, and for the
// columns whose precision precs knows (precs()[i] >= 0) the decimals.
// precs is called only when there is a TIME or TIMESTAMP column.
func FixFields(fields []*querypb.Field, precs func() []int8) {
	var ps []int8
	for _, f := range fields {
		if f.Type == querypb.Type_TIME || f.Type == querypb.Type_TIMESTAMP {
			ps = precs()
			break
		}
	}
	for i, f := range fields {
		if i < len(ps) && ps[i] >= 0 {
			f.Decimals = uint32(ps[i])
		}
		fixField(f)
	}
}

func fixField(f *querypb.Field) {
	switch f.Type {
	case querypb.Type_BIT:
		f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG | querypb.MySqlFlag_UNSIGNED_FLAG)
	case querypb.Type_YEAR:
		f.Flags |= uint32(querypb.MySqlFlag_UNSIGNED_FLAG | querypb.MySqlFlag_ZEROFILL_FLAG)
	case querypb.Type_DATE:
		f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG)
	case querypb.Type_TIME:
		if f.Decimals == 0 && f.ColumnLength > 10 {
			// TimeType's length says its precision.
			f.Decimals = f.ColumnLength - 11
		}
		f.ColumnLength = fracLength(10, f.Decimals)
		f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG)
	case querypb.Type_DATETIME, querypb.Type_TIMESTAMP:
		f.ColumnLength = fracLength(19, f.Decimals)
		f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG)
	case querypb.Type_FLOAT32, querypb.Type_FLOAT64:
		if f.Decimals == 0 {
			// MySQL's NOT_FIXED_DEC: a FLOAT or DOUBLE without a scale.
			// Clients read 0 as a fixed scale of 0 (go-sql-driver's
			// DecimalSize).
			f.Decimals = notFixedDec
		}
	default:
		if !sqltypes.IsIntegral(f.Type) && !sqltypes.IsFloat(f.Type) && f.Type != querypb.Type_DECIMAL {
			return
		}
	}
	f.Charset = uint32(gms.Collation_binary)
}

const notFixedDec = 31

func fracLength(base, decimals uint32) uint32 {
	if decimals == 0 || decimals > 6 {
		return base
	}
	return base + 1 + decimals
}

// FixValues gives DATETIME(n) and TIMESTAMP(n) values in rows, which
// go-mysql-server prints without trailing zero digits, their n digits,
// and the YEAR 0 its four digits.
func FixValues(fields []*querypb.Field, rows [][]sqltypes.Value) {
	for i, f := range fields {
		if f.Type == querypb.Type_YEAR {
			for _, r := range rows {
				if i < len(r) && string(r[i].Raw()) == "0" {
					r[i] = sqltypes.MakeTrusted(sqltypes.Year, []byte("0000"))
				}
			}
			continue
		}
		if (f.Type != querypb.Type_DATETIME && f.Type != querypb.Type_TIMESTAMP) || f.Decimals == 0 || f.Decimals > 6 {
			continue
		}
		for _, r := range rows {
			if i < len(r) && !r[i].IsNull() {
				r[i] = padFraction(r[i], int(f.Decimals))
			}
		}
	}
}

func padFraction(v sqltypes.Value, n int) sqltypes.Value {
	b := v.Raw()
	frac := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '.' {
			frac = len(b) - i - 1
			break
		}
		if b[i] < '0' || b[i] > '9' {
			// No fraction: the date-time ends in digits after a
			// space or a colon.
			frac = -1
			break
		}
	}
	if frac == n {
		return v
	}
	out := make([]byte, 0, len(b)+n+1)
	out = append(out, b...)
	if frac < 0 {
		out = append(out, '.')
		frac = 0
	}
	for ; frac < n; frac++ {
		out = append(out, '0')
	}
	return sqltypes.MakeTrusted(v.Type(), out)
}
