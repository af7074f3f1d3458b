package sql

import (
	"errors"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// indexer gives package ddl the SQL knowledge it lacks: validating index
// definitions against column types, and computing a stored row's index
// entries exactly as DML does.
type indexer struct{ e *Engine }

func (x indexer) NewIndex(t *catalog.Table, spec ddl.IndexSpec) (*catalog.Index, error) {
	cols := make([]gms.IndexColumn, len(spec.Columns))
	for i, c := range spec.Columns {
		col, _ := t.ColumnByID(c.ColumnID)
		if col == nil {
			return nil, mysql.NewSQLError(mysql.ERKeyColumnDoesNotExist, mysql.SSUnknownSQLState, "Key column id %d doesn't exist in table", c.ColumnID)
		}
		cols[i] = gms.IndexColumn{Name: col.Name, Length: c.Length}
	}
	ix, err := newIndexDef(t, spec.Name, cols, spec.Unique || spec.Primary)
	if err != nil {
		return nil, err
	}
	ix.Comment = spec.Comment
	ix.Primary = spec.Primary
	ix.Invisible = spec.Invisible
	return ix, nil
}

func (x indexer) Entries(dbName string, t *catalog.Table, ids []int64, h int64, val []byte) ([]ddl.Entry, error) {
	m, err := metaFor(dbName, t)
	if err != nil {
		return nil, err
	}
	want := func(ix *indexMeta) bool {
		for _, id := range ids {
			if ix.def != nil && ix.def.ID == id {
				return true
			}
		}
		return false
	}
	// Decode only the indexed columns, and keep them in the codec's
	// canonical form: entries() accepts canonical values as they are.
	dec, pos := m.indexColumnsDecoder(ids, want)
	vals := make([]any, len(pos))
	if err := dec.Decode(val, vals); err != nil {
		return nil, err
	}
	row := make(gms.Row, len(m.schema))
	for i, p := range pos {
		row[p] = vals[i]
	}
	ed := &editor{t: &Table{m: m}}
	ents, err := ed.entries(row, h, want, nil)
	if err != nil {
		return nil, backfillError(err)
	}
	return ddlEntries(ents), nil
}

// ddlEntries is ents as package ddl writes them.
func ddlEntries(ents []indexEntry) []ddl.Entry {
	out := make([]ddl.Entry, len(ents))
	for i, e := range ents {
		shown := make([]string, len(e.ix.pos))
		for k, p := range e.ix.pos {
			shown[k] = displayValue(e.row[p])
		}
		out[i] = ddl.Entry{IndexID: e.ix.def.ID, Key: e.key, Value: e.value, Unique: e.unique, Display: joinDash(shown)}
	}
	return out
}

// NewEncoder returns an encoder of the given indexes' entries that decodes
// only their columns and reuses its buffers from row to row.
func (x indexer) NewEncoder(dbName string, t *catalog.Table, ids []int64) (ddl.EntryEncoder, error) {
	m, err := metaFor(dbName, t)
	if err != nil {
		return nil, err
	}
	want := func(ix *indexMeta) bool { return ix.def != nil && slices.Contains(ids, ix.def.ID) }
	dec, pos := m.indexColumnsDecoder(ids, want)
	enc := &entryEncoder{m: m, dec: dec, pos: pos, raw: make([]codec.Raw, len(pos)), row: make(gms.Row, len(m.schema))}
	for _, ix := range m.indexes {
		if !ix.isHandleIndex() && want(ix) {
			enc.ixs = append(enc.ixs, ix)
			enc.ord = append(enc.ord, slices.Index(ids, ix.def.ID))
		}
	}
	return enc, nil
}

type entryEncoder struct {
	m        *tableMeta
	dec      *codec.RowDecoder
	pos      []int
	raw      []codec.Raw
	row      gms.Row
	ixs      []*indexMeta
	ord      []int // position of ixs[i] in the job's index IDs
	kvals    []any
	sk       []byte // sort keys of the current entry's strings
	key, val []byte
}

// Encode emits the entries of the row h, value. Its strings are
// borrowed from value while the keys are built, so a scan allocates
// nothing per row for them: emit copies the entries it keeps, and an
// error formats the values it quotes when it is made.
func (e *entryEncoder) Encode(h int64, value []byte, emit func(ix int, key, value []byte) error) error {
	if err := e.dec.DecodeRaw(value, e.raw); err != nil {
		return err
	}
	for i, p := range e.pos {
		e.row[p] = e.raw[i].Borrowed()
	}
	for i, ix := range e.ixs {
		var err error
		e.sk = e.sk[:0]
		e.key, e.val, _, e.kvals, err = e.m.appendEntry(ix, e.row, h, e.key[:0], e.val[:0], e.kvals, &e.sk)
		if err != nil {
			return backfillError(err)
		}
		if err := emit(e.ord[i], e.key, e.val); err != nil {
			return err
		}
	}
	return nil
}

// backfillError is a row's error as the job that builds an index reports
// it: a NULL in a primary key being added fails ADD PRIMARY KEY with
// MySQL's 1138, where an INSERT of that NULL gets 1048.
func backfillError(err error) error {
	var se *mysql.SQLError
	if errors.As(err, &se) && se.Num == mysql.ERBadNullError {
		return mysql.NewSQLError(mysql.ERInvalidUseOfNull, sqlState(mysql.ERInvalidUseOfNull), "Invalid use of NULL value")
	}
	return err
}

// CreateIndex implements sql.IndexAlterableTable: an online ADD INDEX job
// (see package ddl). go-mysql-server calls it once per ADD INDEX clause of
// an ALTER; the first call submits one job for all the statement's
// indexes, so that they are built from one scan and become public
// together, and the later calls find their index done.
func (t *Table) CreateIndex(ctx *gms.Context, def gms.IndexDef) error {
	if def.IsFullText() || def.IsSpatial() || def.IsVector() {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of ReorgDB doesn't yet support 'FULLTEXT, SPATIAL and VECTOR indexes'")
	}
	if def.IsPrimary() {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of ReorgDB doesn't yet support 'adding a primary key to an existing table'")
	}
	if t.IsTemporary() {
		return t.createTempIndex(ctx, def)
	}
	e := t.db.e
	sess, _ := ctx.Session.(*Session)
	if sess != nil && sess.stmtDone(ctx, t.m.def.ID, def.Name) {
		return nil
	}
	if sess != nil && sess.createdInStatement(ctx, t.m.def.ID) {
		// The table was created by this very statement (CREATE TABLE with
		// inline indexes): nobody else can see it, so the index is public
		// at once.
		return e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
			cur, ok := ch.Schema().TableByID(t.m.def.ID)
			if !ok {
				return gms.ErrTableNotFound.New(t.Name())
			}
			nt, _, err := withPublicIndex(ctx, cur, def)
			if err != nil {
				return err
			}
			ch.PutTable(nt)
			return nil
		})
	}

	defs := []gms.IndexDef{def}
	if more := alterIndexClauses(ctx.Query(), t.Name()); len(more) > 1 {
		defs = more
	}
	specs := make([]ddl.IndexSpec, 0, len(defs))
	invisible := queryInvisible(ctx.Query())
	for _, d := range defs {
		if d.IsFullText() || d.IsSpatial() || d.IsVector() || d.IsPrimary() {
			continue
		}
		spec := ddl.IndexSpec{Name: d.Name, Unique: d.IsUnique(), Comment: d.Comment}
		for _, c := range d.Columns {
			col, _ := t.m.def.ColumnByName(c.Name)
			if col == nil {
				return mysql.NewSQLError(mysql.ERKeyColumnDoesNotExist, mysql.SSUnknownSQLState, "Key column '%s' doesn't exist in table", c.Name)
			}
			spec.Columns = append(spec.Columns, catalog.IndexColumn{ColumnID: col.ID, Length: c.Length})
		}
		if spec.Name == "" {
			spec.Name = generatedIndexName(t.m.def, d.Columns)
		}
		spec.Invisible = invisible[strings.ToLower(spec.Name)]
		specs = append(specs, spec)
	}
	if err := t.addIndexJob(ctx, specs); err != nil {
		return err
	}
	if sess != nil && len(specs) > 1 {
		sess.markDone(ctx, t.m.def.ID, specs)
	}
	return nil
}

// addIndexJob runs an ADD INDEX job for specs and waits for its end.
func (t *Table) addIndexJob(ctx *gms.Context, specs []ddl.IndexSpec) error {
	e := t.db.e
	sess, _ := ctx.Session.(*Session)
	// Validate now, against the current definition, so that a bad
	// statement fails at once and never becomes a job.
	scratch := t.m.def.Clone()
	for _, spec := range specs {
		ix, err := (indexer{e}).NewIndex(scratch, spec)
		if err != nil {
			return jobError(err)
		}
		scratch.Indexes = append(scratch.Indexes, ix)
	}
	// The issuing transaction must not hold the job's metadata lock.
	err := e.outsideMDL(ctx, func() error {
		if sess != nil {
			sess.endAlter = append(sess.endAlter, e.beginAlter(t.m.def.ID))
		}
		id, err := e.DDL.SubmitAddIndex(t.db.def.Name, t.Name(), t.m.def.ID, ctx.Query(), specs)
		if err != nil {
			return err
		}
		return e.DDL.Wait(ctx, id)
	})
	return jobError(err)
}

// alterIndexClauses returns the ADD INDEX clauses of an ALTER TABLE
// statement on table, or nil when the statement is anything else.
func alterIndexClauses(query, table string) []gms.IndexDef {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return nil
	}
	var ddls []*sqlparser.DDL
	switch s := stmt.(type) {
	case *sqlparser.AlterTable:
		ddls = append(ddls, s.Statements...)
	default:
		return nil
	}
	var out []gms.IndexDef
	for _, d := range ddls {
		if d.IndexSpec == nil || d.IndexSpec.Action != sqlparser.CreateStr || !strings.EqualFold(d.Table.Name.String(), table) {
			continue
		}
		is := d.IndexSpec
		def := gms.IndexDef{Name: is.ToName.String()}
		switch is.Type {
		case sqlparser.UniqueStr:
			def.Constraint = gms.IndexConstraint_Unique
		case sqlparser.FulltextStr:
			def.Constraint = gms.IndexConstraint_Fulltext
		case sqlparser.SpatialStr:
			def.Constraint = gms.IndexConstraint_Spatial
		case sqlparser.PrimaryStr:
			def.Constraint = gms.IndexConstraint_Primary
		}
		for _, c := range is.Columns {
			ic := gms.IndexColumn{Name: c.Column.String()}
			if c.Length != nil {
				n := int64(0)
				for _, ch := range string(c.Length.Val) {
					n = n*10 + int64(ch-'0')
				}
				ic.Length = n
			}
			def.Columns = append(def.Columns, ic)
		}
		out = append(out, def)
	}
	return out
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

// DropIndex implements sql.IndexAlterableTable: a DROP INDEX job takes the
// index public -> write-only -> delete-only -> absent and removes its
// entries (ddl.JobDropIndex), and the statement waits for it.
func (t *Table) DropIndex(ctx *gms.Context, name string) error {
	if t.IsTemporary() {
		return t.dropTempIndex(ctx, name)
	}
	e := t.db.e
	def, ok := e.cat.Current().TableByID(t.m.def.ID)
	if !ok {
		return gms.ErrTableNotFound.New(t.Name())
	}
	var ix *catalog.Index
	for _, x := range def.Indexes {
		if strings.EqualFold(x.Name, name) && !x.Primary && x.State == catalog.StatePublic {
			ix = x
		}
	}
	if ix == nil {
		return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, mysql.SSUnknownSQLState,
			"Can't DROP '%s'; check that column/key exists", name)
	}
	return e.outsideMDL(ctx, func() error {
		id, err := e.DDL.SubmitDropIndex(t.db.def.Name, t.Name(), def.ID, ix, ctx.Query())
		if err != nil {
			return err
		}
		return jobError(e.DDL.Wait(ctx, id))
	})
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *gms.Context, from, to string) error {
	if t.IsTemporary() {
		return t.renameTempIndex(ctx, from, to)
	}
	e := t.db.e
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	return e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		cur, ok := ch.Schema().TableByID(t.m.def.ID)
		if !ok {
			return gms.ErrTableNotFound.New(t.Name())
		}
		nt, err := withIndexRenamed(cur, from, to)
		if err != nil {
			return err
		}
		ch.PutTable(nt)
		return nil
	})
}

// withPublicIndex is a copy of table t with index def added, public at
// once: for a table nobody else can see yet (created by the statement, or
// temporary).
func withPublicIndex(ctx *gms.Context, t *catalog.Table, def gms.IndexDef) (*catalog.Table, *catalog.Index, error) {
	nt := t.Clone()
	name := def.Name
	if name == "" {
		name = generatedIndexName(nt, def.Columns)
	}
	ix, err := newIndexDef(nt, name, def.Columns, def.IsUnique())
	if err != nil {
		return nil, nil, err
	}
	ix.Comment = def.Comment
	ix.Invisible = queryInvisible(ctx.Query())[strings.ToLower(ix.Name)]
	ix.State = catalog.StatePublic
	nt.Indexes = append(nt.Indexes, ix)
	return nt, ix, nil
}
