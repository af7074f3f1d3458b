package sql

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server gives an UPDATE the ON UPDATE expressions of the columns
// it does not set (ON UPDATE CURRENT_TIMESTAMP), but not the update half
// of INSERT ... ON DUPLICATE KEY UPDATE, where MySQL applies them too. The
// rule onDupOnUpdateRule adds them there.

const ruleOnDupOnUpdate analyzer.RuleId = 10017

// onDupOnUpdateRule runs after go-mysql-server has fixed the plan's
// execution indexes: a SetField of the update half indexes the existing
// row by the column's position in the table, and an ON UPDATE expression
// reads no column.
func onDupOnUpdateRule(_ *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gms.Node) (gms.Node, transform.TreeIdentity, error) {
		ins, ok := n.(*plan.InsertInto)
		if !ok || len(ins.OnDupExprs) == 0 {
			return n, transform.SameTree, nil
		}
		n0 := len(ins.OnDupExprs)
		exprs := ins.OnDupExprs[:n0:n0] // appending copies
		for i, col := range ins.Destination.Schema() {
			if col.OnUpdate == nil || setsColumn(exprs, col.Name) {
				continue
			}
			exprs = append(exprs, expression.NewSetField(expression.NewGetField(i, col.Type, col.Name, col.Nullable), col.OnUpdate))
		}
		if len(exprs) == n0 {
			return n, transform.SameTree, nil
		}
		out := *ins
		out.OnDupExprs = exprs
		return &out, transform.NewTree, nil
	})
}

// setsColumn says whether one of the SET expressions sets column name.
func setsColumn(exprs []gms.Expression, name string) bool {
	for _, e := range exprs {
		if sf, ok := e.(*expression.SetField); ok {
			if gf, ok := sf.LeftChild.(*expression.GetField); ok && strings.EqualFold(gf.Name(), name) {
				return true
			}
		}
	}
	return false
}
