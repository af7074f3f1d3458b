package sql

import (
	"errors"
	"io"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// statsProvider is go-mysql-server's statistics with ANALYZE TABLE of an
// empty table made a no-op: go-mysql-server divides by the number of
// sampled rows and panics there (MySQL answers "status OK"). So is that of
// a temporary table: the statistics are kept by table name for every
// session, and would stand for the table it shadows.
type statsProvider struct{ gms.StatsProvider }

func (p statsProvider) AnalyzeTable(ctx *gms.Context, table gms.Table, db string) error {
	if isTemporaryTable(table) {
		return nil
	}
	empty, err := isEmpty(ctx, table)
	if err != nil {
		return err
	}
	if empty {
		return nil
	}
	return p.StatsProvider.AnalyzeTable(ctx, table, db)
}

// isEmpty reports whether table has no row, reading at most one.
func isEmpty(ctx *gms.Context, table gms.Table) (bool, error) {
	parts, err := table.Partitions(ctx)
	if err != nil {
		return false, err
	}
	defer parts.Close(ctx)
	for {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		rows, err := table.PartitionRows(ctx, p)
		if err != nil {
			return false, err
		}
		_, err = rows.Next(ctx)
		rows.Close(ctx)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, io.EOF) {
			return false, err
		}
	}
}

// analyzeTable is go-mysql-server's ANALYZE TABLE with the Table column
// as MySQL gives it, db.table (go-mysql-server gives the table's name).
func analyzeTable(ctx *gms.Context, n *plan.AnalyzeTable, r gms.Row) (gms.RowIter, error) {
	it, err := rowexec.DefaultBuilder.Build(ctx, n, r)
	if err != nil {
		return nil, err
	}
	return &analyzeIter{RowIter: it, n: n}, nil
}

type analyzeIter struct {
	gms.RowIter
	n *plan.AnalyzeTable
	i int
}

func (it *analyzeIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || len(row) == 0 || it.i >= len(it.n.Tables) {
		return row, err
	}
	db := it.n.Db
	if t, ok := it.n.Tables[it.i].(*Table); ok {
		db = t.db.Name()
	}
	it.i++
	if name, ok := row[0].(string); ok && db != "" {
		row = append(gms.Row(nil), row...)
		row[0] = db + "." + name
	}
	return row, nil
}
