package sql

import (
	"fmt"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// go-mysql-server cannot turn a TIME value into a string: CAST(t AS
// CHAR) is NULL, CONCAT(t, ...) and COALESCE(NULL, t) fail. Nor into a
// number: t + 0 and SUM(t) were 0, where MySQL reads hhmmss.ffffff. A UNION of TIME columns of two
// precisions casts both to CHAR, so it read NULLs. The rule
// timeToTextRule puts timeText, the value as MySQL prints it, in those
// places, and timeNumber in arithmetic.

const ruleTimeToText analyzer.RuleId = 10012

func timeToTextRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Convert:
			if isTimeExpr(e.Child) && types.IsText(e.Type()) {
				return timeText{unary{e.Child}}, transform.NewTree, nil
			}
			if isDateExpr(e.Child) && types.IsText(e.Type()) {
				return dateText{unary{e.Child}}, transform.NewTree, nil
			}
			if isDateExpr(e.Child) && types.IsNumber(e.Type()) {
				ne, err := e.WithChildren(dateNumber{unary{e.Child}})
				return ne, transform.NewTree, err
			}
			if tc, ok := asTimeCast(e); ok {
				return tc, transform.NewTree, nil
			}
		case *function.Concat, *function.ConcatWithSeparator:
			return wrapTimeArgs(e)
		case *function.Now, *function.UTCTimestamp, *function.CurrTime:
			return withClockPrecision(e)
		case expression.ArithmeticOp, *aggregation.Sum, *aggregation.Avg:
			if a, ok := e.(*expression.Arithmetic); ok {
				if d, ok, err := intervalArith(a); ok || err != nil {
					return d, transform.NewTree, err
				}
			}
			return numericTimeArgs(e)
		case *function.Coalesce:
			// Its type is text when a TIME meets another type (NULL
			// included).
			if types.IsText(e.Type()) {
				return wrapTimeArgs(e)
			}
		}
		return e, transform.SameTree, nil
	})
}

func isTimeExpr(e gms.Expression) bool {
	return e.Type().Type() == sqltypes.Time
}

func wrapTimeArgs(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
	return wrapTimeChildren(e, func(a gms.Expression) gms.Expression {
		switch {
		case isTimeExpr(a):
			return timeText{unary{a}}
		case isDateExpr(a):
			return dateText{unary{a}}
		}
		return nil
	})
}

// isDateExpr says whether e is a DATE, DATETIME or TIMESTAMP, which
// go-mysql-server turns into text always as a DATETIME with its
// fraction's trailing zeros cut ('2020-01-02 00:00:00' for a DATE), where
// MySQL writes the type's own form ('2020-01-02', '10:00:00.500' for
// DATETIME(3)).
func isDateExpr(e gms.Expression) bool {
	switch e.Type().Type() {
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
		return true
	}
	return false
}

// unary is what the wrappers below share: one child, whose resolution
// and nullability are theirs.
type unary struct{ Child gms.Expression }

func (u unary) Children() []gms.Expression { return []gms.Expression{u.Child} }
func (u unary) Resolved() bool             { return u.Child.Resolved() }
func (u unary) IsNullable() bool           { return u.Child.IsNullable() }
func (u unary) String() string             { return u.Child.String() }

// dateText is a DATE, DATETIME or TIMESTAMP expression's value as text,
// with as many fractional digits as its type has, as MySQL writes it.
type dateText struct{ unary }

var _ gms.Expression = dateText{}

func (t dateText) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	tv, ok := v.(time.Time)
	if !ok {
		c, _, err := t.Child.Type().Convert(ctx, v)
		if tv, ok = c.(time.Time); err != nil || !ok {
			return nil, err
		}
	}
	layout := "2006-01-02"
	if t.Child.Type().Type() != sqltypes.Date {
		layout += " 15:04:05"
		if p := Precision(t.Child.Type()); p > 0 {
			layout += "." + "000000"[:p]
		}
	}
	return tv.Format(layout), nil
}

func (t dateText) Type() gms.Type { return types.LongText }
func (t dateText) String() string { return fmt.Sprintf("CAST(%s AS CHAR)", t.Child) }

func (t dateText) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return dateText{unary{children[0]}}, nil
}

// wrapTimeChildren replaces each argument a of e by wrap(a), unless that
// is nil.
func wrapTimeChildren(e gms.Expression, wrap func(gms.Expression) gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
	args := e.Children()
	var out []gms.Expression
	for i, a := range args {
		w := wrap(a)
		if w == nil {
			continue
		}
		if out == nil {
			out = append([]gms.Expression(nil), args...)
		}
		out[i] = w
	}
	if out == nil {
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(out...)
	return ne, transform.NewTree, err
}

// timeText is a TIME expression's value as text, with the fractional
// digits of its type (6 for go-mysql-server's TIME).
type timeText struct{ unary }

var _ gms.Expression = timeText{}

func (t timeText) precision() TimeType {
	if tt, ok := t.Child.Type().(TimeType); ok {
		return tt
	}
	return TimeType{Precision: 6}
}

func (t timeText) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	tt := t.precision()
	ts, err := tt.ConvertToTimespan(v)
	if err != nil {
		return nil, err
	}
	return string(tt.appendText(nil, ts)), nil
}

// Type is CAST(... AS CHAR)'s, which the two sides of a UNION must share.
func (t timeText) Type() gms.Type { return types.LongText }

func (t timeText) String() string { return fmt.Sprintf("CAST(%s AS CHAR)", t.Child) }

func (t timeText) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return timeText{unary{children[0]}}, nil
}

func numericTimeArgs(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
	args := e.Children()
	for _, a := range args {
		if _, ok := a.(*expression.Interval); ok {
			// t + INTERVAL n unit is time arithmetic.
			return e, transform.SameTree, nil
		}
	}
	// An aggregate's children after the first are its window's (ORDER BY
	// and PARTITION BY), which keep their values.
	_, isAgg := e.(gms.WindowAdaptableExpression)
	first := true
	return wrapTimeChildren(e, func(a gms.Expression) gms.Expression {
		if isAgg && !first {
			return nil
		}
		first = false
		switch {
		case isTimeExpr(a):
			return timeNumber{unary{a}}
		case isDateExpr(a):
			return dateNumber{unary{a}}
		}
		return nil
	})
}

// intervalArith is d + INTERVAL n unit (or INTERVAL n unit + d, or
// d - INTERVAL n unit) as DATE_ADD / DATE_SUB, which MySQL makes it: a
// DATE plus days stays a DATE, and a DATETIME keeps its fraction, where
// go-mysql-server's own arithmetic makes the first a DATETIME and drops
// the second.
func intervalArith(a *expression.Arithmetic) (gms.Expression, bool, error) {
	l, r := a.Left(), a.Right()
	if _, ok := l.(*expression.Interval); ok && a.Op == "+" {
		l, r = r, l
	}
	iv, ok := r.(*expression.Interval)
	if !ok {
		return nil, false, nil
	}
	if _, ok := l.(*expression.Interval); ok {
		return nil, false, nil
	}
	switch a.Op {
	case "+":
		e, err := function.NewDateAdd(l, iv)
		return e, true, err
	case "-":
		e, err := function.NewDateSub(l, iv)
		return e, true, err
	}
	return nil, false, nil
}

// dateNumber is a DATE, DATETIME or TIMESTAMP expression's value as MySQL
// reads it in a numeric context: the decimal YYYYMMDD, or
// YYYYMMDDhhmmss.ffffff with the digits of its type (go-mysql-server
// reads a DATE as YYYYMMDD000000, a TIMESTAMP as a float, SUM of dates as
// Unix times).
type dateNumber struct{ unary }

var _ gms.Expression = dateNumber{}

func (d dateNumber) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	t, ok := v.(time.Time)
	if !ok {
		c, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		t = c.(time.Time)
	}
	return temporalNumber(d.Child.Type(), t), nil
}

func (d dateNumber) Type() gms.Type {
	if d.Child.Type().Type() == sqltypes.Date {
		return types.MustCreateDecimalType(8, 0)
	}
	p := max(Precision(d.Child.Type()), 0)
	return types.MustCreateDecimalType(uint8(14+p), uint8(p))
}

func (d dateNumber) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return dateNumber{unary{children[0]}}, nil
}

// timeNumber is a TIME expression's value as MySQL reads it in a
// numeric context: the decimal [-]hhmmss.ffffff, with the digits of its
// type.
type timeNumber struct{ unary }

var _ gms.Expression = timeNumber{}

func (t timeNumber) tt() TimeType {
	return timeText(t).precision()
}

func (t timeNumber) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	tt := t.tt()
	ts, err := tt.ConvertToTimespan(v)
	if err != nil {
		return nil, err
	}
	return timespanNumber(tt.round(ctx, ts), int(tt.Precision)), nil
}

func (t timeNumber) Type() gms.Type {
	p := t.tt().Precision
	return types.MustCreateDecimalType(7+p, p)
}

func (t timeNumber) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return timeNumber{unary{children[0]}}, nil
}
