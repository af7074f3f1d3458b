package ddl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/txnfill"
	"github.com/reorgdb/reorgdb/kv"
)

// A MODIFY COLUMN that changes stored values (a narrower or different
// type, NULL to NOT NULL) is a reorganisation job of type JobModifyColumn
// in mode "txn", after TiDB's modify-column reorg. The new definition gets
// a new column ID and lives as a hidden changing column
// (catalog.Table.Changing) while the job runs, and every index that
// contains the column gets a hidden replacement index (HiddenIndexPrefix
// and its name, in Job.Indexes) over the hidden column in its place:
//
//	absent -> delete-only (only when the column is indexed): the hidden
//	   column appears, and the replacement indexes, delete-only, so that
//	   no transaction deletes a row without its entries once any writes
//	   them;
//	-> write-only: from then on DML writes, in every row it writes, the
//	   old column's value converted to the new type, and refuses a value
//	   that does not convert; it writes the replacement indexes' entries
//	   too (a unique one refuses a duplicate converted value);
//	write-only -> write reorganization: once every transaction sees it,
//	   the backfill converts the old value of every existing row, and
//	   writes its replacement entries in the same batch, in checkpointed
//	   batches (the transactional backfill of ADD INDEX); a value that
//	   does not convert, or a duplicate in a unique replacement index,
//	   fails the job. A batch locks each row as DML does but never waits,
//	   and converts its newest version; DML takes a row the backfill
//	   rewrote meanwhile as unchanged;
//	write reorganization -> public: in one schema version the hidden
//	   column and indexes take the old ones' names and positions, and the
//	   old column becomes the hidden one, converted back leniently, so that
//	   transactions still on the previous version read what they wrote;
//	   the old indexes stay write-only over it;
//	public: the old indexes go delete-only, then they and the old column
//	   go, and the old indexes' entries are removed. Rows keep the old
//	   column's value under a column ID never reused, until they are next
//	   written.
//
// A failure or a cancel before public takes the replacement indexes back
// to delete-only, then removes them and the hidden column, and their
// entries: the table's definition is as it was. The converted values stay
// in the rows under the hidden column's ID, which readers skip.

// HiddenIndexPrefix starts the name of an index a MODIFY COLUMN job keeps
// out of sight: a replacement index before the swap, an old one after.
const HiddenIndexPrefix = "_Idx$_"

// UserIndexName is the name an index shows in errors: a hidden index's
// without its prefix.
func UserIndexName(name string) string { return strings.TrimPrefix(name, HiddenIndexPrefix) }

// ColumnConverter is what the SQL layer supplies for a MODIFY COLUMN
// reorganisation (Manager's Indexer implements it).
type ColumnConverter interface {
	// ConvertRow returns stored row re-encoded with every changing column
	// of t set from its source, and its entries in the indexes ids. A
	// value that does not convert is a *BadValueError naming row rowNum.
	ConvertRow(dbName string, t *catalog.Table, ids []int64, h int64, row []byte, rowNum int64) ([]byte, []Entry, error)
	// FitKeyPart returns an index column of t with no prefix length when
	// the column's type cannot have one or is not longer than it.
	FitKeyPart(t *catalog.Table, ic catalog.IndexColumn) catalog.IndexColumn
}

// SubmitModifyColumnReorg queues a MODIFY COLUMN job that rewrites the
// column's values online.
func (m *Manager) SubmitModifyColumnReorg(dbName, tableName string, tableID int64, query string, spec ColumnSpec) (int64, error) {
	if _, ok := m.indexer.(ColumnConverter); !ok {
		return 0, &UnsupportedError{Feature: "MODIFY COLUMN that rewrites values"}
	}
	return m.submit(&Job{
		Type: JobModifyColumn, DBName: dbName, TableName: tableName, TableID: tableID,
		Query: query, State: JobQueueing, SchemaState: catalog.StateAbsent, Mode: "txn",
		Columns: []ColumnSpec{spec},
	})
}

// isReorg reports whether a job rewrites rows column by column.
func (j *Job) isReorg() bool {
	return j.Type == JobModifyColumn && j.Mode != "instant" || j.Type == JobDropColumn && j.Mode == "txn"
}

// runModifyColumn drives a MODIFY COLUMN reorganisation to its end.
func (m *Manager) runModifyColumn(ctx context.Context, id int64) error {
	return m.drive(ctx, id, m.modifyStep, m.rollbackModify)
}

// modifyStep takes the job one schema state further.
func (m *Manager) modifyStep(ctx context.Context, j *Job) error {
	switch j.SchemaState {
	case catalog.StateAbsent:
		if j.Type == JobDropColumn {
			return m.step(ctx, j.ID, addDropReplacements)
		}
		return m.step(ctx, j.ID, m.addChanging)
	case catalog.StateDeleteOnly:
		return m.setIndexState(ctx, j.ID, catalog.StateWriteOnly)
	case catalog.StateWriteOnly:
		if len(j.Indexes) > 0 {
			return m.setIndexState(ctx, j.ID, catalog.StateWriteReorg)
		}
		// Normally already waited for by the step; again after a restart.
		if err := m.waitMDL(ctx, j.ID, m.cat.Current().Version); err != nil {
			return err
		}
		m.update(j.ID, func(j *Job) { j.SchemaState = catalog.StateWriteReorg })
		return m.persist(j.ID)
	case catalog.StateWriteReorg:
		return m.convertAndSwap(ctx, j)
	case catalog.StatePublic:
		return m.retireOld(ctx, j)
	}
	return fmt.Errorf("modify column job %d in schema state %s", j.ID, j.SchemaState)
}

// convertAndSwap converts every row's value, checks that no write has
// doomed the change, and swaps the new column and indexes in for the old.
func (m *Manager) convertAndSwap(ctx context.Context, j *Job) error {
	if len(j.Indexes) > 0 {
		// After a restart, the step's wait again.
		if err := m.waitMDL(ctx, j.ID, m.cat.Current().Version); err != nil {
			return err
		}
	}
	if err := m.backfill(ctx, j.ID); err != nil {
		return err
	}
	if err := m.stall(ctx, j.ID, "validate"); err != nil {
		return err
	}
	if err := m.checkDooms(ctx, j); err != nil {
		return err
	}
	if err := m.stall(ctx, j.ID, "swap"); err != nil {
		return err
	}
	if j.Type == JobDropColumn {
		return m.step(ctx, j.ID, swapReplacements)
	}
	return m.step(ctx, j.ID, swapChanging)
}

// retireOld takes the old indexes, after the swap write-only, to
// delete-only, then removes them and the old column, then their entries,
// and ends the job.
func (m *Manager) retireOld(ctx context.Context, j *Job) error {
	oldIxState, oldCol := m.leftOver(j)
	switch {
	case oldIxState > catalog.StateDeleteOnly:
		return m.step(ctx, j.ID, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
			return setOldIndexes(t, j, catalog.StateDeleteOnly)
		})
	case oldIxState == catalog.StateDeleteOnly || oldCol:
		if err := m.step(ctx, j.ID, removeOld); err != nil {
			// Past the swap the wait on the metadata lock ends only with
			// the manager; the next run clears the entries.
			return err
		}
	}
	// Absent in every live schema version, and index IDs are never
	// reused: the entries go at once, outside MVCC.
	if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.Replaces }); err != nil {
		return err
	}
	m.update(j.ID, func(j *Job) { j.State, j.End, j.Comment = JobDone, time.Now(), "" })
	if err := m.persist(j.ID); err != nil {
		return err
	}
	m.cleanupTasks(j.ID)
	m.clearDooms(j)
	m.finish(j.ID)
	return nil
}

// leftOver says what the current schema still has of what the job
// replaces: the highest state of its old indexes, and whether its old
// column (or a DROP COLUMN's column) is still defined.
func (m *Manager) leftOver(j *Job) (catalog.IndexState, bool) {
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return catalog.StateAbsent, false
	}
	st := catalog.StateAbsent
	for _, spec := range j.Indexes {
		if _, ix := findIndex(t, spec.Replaces); ix != nil {
			st = max(st, ix.State)
		}
	}
	col := j.Type == JobDropColumn && hasColumn(t, j.Columns[0].OldID)
	for _, c := range t.Changing {
		col = col || c.Column.ID == j.Columns[0].OldID
	}
	return st, col
}

// removeOld removes the job's old indexes and old column from t (a DROP
// COLUMN's column itself).
func removeOld(_ *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return nil
	}
	t.Changing = dropChanging(t.Changing, j.Columns[0].OldID)
	removeIndexIDs(t, j.Indexes, func(s IndexSpec) int64 { return s.Replaces })
	if c, _ := t.ColumnByID(j.Columns[0].OldID); c != nil && j.Type == JobDropColumn {
		return DropColumnFrom(t, ColumnSpec{Of: c.Name})
	}
	return nil
}

func hasColumn(t *catalog.Table, id int64) bool {
	if t == nil {
		return false
	}
	c, _ := t.ColumnByID(id)
	return c != nil
}

// setOldIndexes moves the indexes the job replaces to state st.
func setOldIndexes(t *catalog.Table, j *Job, st catalog.IndexState) error {
	if t == nil {
		return errNoTable(j)
	}
	for _, spec := range j.Indexes {
		if _, ix := findIndex(t, spec.Replaces); ix != nil {
			ix.State = st
		}
	}
	return nil
}

// removeIndexIDs takes out of t the indexes whose IDs id picks from specs.
func removeIndexIDs(t *catalog.Table, specs []IndexSpec, id func(IndexSpec) int64) {
	for _, spec := range specs {
		if i, _ := findIndex(t, id(spec)); i >= 0 {
			t.Indexes = append(t.Indexes[:i], t.Indexes[i+1:]...)
		}
	}
}

// addChanging adds the job's hidden column, write-only, and its hidden
// replacement indexes, delete-only.
func (m *Manager) addChanging(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	spec := &j.Columns[0]
	old, _ := t.ColumnByName(spec.Of)
	if old == nil {
		return &UnknownColumnError{Column: spec.Of, Table: t.Name}
	}
	// Checked again for an index added by a job that ran since the
	// ALTER was checked.
	cols, err := replacementColumns(m.indexer, t, *spec)
	if err != nil {
		return err
	}
	t.NextColumnID++
	c := spec.Column
	c.ID, c.Origin = t.NextColumnID, nil
	t.Changing = append(t.Changing, catalog.ChangingColumn{Column: c, Source: old.ID, Lax: spec.Lax})
	spec.ID, spec.OldID = c.ID, old.ID
	j.Indexes = addReplacements(t, cols, old.ID, c.ID)
	startReorg(ch, j)
	return nil
}

// startReorg marks a reorganisation job started in the version ch
// publishes: its replacement indexes, if any, enter delete-only first.
func startReorg(ch *catalog.Change, j *Job) {
	j.SchemaState = catalog.StateWriteOnly
	if slices.ContainsFunc(j.Indexes, func(s IndexSpec) bool { return s.ID != 0 }) {
		j.SchemaState = catalog.StateDeleteOnly
	}
	j.FirstVersion = ch.Schema().Version + 1
	j.State = JobRunning
	if j.Start.IsZero() {
		j.Start = time.Now()
	}
}

// CheckReplacements validates, as x validates a new index, every index of
// t that contains the column spec changes, over the column as spec
// defines it: a TEXT without a prefix or an unindexable collation are
// refused.
func CheckReplacements(x Indexer, t *catalog.Table, spec ColumnSpec) error {
	_, err := replacementColumns(x, t, spec)
	return err
}

// replacementColumns returns, by index ID, the columns of every index of
// t that contains the column spec changes, over the column as spec
// defines it, validated (see CheckReplacements). A prefix the new type
// cannot have, or that covers the whole new column, becomes the whole
// column, as MySQL's ALTER TABLE makes it.
func replacementColumns(x Indexer, t *catalog.Table, spec ColumnSpec) (map[int64][]catalog.IndexColumn, error) {
	scratch := t.Clone()
	if err := ModifyColumnIn(scratch, spec); err != nil {
		return nil, err
	}
	c, _ := scratch.ColumnByName(spec.Column.Name)
	conv, _ := x.(ColumnConverter)
	out := map[int64][]catalog.IndexColumn{}
	for i, ix := range scratch.Indexes {
		if !slices.ContainsFunc(ix.Columns, func(ic catalog.IndexColumn) bool { return ic.ColumnID == c.ID }) {
			continue
		}
		cols := slices.Clone(ix.Columns)
		for k := range cols {
			if cols[k].ColumnID == c.ID && conv != nil {
				cols[k] = conv.FitKeyPart(scratch, cols[k])
			}
		}
		other := scratch.Clone()
		other.Indexes = slices.Delete(other.Indexes, i, i+1)
		if _, err := x.NewIndex(other, IndexSpec{Name: ix.Name, Columns: cols, Unique: ix.Unique}); err != nil {
			return nil, err
		}
		out[ix.ID] = cols
	}
	return out, nil
}

// addReplacements adds to t, delete-only and hidden, a copy of every index
// that contains column oldID over column newID instead, with its columns
// in cols.
func addReplacements(t *catalog.Table, cols map[int64][]catalog.IndexColumn, oldID, newID int64) []IndexSpec {
	var specs []IndexSpec
	var added []*catalog.Index
	for _, ix := range t.Indexes {
		if cols[ix.ID] == nil {
			continue
		}
		nix := &catalog.Index{
			ID: t.NextIndexID, Name: HiddenIndexPrefix + ix.Name, Unique: ix.Unique, Invisible: ix.Invisible,
			State: catalog.StateDeleteOnly, Comment: ix.Comment, Columns: slices.Clone(cols[ix.ID]),
		}
		t.NextIndexID++
		for k := range nix.Columns {
			if nix.Columns[k].ColumnID == oldID {
				nix.Columns[k].ColumnID = newID
			}
		}
		added = append(added, nix)
		// A primary key's replacement is a unique index until the swap,
		// which hands it the PRIMARY role.
		nix.Unique = ix.Unique || ix.Primary
		specs = append(specs, IndexSpec{Name: ix.Name, Columns: nix.Columns, Unique: nix.Unique, Comment: ix.Comment, ID: nix.ID, Replaces: ix.ID})
	}
	t.Indexes = append(t.Indexes, added...)
	return specs
}

// swapChanging makes the hidden column the table's column and the old
// column the hidden one, and the replacement indexes public in the old
// ones' places, with their names, and the old ones hidden and write-only.
func swapChanging(ch *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	spec := j.Columns[0]
	old, _ := t.ColumnByID(spec.OldID)
	if old == nil {
		return fmt.Errorf("column %s vanished from table %s", spec.Of, j.TableName)
	}
	prev := *old
	spec.Of = old.Name
	if err := ModifyColumnIn(t, spec); err != nil {
		return err
	}
	c, _ := t.ColumnByName(spec.Column.Name)
	c.ID, c.Origin = spec.ID, nil
	t.Changing = append(dropChanging(t.Changing, spec.ID), catalog.ChangingColumn{Column: prev, Source: spec.ID, Lenient: true})
	if t.HandleColumn == spec.OldID {
		// The clustered key's new column holds the same integers.
		t.HandleColumn = spec.ID
		for i, id := range t.PKColumns {
			if id == spec.OldID {
				t.PKColumns[i] = spec.ID
			}
		}
	}
	return swapIndexes(t, j)
}

// swapIndexes makes the job's replacement indexes public in the old ones'
// places, with their names and the PRIMARY role, and the old ones hidden
// and write-only; an old index without a replacement (ID 0) only goes
// write-only and hidden. The table's primary-key columns follow.
func swapIndexes(t *catalog.Table, j *Job) error {
	for _, s := range j.Indexes {
		oi, oix := findIndex(t, s.Replaces)
		if oix == nil {
			return fmt.Errorf("index %s vanished from table %s", s.Name, j.TableName)
		}
		oix.State = catalog.StateWriteOnly
		if s.ID == 0 {
			oix.Name, oix.Primary = HiddenIndexPrefix+oix.Name, false
			continue
		}
		ni, nix := findIndex(t, s.ID)
		if nix == nil {
			return fmt.Errorf("index %s vanished from table %s", s.Name, j.TableName)
		}
		oix.Name, nix.Name = nix.Name, oix.Name
		nix.Primary, oix.Primary = oix.Primary, false
		nix.State = catalog.StatePublic
		t.Indexes[oi], t.Indexes[ni] = nix, oix
	}
	syncPrimaryKey(t)
	j.SchemaState = catalog.StatePublic
	return nil
}

func dropChanging(cs []catalog.ChangingColumn, id int64) []catalog.ChangingColumn {
	var out []catalog.ChangingColumn
	for _, c := range cs {
		if c.Column.ID != id {
			out = append(out, c)
		}
	}
	return out
}

// rollbackModify takes the replacement indexes back to delete-only, then
// removes them and the hidden column, then their entries, and ends the
// job.
func (m *Manager) rollbackModify(ctx context.Context, id int64) error {
	j, _ := m.snapshot(id)
	if j.SchemaState > catalog.StateDeleteOnly && len(j.Indexes) > 0 {
		if _, ok := m.cat.Current().TableByID(j.TableID); ok {
			if err := m.setIndexState(ctx, id, catalog.StateDeleteOnly); err != nil {
				return err
			}
		}
	}
	j, _ = m.snapshot(id)
	if j.SchemaState != catalog.StateAbsent {
		err := m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
			if t != nil {
				t.Changing = dropChanging(t.Changing, j.Columns[0].ID)
				removeIndexIDs(t, j.Indexes, func(s IndexSpec) int64 { return s.ID })
			}
			j.SchemaState = catalog.StateAbsent
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err != nil {
		return err
	}
	m.update(id, func(j *Job) {
		j.State, j.End, j.Comment = JobRolledBack, time.Now(), ""
		if j.Error == ErrCancelled.Error() {
			j.State = JobCancelled
		}
	})
	if err := m.persist(id); err != nil {
		return err
	}
	m.cleanupTasks(id)
	m.clearDooms(j)
	m.finish(id)
	return nil
}

// convertBatch rewrites up to limit rows of a task in txn with their
// hidden column set, and writes their entries in the replacement indexes
// ids. Each row is
// locked as DML locks it, without waiting (a row a transaction holds ends
// the batch before it), and converted from its newest version: so the
// batch and DML serialize on the row, and neither fails the other.
func (m *Manager) convertBatch(ctx context.Context, txn *kv.Txn, conv ColumnConverter, j *Job, t *catalog.Table, ids []int64, task Task, limit int) (txnfill.Batch, error) {
	it := txn.NewIter(codec.RecordKey(j.TableID, task.Next), codec.PrefixEnd(codec.RecordKey(j.TableID, task.End)), false)
	type rec struct {
		key, val []byte
		h        int64
		ents     []Entry
	}
	var recs []rec
	b := txnfill.Batch{Last: task.Next - 1}
	for ; it.Valid() && len(recs) < limit; it.Next() {
		key := append([]byte(nil), it.Key()...)
		v, ents, h, err := m.convertRow(ctx, txn, conv, j, t, ids, key, b.Last < task.Next)
		if errors.Is(err, txnfill.ErrRowBusy) && b.Last >= task.Next {
			break // the rows before it are done
		}
		if err != nil {
			it.Close()
			return b, err
		}
		if v != nil || ents != nil {
			recs = append(recs, rec{key, v, h, ents})
		}
		b.Last = h
	}
	b.More = it.Valid()
	err := it.Err()
	it.Close()
	if err != nil {
		return b, err
	}
	for _, r := range recs {
		if r.val == nil {
			// Unchanged: only its entries are written.
		} else if err := txn.Set(r.key, r.val); err != nil {
			return b, err
		}
		if err := putEntries(ctx, txn, j, r.h, r.ents); err != nil {
			return b, err
		}
	}
	b.Rows = int64(len(recs))
	return b, nil
}

// putEntries writes row h's entries, failing with 1062 on a unique key
// that another row holds. A unique key is locked first, as DML's check
// locks it, so that the two cannot both take it.
func putEntries(ctx context.Context, txn *kv.Txn, j *Job, h int64, ents []Entry) error {
	for _, e := range ents {
		if e.Unique {
			v, found, err := txnfill.LockLatest(ctx, txn, e.Key, false)
			if err != nil {
				return err
			}
			if found {
				other, err := codec.DecodeHandle(v)
				if err != nil {
					return err
				}
				if other != h {
					return &DuplicateKeyError{Table: j.TableName, Index: indexName(j, e.IndexID), Key: e.Display}
				}
			}
		}
		if err := txn.Set(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// convertRow locks the row at key and returns its newest version
// converted (nil when it is gone) and its replacement entries, with its
// handle.
func (m *Manager) convertRow(ctx context.Context, txn *kv.Txn, conv ColumnConverter, j *Job, t *catalog.Table, ids []int64, key []byte, wait bool) ([]byte, []Entry, int64, error) {
	_, h, err := codec.DecodeRecordKey(key)
	if err != nil {
		return nil, nil, 0, err
	}
	cur, found, err := txnfill.LockLatest(ctx, txn, key, wait)
	if err != nil || !found {
		return nil, nil, h, err
	}
	v, ents, err := conv.ConvertRow(j.DBName, t, ids, h, cur, 0)
	var bad *BadValueError
	if errors.As(err, &bad) {
		err = m.firstBadRow(j, t, h, bad)
	}
	if len(t.Changing) == 0 && err == nil {
		// A DROP COLUMN's rebuild: the row stays as it is.
		v = nil
		if ents == nil {
			ents = []Entry{}
		}
	}
	return v, ents, h, err
}

// firstBadRow finds, in primary-key order up to handle h, the first row
// whose value does not convert, and returns its error with its row
// number, as MySQL's table copy reports it. Workers convert ranges in
// parallel, so the row that failed first need not be the first bad one.
func (m *Manager) firstBadRow(j *Job, t *catalog.Table, h int64, bad *BadValueError) error {
	conv := m.indexer.(ColumnConverter)
	txn := m.store.Begin()
	defer txn.Rollback()
	p := codec.RecordPrefix(j.TableID)
	it := txn.NewIter(p, codec.PrefixEnd(codec.RecordKey(j.TableID, h)), false)
	defer it.Close()
	var n int64
	for ; it.Valid(); it.Next() {
		n++
		if _, _, err := conv.ConvertRow(j.DBName, t, nil, 0, it.Value(), n); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil && !errors.Is(err, kv.ErrWriteConflict) {
		return err
	}
	return bad
}
