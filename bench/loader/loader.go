package loader

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reorgdb/reorgdb/bench/sysrand"
)

// Loader fills tables on a database.
type Loader struct {
	DB      *sql.DB
	Threads int // parallel INSERT connections
	Seed    uint64
	Dist    sysrand.Dist // sysbench's k follows --rand-type
	// Progress, if set, is called as rows go in.
	Progress func(table string, done, total int64)
}

// Load makes t hold exactly rows rows: a table that already does (with its
// secondary indexes) is kept, anything else is dropped and loaded again.
// It reports whether it loaded.
func (l *Loader) Load(ctx context.Context, t Table, rows int64) (bool, error) {
	if rows < 1 {
		return false, fmt.Errorf("%s: row count must be positive, got %d", t.Name, rows)
	}
	if ok, err := l.loaded(ctx, t, rows); err != nil || ok {
		return false, err
	}
	for _, q := range []string{"DROP TABLE IF EXISTS " + t.Name, t.Create} {
		if _, err := l.DB.ExecContext(ctx, q); err != nil {
			return false, fmt.Errorf("%s: %w", firstLine(q), err)
		}
	}
	if err := l.insert(ctx, t, rows); err != nil {
		return false, err
	}
	for _, q := range t.After {
		if _, err := l.DB.ExecContext(ctx, q); err != nil {
			return false, fmt.Errorf("%s: %w", q, err)
		}
	}
	return true, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// loaded says whether t exists with rows rows and its indexes.
func (l *Loader) loaded(ctx context.Context, t Table, rows int64) (bool, error) {
	var n int64
	if err := l.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.Name).Scan(&n); err != nil {
		// Most likely the table does not exist; if it is something else,
		// the DROP and CREATE that follow report it.
		return false, nil
	}
	if n != rows {
		return false, nil
	}
	have, err := IndexNames(ctx, l.DB, t.Name)
	if err != nil {
		return false, err
	}
	for _, idx := range t.Indexes {
		if !slices.Contains(have, idx) {
			return false, nil
		}
	}
	return true, nil
}

// insert loads ids 1..rows in chunks of t.Batch on l.Threads connections.
// Each chunk's values come from a generator seeded by its first id, so the
// data does not depend on how the chunks were scheduled.
func (l *Loader) insert(ctx context.Context, t Table, rows int64) error {
	threads := max(l.Threads, 1)
	batch := int64(max(t.Batch, 1))
	chunks := make(chan int64)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b strings.Builder
			for first := range chunks {
				last := min(first+batch-1, rows)
				b.Reset()
				fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.Name, t.Columns)
				r := sysrand.New(l.Seed^uint64(first)*0x9e3779b97f4a7c15, l.Dist)
				for id := first; id <= last; id++ {
					if id > first {
						b.WriteString(", ")
					}
					t.row(&b, r, id, rows)
				}
				if _, err := l.DB.ExecContext(ctx, b.String()); err != nil {
					errs <- fmt.Errorf("load %s rows %d..%d: %w", t.Name, first, last, err)
					cancel()
					return
				}
				n := done.Add(last - first + 1)
				if l.Progress != nil {
					l.Progress(t.Name, n, rows)
				}
			}
		}()
	}
feed:
	for first := int64(1); first <= rows; first += batch {
		select {
		case chunks <- first:
		case <-ctx.Done():
			break feed
		}
	}
	close(chunks)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// IndexNames lists the index names of table (PRIMARY included), from
// SHOW INDEX, whose columns differ between servers.
func IndexNames(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW INDEX FROM "+table)
	if err != nil {
		return nil, fmt.Errorf("SHOW INDEX FROM %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(cols, func(c string) bool { return strings.EqualFold(c, "Key_name") })
	if at < 0 {
		return nil, fmt.Errorf("SHOW INDEX FROM %s has no Key_name column", table)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var names []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		if name := string(vals[at]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, rows.Err()
}
