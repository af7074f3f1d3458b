package ddl

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
)

// JobAddColumn adds a column instantly, as MySQL 8's ALGORITHM=INSTANT:
// one schema step, absent -> public, then the metadata-lock wait. Rows are
// stored by column ID and the column gets a new one, so no row is
// rewritten: rows written before it read its origin default
// (catalog.Column.Origin). A queued job can be cancelled; once the column
// is public the job is done.
const JobAddColumn = "add column"

// JobModifyColumn changes a column's definition in place, metadata only:
// a rename, a default, a comment, a position, dropping NOT NULL, or a
// type whose stored values and index keys stay as they are (a longer
// VARCHAR, a wider integer). The caller decides that the change needs no
// row rewritten; the job is one schema step like ADD COLUMN's.
const JobModifyColumn = "modify column"

// ColumnSpec is the column an ADD COLUMN job adds and where, or what a
// MODIFY COLUMN job makes of column Of.
type ColumnSpec struct {
	// Column is the definition; its ID is assigned by the job's step.
	Column catalog.Column `json:"column"`
	First  bool           `json:"first,omitempty"`
	After  string         `json:"after,omitempty"`
	// Of names the column a MODIFY COLUMN job changes.
	Of string `json:"of,omitempty"`
	// ID and OldID, in a MODIFY COLUMN reorganisation, are the IDs of the
	// hidden new column and of the column it replaces.
	ID    int64 `json:"id,omitempty"`
	OldID int64 `json:"old_id,omitempty"`
	// WasType, for a metadata-only MODIFY COLUMN, is the type the column
	// had when the change was found to need no rewrite.
	WasType string `json:"was_type,omitempty"`
	// Lax, for a MODIFY COLUMN reorganisation, says the ALTER ran without
	// a strict sql_mode (catalog.ChangingColumn.Lax).
	Lax bool `json:"lax,omitempty"`
}

// JobDropColumn removes a column. A column no index contains goes
// instantly, as MySQL 8.0.29's ALGORITHM=INSTANT: rows keep its value
// under its column ID, which is never given to another column and which
// readers skip, and lose it when they are next written (mode "instant").
// A column with indexes of its own (indexes of no other column) takes them
// with it the way DROP INDEX takes an index (mode "-"): public ->
// write-only -> delete-only, one metadata-lock step at a time, then the
// indexes and the column leave the table in one schema version and the
// indexes' entries are removed. The column stays readable until that last
// version, so no transaction reads an index that a newer one no longer
// maintains. A column that a multi-column index also holds needs that
// index rebuilt without it, as MySQL rebuilds it (mode "txn"): the job is
// a MODIFY COLUMN reorganisation without a hidden column (see
// modifycolumn.go), whose replacement indexes leave the column out; after
// the swap the old indexes retire and the column goes with them.
const JobDropColumn = "drop column"

// SubmitDropColumn queues a DROP COLUMN job of spec.Of, which takes the
// indexes in ixs with it and, with rebuild, rebuilds the multi-column
// indexes that hold it (DropColumnIndexes).
func (m *Manager) SubmitDropColumn(dbName, tableName string, tableID int64, query string, spec ColumnSpec, ixs []IndexSpec, rebuild bool) (int64, error) {
	j := &Job{
		Type: JobDropColumn, DBName: dbName, TableName: tableName, TableID: tableID,
		Query: query, State: JobQueueing, SchemaState: catalog.StateAbsent, Mode: "instant",
		Columns: []ColumnSpec{spec},
	}
	switch {
	case rebuild:
		if _, ok := m.indexer.(ColumnConverter); !ok {
			return 0, &UnsupportedError{Feature: "DROP COLUMN of a column in a multi-column index"}
		}
		j.Mode = "txn"
	case len(ixs) > 0:
		j.Mode, j.SchemaState, j.Indexes = "-", catalog.StatePublic, ixs
	}
	return m.submit(j)
}

// dropsIndexes reports whether a job takes indexes away through
// write-only and delete-only, and so can be neither paused nor cancelled
// once it has started.
func (j *Job) dropsIndexes() bool {
	return j.Type == JobDropIndex || j.Type == JobDropColumn && j.Mode == "-"
}

// submitColumnJob queues an instant, one-step column job.
func (m *Manager) submitColumnJob(typ, dbName, tableName string, tableID int64, query string, spec ColumnSpec) (int64, error) {
	return m.submit(&Job{
		Type: typ, DBName: dbName, TableName: tableName, TableID: tableID,
		Query: query, State: JobQueueing, SchemaState: catalog.StateAbsent, Mode: "instant",
		Columns: []ColumnSpec{spec},
	})
}

// DropColumnIndexes returns the indexes of t that DROP COLUMN name takes
// with it, those of that column alone (MySQL drops an index all of whose
// columns are dropped), and whether any other index holds the column, to
// be rebuilt without it (a primary key too, as MySQL rebuilds it over the
// remaining columns). The column the rows are keyed by is refused with
// 1235, and an index that a job has yet to finish with 1412.
func DropColumnIndexes(t *catalog.Table, name string) (alone []IndexSpec, rebuild bool, err error) {
	c, _ := t.ColumnByName(name)
	if c == nil {
		return nil, false, &CantDropError{Name: name}
	}
	if c.ID == t.HandleColumn {
		return nil, false, &UnsupportedError{Feature: "ALTER TABLE ... DROP COLUMN of a clustered integer PRIMARY KEY column (the rows are keyed by it)"}
	}
	for _, ix := range t.Indexes {
		in := 0
		for _, ic := range ix.Columns {
			if ic.ColumnID == c.ID {
				in++
			}
		}
		switch {
		case in == 0:
			continue
		case ix.State != catalog.StatePublic:
			return nil, false, ErrTableChanged
		case in < len(ix.Columns):
			rebuild = true
			continue
		}
		alone = append(alone, IndexSpec{Name: ix.Name, Columns: ix.Columns, Unique: ix.Unique, ID: ix.ID})
	}
	return alone, rebuild, nil
}

// DropColumnFrom removes column spec.Of from t, with the indexes of that
// column alone and from the indexes that also hold others, or says why
// it cannot (1091 unknown, 1090 the last column, 1235 see
// DropColumnIndexes).
func DropColumnFrom(t *catalog.Table, spec ColumnSpec) error {
	alone, _, err := DropColumnIndexes(t, spec.Of)
	if err != nil {
		return err
	}
	if len(t.Columns) == 1 {
		return ErrDropAllColumns
	}
	removeIndexIDs(t, alone, func(s IndexSpec) int64 { return s.ID })
	c, i := t.ColumnByName(spec.Of)
	for _, ix := range t.Indexes {
		ix.Columns = slices.DeleteFunc(slices.Clone(ix.Columns), func(ic catalog.IndexColumn) bool { return ic.ColumnID == c.ID })
	}
	t.Columns = append(t.Columns[:i:i], t.Columns[i+1:]...)
	return nil
}

// dropInstant is DropColumnFrom for an instant job, refused with 1412
// when a job that ran since the ALTER was checked indexed the column.
func dropInstant(t *catalog.Table, spec ColumnSpec) error {
	if ixs, rebuild, err := DropColumnIndexes(t, spec.Of); err != nil || len(ixs) > 0 || rebuild {
		if err == nil {
			err = ErrTableChanged
		}
		return err
	}
	return DropColumnFrom(t, spec)
}

// sameIndexes reports whether the indexes DROP COLUMN would take from t
// are still the job's: a job that ran since the ALTER was checked may
// have added or removed one.
func sameIndexes(t *catalog.Table, j *Job) error {
	ixs, rebuild, err := DropColumnIndexes(t, j.Columns[0].Of)
	if err != nil {
		return err
	}
	if rebuild || !slices.EqualFunc(ixs, j.Indexes, func(a, b IndexSpec) bool { return a.ID == b.ID }) {
		return ErrTableChanged
	}
	return nil
}

// SubmitModifyColumn queues a metadata-only MODIFY COLUMN job.
func (m *Manager) SubmitModifyColumn(dbName, tableName string, tableID int64, query string, spec ColumnSpec) (int64, error) {
	return m.submitColumnJob(JobModifyColumn, dbName, tableName, tableID, query, spec)
}

// ModifyColumnIn replaces column spec.Of of t by spec.Column, keeping its
// ID and moving it where spec says, or says why it cannot (1054 unknown
// column, 1060 duplicate name).
func ModifyColumnIn(t *catalog.Table, spec ColumnSpec) error {
	old, i := t.ColumnByName(spec.Of)
	if old == nil {
		return &UnknownColumnError{Column: spec.Of, Table: t.Name}
	}
	c := spec.Column
	if other, j := t.ColumnByName(c.Name); other != nil && j != i {
		return &DuplicateColumnError{Column: c.Name}
	}
	c.ID, c.Origin = old.ID, old.Origin
	cols := append(append([]catalog.Column{}, t.Columns[:i]...), t.Columns[i+1:]...)
	pos := i
	if spec.First {
		pos = 0
	} else if spec.After != "" {
		after := -1
		for k := range cols {
			if strings.EqualFold(cols[k].Name, spec.After) {
				after = k
			}
		}
		if after < 0 {
			return &UnknownColumnError{Column: spec.After, Table: t.Name}
		}
		pos = after + 1
	}
	t.Columns = append(cols[:pos], append([]catalog.Column{c}, cols[pos:]...)...)
	return nil
}

// modifyInPlace is ModifyColumnIn for a metadata-only job, refused with
// 1412 when an earlier job has changed the column's type or rewritten it
// since the change was judged to need no rewrite.
func modifyInPlace(t *catalog.Table, spec ColumnSpec) error {
	if old, _ := t.ColumnByName(spec.Of); old != nil && spec.OldID != 0 && (old.ID != spec.OldID || old.Type != spec.WasType) {
		return ErrTableChanged
	}
	return ModifyColumnIn(t, spec)
}

// SubmitAddColumn queues an ADD COLUMN job.
func (m *Manager) SubmitAddColumn(dbName, tableName string, tableID int64, query string, spec ColumnSpec) (int64, error) {
	return m.submitColumnJob(JobAddColumn, dbName, tableName, tableID, query, spec)
}

// AddColumnTo inserts the spec's column into t with a new column ID, or
// says why it cannot (1060 duplicate name, 1054 unknown AFTER column).
func AddColumnTo(t *catalog.Table, spec ColumnSpec) error {
	c := spec.Column
	if old, _ := t.ColumnByName(c.Name); old != nil {
		return &DuplicateColumnError{Column: c.Name}
	}
	pos := len(t.Columns)
	if spec.First {
		pos = 0
	} else if spec.After != "" {
		_, i := t.ColumnByName(spec.After)
		if i < 0 {
			return &UnknownColumnError{Column: spec.After, Table: t.Name}
		}
		pos = i + 1
	}
	t.NextColumnID++
	c.ID = t.NextColumnID
	t.Columns = append(t.Columns[:pos], append([]catalog.Column{c}, t.Columns[pos:]...)...)
	return nil
}

// runAddColumn drives an ADD COLUMN or MODIFY COLUMN job to its end.
func (m *Manager) runAddColumn(ctx context.Context, id int64) error {
	for {
		j, _ := m.snapshot(id)
		if j.State.Finished() {
			m.finish(id)
			return nil
		}
		if j.CancelRequested && j.SchemaState == catalog.StateAbsent {
			return m.endCancelled(id)
		}
		m.markRunning(id, j)
		var err error
		if j.SchemaState == catalog.StateAbsent {
			err = m.step(ctx, id, changeColumnInstantly)
		}
		if j, _ = m.snapshot(id); j.SchemaState == catalog.StatePublic {
			// Published together with the job's end; whether the wait on
			// the metadata lock completed or not, the column is there.
			if err != nil && ctx.Err() != nil {
				return err
			}
			m.finish(id)
			return nil
		}
		if err := m.retryStep(ctx, id, err, true); err != nil {
			return err
		}
	}
}

// changeColumnInstantly makes the job's column change in the table
// definition alone, and ends the job in the same schema version.
func changeColumnInstantly(_ *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	if len(j.Columns) != 1 {
		return fmt.Errorf("ddl: %s job with %d columns", j.Type, len(j.Columns))
	}
	change := AddColumnTo
	switch j.Type {
	case JobModifyColumn:
		change = modifyInPlace
	case JobDropColumn:
		change = dropInstant
	}
	if err := change(t, j.Columns[0]); err != nil {
		return err
	}
	j.SchemaState, j.State, j.End = catalog.StatePublic, JobDone, time.Now()
	return nil
}
