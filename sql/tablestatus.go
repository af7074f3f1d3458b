package sql

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// showTableStatus is go-mysql-server's SHOW TABLE STATUS with
// ReorgDB's estimates of Rows, Avg_row_length, Data_length and
// Index_length, as in information_schema.tables (tableEstimate).
func showTableStatus(ctx *gms.Context, n *plan.ShowTableStatus, r gms.Row) (gms.RowIter, error) {
	it, err := rowexec.DefaultBuilder.Build(ctx, n, r)
	if err != nil {
		return nil, err
	}
	return &tableStatusIter{RowIter: it, db: n.Database()}, nil
}

type tableStatusIter struct {
	gms.RowIter
	db gms.Database
}

// Columns of SHOW TABLE STATUS.
const (
	statusName        = 0
	statusRows        = 4
	statusAvgRowLen   = 5
	statusDataLength  = 6
	statusIndexLength = 8
)

func (it *tableStatusIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || len(row) <= statusIndexLength {
		return row, err
	}
	name, _ := row[statusName].(string)
	gt, found, terr := it.db.GetTableInsensitive(ctx, name)
	if terr != nil || !found {
		return row, nil
	}
	t, ok := gt.(*Table)
	if !ok {
		return row, nil
	}
	rows, dataLen, indexLen, ok := tableEstimate(ctx, t)
	if !ok {
		return row, nil
	}
	row = append(gms.Row(nil), row...)
	row[statusRows], row[statusDataLength], row[statusIndexLength] = rows, dataLen, int64(indexLen)
	row[statusAvgRowLen] = uint64(0)
	if rows > 0 {
		row[statusAvgRowLen] = dataLen / rows
	}
	return row, nil
}
