package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

// Provider is go-mysql-server's view of all ReorgDB databases.
type Provider struct{ e *Engine }

var _ gms.MutableDatabaseProvider = (*Provider)(nil)
var _ gms.CollatedDatabaseProvider = (*Provider)(nil)

func (p *Provider) Database(ctx *gms.Context, name string) (gms.Database, error) {
	if ctx != nil {
		if s, ok := ctx.Session.(*Session); ok {
			s.returnViewDB()
		}
	}
	db, ok := p.e.schemaFor(ctx).Database(name)
	if !ok {
		return nil, gms.ErrDatabaseNotFound.New(name)
	}
	return &Database{e: p.e, def: db}, nil
}

func (p *Provider) HasDatabase(ctx *gms.Context, name string) bool {
	_, ok := p.e.schemaFor(ctx).Database(name)
	return ok
}

// AllDatabases implements sql.DatabaseProvider. go-mysql-server lists
// information_schema's tables, columns and indexes through it, which show
// no temporary table, as in MySQL 8, not even instead of a table it
// shadows.
func (p *Provider) AllDatabases(ctx *gms.Context) []gms.Database {
	dbs := p.e.schemaFor(ctx).Databases()
	out := make([]gms.Database, len(dbs))
	for i, db := range dbs {
		out[i] = &Database{e: p.e, def: db, noTemps: true}
	}
	return out
}

func (p *Provider) CreateDatabase(ctx *gms.Context, name string) error {
	return p.CreateCollatedDatabase(ctx, name, serverCollation(ctx))
}

// defaultCollation is MySQL 8's default: collation_server's and
// collation_database's, and so that of a database or table created without
// a character set or collation.
const defaultCollation = gms.Collation_utf8mb4_0900_ai_ci

// serverCollation is the session's collation_server.
func serverCollation(ctx *gms.Context) gms.CollationID {
	if ctx != nil && ctx.Session != nil {
		if v, err := ctx.GetSessionVariable(ctx, "collation_server"); err == nil {
			if name, ok := v.(string); ok {
				if id, err := gms.ParseCollation("", name, false); err == nil && id != gms.Collation_Unspecified {
					return id
				}
			}
		}
	}
	return defaultCollation
}

// statedCollation reports whether a CREATE DATABASE statement names a
// character set or collation. go-mysql-server passes its own default
// (utf8mb4_0900_bin) when it does not, and that must become
// collation_server instead.
func statedCollation(query string) bool {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return true // not a statement we can read: keep what we were given
	}
	d, ok := stmt.(*sqlparser.DBDDL)
	return !ok || len(d.CharsetCollate) > 0
}

func (p *Provider) CreateCollatedDatabase(ctx *gms.Context, name string, collation gms.CollationID) error {
	if collation == gms.Collation_Default && ctx != nil && !statedCollation(ctx.Query()) {
		collation = serverCollation(ctx)
	}
	return p.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		_, err := ch.CreateDatabase(name, collation.Name())
		if errors.Is(err, catalog.ErrDatabaseExists) {
			return gms.ErrDatabaseExists.New(name)
		}
		return err
	})
}

func (p *Provider) DropDatabase(ctx *gms.Context, name string) error {
	cur := p.e.cat.Current()
	if err := refusedByOtherDatabase(ctx, cur, name); err != nil {
		return err
	}
	if db, ok := cur.Database(name); ok {
		var ids []int64
		for _, t := range cur.Tables(db.ID) {
			ids = append(ids, t.ID)
		}
		if err := p.e.endJobs(ctx, ids...); err != nil {
			return err
		}
	}
	var dropped []*catalog.Table
	err := p.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		var err error
		dropped, err = ch.DropDatabase(name)
		if errors.Is(err, catalog.ErrDatabaseNotFound) {
			return gms.ErrDatabaseNotFound.New(name)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, t := range dropped {
		p.e.deleteTableData(t.ID)
	}
	return nil
}

// Database is one database as seen by one statement.
type Database struct {
	e       *Engine
	def     *catalog.Database
	noTemps bool // the session's temporary tables are not seen through it
}

var (
	_ gms.Database         = (*Database)(nil)
	_ gms.TableCreator     = (*Database)(nil)
	_ gms.TableDropper     = (*Database)(nil)
	_ gms.TableRenamer     = (*Database)(nil)
	_ gms.CollatedDatabase = (*Database)(nil)
)

func (d *Database) Name() string { return d.def.Name }

// GetTableInsensitive implements sql.Database: the session's temporary
// table of that name if it has one, else the table.
func (d *Database) GetTableInsensitive(ctx *gms.Context, name string) (gms.Table, bool, error) {
	t, ok := d.e.schemaFor(ctx).Table(d.def.ID, name)
	if tmp, isTemp := tempFor(ctx, d.def.ID, name); isTemp && !d.noTemps && !(ok && createdNow(ctx, t.ID)) {
		t, ok = tmp, true
	}
	if !ok {
		return nil, false, nil
	}
	m, err := metaFor(d.def.Name, t)
	if err != nil {
		return nil, false, err
	}
	hint := indexHintFor(ctx, d.def.Name, t.Name)
	if err := checkHint(hint, m); err != nil {
		return nil, false, err
	}
	return &Table{db: d, m: m, hint: hint}, true, nil
}

func (d *Database) GetTableNames(ctx *gms.Context) ([]string, error) {
	ts := d.e.schemaFor(ctx).Tables(d.def.ID)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out, nil
}

func (d *Database) GetCollation(*gms.Context) gms.CollationID {
	if id, err := gms.ParseCollation("", d.def.Collation, false); err == nil && d.def.Collation != "" {
		return id
	}
	return defaultCollation
}

func (d *Database) SetCollation(ctx *gms.Context, collation gms.CollationID) error {
	return d.updateDef(ctx, func(db *catalog.Database) error {
		db.Collation = collation.Name()
		return nil
	})
}

// CreateTable implements sql.TableCreator.
func (d *Database) CreateTable(ctx *gms.Context, name string, sch gms.PrimaryKeySchema, collation gms.CollationID, comment string) error {
	return d.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		if _, ok := ch.Schema().Table(d.def.ID, name); ok {
			return gms.ErrTableAlreadyExists.New(name)
		}
		t, err := d.newTableDef(ctx, ch.NewID(), name, sch, collation, comment)
		if err != nil {
			return err
		}
		if sess, ok := ctx.Session.(*Session); ok {
			sess.markCreated(ctx, t.ID)
		}
		ch.PutTable(t)
		return nil
	})
}

// newTableDef is the definition of a new table in d, checked so that it
// can be served and that the indexes and constraints go-mysql-server adds
// after creating it will succeed, so that CREATE TABLE is all or nothing.
func (d *Database) newTableDef(ctx *gms.Context, id int64, name string, sch gms.PrimaryKeySchema, collation gms.CollationID, comment string) (*catalog.Table, error) {
	comment, err := checkTableComment(ctx, name, comment)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{ID: id, DBID: d.def.ID, Name: name, Comment: comment, NextIndexID: 1}
	if collation != gms.Collation_Unspecified {
		t.Collation = collation.Name()
	}
	addColumns(ctx, t, sch.Schema)
	for _, o := range sch.PkOrdinals {
		t.PKColumns = append(t.PKColumns, t.Columns[o].ID)
	}
	if len(sch.PkOrdinals) > 0 && queryInvisible(ctx.Query())["primary"] {
		return nil, errInvisiblePK()
	}
	if len(sch.PkOrdinals) == 1 && isHandleType(sch.Schema[sch.PkOrdinals[0]].Type) {
		t.HandleColumn = t.Columns[sch.PkOrdinals[0]].ID
	} else if len(sch.PkOrdinals) > 0 {
		// Any other primary key is a unique index over a hidden handle.
		cols := make([]gms.IndexColumn, len(sch.PkOrdinals))
		for i, o := range sch.PkOrdinals {
			cols[i] = gms.IndexColumn{Name: sch.Schema[o].Name}
		}
		ix, err := newIndexDef(t, "PRIMARY", cols, true)
		if err != nil {
			return nil, err
		}
		ix.Primary = true
		ix.State = catalog.StatePublic
		t.Indexes = append(t.Indexes, ix)
	}
	if _, err := buildMeta(d.def.Name, t); err != nil {
		return nil, err
	}
	if err := d.precheckCreateTable(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// addColumns gives table t the columns of sch, with new column IDs.
func addColumns(ctx *gms.Context, t *catalog.Table, sch gms.Schema) {
	for _, col := range sch {
		t.NextColumnID++
		c := catalog.Column{
			ID:            t.NextColumnID,
			Name:          col.Name,
			Type:          col.Type.String(),
			Nullable:      col.Nullable,
			AutoIncrement: col.AutoIncrement,
			Comment:       col.Comment,
		}
		if col.Default != nil {
			c.HasDefault, c.Default = true, defaultText(ctx, col)
		}
		if col.Generated != nil {
			c.Generated, c.Virtual = col.Generated.String(), col.Virtual
		}
		if col.OnUpdate != nil {
			c.OnUpdate = col.OnUpdate.String()
		}
		t.Columns = append(t.Columns, c)
	}
}

// isHandleType reports whether a PK column can be the int64 row handle.
func isHandleType(t gms.Type) bool {
	switch kindOf(t) {
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint32:
		return true
	}
	return false
}

// maxKeyBytes is InnoDB's limit on an index key (3072 bytes), counted
// as utf8mb4 characters * 4 the way MySQL does.
const maxKeyBytes = 3072

// newIndexDef validates an index definition against a table.
func newIndexDef(t *catalog.Table, name string, cols []gms.IndexColumn, unique bool) (*catalog.Index, error) {
	if t.IndexByName(name) != nil || (strings.EqualFold(name, "PRIMARY") && len(t.PKColumns) > 0 && t.HandleColumn != 0) {
		return nil, mysql.NewSQLError(mysql.ERDupKeyName, mysql.SSUnknownSQLState, "Duplicate key name '%s'", name)
	}
	ix := &catalog.Index{ID: t.NextIndexID, Name: name, Unique: unique}
	t.NextIndexID++
	keyLen := int64(0)
	seen := map[int64]bool{}
	for _, ic := range cols {
		c, _ := t.ColumnByName(ic.Name)
		if c == nil {
			return nil, mysql.NewSQLError(mysql.ERKeyColumnDoesNotExist, mysql.SSUnknownSQLState, "Key column '%s' doesn't exist in table", ic.Name)
		}
		if seen[c.ID] {
			return nil, mysql.NewSQLError(mysql.ERDupFieldName, mysql.SSUnknownSQLState, "Duplicate column name '%s'", c.Name)
		}
		seen[c.ID] = true
		typ, err := parseType(c.Type)
		if err != nil {
			return nil, err
		}
		if ok, coll := collationIndexable(typ); !ok {
			return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of ReorgDB doesn't yet support 'index on column %s with collation %s'; indexable collations: binary, *_bin, utf8mb4_0900_ai_ci, utf8mb4_general_ci, utf8mb4_unicode_ci, utf8mb4_unicode_520_ci, latin1_swedish_ci (docs/collations.md)", c.Name, coll)
		}
		width, isText := typeKeyWidth(typ)
		if ic.Length > 0 {
			if !isText {
				return nil, mysql.NewSQLError(mysql.ERWrongSubKey, mysql.SSUnknownSQLState,
					"Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")
			}
			if types.IsTextBlob(typ) {
				width = ic.Length * bytesPerChar(typ)
			} else if st, ok := typ.(gms.StringType); ok && ic.Length > st.Length() {
				return nil, mysql.NewSQLError(mysql.ERWrongSubKey, mysql.SSUnknownSQLState,
					"Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")
			} else {
				width = ic.Length * bytesPerChar(typ)
			}
		} else if types.IsTextBlob(typ) {
			return nil, mysql.NewSQLError(mysql.ERBlobKeyWithoutLength, mysql.SSUnknownSQLState,
				"BLOB/TEXT column '%s' used in key specification without a key length", c.Name)
		} else if kindOf(typ) == kindJSON || kindOf(typ) == kindOther {
			return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of ReorgDB doesn't yet support 'index on column %s of type %s'", c.Name, typ.String())
		}
		keyLen += width
		ix.Columns = append(ix.Columns, catalog.IndexColumn{ColumnID: c.ID, Length: ic.Length})
	}
	if keyLen > maxKeyBytes {
		return nil, mysql.NewSQLError(mysql.ERTooLongKey, mysql.SSUnknownSQLState, "Specified key was too long; max key length is %d bytes", maxKeyBytes)
	}
	return ix, nil
}

func bytesPerChar(t gms.Type) int64 {
	if st, ok := t.(gms.StringType); ok {
		if st.Collation() == gms.Collation_binary {
			return 1
		}
		return int64(st.Collation().CharacterSet().MaxLength())
	}
	return 1
}

// typeKeyWidth is the key bytes a whole value takes, as MySQL counts them.
func typeKeyWidth(t gms.Type) (int64, bool) {
	if st, ok := t.(gms.StringType); ok {
		return st.MaxByteLength(), true
	}
	return 8, false
}

// DropTable implements sql.TableDropper. As in MySQL, the session's
// temporary table of that name goes first.
func (d *Database) DropTable(ctx *gms.Context, name string) error {
	if found, err := d.dropTempTable(ctx, name); found {
		return err
	}
	if t, ok := d.e.cat.Current().Table(d.def.ID, name); ok {
		if err := d.e.endJobs(ctx, t.ID); err != nil {
			return err
		}
	}
	var id int64
	err := d.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		t, ok := ch.Schema().Table(d.def.ID, name)
		if !ok {
			return gms.ErrTableNotFound.New(name)
		}
		id = t.ID
		ch.DropTable(t.ID)
		return nil
	})
	if err != nil {
		return err
	}
	d.e.deleteTableData(id)
	return nil
}

// RenameTable implements sql.TableRenamer.
func (d *Database) RenameTable(ctx *gms.Context, oldName, newName string) error {
	if found, err := d.renameTempTable(ctx, oldName, newName); found {
		return err
	}
	if t, ok := d.e.cat.Current().Table(d.def.ID, oldName); ok {
		if err := d.e.waitJobs(ctx, t.ID); err != nil {
			return err
		}
	}
	return d.e.ddl(ctx, func(ch *catalog.Change, _ *kv.Txn) error {
		t, ok := ch.Schema().Table(d.def.ID, oldName)
		if !ok {
			return gms.ErrTableNotFound.New(oldName)
		}
		if _, ok := ch.Schema().Table(d.def.ID, newName); ok {
			return gms.ErrTableAlreadyExists.New(newName)
		}
		children := ch.Schema().ChildTables(d.def.Name, oldName)
		nt := t.Clone()
		nt.Name = newName
		ch.PutTable(nt)
		renameParent(ch, children, d.def.Name, oldName, newName)
		return nil
	})
}

// precheckCreateTable validates the parts of a CREATE TABLE statement that
// go-mysql-server applies after the table exists (inline indexes, foreign
// keys, constraint names), so that a failure leaves no table behind.
func (d *Database) precheckCreateTable(ctx *gms.Context, t *catalog.Table) error {
	stmt, err := sqlparser.Parse(ctx.Query())
	if err != nil {
		return nil // not a plain CREATE TABLE text (e.g. internal); nothing to check
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil {
		return nil
	}
	scratch := t.Clone()
	for i, ix := range ddl.TableSpec.Indexes {
		if ix.Info != nil && (ix.Info.Fulltext || ix.Info.Spatial || ix.Info.Vector) {
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of ReorgDB doesn't yet support 'FULLTEXT, SPATIAL and VECTOR indexes'")
		}
		if ix.Info == nil || ix.Info.Primary {
			continue
		}
		cols := make([]gms.IndexColumn, len(ix.Columns))
		for j, c := range ix.Columns {
			cols[j].Name = c.Column.String()
			if c.Length != nil {
				n, err := strconv.ParseInt(string(c.Length.Val), 10, 64)
				if err != nil {
					return err
				}
				cols[j].Length = n
			}
		}
		name := ix.Info.Name.String()
		if name == "" {
			name = fmt.Sprintf("__precheck_%d", i)
		}
		def, err := newIndexDef(scratch, name, cols, ix.Info.Unique)
		if err != nil {
			return err
		}
		scratch.Indexes = append(scratch.Indexes, def)
	}
	for _, c := range ddl.TableSpec.Columns {
		// Column-level UNIQUE (3), UNIQUE KEY (4) and KEY (5), in vitess's numbering.
		if k := c.Type.KeyOpt; k >= 3 && k <= 5 {
			ix, err := newIndexDef(scratch, "__precheck_col_"+c.Name.String(), []gms.IndexColumn{{Name: c.Name.String()}}, k != 5)
			if err != nil {
				return err
			}
			scratch.Indexes = append(scratch.Indexes, ix)
		}
	}
	return d.precheckForeignKeys(ctx, ddl.TableSpec, scratch)
}
