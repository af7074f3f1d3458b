package ddl

import (
	"fmt"
	"slices"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
)

// addDropReplacements starts a DROP COLUMN that rebuilds indexes: every
// index that holds the column and others gets a hidden, delete-only
// replacement without it; an index of that column alone gets none and
// goes with the old ones.
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
	var specs []IndexSpec
	var added []*catalog.Index
	for _, ix := range t.Indexes {
		cols := slices.DeleteFunc(slices.Clone(ix.Columns), func(ic catalog.IndexColumn) bool { return ic.ColumnID == c.ID })
		switch {
		case len(cols) == len(ix.Columns):
			continue
		case len(cols) == 0:
			specs = append(specs, IndexSpec{Name: ix.Name, Columns: ix.Columns, Unique: ix.Unique, Replaces: ix.ID})
			continue
		}
		nix := &catalog.Index{
			ID: t.NextIndexID, Name: HiddenIndexPrefix + ix.Name, Unique: ix.Unique, Invisible: ix.Invisible,
			State: catalog.StateDeleteOnly, Comment: ix.Comment, Columns: cols,
		}
		t.NextIndexID++
		added = append(added, nix)
		specs = append(specs, IndexSpec{Name: ix.Name, Columns: cols, Unique: ix.Unique, Comment: ix.Comment, ID: nix.ID, Replaces: ix.ID})
	}
	t.Indexes = append(t.Indexes, added...)
	j.Indexes = specs
	j.SchemaState = catalog.StateDeleteOnly
	j.FirstVersion = ch.Schema().Version + 1
	j.State = JobRunning
	if j.Start.IsZero() {
		j.Start = time.Now()
	}
	return nil
}

// swapReplacements makes a DROP COLUMN's replacement indexes public in
// the old ones' places, with their names, and the old ones, and the
// indexes of the column alone, hidden and write-only. The column stays
// until the old indexes are gone (retireOld).
func swapReplacements(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	for _, s := range j.Indexes {
		oi, oix := findIndex(t, s.Replaces)
		if oix == nil {
			return fmt.Errorf("index %s vanished from table %s", s.Name, j.TableName)
		}
		oix.State = catalog.StateWriteOnly
		if s.ID == 0 {
			oix.Name = HiddenIndexPrefix + oix.Name
			continue
		}
		ni, nix := findIndex(t, s.ID)
		if nix == nil {
			return fmt.Errorf("index %s vanished from table %s", s.Name, j.TableName)
		}
		oix.Name, nix.Name = nix.Name, oix.Name
		nix.State = catalog.StatePublic
		t.Indexes[oi], t.Indexes[ni] = nix, oix
	}
	j.SchemaState = catalog.StatePublic
	return nil
}
