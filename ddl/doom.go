package ddl

import (
	"context"
	"encoding/binary"
	"encoding/json"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
)

// A MODIFY COLUMN reorganisation fails, not the user's statement, when
// DML writes a value the new type cannot hold, as a table copy would
// fail on that row: while the hidden column is in doom mode, DML stores
// such a row without the hidden value and writes, in its own transaction,
// a doom record under the row's key. A doom is therefore durable exactly
// when the write is, and two transactions write the same doom key only
// when they write the same row, which they already serialize on.
//
// Before the swap the job publishes a version in which DML refuses such a
// value instead (catalog.ChangingColumn.Refuse) and waits until every
// transaction uses it: after that no doom can be written, so reading the
// doom records then decides the job. The backfill also polls them, so
// that a doomed job stops early.

var prefixDoom = []byte("m/ddl/doom/")

// doomPrefix is the doom records' prefix for hidden column columnID.
func doomPrefix(tableID, columnID int64) []byte {
	p := binary.BigEndian.AppendUint64(append([]byte(nil), prefixDoom...), uint64(tableID))
	return binary.BigEndian.AppendUint64(p, uint64(columnID))
}

// DoomKey is the doom record of the row at rowKey for hidden column
// columnID of table tableID.
func DoomKey(tableID, columnID int64, rowKey []byte) []byte {
	return append(doomPrefix(tableID, columnID), rowKey...)
}

// DoomValue is a doom record: the error the job fails with.
func DoomValue(code uint16, msg string) []byte {
	b, _ := json.Marshal(RecordedError{Code: code, Msg: msg})
	return b
}

// firstDoom returns the error of the first doom record of the job's
// hidden column, or nil.
func (m *Manager) firstDoom(j *Job) error {
	if j.Columns[0].ID == 0 {
		return nil
	}
	p := doomPrefix(j.TableID, j.Columns[0].ID)
	txn := m.store.Begin()
	defer txn.Rollback()
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	if !it.Valid() {
		return it.Err()
	}
	var e RecordedError
	if err := json.Unmarshal(it.Value(), &e); err != nil || e.Code == 0 {
		return &TruncatedError{Column: j.Columns[0].Column.Name}
	}
	return &e
}

// refuseUnconvertible takes the job's hidden column out of doom mode.
func refuseUnconvertible(_ *catalog.Change, t *catalog.Table, j *Job) error {
	if t == nil {
		return errNoTable(j)
	}
	for i := range t.Changing {
		if t.Changing[i].Column.ID == j.Columns[0].ID {
			t.Changing[i].Refuse = true
		}
	}
	return nil
}

// checkDooms publishes the version that ends doom mode, waits for it,
// and fails with the first doom's error if any write was doomed.
func (m *Manager) checkDooms(ctx context.Context, j *Job) error {
	if j.Columns[0].ID == 0 {
		return nil // no hidden column
	}
	if err := m.step(ctx, j.ID, refuseUnconvertible); err != nil {
		return err
	}
	return m.firstDoom(j)
}

// clearDooms removes the job's doom records.
func (m *Manager) clearDooms(j *Job) {
	if len(j.Columns) == 0 || j.Columns[0].ID == 0 {
		return
	}
	p := doomPrefix(j.TableID, j.Columns[0].ID)
	if err := deleteRange(m.store, p, codec.PrefixEnd(p)); err != nil {
		m.log.Warn("remove doom records", "job", j.ID, "err", err)
	}
}
