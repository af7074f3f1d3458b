package bench

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/bench/loader"
)

// Change is the unit of work a plan measures: one ALTER TABLE run while
// the workload goes on, then checked and undone so that the next setting
// starts from the same table.
type Change struct {
	Name string // what the tables and charts call it
	// Index is the index Apply builds; it selects the index checks and
	// keeps the index plans' headers ("" for any other change).
	Index string
	Apply string // the ALTER TABLE clause, after "ALTER TABLE <table> "
	Undo  string // the clause that restores the table; "" if none is needed
	// Setup runs before the workload starts, e.g. to add the column a
	// DROP COLUMN drops; each step must be a no-op when already done.
	Setup []step
	// ExpectErr is the MySQL error number Apply must fail with (0: none),
	// leaving the table as it was.
	ExpectErr uint16
	// Applied tells whether Apply's effect is on the table, so that one
	// left by an interrupted run is undone first and a success verified.
	Applied probe
}

// step prepares the table of a change.
type step func(ctx context.Context, b *bench, table string) error

// SQL is the statement that makes the change on table.
func (c Change) SQL(table, suffix string) string {
	return "ALTER TABLE " + table + " " + c.Apply + suffix
}

// UndoSQL is the statement that restores table, "" if none is needed.
func (c Change) UndoSQL(table string) string {
	if c.Undo == "" {
		return ""
	}
	return "ALTER TABLE " + table + " " + c.Undo
}

// Kind is what the result tables say the plan measures.
func (c Change) Kind() string {
	if c.Index != "" {
		return ""
	}
	return "alter"
}

// outcome sorts the error of Apply: nil and the expected error are fine
// (failed says which), anything else is the run's error.
func (c Change) outcome(err error) (failed string, runErr error) {
	var me *mysql.MySQLError
	switch {
	case c.ExpectErr == 0:
		return "", err
	case err == nil:
		return "", fmt.Errorf("%s succeeded; want error %d", c.Name, c.ExpectErr)
	case errors.As(err, &me) && me.Number == c.ExpectErr:
		return fmt.Sprintf("error %d", me.Number), nil
	default:
		return "", fmt.Errorf("want error %d: %w", c.ExpectErr, err)
	}
}

// Index is one index a plan builds.
type Index struct {
	Name   string
	Cols   string
	Unique bool
}

// Change is the index build as a plan's change.
func (ix Index) Change() Change {
	unique := ""
	if ix.Unique {
		unique = "UNIQUE "
	}
	return Change{Name: ix.Name, Index: ix.Name, Apply: fmt.Sprintf("ADD %sINDEX %s (%s)", unique, ix.Name, ix.Cols),
		Undo: "DROP INDEX " + ix.Name, Applied: hasIndex(ix.Name)}
}

// probe reports whether a table is in some state.
type probe func(ctx context.Context, t *target, table string) (bool, error)

func hasIndex(name string) probe {
	return func(ctx context.Context, t *target, table string) (bool, error) {
		have, err := loader.IndexNames(ctx, t.db, table)
		return slices.Contains(have, name), err
	}
}

// infoSchema is a probe true when information_schema's view has a row
// of the table that matches cond.
func infoSchema(view, cond string, args ...any) probe {
	return func(ctx context.Context, t *target, table string) (bool, error) {
		q := "SELECT COUNT(*) FROM information_schema." + view +
			" WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND " + cond
		var n int64
		if err := t.db.QueryRowContext(ctx, q, append([]any{table}, args...)...).Scan(&n); err != nil {
			return false, fmt.Errorf("%s: %w", q, err)
		}
		return n > 0, nil
	}
}

func hasColumn(col string) probe { return infoSchema("COLUMNS", "COLUMN_NAME = ?", col) }

// both is true when p and q are.
func both(p, q probe) probe {
	return func(ctx context.Context, t *target, table string) (bool, error) {
		ok, err := p(ctx, t, table)
		if err != nil || !ok {
			return false, err
		}
		return q(ctx, t, table)
	}
}

func not(p probe) probe {
	return func(ctx context.Context, t *target, table string) (bool, error) {
		ok, err := p(ctx, t, table)
		return !ok, err
	}
}

// columnIs is true when col has the data type and, for a string type,
// the length; the type's spelling differs between servers, these do not.
func columnIs(col, dataType string, length int) probe {
	if length == 0 {
		return infoSchema("COLUMNS", "COLUMN_NAME = ? AND DATA_TYPE = ?", col, dataType)
	}
	return infoSchema("COLUMNS", "COLUMN_NAME = ? AND DATA_TYPE = ? AND CHARACTER_MAXIMUM_LENGTH = ?", col, dataType, length)
}

func hasForeignKey(name string) probe {
	return infoSchema("TABLE_CONSTRAINTS", "CONSTRAINT_NAME = ? AND CONSTRAINT_TYPE = 'FOREIGN KEY'", name)
}

// addColumn is a setup step that adds col (a definition) unless present.
func addColumn(name, def string) step {
	return alterUnless(hasColumn(name), "ADD COLUMN "+name+" "+def)
}

// addIndex is a setup step that adds index name over cols (e.g. "(a, b)").
func addIndex(name, cols string) step {
	return alterUnless(hasIndex(name), "ADD INDEX "+name+" "+cols)
}

// alterUnless is a setup step that runs ALTER TABLE ... spec unless has
// finds the table already changed.
func alterUnless(has probe, spec string) step {
	return func(ctx context.Context, b *bench, table string) error {
		if ok, err := has(ctx, b.t, table); err != nil || ok {
			return err
		}
		q := fmt.Sprintf("ALTER TABLE %s %s", table, spec)
		if _, err := b.t.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
}

// parentTable is the table the foreign key plan's k references.
const parentTable = "sbparent"

// loadParent makes parentTable hold ids 1..n, n past the largest k by a
// margin that the workload's k = k + 1 updates do not reach, so that no
// write during or after the change breaks the foreign key.
func loadParent(ctx context.Context, b *bench, table string) error {
	var maxK int64
	if err := b.t.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(k), 0) FROM "+table).Scan(&maxK); err != nil {
		return fmt.Errorf("max k of %s: %w", table, err)
	}
	ld := &loader.Loader{DB: b.t.db, Threads: b.cfg.LoadThreads}
	_, err := ld.Load(ctx, loader.Parent(parentTable), parentRows(b.cfg.Rows, maxK))
	return err
}

// parentRows is the parent's size: fixed for a given --rows unless the
// workload pushed k past it, so that later runs keep the loaded table.
func parentRows(rows, maxK int64) int64 {
	margin := rows/2 + 1000
	if n := rows + margin; maxK+margin/2 <= n {
		return n
	}
	return maxK + margin
}

var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// shape is SHOW CREATE TABLE without the AUTO_INCREMENT counter: what a
// change that fails must leave as it was.
func (t *target) shape(ctx context.Context, table string) (string, error) {
	var name, create string
	if err := t.db.QueryRowContext(ctx, "SHOW CREATE TABLE "+table).Scan(&name, &create); err != nil {
		return "", fmt.Errorf("SHOW CREATE TABLE %s: %w", table, err)
	}
	return autoIncrement.ReplaceAllString(create, ""), nil
}

// count is the table's row count.
func (t *target) count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}
