package sql

import (
	"bytes"
	"context"
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// editor writes rows and maintains every index according to its state.
// One editor serves INSERT, UPDATE, DELETE and REPLACE.
type editor struct {
	t    *Table
	tx   *Transaction
	sp   kv.Savepoint
	vals []any
	err  error
	// rows counts the rows the statement wrote, for errors "at row n".
	rows int64
}

func (t *Table) newEditor(ctx *gms.Context) *editor {
	tx, err := txnFrom(ctx)
	return &editor{t: t, tx: tx, err: err}
}

func (t *Table) Inserter(ctx *gms.Context) gms.RowInserter { return t.newEditor(ctx) }
func (t *Table) Updater(ctx *gms.Context) gms.RowUpdater   { return t.newEditor(ctx) }
func (t *Table) Deleter(ctx *gms.Context) gms.RowDeleter   { return t.newEditor(ctx) }
func (t *Table) Replacer(ctx *gms.Context) gms.RowReplacer { return t.newEditor(ctx) }

// StatementBegin marks where a failing statement rolls back to, so that a
// failed statement inside a transaction leaves the transaction as it was.
func (e *editor) StatementBegin(ctx *gms.Context) {
	if e.tx != nil {
		e.sp = e.tx.txn.Savepoint()
	}
}

func (e *editor) DiscardChanges(ctx *gms.Context, _ error) error {
	if e.tx != nil {
		e.tx.txn.RollbackTo(e.sp)
	}
	return nil
}

func (e *editor) StatementComplete(*gms.Context) error { return nil }
func (e *editor) Close(*gms.Context) error             { return nil }

func (e *editor) txn() (*kv.Txn, error) {
	if e.err != nil {
		return nil, e.err
	}
	if e.tx.readOnly && !e.t.IsTemporary() {
		// MySQL lets a READ ONLY transaction write temporary tables.
		return nil, gms.ErrReadOnlyTransaction.New()
	}
	return e.tx.txn, nil
}

// indexEntry is one index key/value a row produces.
type indexEntry struct {
	ix     *indexMeta
	key    []byte
	value  []byte
	vals   []any   // key values
	row    gms.Row // the row the key is of, extended by keyRow when keyed by a hidden column
	unique bool    // subject to a uniqueness check
	// A change-log record (see dmlEntries) stands in for the entry whose
	// key is indexKey; deleting it writes the record too.
	logOnly  bool
	indexKey []byte
}

// entryKey is the key of the index entry itself, also for a change-log
// record.
func (ent *indexEntry) entryKey() []byte {
	if ent.logOnly {
		return ent.indexKey
	}
	return ent.key
}

// dmlEntries is entries as DML applies them. For an index an ingest build
// is filling (catalog.BuildLogging: the rule's Log), DML records
// the row's handle in the change log instead of writing the entry: the
// index's own key range stays untouched until the build's sstables are in
// (so that they go to the bottom of the LSM), and the build then brings
// every logged row's entries up to date.
func (e *editor) dmlEntries(row gms.Row, h int64, want func(*indexMeta) bool, stored []any) ([]indexEntry, error) {
	ents, err := e.entries(row, h, want, stored)
	if err != nil {
		return nil, err
	}
	for i := range ents {
		def := ents[i].ix.def
		if def == nil || !def.DML().Log {
			continue
		}
		ent := &ents[i]
		ent.indexKey = ent.key
		if ent.key, err = codec.IndexKey(nil, e.t.m.def.ID, def.ChangeLogID, nil, &h); err != nil {
			return nil, err
		}
		ent.value, ent.unique, ent.logOnly = []byte{}, false, true
	}
	return ents, nil
}

// entries computes the index entries of a row with a given handle, for the
// indexes selected by want; stored holds the values of the hidden columns
// to key by as they are (see keyRow), or is nil.
func (e *editor) entries(row gms.Row, h int64, want func(*indexMeta) bool, stored []any) ([]indexEntry, error) {
	m := e.t.m
	out := make([]indexEntry, 0, len(m.indexes))
	var kr gms.Row
	for _, ix := range m.indexes {
		if ix.isHandleIndex() || !want(ix) {
			continue
		}
		r := row
		if len(m.shadows) > 0 && m.keyed(ix) {
			if kr == nil {
				kr = m.keyRow(row, e.rows+1, stored)
			}
			if !ix.hasKey(kr) {
				continue
			}
			r = kr
		}
		ent := indexEntry{ix: ix, row: r}
		var err error
		ent.key, ent.value, ent.unique, ent.vals, err = m.appendEntry(ix, r, h, nil, []byte{}, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, ent)
	}
	return out, nil
}

// appendEntry appends the key and value of row's entry in index ix to kdst
// and vdst; vals (reusing kvals) are the key's values. unique says the key
// is subject to a uniqueness check. sk is keyValues' scratch.
func (m *tableMeta) appendEntry(ix *indexMeta, row gms.Row, h int64, kdst, vdst []byte, kvals []any, sk *[]byte) (key, val []byte, unique bool, vals []any, err error) {
	vals, hasNull, err := m.keyValues(ix, row, kvals, sk)
	if err != nil {
		return nil, nil, false, nil, err
	}
	if hasNull && ix.def != nil && ix.def.Primary {
		// Only while ADD PRIMARY KEY builds it: the columns of a public
		// primary key are NOT NULL.
		return nil, nil, false, nil, m.nullInKey(ix, vals)
	}
	if ix.unique() && !hasNull {
		key, err = codec.IndexKey(kdst, m.def.ID, ix.def.ID, vals, nil)
		return key, codec.EncodeHandle(vdst, h), true, vals, err
	}
	// Non-unique, or unique with a NULL part (NULLs never collide): the
	// handle makes the key distinct.
	key, err = codec.IndexKey(kdst, m.def.ID, ix.def.ID, vals, &h)
	return key, vdst, false, vals, err
}

// nullInKey is the error for a NULL in a key part of ix.
func (m *tableMeta) nullInKey(ix *indexMeta, vals []any) error {
	name := ""
	for i, v := range vals {
		if v == nil {
			name = m.schema[ix.pos[i]].Name
			break
		}
	}
	return mysql.NewSQLError(mysql.ERBadNullError, "23000", "Column '%s' cannot be null", name)
}

func (e *editor) rowHandle(ctx *gms.Context, row gms.Row) (int64, error) {
	m := e.t.m
	if m.handlePos >= 0 {
		c, err := toCanonical(m.kinds[m.handlePos], row[m.handlePos])
		if err != nil {
			return 0, err
		}
		switch x := c.(type) {
		case int64:
			return x, nil
		case uint64:
			return int64(x), nil
		}
		return 0, fmt.Errorf("reorgdb: bad handle value %v", row[m.handlePos])
	}
	return e.findHiddenHandle(ctx, row)
}

// encodeRow encodes row for storage at recKey in txn; kept holds, per
// hidden changing column, the value to store instead of converting it
// (see keptShadows). A value that dooms a MODIFY COLUMN job is recorded
// in txn (ddl.DoomKey).
func (e *editor) encodeRow(txn *kv.Txn, recKey []byte, row gms.Row, kept []any) ([]byte, error) {
	m := e.t.m
	e.vals = e.vals[:0]
	for p, v := range row[:len(m.schema)] {
		c, err := toCanonical(m.kinds[p], v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", m.schema[p].Name, err)
		}
		e.vals = append(e.vals, c)
	}
	e.rows++
	if len(m.shadows) > 0 {
		var doomErr error
		val, err := m.encodeWithShadows(row, e.vals, kept, e.rows, func(sh *shadowMeta, err error) {
			if doomErr == nil {
				doomErr = txn.Set(ddl.DoomKey(m.def.ID, sh.id, recKey), doomValue(err))
			}
		})
		if err == nil {
			err = doomErr
		}
		return val, err
	}
	return codec.EncodeRow(nil, m.colIDs, e.vals)
}

// Insert implements sql.RowInserter.
func (e *editor) Insert(ctx *gms.Context, row gms.Row) error {
	txn, err := e.txn()
	if err != nil {
		return err
	}
	m := e.t.m
	row = m.trimChars(row)
	var h int64
	recKey := []byte(nil)
	if m.handlePos >= 0 {
		if h, err = e.rowHandle(ctx, row); err != nil {
			return err
		}
		recKey = codec.RecordKey(m.def.ID, h)
		if existing, found, err := e.tx.LockedRead(ctx, recKey); err != nil {
			return err
		} else if found {
			old, err := e.t.decodeRow(h, existing, true)
			if err != nil {
				return err
			}
			return gms.NewUniqueKeyErr(dupMessage(displayValue(row[m.handlePos]), m.def.Name, "PRIMARY"), true, old)
		}
	} else {
		first, err := e.t.db.e.cat.NextIDs(m.def.ID, catalog.RowHandle, 1)
		if err != nil {
			return err
		}
		h = int64(first)
		recKey = codec.RecordKey(m.def.ID, h)
	}
	ents, err := e.dmlEntries(row, h, (*indexMeta).writable, nil)
	if err != nil {
		return err
	}
	// Check every unique index before writing anything, so that a
	// duplicate leaves nothing behind (REPLACE and ON DUPLICATE KEY UPDATE
	// act on the error).
	for _, ent := range ents {
		if !ent.unique {
			continue
		}
		if err := e.checkUnique(ctx, txn, ent, h); err != nil {
			return err
		}
	}
	for _, ent := range ents {
		if err := txn.Set(ent.key, ent.value); err != nil {
			return err
		}
	}
	val, err := e.encodeRow(txn, recKey, row, nil)
	if err != nil {
		return err
	}
	return txn.Set(recKey, val)
}

// checkUnique fails with a duplicate-key error when ent's key belongs to a
// row other than h.
func (e *editor) checkUnique(ctx *gms.Context, txn *kv.Txn, ent indexEntry, h int64) error {
	if e.t.m.retiring(ent.ix) {
		return nil
	}
	v, found, err := e.tx.LockedRead(ctx, ent.key)
	if err != nil || !found {
		return err
	}
	other, err := codec.DecodeHandle(v)
	if err != nil {
		return err
	}
	if other == h {
		return nil
	}
	m := e.t.m
	// While an ingest build merges its change log, an entry may still be
	// the one its snapshot gave a row that has changed since (see
	// package ddl/merge): only a row that still has the key is a duplicate.
	// The entry is then this row's to take, and the merge, which deletes
	// a snapshot entry only while it points at its own row, leaves it.
	merging := ent.ix.dml().StaleEntries
	rec, found, err := e.tx.LockedRead(ctx, codec.RecordKey(m.def.ID, other))
	if err != nil {
		return err
	}
	if !found {
		if merging {
			return nil
		}
		return errIndexInconsistent(m.def.Name, ent.ix.name(), other)
	}
	old, err := e.t.decodeRow(other, rec, true)
	if err != nil {
		return err
	}
	if merging {
		key, _, _, _, err := m.appendEntry(ent.ix, old, other, nil, nil, nil, nil)
		if err != nil {
			return err
		}
		if !bytes.Equal(key, ent.key) {
			return nil
		}
	}
	vals := make([]string, len(ent.ix.pos))
	for i, p := range ent.ix.pos {
		vals[i] = displayValue(ent.row[p])
	}
	msg := dupMessage(joinDash(vals), m.def.Name, ddl.UserIndexName(ent.ix.name()))
	if m.keyed(ent.ix) {
		// A MODIFY COLUMN's replacement index: the rows collide only in
		// the definition to come, so REPLACE and ON DUPLICATE KEY UPDATE
		// must not act on the other row.
		return mysql.NewSQLError(mysql.ERDupEntry, "23000", "%s", msg)
	}
	return gms.NewUniqueKeyErr(msg, ent.ix.def.Primary, old)
}

// Delete implements sql.RowDeleter.
func (e *editor) Delete(ctx *gms.Context, row gms.Row) error {
	txn, err := e.txn()
	if err != nil {
		return err
	}
	h, err := e.rowHandle(ctx, row)
	if err != nil {
		return err
	}
	if err := e.lockRow(ctx, txn, h); err != nil {
		return err
	}
	return e.deleteRow(ctx, txn, row, h)
}

// lockRow locks the row a statement is about to change. Rows read by
// UPDATE and DELETE are locked when read (locking.go); a row that reaches
// the editor unlocked was read from the statement's snapshot, and is
// changed only if nobody committed a newer version since.
func (e *editor) lockRow(ctx *gms.Context, txn *kv.Txn, h int64) error {
	key := codec.RecordKey(e.t.m.def.ID, h)
	fresh, err := e.tx.lock(ctx, key)
	if err != nil || !fresh {
		return err
	}
	snap, _, err := txn.Get(key)
	if err != nil {
		return err
	}
	latest, _, err := txn.GetLatest(key)
	if err != nil {
		return err
	}
	if !bytes.Equal(snap, latest) && !e.t.m.sameVisible(snap, latest) {
		e.tx.deadlocked(ctx)
		return errDeadlock()
	}
	return nil
}

func (e *editor) deleteRow(ctx *gms.Context, txn *kv.Txn, row gms.Row, h int64) error {
	stored, err := e.storedShadows(txn, h)
	if err != nil {
		return err
	}
	ents, err := e.dmlEntries(row, h, (*indexMeta).deletable, stored)
	if err != nil {
		return err
	}
	for _, ent := range ents {
		if err := e.deleteEntry(ctx, txn, ent, h); err != nil {
			return err
		}
	}
	return txn.Delete(codec.RecordKey(e.t.m.def.ID, h))
}

// deleteEntry removes a row's index entry. A unique entry that belongs to
// another row is left alone. When the entry is missing it is deleted all
// the same: the tombstone is what makes a concurrent backfill transaction
// that read the row before this delete conflict and retry, instead of
// writing an entry for a row that no longer exists.
func (e *editor) deleteEntry(ctx *gms.Context, txn *kv.Txn, ent indexEntry, h int64) error {
	if ent.logOnly {
		return txn.Set(ent.key, ent.value)
	}
	if ent.unique {
		v, found, err := e.tx.LockedRead(ctx, ent.key)
		if err != nil {
			return err
		}
		if found {
			if other, err := codec.DecodeHandle(v); err != nil || other != h {
				return err
			}
		}
	}
	return txn.Delete(ent.key)
}

// Update implements sql.RowUpdater.
func (e *editor) Update(ctx *gms.Context, old, new gms.Row) error {
	txn, err := e.txn()
	if err != nil {
		return err
	}
	m := e.t.m
	new = m.trimChars(new)
	h, err := e.rowHandle(ctx, old)
	if err != nil {
		return err
	}
	if err := e.lockRow(ctx, txn, h); err != nil {
		return err
	}
	newH := h
	if m.handlePos >= 0 {
		if newH, err = e.rowHandle(ctx, new); err != nil {
			return err
		}
	}
	if newH != h {
		// The clustered key changed: the row moves.
		if err := e.deleteRow(ctx, txn, old, h); err != nil {
			return err
		}
		return e.Insert(ctx, new)
	}
	stored, err := e.storedShadows(txn, h)
	if err != nil {
		return err
	}
	kept := e.t.m.keptShadows(stored, old, new)
	oldEnts, err := e.dmlEntries(old, h, (*indexMeta).deletable, stored)
	if err != nil {
		return err
	}
	newEnts, err := e.dmlEntries(new, h, (*indexMeta).writable, kept)
	if err != nil {
		return err
	}
	changed := func(ent indexEntry, other []indexEntry) bool {
		for _, o := range other {
			if o.ix == ent.ix {
				return !bytes.Equal(o.entryKey(), ent.entryKey())
			}
		}
		return true
	}
	for _, ent := range newEnts {
		if ent.unique && changed(ent, oldEnts) {
			if err := e.checkUnique(ctx, txn, ent, h); err != nil {
				return err
			}
		}
	}
	for _, ent := range oldEnts {
		if changed(ent, newEnts) {
			if err := e.deleteEntry(ctx, txn, ent, h); err != nil {
				return err
			}
		}
	}
	for _, ent := range newEnts {
		if changed(ent, oldEnts) {
			if err := txn.Set(ent.key, ent.value); err != nil {
				return err
			}
		}
	}
	recKey := codec.RecordKey(m.def.ID, h)
	val, err := e.encodeRow(txn, recKey, new, kept)
	if err != nil {
		return err
	}
	return txn.Set(recKey, val)
}

// findHiddenHandle locates the stored row equal to row in a table without
// an integer primary key: through its first usable unique index when it
// has one, else through any index, else by a scan.
func (e *editor) findHiddenHandle(ctx *gms.Context, row gms.Row) (int64, error) {
	m := e.t.m
	txn := e.tx.txn
	var lo, hi []byte
	var via *indexMeta
	for _, ix := range m.indexes {
		if ix.isHandleIndex() || ix.state() != catalog.StatePublic {
			continue
		}
		if via == nil || (ix.unique() && !via.unique()) {
			via = ix
		}
	}
	if via != nil {
		vals, _, err := m.keyValues(via, row, nil, nil)
		if err != nil {
			return 0, err
		}
		lo, err = codec.IndexKey(nil, m.def.ID, via.def.ID, vals, nil)
		if err != nil {
			return 0, err
		}
		hi = codec.PrefixEnd(lo)
	} else {
		lo = codec.RecordPrefix(m.def.ID)
		hi = codec.PrefixEnd(lo)
	}
	it := txn.NewIter(lo, hi, false)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		var h int64
		var rec []byte
		var err error
		if via != nil {
			if h, err = handleFromIndexEntry(it.Key(), it.Value(), len(via.pos)); err != nil {
				return 0, err
			}
			var found bool
			if rec, found, err = txn.Get(codec.RecordKey(m.def.ID, h)); err != nil {
				return 0, err
			} else if !found {
				continue
			}
		} else {
			if _, h, err = codec.DecodeRecordKey(it.Key()); err != nil {
				return 0, err
			}
			rec = it.Value()
		}
		cand, err := e.t.decodeRow(h, rec, true)
		if err != nil {
			return 0, err
		}
		if eq, err := rowsEqual(ctx, m.schema, cand, row); err != nil {
			return 0, err
		} else if eq {
			return h, nil
		}
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	return 0, gms.ErrDeleteRowNotFound.New()
}

// rowsEqual reports whether a and b are the same row: strings must match
// exactly, not just under their collation ('a' and 'A' are two rows).
func rowsEqual(ctx context.Context, sch gms.Schema, a, b gms.Row) (bool, error) {
	for i, col := range sch {
		if a[i] == nil || b[i] == nil {
			if a[i] != b[i] {
				return false, nil
			}
			continue
		}
		if as, ok := a[i].(string); ok {
			if bs, ok := b[i].(string); ok {
				if as != bs {
					return false, nil
				}
				continue
			}
		}
		c, err := col.Type.Compare(ctx, a[i], b[i])
		if err != nil || c != 0 {
			return false, err
		}
	}
	return true, nil
}

// Truncate implements sql.TruncateableTable.
func (t *Table) Truncate(ctx *gms.Context) (int, error) {
	if err := t.db.e.endJobs(ctx, t.m.def.ID); err != nil {
		return 0, err
	}
	tx, err := txnFrom(ctx)
	if err != nil {
		return 0, err
	}
	txn := tx.txn
	n := 0
	prefix := codec.TablePrefix(t.m.def.ID)
	it := txn.NewIter(prefix, codec.PrefixEnd(prefix), false)
	recPrefix := codec.RecordPrefix(t.m.def.ID)
	var keys [][]byte
	for ; it.Valid(); it.Next() {
		k := append([]byte(nil), it.Key()...)
		if bytes.HasPrefix(k, recPrefix) {
			n++
		}
		keys = append(keys, k)
	}
	if err := it.Err(); err != nil {
		it.Close()
		return 0, err
	}
	it.Close()
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return 0, err
		}
	}
	if t.m.autoPos >= 0 {
		if err := t.db.e.cat.ResetAutoID(t.m.def.ID, catalog.AutoIncrement, 1); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// PeekNextAutoIncrementValue implements sql.AutoIncrementGetter. A table
// without an AUTO_INCREMENT column has no next value, as in MySQL (SHOW
// CREATE TABLE shows none), even if one had it before.
func (t *Table) PeekNextAutoIncrementValue(*gms.Context) (uint64, error) {
	if t.m.autoPos < 0 {
		return 0, gms.ErrNoAutoIncrementCol
	}
	return t.db.e.cat.PeekNext(t.m.def.ID, catalog.AutoIncrement)
}

// GetNextAutoIncrementValue implements sql.AutoIncrementTable: a value the
// user gave moves the counter past it; otherwise the next value is taken.
func (t *Table) GetNextAutoIncrementValue(ctx *gms.Context, given any) (uint64, error) {
	if given != nil {
		// go-mysql-server stores a value the column cannot hold as the
		// end of its range; MySQL's strict mode refuses it.
		if p := t.m.autoPos; p >= 0 {
			if _, inRange, err := t.m.schema[p].Type.Convert(ctx, given); err == nil && inRange == gms.OutOfRange && strictMode(ctx) {
				return 0, gms.ErrValueOutOfRange.New(given, t.m.schema[p].Type.String())
			}
		}
		v, _, err := types.Uint64.Convert(ctx, given)
		if err != nil {
			return 0, err
		}
		u := v.(uint64)
		return u, t.db.e.cat.Rebase(t.m.def.ID, catalog.AutoIncrement, u)
	}
	next, err := t.db.e.cat.NextIDs(t.m.def.ID, catalog.AutoIncrement, 1)
	if err != nil {
		return 0, err
	}
	// Past the type's largest value MySQL gives the largest again, which
	// the key then refuses as a duplicate (1062); go-mysql-server would
	// wrap it around.
	if m := t.m.autoMax; m > 0 && next > m {
		next = m
	}
	return next, nil
}

// strictMode says whether the session's sql_mode is strict.
func strictMode(ctx *gms.Context) bool {
	mode := gms.LoadSqlMode(ctx)
	return mode.ModeEnabled("STRICT_TRANS_TABLES") || mode.ModeEnabled("STRICT_ALL_TABLES")
}

// AutoIncrementSetter implements sql.AutoIncrementTable.
func (t *Table) AutoIncrementSetter(*gms.Context) gms.AutoIncrementSetter {
	return &autoIncSetter{t: t}
}

type autoIncSetter struct{ t *Table }

func (s *autoIncSetter) SetAutoIncrementValue(_ *gms.Context, v uint64) error {
	if v == 0 {
		return nil
	}
	return s.t.db.e.cat.Rebase(s.t.m.def.ID, catalog.AutoIncrement, v-1)
}
func (s *autoIncSetter) AcquireAutoIncrementLock(*gms.Context) (func(), error) {
	return func() {}, nil
}
func (s *autoIncSetter) Close(*gms.Context) error { return nil }

func dupMessage(val, table, index string) string {
	return (&ddl.DuplicateKeyError{Table: table, Index: index, Key: val}).Error()
}

func joinDash(vals []string) string {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(v)
	}
	return b.String()
}

func displayValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case string:
		return x
	}
	s, _, err := types.LongText.Convert(context.Background(), v)
	if err == nil {
		if str, ok := s.(string); ok {
			return str
		}
	}
	return fmt.Sprint(v)
}

// errIndexInconsistent is MySQL's ER_INDEX_CORRUPT for an index entry
// whose row does not exist: the statement fails, the session goes on, and
// ADMIN CHECK TABLE names the damage.
func errIndexInconsistent(table, index string, h int64) error {
	return mysql.NewSQLError(1712, "HY000",
		"Index %s is corrupted: table %s has no row for its entry with handle %d", index, table, h)
}
