package ddl

// Step 4 of the ingest backfill (see ingest.go): unique indexes are
// validated against the rows, and duplicates are named as MySQL names them.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// duplicateError names the duplicate value of a unique key found twice in
// the snapshot; val is the value of one of the two entries (its handle).
func (m *Manager) duplicateError(j *Job, key, val []byte) error {
	_, indexID, _, err := codec.DecodeIndexPrefix(key)
	name, shown := "", "?"
	for _, spec := range j.Indexes {
		if spec.ID == indexID {
			name = spec.Name
			if s, ok := m.displayOfRow(j, indexID, key, val); ok {
				shown = s
			} else if vals, _, _, derr := codec.DecodeIndexKey(key, len(spec.Columns)); derr == nil && err == nil {
				shown = displayVals(vals)
			}
		}
	}
	return &DuplicateKeyError{Table: j.TableName, Index: name, Key: shown}
}

// displayOfRow renders a unique entry's values from its row, read again by
// the handle in val: a key holds a string's collation sort key, not the
// string. It reports false when the row no longer makes that entry.
func (m *Manager) displayOfRow(j *Job, indexID int64, key, val []byte) (string, bool) {
	h, err := codec.DecodeHandle(val)
	if err != nil {
		return "", false
	}
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return "", false
	}
	txn := m.store.Begin()
	defer txn.Rollback()
	rec, found, err := txn.Get(codec.RecordKey(j.TableID, h))
	if err != nil || !found {
		return "", false
	}
	ents, err := m.indexer.Entries(j.DBName, t, []int64{indexID}, h, rec)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if e.IndexID == indexID && bytes.Equal(e.Key, key) {
			return e.Display, true
		}
	}
	return "", false
}

func displayVals(vals []any) string {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('-')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case []byte:
			b.Write(x)
		case time.Time:
			b.WriteString(x.Format("2006-01-02 15:04:05.999999"))
		default:
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}

// validateUnique checks, at one timestamp after the ingest, that every
// row has its own entry in each unique index of the job: an entry that
// belongs to another row is a duplicate between a snapshot row and a row
// a transaction inserted before the snapshot's entries were visible.
//
// A first pass compares, per unique index, the number and a sum of hashes
// of the entries the rows call for with those the index holds, in two
// sequential scans: equal, there is no duplicate (two rows calling for one
// key cannot both be matched). Only otherwise does the second pass look up
// each row's entries, which reads the index in random order, to name the
// duplicate.
func (m *Manager) validateUnique(ctx context.Context, j *Job, ids []int64) error {
	var uniqueIDs []int64
	for _, spec := range j.Indexes {
		if spec.Unique {
			uniqueIDs = append(uniqueIDs, spec.ID)
		}
	}
	if len(uniqueIDs) == 0 {
		return nil
	}
	s := m.cat.Current()
	t, ok := s.TableByID(j.TableID)
	if !ok {
		return errNoTable(j)
	}
	txn := m.store.Begin()
	defer txn.Rollback()
	if same, err := m.sameEntrySums(ctx, txn, j, t, uniqueIDs); err != nil || same {
		return err
	}
	if err := m.findDuplicate(ctx, txn, j, t, ids); err != nil {
		return err
	}
	return m.findStaleEntry(ctx, txn, j, t, uniqueIDs)
}

// findDuplicate returns 1062 for the first row whose unique entry points at
// another row.
func (m *Manager) findDuplicate(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) error {
	return forEachRecord(ctx, txn, j.TableID, func(h int64, value []byte) error {
		ents, err := m.indexer.Entries(j.DBName, t, ids, h, value)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.Unique {
				continue
			}
			v, found, err := txn.Get(e.Key)
			if err != nil {
				return err
			}
			if other, derr := codec.DecodeHandle(v); !found || derr != nil || other != h {
				name := ""
				for _, spec := range j.Indexes {
					if spec.ID == e.IndexID {
						name = spec.Name
					}
				}
				return &DuplicateKeyError{Table: j.TableName, Index: name, Key: e.Display}
			}
		}
		return nil
	})
}

// findStaleEntry fails the job when a unique index holds an entry that no
// row calls for: the merge must have deleted every entry of the snapshot
// that its row lost, and an index that went public with such an entry
// would answer queries with a row that does not match.
func (m *Manager) findStaleEntry(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) error {
	for _, id := range ids {
		ip := codec.IndexPrefix(j.TableID, id)
		it := txn.NewIter(ip, codec.PrefixEnd(ip), false)
		for ; it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				it.Close()
				return err
			}
			h, err := entryHandle(j, id, it.Key(), it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if ok, err := m.rowHasEntry(txn, j, t, id, h, it.Key()); err != nil || !ok {
				it.Close()
				if err == nil {
					err = &CorruptIndexError{Index: indexName(j, id), Handle: h}
				}
				return err
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// rowHasEntry says whether row h exists and calls for key in index id.
func (m *Manager) rowHasEntry(txn *kv.Txn, j *Job, t *catalog.Table, id, h int64, key []byte) (bool, error) {
	v, found, err := txn.Get(codec.RecordKey(j.TableID, h))
	if err != nil || !found {
		return false, err
	}
	ents, err := m.indexer.Entries(j.DBName, t, []int64{id}, h, v)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(ents, func(e Entry) bool { return string(e.Key) == string(key) }), nil
}

// entryHandle returns the row an index entry points at: a unique entry's
// value, or, for an entry with a NULL part, the handle in its key.
func entryHandle(j *Job, id int64, key, value []byte) (int64, error) {
	if len(value) > 0 {
		return codec.DecodeHandle(value)
	}
	ncols := 0
	for _, spec := range j.Indexes {
		if spec.ID == id {
			ncols = len(spec.Columns)
		}
	}
	_, h, _, err := codec.DecodeIndexKey(key, ncols)
	return h, err
}

func indexName(j *Job, id int64) string {
	for _, spec := range j.Indexes {
		if spec.ID == id {
			return spec.Name
		}
	}
	return fmt.Sprint(id)
}

// sameEntrySums says whether the indexes ids hold exactly the entries the
// table's rows call for, at txn's snapshot (see codec.EntrySum).
func (m *Manager) sameEntrySums(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64) (bool, error) {
	want := make([]codec.EntrySum, len(ids))
	enc, err := m.indexer.NewEncoder(j.DBName, t, ids)
	if err != nil {
		return false, err
	}
	emit := func(ix int, k, v []byte) error {
		want[ix].Add(k, v)
		return nil
	}
	err = forEachRecord(ctx, txn, j.TableID, func(h int64, value []byte) error { return enc.Encode(h, value, emit) })
	if err != nil {
		return false, err
	}
	for i, id := range ids {
		var got codec.EntrySum
		ip := codec.IndexPrefix(j.TableID, id)
		iit := txn.NewIter(ip, codec.PrefixEnd(ip), false)
		for ; iit.Valid(); iit.Next() {
			got.Add(iit.Key(), iit.Value())
		}
		err := iit.Err()
		iit.Close()
		if err != nil || got != want[i] {
			return false, err
		}
	}
	return true, nil
}

// forEachRecord calls fn with the handle and value of every row of a
// table at txn's snapshot, and stops early when ctx ends.
func forEachRecord(ctx context.Context, txn *kv.Txn, tableID int64, fn func(h int64, value []byte) error) error {
	p := codec.RecordPrefix(tableID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	for n := 0; it.Valid(); it.Next() {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		if err := fn(h, it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}
