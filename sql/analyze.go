package sql

import (
	"errors"
	"io"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// statsProvider is go-mysql-server's statistics with ANALYZE TABLE of an
// empty table made a no-op: go-mysql-server divides by the number of
// sampled rows and panics there (MySQL answers "status OK").
type statsProvider struct{ gms.StatsProvider }

func (p statsProvider) AnalyzeTable(ctx *gms.Context, table gms.Table, db string) error {
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
