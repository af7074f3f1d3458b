package sql

import (
	"fmt"
	"io"
	"sort"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"

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
			return oneRow(gms.Row{nil}), nil // SUM of no rows
		}
		return &rowsIter{}, nil
	}
	tid := fs.m.def.ID
	it := &recordIter{t: fs.t, tx: tx, it: tx.txn.NewIter(codec.RecordKey(tid, n.lo), codec.PrefixEnd(codec.RecordKey(tid, n.hi)), false), keyRange: true, alloc: &rowAlloc{}}
	if fs.sum {
		return n.sum(ctx, it)
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
	return &rowsIter{rows: rows}, nil
}

// sum is SUM of the integer column fs.sumArg as go-mysql-server's
// sumBuffer computes it: each value converted to float64 and added in
// row order, NULL when no value is not NULL. The values are read without
// making a row of each.
func (n *rangeSelect) sum(ctx *gms.Context, it *recordIter) (gms.RowIter, error) {
	var sum float64
	null := true
	raw := make([]codec.Raw, 1)
	for {
		val, err := it.advance(ctx)
		if err == io.EOF {
			break
		}
		if err == nil {
			err = it.t.projDec.DecodeRaw(val, raw)
		}
		if err != nil {
			it.Close(ctx)
			return nil, err
		}
		v, ok, err := rawNumber(raw[0])
		if err != nil {
			it.Close(ctx)
			return nil, err
		}
		if ok {
			sum += v
			null = false
		}
	}
	if err := it.Close(ctx); err != nil {
		return nil, err
	}
	if null {
		return oneRow(gms.Row{nil}), nil
	}
	return oneRow(gms.Row{sum}), nil
}

// rawNumber is an integer column's value as float64; ok is false for NULL.
func rawNumber(r codec.Raw) (v float64, ok bool, err error) {
	switch r.Kind {
	case codec.RawNull:
		return 0, false, nil
	case codec.RawInt:
		return float64(int64(r.N)), true, nil
	case codec.RawUint:
		return float64(r.N), true, nil
	}
	switch c := r.Canonical().(type) { // a default value
	case nil:
		return 0, false, nil
	case int64:
		return float64(c), true, nil
	case uint64:
		return float64(c), true, nil
	default:
		return 0, false, fmt.Errorf("reorgdb: SUM of %T", c)
	}
}
