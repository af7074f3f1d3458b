package sql

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/internal/collate"
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
	it := &recordIter{t: fs.t, tx: tx, it: tx.txn.NewIter(codec.RecordKey(tid, n.lo), codec.PrefixEnd(codec.RecordKey(tid, n.hi)), false)}
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
	if fs.orderPos >= 0 {
		sorted, deduped, err := n.sort(ctx, rows)
		if err != nil {
			return nil, err
		}
		rows = sorted
		if deduped {
			return gms.RowsToRowIter(rows...), nil
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

// sortByCollationKey sorts rows by a string column as go-mysql-server's
// stable Sort does, but compares each row's collation sort key
// (internal/collate) once computed instead of walking both strings'
// collation weights in every comparison. distinct drops a row whose value
// an earlier kept row has, which is DISTINCT when the column is the only
// one selected. ok is false for a column it does not handle.
func sortByCollationKey(rows []gms.Row, pos int, typ gms.Type, desc, distinct bool) (out []gms.Row, ok bool) {
	st, isStr := typ.(gms.StringType)
	// Under PAD SPACE go-mysql-server's comparison still orders 'a'
	// before 'a ', which the key makes equal.
	if !isStr || !collate.Indexable(st.Collation()) || collate.PadSpace(st.Collation()) {
		return nil, false
	}
	coll := st.Collation()
	type keyed struct {
		row  gms.Row
		key  []byte
		null bool
	}
	ks := make([]keyed, len(rows))
	var buf []byte
	for i, r := range rows {
		ks[i].row = r
		switch v := r[pos].(type) {
		case nil:
			ks[i].null = true
		case string:
			start := len(buf)
			buf = collate.Key(buf, coll, v)
			ks[i].key = buf[start:len(buf):len(buf)]
		default:
			return nil, false
		}
	}
	cmp := func(a, b *keyed) int {
		switch {
		case a.null && b.null:
			return 0
		case a.null:
			return -1 // NULLs first ascending, as MySQL sorts them
		case b.null:
			return 1
		}
		return bytes.Compare(a.key, b.key)
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if desc {
			return cmp(&ks[j], &ks[i]) < 0
		}
		return cmp(&ks[i], &ks[j]) < 0
	})
	out = rows[:0]
	run := 0 // where the kept rows with the current key start in out
	for i := range ks {
		if i == 0 || cmp(&ks[i-1], &ks[i]) != 0 {
			run = len(out)
		} else if distinct && slices.ContainsFunc(out[run:], func(r gms.Row) bool { return r[pos] == ks[i].row[pos] }) {
			// go-mysql-server's DISTINCT compares exact values, not the
			// collation's equality (docs/collations.md).
			continue
		}
		out = append(out, ks[i].row)
	}
	return out, true
}

// sort orders rows by the ORDER BY column; deduped: it also applied
// DISTINCT.
func (n *rangeSelect) sort(ctx *gms.Context, rows []gms.Row) (sorted []gms.Row, deduped bool, err error) {
	fs := n.fs
	col := fs.sch[fs.orderPos]
	dedupe := fs.distinct && len(fs.sch) == 1
	if sorted, ok := sortByCollationKey(rows, fs.orderPos, col.Type, fs.desc, dedupe); ok {
		return sorted, dedupe, nil
	}
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
	return rows, false, sorter.LastError
}
