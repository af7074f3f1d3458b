package sql

import (
	"fmt"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// SHOW CREATE TABLE prints a literal default as go-mysql-server's
// converted value: an ENUM's index ('2' for 'b'), a SET's bits, a DECIMAL
// without its scale ('1.5' for 1.50). MySQL prints the value as written
// in the column's terms, and a dump must load back: DEFAULT '2' is not a
// member of ENUM('a','b'). So the statement is built from a schema whose
// such defaults are the display strings.

// rewrittenShowCreate marks the nodes showCreateTable made, which
// go-mysql-server then builds as usual.
var rewrittenShowCreate sync.Map

func (o *execOverride) showCreateTable(ctx *gms.Context, n *plan.ShowCreateTable, r gms.Row) (gms.RowIter, error) {
	if _, ok := rewrittenShowCreate.LoadAndDelete(n); ok || n.IsView {
		return nil, nil
	}
	sch := n.TargetSchema()
	fixed := make(gms.Schema, len(sch))
	changed := false
	for i, col := range sch {
		fixed[i] = col
		s, ok, err := displayDefault(ctx, col)
		if err != nil || !ok {
			continue
		}
		c := col.Copy()
		lit := expression.NewLiteral(s, types.LongText)
		if c.Default, err = gms.NewColumnDefaultValue(lit, types.LongText, true, false, col.Nullable); err != nil {
			return nil, err
		}
		fixed[i], changed = c, true
	}
	if !changed {
		return nil, nil
	}
	nn, err := n.WithTargetSchema(fixed)
	if err != nil {
		return nil, err
	}
	rewrittenShowCreate.Store(nn, struct{}{})
	defer rewrittenShowCreate.Delete(nn)
	return o.base().Build(ctx, nn, r)
}

// displayDefault is how MySQL prints col's literal default, for the types
// go-mysql-server prints otherwise.
func displayDefault(ctx *gms.Context, col *gms.Column) (string, bool, error) {
	d := col.Default
	if d == nil || !d.IsLiteral() || col.Generated != nil {
		return "", false, nil
	}
	v, err := d.Eval(ctx, nil)
	if err != nil || v == nil {
		return "", false, err
	}
	switch t := col.Type.(type) {
	case gms.EnumType:
		idx, ok := asInt(v)
		if !ok {
			return "", false, nil
		}
		s, found := t.At(idx)
		return s, found, nil
	case gms.SetType:
		bits, ok := asInt(v)
		if !ok {
			return "", false, nil
		}
		s, err := t.BitsToString(uint64(bits))
		return s, err == nil, nil
	case TimeType:
		ts, err := t.ConvertToTimespan(v)
		if err != nil {
			return "", false, nil
		}
		return string(t.appendText(nil, ts)), true, nil
	case gms.DecimalType:
		dv, ok := v.(decimal.Decimal)
		if !ok {
			return "", false, nil
		}
		return dv.StringFixed(int32(t.Scale())), true, nil
	}
	return "", false, nil
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case uint16:
		return int(x), true
	case uint64:
		return int(x), true
	case int64:
		return int(x), true
	case int:
		return x, true
	}
	var n int
	_, err := fmt.Sscan(fmt.Sprint(v), &n)
	return n, err == nil
}
