package sql

import (
	"fmt"
	"io"
	"sort"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"

	"github.com/reorgdb/reorgdb/codec"
)

// rangeSelect reads the rows whose handles are in [lo, hi], in handle
// order, then sorts and de-duplicates them as go-mysql-server's Sort and
// Distinct do: a stable sort with the column type's comparison (NULLs
// first ascending), and DISTINCT by the hash of the whole result row,
// keeping the first (which makes the order of the two steps irrelevant).
type rangeSelect struct {
	fs     *FastStmt
	lo, hi int64
	none   bool
}

var _ gms.ExecSourceRel = (*rangeSelect)(nil)

func (n *rangeSelect) Resolved() bool { return true }
func (n *rangeSelect) String() string {
	return fmt.Sprintf("ReorgDBRangeSelect(%s.%s in [%d, %d])", n.fs.db, n.fs.table, n.lo, n.hi)
}
func (n *rangeSelect) Schema() gms.Schema   { return n.fs.sch }
func (n *rangeSelect) Children() []gms.Node { return nil }
func (n *rangeSelect) IsReadOnly() bool     { return true }
func (n *rangeSelect) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *rangeSelect) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	fs := n.fs
	tx, err := fs.begin(ctx)
	if err != nil {
		return nil, err
	}
	if n.none {
		if fs.sum {
			return &oneRowIter{row: gms.Row{nil}}, nil // SUM of no rows
		}
		return &oneRowIter{}, nil
	}
	tid := fs.m.def.ID
	it := &recordIter{t: fs.t, tx: tx, it: tx.txn.NewIter(codec.RecordKey(tid, n.lo), codec.PrefixEnd(codec.RecordKey(tid, n.hi)), false), keyRange: true}
	if fs.sum {
		a := fs.sumArg
		buf := aggregation.NewSumBuffer(expression.NewGetField(0, a.Type, a.Name, a.Nullable))
		for {
			row, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err == nil {
				err = buf.Update(ctx, row)
			}
			if err != nil {
				it.Close(ctx)
				return nil, err
			}
		}
		if err := it.Close(ctx); err != nil {
			return nil, err
		}
		v, err := buf.Eval(ctx)
		if err != nil {
			return nil, err
		}
		return &oneRowIter{row: gms.Row{v}}, nil
	}
	if fs.orderPos < 0 && !fs.distinct {
		return it, nil
	}
	var rows []gms.Row
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			it.Close(ctx)
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := it.Close(ctx); err != nil {
		return nil, err
	}
	if fs.orderPos >= 0 && !sortByString(rows, fs.orderPos, fs.sch[fs.orderPos].Type, fs.desc) {
		col := fs.sch[fs.orderPos]
		order := gms.Ascending
		if fs.desc {
			order = gms.Descending
		}
		sorter := &expression.Sorter{
			SortFields: []gms.SortField{{Column: expression.NewGetField(fs.orderPos, col.Type, col.Name, col.Nullable), Order: order}},
			Rows:       rows,
			Ctx:        ctx,
		}
		sort.Stable(sorter)
		if sorter.LastError != nil {
			return nil, sorter.LastError
		}
	}
	if fs.distinct {
		seen := make(map[uint64]struct{}, len(rows))
		out := rows[:0]
		for _, r := range rows {
			h, err := gms.HashOf(ctx, r)
			if err != nil {
				return nil, err
			}
			if _, dup := seen[h]; dup {
				continue
			}
			seen[h] = struct{}{}
			out = append(out, r)
		}
		rows = out
	}
	return gms.RowsToRowIter(rows...), nil
}
