package sql

import (
	"fmt"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A JSON value that is not a number, a boolean or a numeric string
// (JSON null, an object, an array) is 0 as a number in MySQL 8, with
// warning 3156 (Json_wrapper::coerce_int, coerce_decimal, coerce_real).
// go-mysql-server casts a JSON null to DECIMAL as SQL NULL, and fails
// with an internal error when a JSON value is a condition (IF(j, ...),
// WHERE j, HAVING j, NOT j, CASE WHEN j). ruleJSONNumbers gives such casts and conditions
// MySQL's values.

const ruleJSONNumbers analyzer.RuleId = 10013

// errInvalidJSONCast is MySQL's ER_INVALID_JSON_VALUE_FOR_CAST.
const errInvalidJSONCast = 3156

func jsonNumbersRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	n, same, err := transform.Node(n, func(n gms.Node) (gms.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Filter:
			if isJSON(n.Expression) {
				return plan.NewFilter(jsonTruth{n.Expression}, n.Child), transform.NewTree, nil
			}
		case *plan.Having:
			if isJSON(n.Cond) {
				return plan.NewHaving(jsonTruth{n.Cond}, n.Child), transform.NewTree, nil
			}
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same2, err := transform.NodeExprs(n, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Convert:
			if isJSON(e.Child) && isNumber(e.Type()) {
				return jsonNumCast{e}, transform.NewTree, nil
			}
		case *function.If:
			return wrapJSONConditions(e, 1)
		case *expression.Not, *expression.And, *expression.Or, *expression.Xor:
			return wrapJSONConditions(e, len(e.Children()))
		case *expression.Case:
			return wrapCaseConditions(e)
		}
		return e, transform.SameTree, nil
	})
	return n, same && same2, err
}

func isJSON(e gms.Expression) bool { return types.IsJSON(e.Type()) }

func isNumber(t gms.Type) bool { return types.IsInteger(t) || types.IsDecimal(t) || types.IsFloat(t) }

// wrapJSONConditions makes the first n children of e that are JSON
// values conditions with MySQL's truth value.
func wrapJSONConditions(e gms.Expression, n int) (gms.Expression, transform.TreeIdentity, error) {
	args := e.Children()
	var out []gms.Expression
	for i := 0; i < n && i < len(args); i++ {
		if !isJSON(args[i]) {
			continue
		}
		if out == nil {
			out = append([]gms.Expression(nil), args...)
		}
		out[i] = jsonTruth{args[i]}
	}
	if out == nil {
		return e, transform.SameTree, nil
	}
	ne, err := e.WithChildren(out...)
	return ne, transform.NewTree, err
}

// wrapCaseConditions makes the JSON values that are the WHEN conditions
// of a searched CASE conditions with MySQL's truth value.
func wrapCaseConditions(c *expression.Case) (gms.Expression, transform.TreeIdentity, error) {
	if c.Expr != nil {
		return c, transform.SameTree, nil // CASE x WHEN v compares x with v
	}
	var branches []expression.CaseBranch
	for i, b := range c.Branches {
		if !isJSON(b.Cond) {
			continue
		}
		if branches == nil {
			branches = append([]expression.CaseBranch(nil), c.Branches...)
		}
		branches[i].Cond = jsonTruth{b.Cond}
	}
	if branches == nil {
		return c, transform.SameTree, nil
	}
	return expression.NewCase(nil, branches, c.Else), transform.NewTree, nil
}

// jsonNumber is v, a JSON value, as MySQL reads it as a number: ok is
// false (and a warning is given) for a value that is none.
func jsonNumber(ctx *gms.Context, v gms.JSONWrapper, target string, from gms.Expression) (float64, bool, error) {
	iv, err := v.ToInterface()
	if err != nil {
		return 0, false, err
	}
	switch x := iv.(type) {
	case bool:
		if x {
			return 1, true, nil
		}
		return 0, true, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, true, nil
		}
	case nil, map[string]any, []any:
	default:
		f, _, err := types.Float64.Convert(ctx, x)
		if err == nil {
			if f, ok := f.(float64); ok {
				return f, true, nil
			}
		}
	}
	ctx.Session.Warn(&gms.Warning{Level: "Warning", Code: errInvalidJSONCast,
		Message: fmt.Sprintf("Invalid JSON value for CAST to %s from column %s at row 1", target, from.String())})
	return 0, false, nil
}

// jsonNumCast is CAST(json AS number): 0, with a warning, for a JSON
// value that is not a number, boolean or string.
type jsonNumCast struct{ *expression.Convert }

func (c jsonNumCast) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if j, ok := v.(gms.JSONWrapper); ok {
		iv, err := j.ToInterface()
		if err != nil {
			return nil, err
		}
		switch iv.(type) {
		case nil, map[string]any, []any:
			target := "INTEGER"
			if types.IsDecimal(c.Type()) {
				target = "DECIMAL"
			} else if types.IsFloat(c.Type()) {
				target = "DOUBLE"
			}
			_, _, err := jsonNumber(ctx, j, target, c.Child)
			if err != nil {
				return nil, err
			}
			zero, _, err := c.Type().Convert(ctx, int64(0))
			return zero, err
		}
	}
	conv, err := c.Convert.WithChildren(expression.NewLiteral(v, c.Child.Type()))
	if err != nil {
		return nil, err
	}
	return conv.Eval(ctx, row)
}

func (c jsonNumCast) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if conv, ok := e.(*expression.Convert); ok {
		return jsonNumCast{conv}, nil
	}
	return e, nil
}

// jsonTruth is a JSON value as a condition: its number is true when it is
// not 0, as in MySQL; SQL NULL stays NULL.
type jsonTruth struct{ gms.Expression }

func (t jsonTruth) Type() gms.Type             { return types.Int8 }
func (t jsonTruth) IsNullable() bool           { return true }
func (t jsonTruth) Children() []gms.Expression { return []gms.Expression{t.Expression} }
func (t jsonTruth) String() string             { return t.Expression.String() }

func (t jsonTruth) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return jsonTruth{children[0]}, nil
}

func (t jsonTruth) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := t.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	j, ok := v.(gms.JSONWrapper)
	if !ok {
		r, _, err := types.Int8.Convert(ctx, v)
		return r, err
	}
	f, _, err := jsonNumber(ctx, j, "DOUBLE", t.Expression)
	if err != nil {
		return nil, err
	}
	if f != 0 {
		return int8(1), nil
	}
	return int8(0), nil
}
