package sql

import (
	"strings"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// Temporary tables (CREATE TEMPORARY TABLE), as in MySQL 8: visible only
// to the session that made them, shadowing a table of the same name in
// that session, gone when the session ends. The definition lives in the
// session (never in the catalog, so no other session, SHOW TABLES or
// information_schema sees it); the rows and index entries are ordinary kv
// keys under an ID of catalog.TempIDBase's range, written by the
// session's transactions like any table's, so that ROLLBACK, locking and
// the indexes behave the same. Schema changes on one take effect at once:
// nobody else can be using it.

type tempKey struct {
	db   int64
	name string
}

// tempTables are one session's temporary tables.
type tempTables struct {
	n      atomic.Int32 // len(byName), read without the lock by every table lookup
	mu     sync.Mutex
	byName map[tempKey]*catalog.Table
	// stale: dropped tables whose keys the session's open transaction may
	// still write when it commits; they go when the session ends.
	stale []int64
}

func (s *Session) tempTable(dbID int64, name string) (*catalog.Table, bool) {
	if s.temps.n.Load() == 0 {
		return nil, false
	}
	s.temps.mu.Lock()
	defer s.temps.mu.Unlock()
	t, ok := s.temps.byName[tempKey{dbID, strings.ToLower(name)}]
	return t, ok
}

// putTemp adds or replaces a temporary table's definition.
func (s *Session) putTemp(t *catalog.Table) {
	s.temps.mu.Lock()
	defer s.temps.mu.Unlock()
	if s.temps.byName == nil {
		s.temps.byName = map[tempKey]*catalog.Table{}
	}
	k := tempKey{t.DBID, strings.ToLower(t.Name)}
	if old, ok := s.temps.byName[k]; ok && old.ID == t.ID {
		metaCache.Delete(old)
	}
	s.temps.byName[k] = t
	s.temps.n.Store(int32(len(s.temps.byName)))
}

func (s *Session) removeTemp(t *catalog.Table) {
	s.temps.mu.Lock()
	defer s.temps.mu.Unlock()
	delete(s.temps.byName, tempKey{t.DBID, strings.ToLower(t.Name)})
	s.temps.n.Store(int32(len(s.temps.byName)))
	metaCache.Delete(t)
}

// dropTemp forgets a temporary table and removes its keys.
func (s *Session) dropTemp(ctx *gms.Context, t *catalog.Table) {
	s.removeTemp(t)
	if tx, _ := ctx.GetTransaction().(*Transaction); tx != nil && !tx.done && !tx.txn.IsReadOnly() {
		s.temps.mu.Lock()
		s.temps.stale = append(s.temps.stale, t.ID)
		s.temps.mu.Unlock()
	}
	s.e.dropTempKeys(t.ID)
}

// endTemps drops every temporary table of a session that has ended (its
// transaction rolled back already).
func (s *Session) endTemps() {
	s.temps.mu.Lock()
	ids := s.temps.stale
	for _, t := range s.temps.byName {
		ids = append(ids, t.ID)
		metaCache.Delete(t)
	}
	s.temps.byName, s.temps.stale = nil, nil
	s.temps.n.Store(0)
	s.temps.mu.Unlock()
	if len(ids) > 0 {
		// Not on the caller's goroutine: go-mysql-server ends sessions
		// under the lock every new connection takes. Nothing can reach
		// these keys any more.
		go s.e.dropTempKeys(ids...)
	}
}

// dropTempKeys removes the keys of temporary tables that are gone, unless
// the engine is closed: the next start clears them then.
func (e *Engine) dropTempKeys(ids ...int64) {
	e.cleanupMu.Lock()
	if e.closed {
		e.cleanupMu.Unlock()
		return
	}
	e.cleanups.Add(1)
	e.cleanupMu.Unlock()
	defer e.cleanups.Done()
	for _, id := range ids {
		if err := e.cat.DropTempKeys(id); err != nil {
			e.log.Error("drop temporary table data", "table_id", id, "err", err)
		}
	}
}

// clearTemporary removes what temporary tables of an earlier run left.
func (e *Engine) clearTemporary() {
	if err := e.cat.ClearTemporary(); err != nil {
		e.log.Error("remove temporary tables of an earlier run", "err", err)
	}
}

// tempFor is the statement's session's temporary table name in database
// dbID.
func tempFor(ctx *gms.Context, dbID int64, name string) (*catalog.Table, bool) {
	if ctx == nil {
		return nil, false
	}
	sess, ok := ctx.Session.(*Session)
	if !ok {
		return nil, false
	}
	return sess.tempTable(dbID, name)
}

var _ gms.TemporaryTableCreator = (*Database)(nil)

// CreateTemporaryTable implements sql.TemporaryTableCreator. Unlike CREATE
// TABLE it does not commit the session's transaction, as in MySQL.
func (d *Database) CreateTemporaryTable(ctx *gms.Context, name string, sch gms.PrimaryKeySchema, collation gms.CollationID) error {
	sess, ok := ctx.Session.(*Session)
	if !ok {
		return gms.ErrTemporaryTableNotSupported.New()
	}
	if _, ok := sess.tempTable(d.def.ID, name); ok {
		return gms.ErrTableAlreadyExists.New(name)
	}
	t, err := d.newTableDef(ctx, d.e.cat.NewTempID(), name, sch, collation, createComment(ctx.Query()))
	if err != nil {
		return err
	}
	sess.markCreated(ctx, t.ID)
	sess.putTemp(t)
	return nil
}

// createComment is the COMMENT table option of a CREATE TABLE statement,
// which go-mysql-server does not pass on for temporary tables.
func createComment(query string) string {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return ""
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil {
		return ""
	}
	for _, o := range ddl.TableSpec.TableOpts {
		if strings.EqualFold(o.Name, "comment") {
			return strings.Trim(o.Value, "'\"")
		}
	}
	return ""
}

// dropTempTable drops the session's temporary table name in d, if there
// is one. DROP TEMPORARY TABLE leaves the transaction open, as in MySQL;
// DROP TABLE commits it.
func (d *Database) dropTempTable(ctx *gms.Context, name string) (bool, error) {
	t, ok := tempFor(ctx, d.def.ID, name)
	if !ok {
		return false, nil
	}
	if !temporaryKeyword(ctx.Query()) {
		if err := d.e.implicitCommit(ctx); err != nil {
			return true, err
		}
	}
	ctx.Session.(*Session).dropTemp(ctx, t)
	return true, nil
}

func temporaryKeyword(query string) bool {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return false
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	return ok && ddl.Temporary
}

// renameTempTable renames the session's temporary table oldName in d, if
// there is one.
func (d *Database) renameTempTable(ctx *gms.Context, oldName, newName string) (bool, error) {
	t, ok := tempFor(ctx, d.def.ID, oldName)
	if !ok {
		return false, nil
	}
	if _, ok := tempFor(ctx, d.def.ID, newName); ok {
		return true, gms.ErrTableAlreadyExists.New(newName)
	}
	if err := d.e.implicitCommit(ctx); err != nil {
		return true, err
	}
	sess := ctx.Session.(*Session)
	sess.removeTemp(t)
	nt := t.Clone()
	nt.Name = newName
	sess.putTemp(nt)
	return true, nil
}

// IsTemporary implements sql.TemporaryTable. go-mysql-server asks it to
// let DROP TEMPORARY TABLE drop only temporary tables, and to let a READ
// ONLY transaction write them.
func (t *Table) IsTemporary() bool { return t.m.def.ID >= catalog.TempIDBase }

// latestDef is the table's newest definition: the session's, for a
// temporary table.
func (t *Table) latestDef(ctx *gms.Context) (*catalog.Table, bool) {
	if t.IsTemporary() {
		def, ok := tempFor(ctx, t.db.def.ID, t.m.def.Name)
		return def, ok && def.ID == t.m.def.ID
	}
	return t.db.e.cat.Current().TableByID(t.m.def.ID)
}

// alterTemp makes def, a changed definition of the temporary table t, the
// one the session sees. A schema change commits the transaction first, as
// in MySQL; no job is needed, since no other session can see the table.
func (t *Table) alterTemp(ctx *gms.Context, def *catalog.Table) error {
	if _, err := buildMeta(t.m.dbName, def); err != nil {
		return err
	}
	// Only a session that has temporary tables gets here.
	sess := ctx.Session.(*Session)
	if !sess.createdInStatement(ctx, def.ID) {
		if err := t.db.e.implicitCommit(ctx); err != nil {
			return err
		}
	}
	sess.putTemp(def)
	return nil
}

// createTempIndex adds an index to a temporary table at once, filling it
// from the table's rows.
func (t *Table) createTempIndex(ctx *gms.Context, def gms.IndexDef) error {
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.Name())
	}
	nt, ix, err := withPublicIndex(ctx, cur, def)
	if err != nil {
		return err
	}
	if err := t.alterTemp(ctx, nt); err != nil {
		return err
	}
	if err := t.fillTempIndex(ctx, nt, ix); err != nil {
		ctx.Session.(*Session).putTemp(cur)
		return err
	}
	return nil
}

// fillTempIndex writes the entries of the new index ix of temporary table
// def for its rows, in a transaction of its own, so that a ROLLBACK cannot
// leave the index without them; the session then reads from a snapshot
// that has them.
func (t *Table) fillTempIndex(ctx *gms.Context, def *catalog.Table, ix *catalog.Index) error {
	txn := t.db.e.store.Begin()
	defer txn.Rollback()
	ents, err := t.tempIndexEntries(ctx, txn, def, ix)
	if err != nil || len(ents) == 0 {
		return err
	}
	for _, en := range ents {
		if en.Unique {
			if _, found, err := txn.Get(en.Key); err != nil {
				return err
			} else if found {
				return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", dupMessage(en.Display, def.Name, ix.Name))
			}
		}
		if err := txn.Set(en.Key, en.Value); err != nil {
			return err
		}
	}
	if _, err := txn.Commit(); err != nil {
		return storageError(err)
	}
	return t.db.e.renewSnapshot(ctx)
}

// tempIndexEntries are the entries of index ix for the rows txn sees.
func (t *Table) tempIndexEntries(ctx *gms.Context, txn *kv.Txn, def *catalog.Table, ix *catalog.Index) ([]ddl.Entry, error) {
	p := codec.RecordPrefix(def.ID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	var ents []ddl.Entry
	for n := 1; it.Valid(); it.Next() {
		if n++; n&1023 == 0 && ctx.Err() != nil {
			return nil, ErrInterrupted()
		}
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return nil, err
		}
		es, err := (indexer{t.db.e}).Entries(t.m.dbName, def, []int64{ix.ID}, h, it.Value())
		if err != nil {
			return nil, err
		}
		ents = append(ents, es...)
	}
	return ents, it.Err()
}

// renewSnapshot gives the session's transaction, which has no writes (a
// schema change committed it), a snapshot taken now.
func (e *Engine) renewSnapshot(ctx *gms.Context) error {
	tx, ok := ctx.GetTransaction().(*Transaction)
	if !ok || tx == nil || tx.done {
		return nil
	}
	if !tx.txn.IsReadOnly() {
		return e.implicitCommit(ctx)
	}
	tx.txn.Rollback()
	tx.lease.Release()
	e.track(tx, tx.lease.Owner)
	return nil
}

// dropTempIndex drops an index of a temporary table at once.
func (t *Table) dropTempIndex(ctx *gms.Context, name string) error {
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.Name())
	}
	nt := cur.Clone()
	for i, x := range nt.Indexes {
		if strings.EqualFold(x.Name, name) && !x.Primary {
			nt.Indexes = append(nt.Indexes[:i:i], nt.Indexes[i+1:]...)
			if err := t.alterTemp(ctx, nt); err != nil {
				return err
			}
			p := codec.IndexPrefix(nt.ID, x.ID)
			return t.db.e.deleteRange(p, codec.PrefixEnd(p))
		}
	}
	return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, mysql.SSUnknownSQLState,
		"Can't DROP '%s'; check that column/key exists", name)
}

// renameTempIndex renames an index of a temporary table.
func (t *Table) renameTempIndex(ctx *gms.Context, from, to string) error {
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.Name())
	}
	nt, err := withIndexRenamed(cur, from, to)
	if err != nil {
		return err
	}
	return t.alterTemp(ctx, nt)
}

// withIndexRenamed is a copy of def with index from called to, or MySQL's
// error when to is taken or from is not a secondary index.
func withIndexRenamed(def *catalog.Table, from, to string) (*catalog.Table, error) {
	nt := def.Clone()
	if nt.IndexByName(to) != nil {
		return nil, mysql.NewSQLError(mysql.ERDupKeyName, mysql.SSUnknownSQLState, "Duplicate key name '%s'", to)
	}
	ix := nt.IndexByName(from)
	if ix == nil || ix.Primary {
		return nil, mysql.NewSQLError(mysql.ERKeyDoesNotExist, mysql.SSUnknownSQLState,
			"Key '%s' doesn't exist in table '%s'", from, def.Name)
	}
	ix.Name = to
	return nt, nil
}

// createdNow reports whether the statement created table id: go-mysql-server
// looks a new table up to add its indexes, and must then get that table,
// not a temporary one of the same name.
func createdNow(ctx *gms.Context, id int64) bool {
	sess, ok := ctx.Session.(*Session)
	return ok && sess.createdInStatement(ctx, id)
}

// tempNamedIn is the first temporary table of the session that the parsed
// statement names, if any. A view cannot refer to one, nor a trigger be
// on one, in MySQL: both would outlive it.
func (e *Engine) tempNamedIn(ctx *gms.Context, stmt sqlparser.SQLNode) (string, bool) {
	sess, ok := ctx.Session.(*Session)
	if !ok || sess.temps.n.Load() == 0 {
		return "", false
	}
	found := ""
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		tn, ok := n.(sqlparser.TableName)
		if !ok || tn.Name.IsEmpty() {
			return true, nil
		}
		db := tn.DbQualifier.String()
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if d, ok := e.schemaFor(ctx).Database(db); ok {
			if _, ok := sess.tempTable(d.ID, tn.Name.String()); ok {
				found = tn.Name.String()
				return false, nil
			}
		}
		return true, nil
	}, stmt)
	return found, found != ""
}

// checkViewSelect refuses a view over a temporary table (1352).
func (d *Database) checkViewSelect(ctx *gms.Context, selectStatement string) error {
	stmt, err := sqlparser.Parse(selectStatement)
	if err != nil {
		return nil
	}
	if name, ok := d.e.tempNamedIn(ctx, stmt); ok {
		return mysql.NewSQLError(1352, mysql.SSUnknownSQLState, "View's SELECT refers to a temporary table '%s'", name)
	}
	return nil
}

// checkTriggerTable refuses a trigger on a temporary table (1361).
func (d *Database) checkTriggerTable(ctx *gms.Context, create string) error {
	if name, ok := triggerTable(create); ok {
		if _, ok := tempFor(ctx, d.def.ID, name); ok {
			return mysql.NewSQLError(1361, mysql.SSUnknownSQLState, "Trigger's '%s' is view or temporary table", name)
		}
	}
	return nil
}

func triggerTable(create string) (string, bool) {
	stmt, err := sqlparser.Parse(create)
	if err != nil {
		return "", false
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TriggerSpec == nil {
		return "", false
	}
	return ddl.Table.Name.String(), true
}

// triggersNotShadowed leaves out the triggers on tables that the session
// shadows with a temporary table: writes to the temporary table must not
// fire them. SHOW TRIGGERS and information_schema.triggers still list
// them.
func (d *Database) triggersNotShadowed(ctx *gms.Context, defs []gms.TriggerDefinition) []gms.TriggerDefinition {
	if sess, ok := ctx.Session.(*Session); !ok || sess.temps.n.Load() == 0 || len(defs) == 0 || listsTriggers(ctx.Query()) {
		return defs
	}
	out := defs[:0:0]
	for _, def := range defs {
		if name, ok := triggerTable(def.CreateStatement); ok {
			if _, shadowed := tempFor(ctx, d.def.ID, name); shadowed {
				continue
			}
		}
		out = append(out, def)
	}
	return out
}

// listsTriggers reports whether a statement only reads trigger
// definitions (SHOW, SELECT).
func listsTriggers(query string) bool {
	q := strings.ToUpper(strings.TrimSpace(query))
	return strings.HasPrefix(q, "SHOW") || strings.HasPrefix(q, "SELECT")
}

// sessionTable is table name of database dbID as statements of session
// sess (nil for none) see it in schema s.
func sessionTable(sess gms.Session, s *catalog.Schema, dbID int64, name string) (*catalog.Table, bool) {
	if rs, ok := sess.(*Session); ok && rs != nil {
		if t, ok := rs.tempTable(dbID, name); ok {
			return t, true
		}
	}
	return s.Table(dbID, name)
}

// TableFor is table name of database db as session sess (nil for none)
// sees it: its temporary table of that name, else the newest schema's.
func (e *Engine) TableFor(sess gms.Session, db, name string) (*catalog.Table, bool) {
	s := e.cat.Current()
	d, ok := s.Database(db)
	if !ok {
		return nil, false
	}
	return sessionTable(sess, s, d.ID, name)
}
