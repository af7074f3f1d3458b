package sql

import (
	"bytes"
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// CheckTable compares every public index of a table with its rows at one
// snapshot: each row must have exactly its entries, and each entry must
// belong to a row. It reports the first mismatch.
func (e *Engine) CheckTable(dbName, tableName string) error {
	return e.CheckIndex(dbName, tableName, "")
}

// CheckIndex is CheckTable for one index (all public indexes when index
// is empty).
func (e *Engine) CheckIndex(dbName, tableName, index string) error {
	return e.CheckIndexIn(nil, dbName, tableName, index)
}

// CheckIndexIn is CheckIndex for a statement of session sess, to which
// its temporary tables shadow tables of the same name (sess may be nil).
func (e *Engine) CheckIndexIn(sess gms.Session, dbName, tableName, index string) error {
	s := e.cat.Current()
	db, ok := s.Database(dbName)
	if !ok {
		return gms.ErrDatabaseNotFound.New(dbName)
	}
	def, ok := sessionTable(sess, s, db.ID, tableName)
	if !ok {
		return gms.ErrTableNotFound.New(tableName)
	}
	m, err := metaFor(db.Name, def)
	if err != nil {
		return err
	}
	if index != "" && def.IndexByName(index) == nil {
		return fmt.Errorf("index not found: %s", index)
	}
	txn := e.store.Begin()
	defer txn.Rollback()
	return checkTable(txn, m, index)
}

// checkTable compares the table's rows with its public indexes (or only
// the one named). A first pass compares, per index, the number and a sum
// of hashes of the entries the rows call for with those the index holds:
// two sequential scans, where a lookup per row would read the index in
// random order. Only when they differ does the second pass look up every
// entry, to name the first row or entry at fault.
func checkTable(txn *kv.Txn, m *tableMeta, only string) error {
	want := func(ix *indexMeta) bool {
		return !ix.isHandleIndex() && ix.state() == catalog.StatePublic && (only == "" || strings.EqualFold(ix.name(), only))
	}
	same, err := sameChecksums(txn, m, want)
	if err != nil || same {
		return err
	}
	if err := findInconsistency(txn, m, want); err != nil {
		return err
	}
	return fmt.Errorf("indexes of %s: entries differ from what the rows call for", m.def.Name)
}

// sameChecksums says whether every index holds exactly the entries the
// rows call for (up to a 64-bit hash collision).
func sameChecksums(txn *kv.Txn, m *tableMeta, want func(*indexMeta) bool) (bool, error) {
	expect := map[int64]*codec.EntrySum{}
	for _, ix := range m.indexes {
		if want(ix) {
			expect[ix.def.ID] = &codec.EntrySum{}
		}
	}
	err := forEachRowEntry(txn, m, want, func(_ int64, ent indexEntry) error {
		expect[ent.ix.def.ID].Add(ent.key, ent.value)
		return nil
	})
	if err != nil {
		return false, err
	}
	for id, exp := range expect {
		p := codec.IndexPrefix(m.def.ID, id)
		var got codec.EntrySum
		iit := txn.NewIter(p, codec.PrefixEnd(p), false)
		for ; iit.Valid(); iit.Next() {
			got.Add(iit.Key(), iit.Value())
		}
		err := iit.Err()
		iit.Close()
		if err != nil {
			return false, err
		}
		if got != *exp {
			return false, nil
		}
	}
	return true, nil
}

// forEachRowEntry calls fn with each entry the table's rows call for in
// the indexes selected by want.
func forEachRowEntry(txn *kv.Txn, m *tableMeta, want func(*indexMeta) bool, fn func(h int64, ent indexEntry) error) error {
	tbl := &Table{m: m}
	ed := &editor{t: tbl, tx: &Transaction{txn: txn}}
	prefix := codec.RecordPrefix(m.def.ID)
	it := txn.NewIter(prefix, codec.PrefixEnd(prefix), false)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		row, err := tbl.decodeRow(h, it.Value(), true)
		if err != nil {
			return err
		}
		ents, err := ed.entries(row, h, want, nil)
		if err != nil {
			return err
		}
		for _, ent := range ents {
			if err := fn(h, ent); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

// findInconsistency looks up each row's entries, then counts each index's
// entries, and reports the first difference.
func findInconsistency(txn *kv.Txn, m *tableMeta, want func(*indexMeta) bool) error {
	counts := map[int64]int{}
	err := forEachRowEntry(txn, m, want, func(h int64, ent indexEntry) error {
		v, found, err := txn.Get(ent.key)
		if err != nil {
			return err
		}
		if !found || !bytes.Equal(v, ent.value) {
			return fmt.Errorf("index %s.%s: row with handle %d has no entry %x", m.def.Name, ent.ix.name(), h, ent.key)
		}
		counts[ent.ix.def.ID]++
		return nil
	})
	if err != nil {
		return err
	}
	for _, ix := range m.indexes {
		if !want(ix) {
			continue
		}
		p := codec.IndexPrefix(m.def.ID, ix.def.ID)
		iit := txn.NewIter(p, codec.PrefixEnd(p), false)
		n := 0
		for ; iit.Valid(); iit.Next() {
			n++
			if n > counts[ix.def.ID] {
				h, _ := handleFromIndexEntry(iit.Key(), iit.Value(), len(ix.pos))
				err := fmt.Errorf("index %s.%s: entry %x (handle %d) has no row", m.def.Name, ix.name(), iit.Key(), h)
				iit.Close()
				return err
			}
		}
		err := iit.Err()
		iit.Close()
		if err != nil {
			return err
		}
		if n != counts[ix.def.ID] {
			return fmt.Errorf("index %s.%s: %d entries for %d rows", m.def.Name, ix.name(), n, counts[ix.def.ID])
		}
	}
	return nil
}

// CountIndexEntries counts the secondary-index entries of a table (any
// index, including ones no longer in the catalog).
func (e *Engine) CountIndexEntries(dbName, tableName string) int {
	s := e.cat.Current()
	db, ok := s.Database(dbName)
	if !ok {
		return -1
	}
	def, ok := s.Table(db.ID, tableName)
	if !ok {
		return -1
	}
	txn := e.store.Begin()
	defer txn.Rollback()
	lo := codec.IndexPrefix(def.ID, minInt64)
	hi := codec.RecordPrefix(def.ID)
	it := txn.NewIter(lo[:len(codec.TablePrefix(def.ID))], hi, false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}

// TableID returns a table's ID, or 0 when there is no such table.
func (e *Engine) TableID(dbName, tableName string) int64 {
	s := e.cat.Current()
	if db, ok := s.Database(dbName); ok {
		if def, ok := s.Table(db.ID, tableName); ok {
			return def.ID
		}
	}
	return 0
}

// CountTableKeys counts the live keys in a table's key range (rows, index
// entries and change logs), whether or not the table still exists.
func (e *Engine) CountTableKeys(tableID int64) int {
	txn := e.store.Begin()
	defer txn.Rollback()
	p := codec.TablePrefix(tableID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}

// HasIndex reports whether a table has an index of that name (any state).
func (e *Engine) HasIndex(dbName, tableName, index string) bool {
	s := e.cat.Current()
	db, ok := s.Database(dbName)
	if !ok {
		return false
	}
	def, ok := s.Table(db.ID, tableName)
	return ok && def.IndexByName(index) != nil
}

// CountKeys counts the committed keys that start with prefix, for tests
// that check what a job leaves behind.
func (e *Engine) CountKeys(prefix []byte) int {
	txn := e.store.Begin()
	defer txn.Rollback()
	it := txn.NewIter(prefix, codec.PrefixEnd(prefix), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}
