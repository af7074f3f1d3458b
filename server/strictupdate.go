package server

import (
	"fmt"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server's UPDATE converts each new value to its column's type
// and ignores whether it fit: in strict mode UPDATE t SET tinyint_col = 300
// silently stores 127, where MySQL refuses it with 1264 (INSERT does
// check). The analyzer rule below makes every numeric SET of an UPDATE
// check the range first, and so does INSERT ... ON DUPLICATE KEY UPDATE.

// strictUpdateRuleID is outside go-mysql-server's own rule ids.
const strictUpdateRuleID analyzer.RuleId = 100001

var strictUpdateOnce sync.Once

// addStrictUpdateRule adds the rule to the analyzer's last batch, and to
// go-mysql-server's OnceAfterAll rules, which its short path for
// single-table UPDATEs runs instead of the analyzer's batches.
func addStrictUpdateRule(a *analyzer.Analyzer) {
	rule := analyzer.Rule{Id: strictUpdateRuleID, Apply: strictUpdateRule}
	strictUpdateOnce.Do(func() {
		analyzer.OnceAfterAll = append(analyzer.OnceAfterAll[:len(analyzer.OnceAfterAll):len(analyzer.OnceAfterAll)], rule)
	})
	for _, b := range a.Batches {
		if b.Desc == "after-all" {
			for _, r := range b.Rules {
				if r.Id == strictUpdateRuleID {
					return
				}
			}
			b.Rules = append(b.Rules[:len(b.Rules):len(b.Rules)], rule)
			return
		}
	}
}

func strictUpdateRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gms.Node) (gms.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.UpdateSource:
			if n.Ignore {
				break
			}
			if out, changed := rangeCheckSets(n.Expressions()); changed {
				nn, err := n.WithExpressions(out...)
				if err != nil {
					return nil, transform.SameTree, err
				}
				return nn, transform.NewTree, nil
			}
		case *plan.InsertInto:
			// INSERT ... ON DUPLICATE KEY UPDATE has the same conversion.
			if n.Ignore || len(n.OnDupExprs) == 0 {
				break
			}
			if out, changed := rangeCheckSets(n.OnDupExprs); changed {
				nn := *n
				nn.OnDupExprs = out
				return &nn, transform.NewTree, nil
			}
		}
		return n, transform.SameTree, nil
	})
}

// rangeCheckSets wraps the value of every SetField of a numeric column in
// a range check.
func rangeCheckSets(exprs []gms.Expression) ([]gms.Expression, bool) {
	changed := false
	out := make([]gms.Expression, len(exprs))
	for i, e := range exprs {
		out[i] = e
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		left, right := sf.LeftChild, sf.RightChild
		if _, isNum := left.Type().(gms.NumberType); !isNum {
			continue
		}
		switch right.(type) {
		case *rangeChecked, *gms.ColumnDefaultValue, *expression.DefaultColumn:
			continue
		}
		out[i] = expression.NewSetField(left, &rangeChecked{child: right, typ: left.Type()})
		changed = true
	}
	return out, changed
}

// rangeChecked evaluates child and, in strict mode, fails with
// ErrValueOutOfRange (1264) when the value does not fit typ.
type rangeChecked struct {
	child gms.Expression
	typ   gms.Type
}

var _ gms.Expression = (*rangeChecked)(nil)

func (r *rangeChecked) Resolved() bool             { return r.child.Resolved() }
func (r *rangeChecked) String() string             { return r.child.String() }
func (r *rangeChecked) Type() gms.Type             { return r.child.Type() }
func (r *rangeChecked) IsNullable() bool           { return r.child.IsNullable() }
func (r *rangeChecked) Children() []gms.Expression { return []gms.Expression{r.child} }

func (r *rangeChecked) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(r, len(children), 1)
	}
	return &rangeChecked{child: children[0], typ: r.typ}, nil
}

func (r *rangeChecked) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := r.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	mode := gms.LoadSqlMode(ctx)
	if !mode.ModeEnabled("STRICT_TRANS_TABLES") && !mode.ModeEnabled("STRICT_ALL_TABLES") {
		return v, nil
	}
	if _, inRange, cerr := r.typ.Convert(ctx, v); cerr == nil && inRange == gms.OutOfRange {
		return nil, gms.ErrValueOutOfRange.New(fmt.Sprint(v), r.typ)
	}
	return v, nil
}
