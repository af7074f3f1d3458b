package ddl

import (
	"slices"

	"github.com/reorgdb/reorgdb/catalog"
)

// addDropReplacements starts a DROP COLUMN that rebuilds indexes: every
// index that holds the column and others gets a hidden, delete-only
// replacement without it (addReplacements); an index of that column alone
// gets none (a spec with ID 0) and goes with the old ones.
func addDropReplacements(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	spec := &j.Columns[0]
	if _, _, err := DropColumnIndexes(t, spec.Of); err != nil {
		return err
	}
	c, _ := t.ColumnByName(spec.Of)
	spec.OldID = c.ID
	cols := map[int64][]catalog.IndexColumn{}
	var alone []IndexSpec
	for _, ix := range t.Indexes {
		rest := slices.DeleteFunc(slices.Clone(ix.Columns), func(ic catalog.IndexColumn) bool { return ic.ColumnID == c.ID })
		switch {
		case len(rest) == len(ix.Columns):
		case len(rest) == 0:
			alone = append(alone, IndexSpec{Name: ix.Name, Columns: ix.Columns, Unique: ix.Unique, Replaces: ix.ID})
		default:
			cols[ix.ID] = rest
		}
	}
	// No column takes c's place: column ID 0 matches none.
	j.Indexes = append(addReplacements(t, cols, 0, 0), alone...)
	startReorg(ch, j)
	return nil
}

// swapReplacements makes a DROP COLUMN's replacement indexes public in
// the old ones' places (swapIndexes). The column stays until the old
// indexes are gone (retireOld).
func swapReplacements(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	return swapIndexes(t, j)
}
