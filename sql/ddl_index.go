package sql

import (
	"errors"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// CreateIndex implements sql.IndexAlterableTable.
//
// The index walks absent -> delete-only -> write-only -> write-reorg ->
// public, waiting at each step until no transaction of the previous schema
// version is still running (the metadata lock), and is backfilled from the
// table in small transactions while in write-reorg. A failure walks back
// and removes every entry.
func (t *Table) CreateIndex(ctx *gms.Context, def gms.IndexDef) error {
	if def.IsFullText() || def.IsSpatial() || def.IsVector() {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState,
			"This version of ReorgDB doesn't yet support 'FULLTEXT, SPATIAL and VECTOR indexes'")
	}
	if def.IsPrimary() {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState,
			"This version of ReorgDB doesn't yet support 'adding a primary key to an existing table'")
	}
	e := t.db.e
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	self, _ := ctx.GetTransaction().(*Transaction)

	tableID := t.m.def.ID
	var ixID int64
	name := def.Name
	setState := func(st catalog.IndexState) (*catalog.Schema, error) {
		var out *catalog.Schema
		err := e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
			cur, ok := ch.Schema().TableByID(tableID)
			if !ok {
				return gms.ErrTableNotFound.New(t.Name())
			}
			nt := cur.Clone()
			if st == catalog.StateDeleteOnly && ixID == 0 {
				if name == "" {
					name = generatedIndexName(nt, def.Columns)
				}
				ix, err := newIndexDef(nt, name, def.Columns, def.IsUnique())
				if err != nil {
					return err
				}
				ix.Comment = def.Comment
				ix.State = st
				nt.Indexes = append(nt.Indexes, ix)
				ixID = ix.ID
			} else {
				found := false
				for i, ix := range nt.Indexes {
					if ix.ID == ixID {
						found = true
						if st == catalog.StateAbsent {
							nt.Indexes = append(nt.Indexes[:i], nt.Indexes[i+1:]...)
						} else {
							ix.State = st
						}
						break
					}
				}
				if !found {
					return errors.New("reorgdb: index vanished during its build")
				}
			}
			ch.PutTable(nt)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = e.cat.Current()
		return out, e.waitSchema(ctx, out.Version, self)
	}

	rollback := func(cause error) error {
		if ixID == 0 {
			return cause
		}
		// Walk back so that no transaction still writes the index when its
		// entries are removed.
		if _, err := setState(catalog.StateDeleteOnly); err != nil {
			e.log.Error("roll back index", "index", name, "err", err)
		}
		if _, err := setState(catalog.StateAbsent); err != nil {
			e.log.Error("roll back index", "index", name, "err", err)
		}
		prefix := codec.IndexPrefix(tableID, ixID)
		if err := e.deleteRange(prefix, codec.PrefixEnd(prefix)); err != nil {
			e.log.Error("remove index entries", "index", name, "err", err)
		}
		return cause
	}

	for _, st := range []catalog.IndexState{catalog.StateDeleteOnly, catalog.StateWriteOnly, catalog.StateWriteReorg} {
		if _, err := setState(st); err != nil {
			return rollback(err)
		}
	}
	s := e.cat.Current()
	td, _ := s.TableByID(tableID)
	m, err := metaFor(t.db.def.Name, td)
	if err != nil {
		return rollback(err)
	}
	var ix *indexMeta
	for _, x := range m.indexes {
		if x.def != nil && x.def.ID == ixID {
			ix = x
		}
	}
	if err := e.backfill(ctx, m, ix); err != nil {
		return rollback(err)
	}
	if _, err := setState(catalog.StatePublic); err != nil {
		return rollback(err)
	}
	return nil
}

// backfill writes the index entries of every existing row, in batches of
// transactions that retry on write conflicts with user transactions.
func (e *Engine) backfill(ctx *gms.Context, m *tableMeta, ix *indexMeta) error {
	const batch = 256
	tableID := m.def.ID
	next := codec.RecordPrefix(tableID)
	end := codec.PrefixEnd(next)
	tbl := &Table{m: m}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var resume []byte
		for attempt := 0; ; attempt++ {
			txn := e.store.Begin()
			ed := &editor{t: tbl, tx: &Transaction{txn: txn}}
			it := txn.NewIter(next, end, false)
			n := 0
			var err error
			var lastKey []byte
			for ; it.Valid() && n < batch; it.Next() {
				var h int64
				if _, h, err = codec.DecodeRecordKey(it.Key()); err != nil {
					break
				}
				var row gms.Row
				if row, err = tbl.decodeRow(h, it.Value(), true); err != nil {
					break
				}
				var ents []indexEntry
				if ents, err = ed.entries(row, h, func(x *indexMeta) bool { return x == ix }); err != nil {
					break
				}
				for _, ent := range ents {
					if ent.unique {
						if err = ed.checkUnique(ctx, txn, ent, h, row); err != nil {
							break
						}
					}
					if err = txn.Set(ent.key, ent.value); err != nil {
						break
					}
				}
				if err != nil {
					break
				}
				lastKey = append(lastKey[:0], it.Key()...)
				n++
			}
			if err == nil {
				err = it.Err()
			}
			more := it.Valid()
			it.Close()
			if err != nil {
				txn.Rollback()
				if gms.ErrUniqueKeyViolation.Is(err) || gms.ErrPrimaryKeyViolation.Is(err) {
					return uniqueErrToSQL(err)
				}
				return err
			}
			if _, err := txn.Commit(); err != nil {
				if errors.Is(err, kv.ErrWriteConflict) && attempt < 1000 {
					time.Sleep(time.Duration(attempt+1) * time.Millisecond)
					continue
				}
				return err
			}
			if !more || n == 0 {
				return nil
			}
			resume = codec.PrefixEnd(lastKey)
			break
		}
		next = resume
	}
}

// uniqueErrToSQL turns a duplicate found by a backfill into MySQL's 1062.
func uniqueErrToSQL(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "Duplicate entry"); i >= 0 {
		msg = msg[i:]
	}
	return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", msg)
}

func generatedIndexName(t *catalog.Table, cols []gms.IndexColumn) string {
	base := "idx"
	if len(cols) > 0 {
		base = cols[0].Name
	}
	name := base
	for i := 2; t.IndexByName(name) != nil; i++ {
		name = base + "_" + itoa(i)
	}
	return name
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	return string(b[p:])
}

// DropIndex implements sql.IndexAlterableTable: public -> write-only ->
// delete-only -> absent, then the entries are removed.
func (t *Table) DropIndex(ctx *gms.Context, name string) error {
	e := t.db.e
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	self, _ := ctx.GetTransaction().(*Transaction)
	tableID := t.m.def.ID
	var ixID int64
	for _, st := range []catalog.IndexState{catalog.StateWriteOnly, catalog.StateDeleteOnly, catalog.StateAbsent} {
		err := e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
			cur, ok := ch.Schema().TableByID(tableID)
			if !ok {
				return gms.ErrTableNotFound.New(t.Name())
			}
			nt := cur.Clone()
			for i, ix := range nt.Indexes {
				if (ixID == 0 && strings.EqualFold(ix.Name, name) && !ix.Primary && ix.State == catalog.StatePublic) || (ixID != 0 && ix.ID == ixID) {
					ixID = ix.ID
					if st == catalog.StateAbsent {
						nt.Indexes = append(nt.Indexes[:i], nt.Indexes[i+1:]...)
					} else {
						ix.State = st
					}
					ch.PutTable(nt)
					return nil
				}
			}
			return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, mysql.SSUnknownSQLState,
				"Can't DROP '%s'; check that column/key exists", name)
		})
		if err != nil {
			return err
		}
		if err := e.waitSchema(ctx, e.cat.Current().Version, self); err != nil {
			return err
		}
	}
	prefix := codec.IndexPrefix(tableID, ixID)
	return e.deleteRange(prefix, codec.PrefixEnd(prefix))
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *gms.Context, from, to string) error {
	e := t.db.e
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	return e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().TableByID(t.m.def.ID)
		if !ok {
			return gms.ErrTableNotFound.New(t.Name())
		}
		nt := cur.Clone()
		if nt.IndexByName(to) != nil {
			return mysql.NewSQLError(mysql.ERDupKeyName, mysql.SSUnknownSQLState, "Duplicate key name '%s'", to)
		}
		ix := nt.IndexByName(from)
		if ix == nil || ix.Primary {
			return mysql.NewSQLError(mysql.ERKeyDoesNotExist, mysql.SSUnknownSQLState,
				"Key '%s' doesn't exist in table '%s'", from, t.Name())
		}
		ix.Name = to
		ch.PutTable(nt)
		return nil
	})
}
