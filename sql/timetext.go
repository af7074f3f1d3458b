package sql

import (
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// go-mysql-server cannot turn a TIME value into a string: CAST(t AS
// CHAR) is NULL, CONCAT(t, ...) and COALESCE(NULL, t) fail. A UNION of TIME columns of two
// precisions casts both to CHAR, so it read NULLs. The rule
// timeToTextRule puts timeText, the value as MySQL prints it, in those
// places.

const ruleTimeToText analyzer.RuleId = 10012

func timeToTextRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Convert:
			if isTimeExpr(e.Child) && types.IsText(e.Type()) {
				return timeText{e.Child}, transform.NewTree, nil
			}
		case *function.Concat, *function.ConcatWithSeparator:
			return wrapTimeArgs(e)
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
	args := e.Children()
	var out []gms.Expression
	for i, a := range args {
		if !isTimeExpr(a) {
			continue
		}
		if out == nil {
			out = append([]gms.Expression(nil), args...)
		}
		out[i] = timeText{a}
	}
	if out == nil {
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(out...)
	return ne, transform.NewTree, err
}

// timeText is a TIME expression's value as text, with the fractional
// digits of its type (6 for go-mysql-server's TIME).
type timeText struct{ Child gms.Expression }

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

func (t timeText) Children() []gms.Expression { return []gms.Expression{t.Child} }
func (t timeText) Resolved() bool             { return t.Child.Resolved() }
func (t timeText) IsNullable() bool           { return t.Child.IsNullable() }
func (t timeText) String() string             { return fmt.Sprintf("CAST(%s AS CHAR)", t.Child) }

func (t timeText) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return timeText{children[0]}, nil
}
