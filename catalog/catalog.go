// Package catalog owns ReorgDB's schema: databases, tables, columns,
// indexes, foreign keys and checks, with stable IDs, versioned as a whole
// and persisted in kv.
//
// The in-memory view is an immutable *Schema published through an atomic
// pointer: readers (every SQL statement) take a snapshot without locks, and a
// transaction keeps the snapshot it started with, which is what the online
// schema-change protocol needs (a transaction sees one schema version for its
// whole life). Every change writes the changed objects and a new schema
// version in one kv transaction, then publishes the new snapshot.
//
// It also hands out the IDs of temporary tables, whose definitions it
// never holds, and removes the keys they leave (temp.go), and keeps the
// accounts and their TLS requirements as blobs the SQL layer serializes
// (accounts.go).
package catalog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reorgdb/reorgdb/kv"
)

// Column is a table column. Type and Default hold SQL text so that this
// layer stays independent of the SQL engine that interprets them.
type Column struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Type          string `json:"type"`
	Nullable      bool   `json:"nullable"`
	Default       string `json:"default,omitempty"`
	HasDefault    bool   `json:"has_default,omitempty"`
	AutoIncrement bool   `json:"auto_increment,omitempty"`
	Comment       string `json:"comment,omitempty"`
	// Generated is the expression of a generated column; a Virtual one is
	// computed on read and not stored, a stored one on every write.
	Generated string `json:"generated,omitempty"`
	Virtual   bool   `json:"virtual,omitempty"`
	// OnUpdate is the expression an UPDATE of the row sets the column to
	// when the statement does not set it (ON UPDATE CURRENT_TIMESTAMP).
	OnUpdate string `json:"on_update,omitempty"`
	// Origin, for a column added by ALTER TABLE ADD COLUMN, is the value
	// that rows written before the column existed read for it (they are
	// not rewritten), encoded as a one-column row value (codec.EncodeRow)
	// under column ID 0, so that it can be made before the column has an ID. It is fixed when the column is added, so a
	// later change of Default does not change what old rows hold. Nil for
	// a column every row was written with, and for a NULL origin.
	Origin []byte `json:"origin,omitempty"`
}

// IndexColumn names a column of an index; Length > 0 is a prefix length.
type IndexColumn struct {
	ColumnID int64 `json:"column_id"`
	Length   int64 `json:"length,omitempty"`
}

// Index is a secondary index, or the primary key when the primary key is
// not the clustered integer handle.
type Index struct {
	ID      int64         `json:"id"`
	Name    string        `json:"name"`
	Columns []IndexColumn `json:"columns"`
	Unique  bool          `json:"unique,omitempty"`
	Primary bool          `json:"primary,omitempty"`
	State   IndexState    `json:"state"`
	Comment string        `json:"comment,omitempty"`
	// Invisible indexes (ALTER INDEX ... INVISIBLE) are maintained by DML
	// like any other but never chosen by the planner, so that dropping
	// one can be tried out without rebuilding it.
	Invisible bool `json:"invisible,omitempty"`
	// ChangeLogID, while an ingest build fills the index, is the ID of a
	// key range where DML records the handles of the rows it changes
	// instead of writing the index's entries (see package ddl). With
	// Merging set, DML writes the index's entries itself again. What DML
	// does in each state and build phase is Index.DML (indexstate.go).
	ChangeLogID int64 `json:"change_log_id,omitempty"`
	Merging     bool  `json:"merging,omitempty"`
}

// Table is a table's definition. HandleColumn is the ID of the integer
// primary-key column used as the row handle, or 0 when rows get a hidden
// auto-allocated handle.
type Table struct {
	ID           int64    `json:"id"`
	DBID         int64    `json:"db_id"`
	Name         string   `json:"name"`
	Columns      []Column `json:"columns"`
	PKColumns    []int64  `json:"pk_columns,omitempty"`
	HandleColumn int64    `json:"handle_column,omitempty"`
	Indexes      []*Index `json:"indexes,omitempty"`
	Collation    string   `json:"collation,omitempty"`
	Comment      string   `json:"comment,omitempty"`
	NextColumnID int64    `json:"next_column_id"`
	NextIndexID  int64    `json:"next_index_id"`
	// Changing holds the hidden columns of a MODIFY COLUMN that rewrites
	// values (see package ddl): not part of the table's visible
	// definition, but written by DML in every row it writes.
	Changing []ChangingColumn `json:"changing,omitempty"`
	// ForeignKeys are the table's own (child-side) foreign keys; the keys
	// that reference it are found through Schema.ChildTables.
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	Checks      []Check      `json:"checks,omitempty"`
}

// ForeignKey is a FOREIGN KEY constraint of a table. Columns are named,
// as the SQL engine resolves them; the parent table is named by database
// and table so that a key created with foreign_key_checks = 0 may name a
// table that does not exist yet. OnUpdate and OnDelete hold the action's
// SQL ("CASCADE", "SET NULL", ...; "" when none was given).
type ForeignKey struct {
	Name          string   `json:"name"`
	Columns       []string `json:"columns"`
	ParentDB      string   `json:"parent_db"`
	ParentTable   string   `json:"parent_table"`
	ParentColumns []string `json:"parent_columns"`
	OnUpdate      string   `json:"on_update,omitempty"`
	OnDelete      string   `json:"on_delete,omitempty"`
	// Unresolved: created with foreign_key_checks = 0 and not yet checked
	// against its parent.
	Unresolved bool `json:"unresolved,omitempty"`
}

// Check is a CHECK constraint: Expr is its SQL expression.
type Check struct {
	Name     string `json:"name"`
	Expr     string `json:"expr"`
	Enforced bool   `json:"enforced"`
}

// ChangingColumn is a hidden, write-only column whose value in every row
// is the value of the visible column Source converted to Column's type.
// Lenient conversions never fail (a value that does not convert is
// stored as NULL): they keep a column's old definition readable for
// transactions still on an older schema version, while strict ones
// refuse a write whose value does not convert.
//
// A strict column is first in doom mode: a write whose value does not
// convert is stored without the hidden value and dooms the job (package
// ddl) instead of failing; with Refuse, the job's last version before the
// swap, the write fails.
//
// A Lax column converts as MySQL's table copy does without strict mode
// (the ALTER's session had none): a number out of range becomes the
// nearest end of the range, text too long is cut, text that is not a
// number becomes its numeric prefix, instead of failing.
type ChangingColumn struct {
	Column  Column `json:"column"`
	Source  int64  `json:"source"`
	Lenient bool   `json:"lenient,omitempty"`
	Refuse  bool   `json:"refuse,omitempty"`
	Lax     bool   `json:"lax,omitempty"`
}

// Database is a schema namespace, with the stored objects that live in it.
type Database struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Collation  string   `json:"collation,omitempty"`
	Views      []Object `json:"views,omitempty"`
	Triggers   []Object `json:"triggers,omitempty"`
	Procedures []Object `json:"procedures,omitempty"`
	Functions  []Object `json:"functions,omitempty"`
}

// Object is a view, trigger, stored procedure or stored function: the
// SQL layer parses and runs it, the catalog keeps its text. Names are unique per kind and
// database, compared case-insensitively.
type Object struct {
	Name string `json:"name"`
	// Create is the CREATE statement; Body a view's SELECT.
	Create   string    `json:"create"`
	Body     string    `json:"body,omitempty"`
	SQLMode  string    `json:"sql_mode,omitempty"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
}

// Clone returns a copy of db that can be changed without changing db.
func (db *Database) Clone() *Database {
	c := *db
	c.Views = slices.Clone(db.Views)
	c.Triggers = slices.Clone(db.Triggers)
	c.Procedures = slices.Clone(db.Procedures)
	c.Functions = slices.Clone(db.Functions)
	return &c
}

// ColumnByName finds a column case-insensitively.
func (t *Table) ColumnByName(name string) (*Column, int) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], i
		}
	}
	return nil, -1
}

// ColumnByID finds a column by ID.
func (t *Table) ColumnByID(id int64) (*Column, int) {
	for i := range t.Columns {
		if t.Columns[i].ID == id {
			return &t.Columns[i], i
		}
	}
	return nil, -1
}

// IndexByName finds an index case-insensitively, in any state.
func (t *Table) IndexByName(name string) *Index {
	for _, ix := range t.Indexes {
		if strings.EqualFold(ix.Name, name) {
			return ix
		}
	}
	return nil
}

// Clone returns a deep copy that can be modified freely.
func (t *Table) Clone() *Table {
	c := *t
	c.Columns = append([]Column(nil), t.Columns...)
	c.PKColumns = append([]int64(nil), t.PKColumns...)
	c.Changing = slices.Clone(t.Changing)
	c.Checks = slices.Clone(t.Checks)
	c.ForeignKeys = make([]ForeignKey, len(t.ForeignKeys))
	for i, fk := range t.ForeignKeys {
		fk.Columns = slices.Clone(fk.Columns)
		fk.ParentColumns = slices.Clone(fk.ParentColumns)
		c.ForeignKeys[i] = fk
	}
	c.Indexes = make([]*Index, len(t.Indexes))
	for i, ix := range t.Indexes {
		cp := *ix
		cp.Columns = append([]IndexColumn(nil), ix.Columns...)
		c.Indexes[i] = &cp
	}
	return &c
}

// Schema is one immutable version of the whole catalog.
type Schema struct {
	Version int64
	dbs     map[string]*Database // by lower-case name
	tables  map[int64]*Table
	byName  map[int64]map[string]*Table // db ID -> lower-case name -> table

	// children indexes the foreign keys by parent, built on first use
	// (a published Schema never changes).
	childrenOnce sync.Once
	children     map[parentKey][]*Table
}

type parentKey struct{ db, table string }

// ChildTables returns the tables with a foreign key whose parent is table
// name of database db (names compared case-insensitively), in ID order.
func (s *Schema) ChildTables(db, name string) []*Table {
	s.childrenOnce.Do(func() {
		s.children = map[parentKey][]*Table{}
		ids := make([]int64, 0, len(s.tables))
		for id, t := range s.tables {
			if len(t.ForeignKeys) > 0 {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			t := s.tables[id]
			seen := map[parentKey]bool{}
			for _, fk := range t.ForeignKeys {
				k := parentKey{strings.ToLower(fk.ParentDB), strings.ToLower(fk.ParentTable)}
				if !seen[k] {
					seen[k] = true
					s.children[k] = append(s.children[k], t)
				}
			}
		}
	})
	return s.children[parentKey{strings.ToLower(db), strings.ToLower(name)}]
}

func newSchema() *Schema {
	return &Schema{dbs: map[string]*Database{}, tables: map[int64]*Table{}, byName: map[int64]map[string]*Table{}}
}

// Database returns a database by name (case-insensitive).
func (s *Schema) Database(name string) (*Database, bool) {
	db, ok := s.dbs[strings.ToLower(name)]
	return db, ok
}

// Databases returns all databases sorted by name.
func (s *Schema) Databases() []*Database {
	out := make([]*Database, 0, len(s.dbs))
	for _, db := range s.dbs {
		out = append(out, db)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DatabaseByID returns a database by ID.
func (s *Schema) DatabaseByID(id int64) (*Database, bool) {
	for _, db := range s.dbs {
		if db.ID == id {
			return db, true
		}
	}
	return nil, false
}

// Table returns a table of a database by name (case-insensitive).
func (s *Schema) Table(dbID int64, name string) (*Table, bool) {
	t, ok := s.byName[dbID][strings.ToLower(name)]
	return t, ok
}

// TableByID returns a table by ID.
func (s *Schema) TableByID(id int64) (*Table, bool) {
	t, ok := s.tables[id]
	return t, ok
}

// Tables returns the tables of a database sorted by name.
func (s *Schema) Tables(dbID int64) []*Table {
	out := make([]*Table, 0, len(s.byName[dbID]))
	for _, t := range s.byName[dbID] {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Schema) clone() *Schema {
	c := newSchema()
	c.Version = s.Version
	for k, v := range s.dbs {
		c.dbs[k] = v
	}
	for k, v := range s.tables {
		c.tables[k] = v
	}
	for dbID, m := range s.byName {
		cm := make(map[string]*Table, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c.byName[dbID] = cm
	}
	return c
}

// forgetChildren drops the foreign-key index of a schema a Change is
// still building.
func (s *Schema) forgetChildren() {
	s.childrenOnce = sync.Once{}
	s.children = nil
}

func (s *Schema) putTable(t *Table) {
	s.forgetChildren()
	if old, ok := s.tables[t.ID]; ok {
		delete(s.byName[old.DBID], strings.ToLower(old.Name))
	}
	s.tables[t.ID] = t
	m := s.byName[t.DBID]
	if m == nil {
		m = map[string]*Table{}
		s.byName[t.DBID] = m
	}
	m[strings.ToLower(t.Name)] = t
}

func (s *Schema) removeTable(id int64) {
	s.forgetChildren()
	if old, ok := s.tables[id]; ok {
		delete(s.byName[old.DBID], strings.ToLower(old.Name))
		delete(s.tables, id)
	}
}

// Errors returned by catalog changes; the SQL layer maps them to MySQL codes.
var (
	ErrDatabaseExists   = errors.New("database exists")
	ErrDatabaseNotFound = errors.New("database not found")
	ErrTableExists      = errors.New("table exists")
	ErrTableNotFound    = errors.New("table not found")
)

// Metadata key space. Catalog keys live under "m" and data under "t" (see
// package codec), so the two never interleave.
var (
	keyVersion  = []byte("m/version")
	keyNextID   = []byte("m/next_id")
	prefixDB    = []byte("m/db/")
	prefixTable = []byte("m/tbl/")
	prefixAutoI = []byte("m/autoid/")
)

func idKey(prefix []byte, id int64) []byte {
	k := append([]byte(nil), prefix...)
	return binary.BigEndian.AppendUint64(k, uint64(id))
}

// Catalog is the persistent, versioned schema.
type Catalog struct {
	store  *kv.Store
	mu     sync.Mutex // serializes changes
	cur    atomic.Pointer[Schema]
	autoMu sync.Mutex
	autoID map[autoKey]*allocator
	tempID atomic.Int64 // the last temporary table ID handed out (temp.go)

	// OnChange, when set, is called after each new schema version is published.
	OnChange func(*Schema)
}

// Open loads the catalog from kv.
func Open(store *kv.Store) (*Catalog, error) {
	c := &Catalog{store: store, autoID: map[autoKey]*allocator{}}
	c.tempID.Store(TempIDBase)
	txn := store.Begin()
	defer txn.Rollback()
	s := newSchema()
	if v, ok, err := txn.Get(keyVersion); err != nil {
		return nil, err
	} else if ok {
		s.Version = int64(binary.BigEndian.Uint64(v))
	}
	if err := scanJSON(txn, prefixDB, func(b []byte) error {
		var db Database
		if err := json.Unmarshal(b, &db); err != nil {
			return err
		}
		s.dbs[strings.ToLower(db.Name)] = &db
		return nil
	}); err != nil {
		return nil, fmt.Errorf("catalog: load databases: %w", err)
	}
	if err := scanJSON(txn, prefixTable, func(b []byte) error {
		var t Table
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		s.putTable(&t)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("catalog: load tables: %w", err)
	}
	c.cur.Store(s)
	return c, nil
}

func scanJSON(txn *kv.Txn, prefix []byte, fn func([]byte) error) error {
	upper := append(append([]byte(nil), prefix[:len(prefix)-1]...), prefix[len(prefix)-1]+1)
	it := txn.NewIter(prefix, upper, false)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		if err := fn(it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}

// Current returns the newest schema version.
func (c *Catalog) Current() *Schema { return c.cur.Load() }

// Change is a set of modifications applied atomically as one schema version.
type Change struct {
	s       *Schema
	nextID  int64
	dirtyDB map[string]*Database
	dropDB  []int64
	dirty   map[int64]*Table
	dropped []int64
}

// Schema is the schema being built; read it to validate the change.
func (ch *Change) Schema() *Schema { return ch.s }

// NewID allocates a globally unique object ID.
func (ch *Change) NewID() int64 {
	ch.nextID++
	return ch.nextID
}

// CreateDatabase adds a database.
func (ch *Change) CreateDatabase(name, collation string) (*Database, error) {
	if _, ok := ch.s.Database(name); ok {
		return nil, ErrDatabaseExists
	}
	db := &Database{ID: ch.NewID(), Name: name, Collation: collation}
	ch.s.dbs[strings.ToLower(name)] = db
	ch.dirtyDB[strings.ToLower(name)] = db
	return db, nil
}

// PutDatabase replaces the definition of an existing database (same ID
// and name) with db, which must not be shared with an earlier version.
func (ch *Change) PutDatabase(db *Database) {
	ch.s.dbs[strings.ToLower(db.Name)] = db
	ch.dirtyDB[strings.ToLower(db.Name)] = db
}

// DropDatabase removes a database and its tables; it returns the dropped tables.
func (ch *Change) DropDatabase(name string) ([]*Table, error) {
	db, ok := ch.s.Database(name)
	if !ok {
		return nil, ErrDatabaseNotFound
	}
	tables := ch.s.Tables(db.ID)
	for _, t := range tables {
		ch.DropTable(t.ID)
	}
	delete(ch.s.dbs, strings.ToLower(name))
	delete(ch.dirtyDB, strings.ToLower(name))
	ch.dropDB = append(ch.dropDB, db.ID)
	return tables, nil
}

// PutTable adds or replaces a table definition.
func (ch *Change) PutTable(t *Table) {
	ch.s.putTable(t)
	ch.dirty[t.ID] = t
}

// DropTable removes a table definition.
func (ch *Change) DropTable(id int64) {
	ch.s.removeTable(id)
	delete(ch.dirty, id)
	ch.dropped = append(ch.dropped, id)
}

// Update runs fn against a copy of the newest schema and, if fn succeeds,
// persists and publishes the result as the next schema version. Extra kv
// writes that must commit atomically with the change go through txn.
func (c *Catalog) Update(fn func(ch *Change, txn *kv.Txn) error) (*Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		s, err := c.tryUpdate(fn)
		if errors.Is(err, kv.ErrWriteConflict) && attempt < 10 {
			continue
		}
		return s, err
	}
}

func (c *Catalog) tryUpdate(fn func(ch *Change, txn *kv.Txn) error) (*Schema, error) {
	txn := c.store.Begin()
	defer txn.Rollback()
	ch := &Change{s: c.cur.Load().clone(), dirtyDB: map[string]*Database{}, dirty: map[int64]*Table{}}
	if v, ok, err := txn.Get(keyNextID); err != nil {
		return nil, err
	} else if ok {
		ch.nextID = int64(binary.BigEndian.Uint64(v))
	}
	startID := ch.nextID
	if err := fn(ch, txn); err != nil {
		return nil, err
	}
	ch.s.Version++
	if ch.nextID != startID {
		if err := txn.Set(keyNextID, binary.BigEndian.AppendUint64(nil, uint64(ch.nextID))); err != nil {
			return nil, err
		}
	}
	if err := txn.Set(keyVersion, binary.BigEndian.AppendUint64(nil, uint64(ch.s.Version))); err != nil {
		return nil, err
	}
	for _, db := range ch.dirtyDB {
		b, _ := json.Marshal(db)
		if err := txn.Set(idKey(prefixDB, db.ID), b); err != nil {
			return nil, err
		}
	}
	for _, id := range ch.dropDB {
		if err := txn.Delete(idKey(prefixDB, id)); err != nil {
			return nil, err
		}
	}
	for _, t := range ch.dirty {
		b, _ := json.Marshal(t)
		if err := txn.Set(idKey(prefixTable, t.ID), b); err != nil {
			return nil, err
		}
	}
	for _, id := range ch.dropped {
		if err := txn.Delete(idKey(prefixTable, id)); err != nil {
			return nil, err
		}
		for _, kind := range []AutoIDKind{AutoIncrement, RowHandle} {
			if err := txn.Delete(autoIDKey(id, kind)); err != nil {
				return nil, err
			}
		}
	}
	if _, err := txn.Commit(); err != nil {
		return nil, err
	}
	c.cur.Store(ch.s)
	if len(ch.dropped) > 0 {
		c.autoMu.Lock()
		for _, id := range ch.dropped {
			delete(c.autoID, autoKey{id, AutoIncrement})
			delete(c.autoID, autoKey{id, RowHandle})
		}
		c.autoMu.Unlock()
	}
	if c.OnChange != nil {
		c.OnChange(ch.s)
	}
	return ch.s, nil
}
