package sql

import (
	"io"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// RANGE window frames as MySQL 8 computes them. go-mysql-server's range
// framers compare a NULL ORDER BY value as greater than any other although
// NULLs sort first, and assume an ascending order, so that with a NULL or
// under ORDER BY ... DESC a frame took the whole partition; and it frames
// an aggregate over a window with ORDER BY but no frame by rows, leaving
// out the current row's peers. ruleWindowRange gives those windows
// rangeFrame, whose framer follows MySQL: a row's peers share its ORDER BY
// values; an N PRECEDING or FOLLOWING bound of a row whose value is NULL is
// at its NULL peers, and NULL rows are never within N of a value.

const ruleWindowRange analyzer.RuleId = 10014

func windowRangeRule(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	if _, ok := n.(*plan.Window); !ok && !hasWindow(n) {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		w, ok := e.(gms.WindowAdaptableExpression)
		if !ok || w.Window() == nil || len(w.Window().OrderBy) == 0 {
			return e, transform.SameTree, nil
		}
		def := w.Window()
		var frame gms.WindowFrame
		switch {
		case def.Frame == nil && framedAggregate(e):
			frame = &rangeFrame{WindowFrame: plan.NewRangeUnboundedPrecedingToCurrentRowFrame()}
		case def.Frame != nil && isRangeFrame(def.Frame):
			frame = &rangeFrame{WindowFrame: def.Frame}
		default:
			return e, transform.SameTree, nil
		}
		nd := *def
		nd.Frame = frame
		return w.WithWindow(&nd), transform.NewTree, nil
	})
}

func hasWindow(n gms.Node) bool {
	found := false
	transform.Inspect(n, func(n gms.Node) bool {
		if _, ok := n.(*plan.Window); ok {
			found = true
		}
		return !found
	})
	return found
}

// isRangeFrame says f is a RANGE frame (not yet one of ours).
func isRangeFrame(f gms.WindowFrame) bool {
	if _, ours := f.(*rangeFrame); ours {
		return false
	}
	return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(f.String())), "RANGE")
}

// framedAggregate says e is an aggregate that MySQL computes over a frame
// (ranking functions and LAG/LEAD ignore frames).
func framedAggregate(e gms.Expression) bool {
	switch e.(type) {
	case *aggregation.Sum, *aggregation.Avg, *aggregation.Count, *aggregation.Min, *aggregation.Max,
		*aggregation.JsonArray, *aggregation.BitAnd, *aggregation.BitOr, *aggregation.BitXor,
		*aggregation.StdDevPop, *aggregation.StdDevSamp, *aggregation.VarPop, *aggregation.VarSamp,
		*window.LastValue, *window.FirstValue:
		return true
	}
	return false
}

// rangeFrame is a RANGE frame whose framer is rangeFramer.
type rangeFrame struct{ gms.WindowFrame }

func (f *rangeFrame) NewFramer(w *gms.WindowDefinition) (gms.WindowFramer, error) {
	byN := f.StartNPreceding() != nil || f.StartNFollowing() != nil || f.EndNPreceding() != nil || f.EndNFollowing() != nil
	if byN && len(w.OrderBy) != 1 {
		return nil, aggregation.ErrRangeInvalidOrderBy.New(len(w.OrderBy))
	}
	return &rangeFramer{frame: f, order: w.OrderBy}, nil
}

// rangeFramer frames the rows of one partition, sorted by order.
type rangeFramer struct {
	frame  *rangeFrame
	order  gms.SortFields
	start  int // the partition's first row
	end    int // after the partition's last row
	idx    int // the next row
	cur    gms.WindowInterval
	vals   [][]any // ORDER BY values of the partition's rows, from start
	nn     [2]int  // the rows whose first ORDER BY value is not NULL: [nn[0], nn[1])
	loaded bool
}

func (f *rangeFramer) NewFramer(in gms.WindowInterval) (gms.WindowFramer, error) {
	return &rangeFramer{frame: f.frame, order: f.order, start: in.Start, end: in.End, idx: in.Start,
		cur: gms.WindowInterval{Start: in.Start, End: in.Start}}, nil
}

func (f *rangeFramer) FirstIdx() int                         { return f.cur.Start }
func (f *rangeFramer) LastIdx() int                          { return f.cur.End }
func (f *rangeFramer) Interval() (gms.WindowInterval, error) { return f.cur, nil }

func (f *rangeFramer) Next(ctx *gms.Context, buf gms.WindowBuffer) (gms.WindowInterval, error) {
	if f.idx >= f.end {
		return gms.WindowInterval{}, io.EOF
	}
	if !f.loaded {
		if err := f.load(ctx, buf); err != nil {
			return gms.WindowInterval{}, err
		}
	}
	s, err := f.bound(ctx, true)
	if err != nil {
		return gms.WindowInterval{}, err
	}
	e, err := f.bound(ctx, false)
	if err != nil {
		return gms.WindowInterval{}, err
	}
	f.cur = gms.WindowInterval{Start: s, End: max(s, e)}
	f.idx++
	return f.cur, nil
}

// load evaluates the partition's ORDER BY values.
func (f *rangeFramer) load(ctx *gms.Context, buf gms.WindowBuffer) error {
	f.vals = make([][]any, f.end-f.start)
	f.nn = [2]int{f.end, f.end}
	for i := f.start; i < f.end; i++ {
		v := make([]any, len(f.order))
		for k, o := range f.order {
			x, err := o.Column.Eval(ctx, buf[i])
			if err != nil {
				return err
			}
			v[k] = x
		}
		f.vals[i-f.start] = v
		if v[0] != nil {
			f.nn[0] = min(f.nn[0], i)
			f.nn[1] = i + 1
		}
	}
	if f.nn[0] == f.end {
		f.nn = [2]int{f.start, f.start}
	}
	f.loaded = true
	return nil
}

func (f *rangeFramer) val(i int) []any { return f.vals[i-f.start] }

// bound is the current row's frame start (an index) or end (after the
// last row).
func (f *rangeFramer) bound(ctx *gms.Context, start bool) (int, error) {
	fr := f.frame
	var n gms.Expression
	preceding := false
	switch {
	case start && fr.UnboundedPreceding():
		return f.start, nil
	case !start && fr.UnboundedFollowing():
		return f.end, nil
	case start && fr.StartNPreceding() != nil:
		n, preceding = fr.StartNPreceding(), true
	case start && fr.StartNFollowing() != nil:
		n = fr.StartNFollowing()
	case !start && fr.EndNPreceding() != nil:
		n, preceding = fr.EndNPreceding(), true
	case !start && fr.EndNFollowing() != nil:
		n = fr.EndNFollowing()
	}
	if n == nil || f.val(f.idx)[0] == nil {
		return f.peerBound(ctx, start)
	}
	return f.offsetBound(ctx, n, preceding, start)
}

// peerBound is the first row (start) or after the last row (end) of the
// current row's peers.
func (f *rangeFramer) peerBound(ctx *gms.Context, start bool) (int, error) {
	i := f.idx
	if start {
		for i > f.start {
			same, err := f.peers(ctx, i-1, f.idx)
			if err != nil || !same {
				return i, err
			}
			i--
		}
		return i, nil
	}
	for i+1 < f.end {
		same, err := f.peers(ctx, i+1, f.idx)
		if err != nil || !same {
			return i + 1, err
		}
		i++
	}
	return f.end, nil
}

func (f *rangeFramer) peers(ctx *gms.Context, a, b int) (bool, error) {
	va, vb := f.val(a), f.val(b)
	for k := range f.order {
		if va[k] == nil || vb[k] == nil {
			if va[k] != nil || vb[k] != nil {
				return false, nil
			}
			continue
		}
		t := f.order[k].Column.Type()
		c, err := compareAs(ctx, va[k], t, vb[k], t)
		if err != nil || c != 0 {
			return false, err
		}
	}
	return true, nil
}

// offsetBound is the bound N PRECEDING or N FOLLOWING of the current row,
// whose value is not NULL: the first row (start) or after the last row
// (end) whose value is within the bound, found by binary search among the
// rows with a value.
func (f *rangeFramer) offsetBound(ctx *gms.Context, n gms.Expression, preceding, start bool) (int, error) {
	desc := f.order[0].Order == gms.Descending
	op := ast.PlusStr
	if preceding != desc {
		op = ast.MinusStr
	}
	col := f.order[0].Column
	v := f.val(f.idx)[0]
	arith := expression.NewArithmetic(expression.NewLiteral(v, col.Type()), n, op)
	target, err := arith.Eval(ctx, nil)
	if err != nil {
		return 0, err
	}
	if target == nil {
		return f.peerBound(ctx, start)
	}
	lo, hi := f.nn[0], f.nn[1]
	for lo < hi {
		mid := (lo + hi) / 2
		c, err := compareAs(ctx, f.val(mid)[0], col.Type(), target, arith.Type())
		if err != nil {
			return 0, err
		}
		if desc {
			c = -c
		}
		// Rows before the bound: for a start, those sorting before the
		// target; for an end, those not sorting after it.
		if c < 0 || !start && c == 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// compareAs compares a and b, of types at and bt, as a comparison
// operator does (a decimal bound against an integer column, a datetime
// against a date).
func compareAs(ctx *gms.Context, a any, at gms.Type, b any, bt gms.Type) (int, error) {
	return expression.NewEquals(expression.NewLiteral(a, at), expression.NewLiteral(b, bt)).Compare(ctx, nil)
}
