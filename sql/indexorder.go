package sql

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

const ruleIndexOrder analyzer.RuleId = 10015

// indexOrderRule drops the sort of rows that an index lookup already
// returns in the ORDER BY's order, where go-mysql-server's own rule does
// not see it: the lookup fixes the index's first columns to one value
// each (WHERE user_id = 5), so its rows come in the order of the index's
// next columns and then, for a non-unique index, of the integer primary
// key its entries end with (ORDER BY id DESC, ORDER BY created, id).
// Without the sort, LIMIT stops the scan early, and a locking read locks
// only the rows it returns.
func indexOrderRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gms.Node) (gms.Node, transform.TreeIdentity, error) {
		switch s := n.(type) {
		case *plan.Sort:
			if child, ok := inIndexOrder(ctx, s.SortFields, s.Child); ok {
				return child, transform.NewTree, nil
			}
		case *plan.TopN:
			if child, ok := inIndexOrder(ctx, s.Fields, s.Child); ok {
				return plan.NewLimit(s.Limit, child).WithCalcFoundRows(s.CalcFoundRows), transform.NewTree, nil
			}
		}
		return n, transform.SameTree, nil
	})
}

// inIndexOrder returns child, with its lookup reversed for a descending
// order, if it yields its rows in the order of fields.
func inIndexOrder(ctx *gms.Context, fields gms.SortFields, child gms.Node) (gms.Node, bool) {
	alias := ""
	switch c := child.(type) {
	case *plan.Filter:
		inner, ok := inIndexOrder(ctx, fields, c.Child)
		if !ok {
			return nil, false
		}
		nc, err := c.WithChildren(inner)
		return nc, err == nil
	case *plan.TableAlias:
		alias = c.Name()
		ita, ok := c.Child.(*plan.IndexedTableAccess)
		if !ok {
			return nil, false
		}
		inner, ok := orderedAccess(ctx, fields, ita, alias)
		if !ok {
			return nil, false
		}
		nc, err := c.WithChildren(inner)
		return nc, err == nil
	case *plan.IndexedTableAccess:
		return orderedAccess(ctx, fields, c, alias)
	}
	return nil, false
}

// orderedAccess is inIndexOrder for the lookup itself.
func orderedAccess(ctx *gms.Context, fields gms.SortFields, ita *plan.IndexedTableAccess, alias string) (gms.Node, bool) {
	if len(fields) == 0 || !ita.IsStatic() {
		return nil, false
	}
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil {
		return nil, false
	}
	idx, ok := lookup.Index.(*Index)
	ranges, ok2 := lookup.Ranges.(gms.MySQLRangeCollection)
	if !ok || !ok2 || len(ranges) != 1 || idx.ix.isHandleIndex() || idx.m.keyed(idx.ix) {
		return nil, false
	}
	fixed := 0
	for fixed < len(ranges[0]) && isEquality(ctx, ranges[0][fixed]) {
		fixed++
	}
	order := idx.orderAfter(fixed)
	if fixed == 0 || len(fields) > len(order) {
		return nil, false
	}
	for i, f := range fields {
		gf, ok := f.Column.(*expression.GetField)
		if !ok || f.Order != fields[0].Order || !strings.EqualFold(gf.Name(), order[i]) ||
			gf.Table() != "" && !strings.EqualFold(gf.Table(), idx.m.def.Name) && !strings.EqualFold(gf.Table(), alias) {
			return nil, false
		}
	}
	reverse := fields[0].Order == gms.Descending
	if reverse == lookup.IsReverse {
		return ita, true
	}
	nl := gms.NewIndexLookup(lookup.Index, ranges, lookup.IsPointLookup, lookup.IsEmptyRange, lookup.IsSpatialLookup, reverse)
	nn, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, nl)
	return nn, err == nil
}

// orderAfter is the columns whose order the index's entries follow once
// its first fixed columns are fixed: its other columns, then the integer
// primary key for an index whose entries end with the row handle. A
// prefix column (KEY (c(10))) ends it: entries follow its prefix only.
func (i *Index) orderAfter(fixed int) []string {
	var out []string
	for k, p := range i.ix.pos {
		if i.ix.prefix[k] > 0 {
			if k < fixed {
				return nil
			}
			return out
		}
		if k >= fixed {
			out = append(out, i.m.schema[p].Name)
		}
	}
	if !i.ix.unique() && i.m.handlePos >= 0 {
		out = append(out, i.m.schema[i.m.handlePos].Name)
	}
	return out
}

// isEquality says whether a range of one index column is a single value
// (or NULL).
func isEquality(ctx *gms.Context, r gms.MySQLRangeColumnExpr) bool {
	switch r.Type() {
	case gms.RangeType_EqualNull:
		return true
	case gms.RangeType_ClosedClosed:
		lo, ok1 := r.LowerBound.(gms.Below)
		hi, ok2 := r.UpperBound.(gms.Above)
		if !ok1 || !ok2 || r.Typ == nil {
			return false
		}
		c, err := r.Typ.Compare(ctx, lo.Key, hi.Key)
		return err == nil && c == 0
	}
	return false
}
