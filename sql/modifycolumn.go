package sql

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
)

// MODIFY / CHANGE / RENAME / ALTER COLUMN, in place and instant, as
// MySQL 8 does them with ALGORITHM=INSTANT or INPLACE without a rebuild:
// rows are stored by column ID and index keys by the column's value, so a
// change that leaves every stored value and every index key as it is
// touches only the catalog (a ddl.JobModifyColumn job). That covers a
// rename, a new or dropped default, a comment, a new position, NOT NULL
// to NULL, a longer VARCHAR/VARBINARY in the same character set and
// collation, and a wider integer of the same signedness. Other changes
// rewrite the column's values and rebuild the indexes that contain it
// online (modifyreorg.go).

// alterDefault executes ALTER COLUMN ... SET DEFAULT / DROP DEFAULT.
// go-mysql-server's executors set the new default on the column object
// of the table's schema itself before calling ModifyColumn, which would
// change the cached definition every session shares even when the change
// then fails.
func (o *execOverride) alterDefault(ctx *gms.Context, db gms.Database, table gms.Node, column string, def *gms.ColumnDefaultValue) (gms.RowIter, error) {
	nm, ok := table.(gms.Nameable)
	if !ok {
		return nil, fmt.Errorf("reorgdb: ALTER COLUMN on %T", table)
	}
	tbl, ok, err := db.GetTableInsensitive(ctx, nm.Name())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gms.ErrTableNotFound.New(nm.Name())
	}
	t, ok := tbl.(*Table)
	if !ok {
		return nil, gms.ErrAlterTableNotSupported.New(tbl.Name())
	}
	i := t.m.schema.IndexOfColName(column)
	if i < 0 {
		return nil, gms.ErrTableColumnNotFound.New(nm.Name(), column)
	}
	col := t.m.schema[i].Copy()
	col.Default = def
	if err := t.ModifyColumn(ctx, column, col, nil); err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}

func alterDefaultSet(o *execOverride, ctx *gms.Context, n *plan.AlterDefaultSet) (gms.RowIter, error) {
	return o.alterDefault(ctx, n.Database(), n.Table, n.ColumnName, n.Default)
}

func alterDefaultDrop(o *execOverride, ctx *gms.Context, n *plan.AlterDefaultDrop) (gms.RowIter, error) {
	return o.alterDefault(ctx, n.Database(), n.Table, n.ColumnName, nil)
}

// ModifyColumn implements sql.AlterableTable: an instant, metadata-only
// change of column name's definition to col, or error 1235 when the
// change would need the table rebuilt.
func (t *Table) ModifyColumn(ctx *gms.Context, name string, col *gms.Column, order *gms.ColumnOrder) error {
	e := t.db.e
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.m.def.Name)
	}
	old, _ := cur.ColumnByName(name)
	if old == nil {
		return gms.ErrTableColumnNotFound.New(t.m.def.Name, name)
	}
	if ct, ok := col.Type.(gms.TypeWithCollation); ok && ct.Collation() == gms.Collation_Unspecified {
		var err error
		if col.Type, err = ct.WithNewCollation(t.Collation()); err != nil {
			return err
		}
	}
	inPK := old.ID == cur.HandleColumn || slices.Contains(cur.PKColumns, old.ID)
	if inPK && col.Nullable {
		if explicitNull(ctx.Query(), name) {
			return mysql.NewSQLError(mysql.ERPrimaryCantHaveNull, "42000", "All parts of a PRIMARY KEY must be NOT NULL; if you need NULL in a key, use UNIQUE instead")
		}
		// A primary-key column stays NOT NULL, as MySQL makes it when
		// MODIFY / CHANGE does not repeat NOT NULL.
		c := *col
		c.Nullable = false
		col = &c
	}
	if col.PrimaryKey && !inPK {
		return notInstant("ALTER TABLE ... MODIFY COLUMN ... PRIMARY KEY (changing the primary key)")
	}
	addAuto := col.AutoIncrement && !old.AutoIncrement
	if addAuto {
		if err := canBeAutoIncrement(cur, old, col); err != nil {
			return err
		}
		if old.Nullable && !t.IsTemporary() {
			return t.addAutoToNullable(ctx, old, col, order)
		}
	}
	i := t.m.schema.IndexOfColName(name)
	submit, reorg := e.DDL.SubmitModifyColumn, false
	if err := instantChange(cur, old, t.m.schema[i], col); err != nil {
		if err := reorgChange(cur, old, t.m.schema[i], col); err != nil {
			return err
		}
		if instantRequested(ctx) {
			return notInstantAlgorithm("Cannot change column type INPLACE")
		}
		submit, reorg = e.DDL.SubmitModifyColumnReorg, true
	}
	c := catalog.Column{
		Name: col.Name, Type: col.Type.String(), Nullable: col.Nullable, Comment: col.Comment,
		AutoIncrement: col.AutoIncrement, Generated: old.Generated, Virtual: old.Virtual,
	}
	if col.OnUpdate != nil {
		c.OnUpdate = col.OnUpdate.String()
	}
	if col.Default != nil {
		// Only rows written from now on use the default, whatever it is:
		// an expression is evaluated for each of them.
		if _, err := originValue(ctx, col); err != nil {
			return err
		}
		c.HasDefault, c.Default = true, defaultText(ctx, col)
	}
	strict := strictMode(ctx)
	// The rows' handle is the clustered key's value: it converts exactly
	// or not at all, whatever the sql_mode.
	lax := !strict && old.ID != cur.HandleColumn
	spec := ddl.ColumnSpec{Column: c, Of: old.Name, OldID: old.ID, WasType: old.Type, Lax: lax}
	if order != nil {
		spec.First, spec.After = order.First, order.AfterColumn
	}
	scratch := cur.Clone()
	if err := ddl.ModifyColumnIn(scratch, spec); err != nil {
		return jobError(err)
	}
	if _, err := buildMeta(t.m.dbName, scratch); err != nil {
		return err
	}
	if reorg {
		if err := ddl.CheckReplacements(indexer{e}, cur, spec); err != nil {
			return jobError(err)
		}
	}
	if t.IsTemporary() {
		if reorg {
			// A temporary table's rows would have to be rewritten in
			// place; its changes are applied at once, not as jobs.
			return notInstant("changing the type of a column of a temporary table (%s)", old.Name)
		}
		return t.withAutoBase(ctx, addAuto, old, func() error { return t.alterTemp(ctx, scratch) })
	}
	return t.withAutoBase(ctx, addAuto, old, func() error { return t.runColumnJob(ctx, submit, spec) })
}

// addAutoToNullable gives nullable column old AUTO_INCREMENT, which makes
// it NOT NULL as in MySQL, in two changes: NOT NULL first (online, every
// row checked), then AUTO_INCREMENT with the rest of col (instant). Rows
// holding 0 or NULL are refused before anything changes, since MySQL
// would renumber them; if the second change fails, the first is undone.
func (t *Table) addAutoToNullable(ctx *gms.Context, old *catalog.Column, col *gms.Column, order *gms.ColumnOrder) error {
	if err := t.rebaseAuto(ctx, old); err != nil {
		return err
	}
	// MODIFY replaces the whole definition: both steps take col's, the
	// first with the old name and type.
	notNull := *col
	notNull.Name, notNull.Type = old.Name, t.m.schema[t.m.schema.IndexOfColName(old.Name)].Type
	notNull.Nullable, notNull.AutoIncrement = false, false
	if err := t.ModifyColumn(ctx, old.Name, &notNull, nil); err != nil {
		return err
	}
	auto := *col
	auto.Nullable = false
	err := t.ModifyColumn(ctx, old.Name, &auto, order)
	if err != nil {
		undo := ddl.ColumnSpec{Column: *old, Of: notNull.Name, OldID: old.ID, WasType: old.Type}
		if uerr := t.runColumnJob(ctx, t.db.e.DDL.SubmitModifyColumn, undo); uerr != nil {
			t.db.e.log.Error("undo NOT NULL of a failed AUTO_INCREMENT change", "table", t.m.def.Name, "column", old.Name, "err", uerr)
		}
	}
	return err
}

// canBeAutoIncrement checks, as MySQL does, that column old may become
// col, an AUTO_INCREMENT column: an integer, the table's only such column,
// and the first column of an index.
func canBeAutoIncrement(def *catalog.Table, old *catalog.Column, col *gms.Column) error {
	if !types.IsInteger(col.Type) {
		return mysql.NewSQLError(mysql.ERWrongFieldSpec, "42000", "Incorrect column specifier for column '%s'", col.Name)
	}
	keyed := old.ID == def.HandleColumn || len(def.PKColumns) > 0 && def.PKColumns[0] == old.ID
	for _, ix := range def.Indexes {
		keyed = keyed || ix.State == catalog.StatePublic && len(ix.Columns) > 0 && ix.Columns[0].ColumnID == old.ID
	}
	for _, c := range def.Columns {
		if c.AutoIncrement && c.ID != old.ID || !keyed {
			return mysql.NewSQLError(mysql.ERWrongAutoKey, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key")
		}
	}
	return nil
}

// withAutoBase runs change, a MODIFY COLUMN that gives column old
// AUTO_INCREMENT when addAuto, and then moves the table's counter past
// every value the column holds, so that the first generated value is
// MySQL's (the largest plus one). The counter is moved before the change
// too: between the change's publication and the second move, inserts that
// take generated values start above every value that existed before it.
// A row that holds 0 is refused: MySQL would renumber it.
func (t *Table) withAutoBase(ctx *gms.Context, addAuto bool, old *catalog.Column, change func() error) error {
	if !addAuto {
		return change()
	}
	if err := t.rebaseAuto(ctx, old); err != nil {
		return err
	}
	if err := change(); err != nil {
		return err
	}
	return t.rebaseAuto(ctx, old)
}

// rebaseAuto moves the AUTO_INCREMENT counter past the largest value of
// column old in the table's newest committed rows.
func (t *Table) rebaseAuto(ctx *gms.Context, old *catalog.Column) error {
	e := t.db.e
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.m.def.Name)
	}
	m, err := buildMeta(t.m.dbName, cur)
	if err != nil {
		return err
	}
	pos := -1
	for i, c := range cur.Columns {
		if c.ID == old.ID {
			pos = i
		}
	}
	if pos < 0 {
		return gms.ErrTableColumnNotFound.New(t.m.def.Name, old.Name)
	}
	txn := e.store.Begin()
	defer txn.Rollback()
	tbl := &Table{m: m}
	prefix := codec.RecordPrefix(cur.ID)
	it := txn.NewIter(prefix, codec.PrefixEnd(prefix), false)
	defer it.Close()
	var top uint64
	for ; it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		row, err := tbl.decodeRow(h, it.Value(), true)
		if err != nil {
			return err
		}
		n, positive := autoValue(row[pos])
		if n == 0 && !positive {
			return notInstant("ALTER TABLE ... MODIFY COLUMN ... AUTO_INCREMENT of column %s, which holds 0 or NULL in some rows (MySQL would renumber them)", old.Name)
		}
		top = max(top, n)
	}
	if err := it.Err(); err != nil {
		return err
	}
	return e.cat.Rebase(cur.ID, catalog.AutoIncrement, top)
}

// explicitNull reports whether the MODIFY / CHANGE clause of column name
// in statement q says NULL itself (not NOT NULL, not DEFAULT NULL): the
// column definition go-mysql-server passes on cannot tell that from a
// definition that says nothing.
func explicitNull(q, name string) bool {
	re := regexp.MustCompile("(?is)\\b(?:MODIFY|CHANGE)\\s+(?:COLUMN\\s+)?`?" + regexp.QuoteMeta(name) + "`?\\s+(.*)")
	m := re.FindStringSubmatch(q)
	if m == nil {
		return false
	}
	clause, depth := m[1], 0
scan:
	for i, r := range clause {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				clause = clause[:i]
				break scan
			}
		}
	}
	prev := ""
	for _, w := range strings.Fields(strings.ToUpper(clause)) {
		if w == "NULL" && prev != "NOT" && prev != "DEFAULT" {
			return true
		}
		prev = w
	}
	return false
}

var reInstant = regexp.MustCompile(`(?i)\balgorithm\s*=?\s*instant\b`)

// instantRequested reports whether the statement says ALGORITHM=INSTANT.
func instantRequested(ctx *gms.Context) bool { return reInstant.MatchString(ctx.Query()) }

// notInstantAlgorithm is MySQL's answer to ALGORITHM=INSTANT for a change
// that cannot be made instantly.
func notInstantAlgorithm(reason string) error {
	return mysql.NewSQLError(1846, "0A000", "ALGORITHM=INSTANT is not supported. Reason: %s. Try ALGORITHM=COPY/INPLACE.", reason)
}

// runColumnJob queues a column job made by submit and waits for it,
// outside the issuing transaction's metadata lock, which the job's
// schema step waits for.
func (t *Table) runColumnJob(ctx *gms.Context, submit func(db, table string, tableID int64, query string, spec ddl.ColumnSpec) (int64, error), spec ddl.ColumnSpec) error {
	e := t.db.e
	if spec.Lax {
		e.laxNotes.start(t.m.def.ID, spec.Column.Name)
	}
	err := jobError(e.outsideMDL(ctx, func() error {
		id, err := submit(t.db.def.Name, t.Name(), t.m.def.ID, ctx.Query(), spec)
		if err != nil {
			return err
		}
		return e.DDL.Wait(ctx, id)
	}))
	if spec.Lax {
		notes := e.laxNotes.finish(t.m.def.ID, spec.Column.Name, e.handles(t.m.def.ID))
		// Last first: go-mysql-server lists a session's warnings newest
		// first, and MySQL lists them by row.
		for i := len(notes) - 1; i >= 0 && err == nil; i-- {
			ctx.Session.Warn(&notes[i])
		}
	}
	return err
}

// handles yields the handles of table's rows in order, as a snapshot
// reads them now.
func (e *Engine) handles(table int64) func(yield func(h int64) bool) {
	return func(yield func(h int64) bool) {
		txn := e.store.Begin()
		defer txn.Rollback()
		p := codec.RecordPrefix(table)
		it := txn.NewIter(p, codec.PrefixEnd(p), false)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			_, h, err := codec.DecodeRecordKey(it.Key())
			if err != nil || !yield(h) {
				return
			}
		}
	}
}

// instantChange says why changing column old (of table def, whose
// go-mysql-server column is was) to col needs more than the catalog, or
// returns nil.
func instantChange(def *catalog.Table, old *catalog.Column, was, col *gms.Column) error {
	refuse := func(reason string, args ...any) error {
		return notInstant("ALTER TABLE ... MODIFY COLUMN that needs the table rebuilt: " + fmt.Sprintf(reason, args...))
	}
	switch {
	case col.Generated != nil || old.Generated != "":
		return refuse("column %s is or would be generated; its values would have to be computed for every row", old.Name)
	case !col.Nullable && old.Nullable:
		return refuse("making column %s NOT NULL would need every row checked", old.Name)
	}
	if !strings.EqualFold(col.Name, old.Name) {
		for _, c := range def.Columns {
			if c.Generated != "" && mentions(c.Generated, old.Name) {
				return refuse("column %s is used by generated column %s", old.Name, c.Name)
			}
		}
	}
	if col.Type.String() == was.Type.String() || sameStorage(was.Type, col.Type) {
		return nil
	}
	return refuse("changing column %s from %s to %s would rewrite its values", old.Name, was.Type.String(), col.Type.String())
}

// sameStorage reports whether every value of type from is stored, and
// keyed in an index, exactly as the same value of type to, and fits it.
func sameStorage(from, to gms.Type) bool {
	// Fractional seconds are stored whole (microseconds), so more digits
	// only show what is there.
	if fp := Precision(from); fp >= 0 && from.Type() == to.Type() {
		return Precision(to) >= fp
	}
	if rank, ok := intRank[from.Type()]; ok {
		torank, ok := intRank[to.Type()]
		return ok && torank >= rank && types.IsUnsigned(from) == types.IsUnsigned(to)
	}
	if members, ok := appendedMembers(from, to); ok {
		return members
	}
	fs, ok1 := from.(gms.StringType)
	ts, ok2 := to.(gms.StringType)
	if !ok1 || !ok2 || fs.Collation() != ts.Collation() {
		return false
	}
	switch {
	case from.Type() == query.Type_VARCHAR && to.Type() == query.Type_VARCHAR,
		from.Type() == query.Type_VARBINARY && to.Type() == query.Type_VARBINARY:
		return ts.MaxCharacterLength() >= fs.MaxCharacterLength()
	}
	return false
}

// appendedMembers reports, for an ENUM or SET type from (ok), whether to
// is the same kind of type with the same members first, in the same
// order and collation: rows store an ENUM member's number and a SET's
// bits, which members added at the end leave as they are, as MySQL's
// instant change of such a column does.
func appendedMembers(from, to gms.Type) (same, ok bool) {
	var fv, tv []string
	var fc, tc gms.CollationID
	switch f := from.(type) {
	case gms.EnumType:
		t, isEnum := to.(gms.EnumType)
		if !isEnum {
			return false, true
		}
		fv, tv, fc, tc = f.Values(), t.Values(), f.Collation(), t.Collation()
	case gms.SetType:
		t, isSet := to.(gms.SetType)
		if !isSet {
			return false, true
		}
		fv, tv, fc, tc = f.Values(), t.Values(), f.Collation(), t.Collation()
	default:
		return false, false
	}
	return fc == tc && len(tv) >= len(fv) && slices.Equal(fv, tv[:len(fv)]), true
}

var intRank = map[query.Type]int{
	query.Type_INT8: 1, query.Type_INT16: 2, query.Type_INT24: 3, query.Type_INT32: 4, query.Type_INT64: 5,
	query.Type_UINT8: 1, query.Type_UINT16: 2, query.Type_UINT24: 3, query.Type_UINT32: 4, query.Type_UINT64: 5,
}

// mentions reports whether expression expr refers to column name.
func mentions(expr, name string) bool {
	re := regexp.MustCompile("(?i)(^|[^a-z0-9_$])`?" + regexp.QuoteMeta(name) + "`?($|[^a-z0-9_$])")
	return re.MatchString(expr)
}

// DropColumn implements sql.AlterableTable: DROP COLUMN, instant for a
// column no index contains, and online otherwise (ddl.JobDropColumn): the
// indexes of that column alone go with it, and multi-column indexes that
// hold it are rebuilt without it, as MySQL does.
func (t *Table) DropColumn(ctx *gms.Context, name string) error {
	e := t.db.e
	cur, ok := t.latestDef(ctx)
	if !ok {
		return gms.ErrTableNotFound.New(t.m.def.Name)
	}
	old, _ := cur.ColumnByName(name)
	if old == nil {
		return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", name)
	}
	for _, c := range cur.Columns {
		if c.Generated != "" && c.ID != old.ID && mentions(c.Generated, old.Name) {
			return mysql.NewSQLError(3108, "HY000", "Column '%s' has a generated column dependency.", old.Name)
		}
	}
	spec := ddl.ColumnSpec{Of: old.Name}
	scratch := cur.Clone()
	ixs, rebuild, err := ddl.DropColumnIndexes(scratch, spec.Of)
	if err == nil {
		err = ddl.DropColumnFrom(scratch, spec)
	}
	if err != nil {
		return jobError(err)
	}
	if (len(ixs) > 0 || rebuild) && instantRequested(ctx) {
		return notInstantAlgorithm("Dropping a column that an index holds drops or rebuilds the index")
	}
	if _, err := buildMeta(t.m.dbName, scratch); err != nil {
		return err
	}
	if t.IsTemporary() {
		if rebuild {
			return notInstant("dropping a column of a temporary table's multi-column index (%s)", old.Name)
		}
		return t.alterTemp(ctx, scratch)
	}
	return t.runColumnJob(ctx, func(db, table string, tableID int64, query string, spec ddl.ColumnSpec) (int64, error) {
		return e.DDL.SubmitDropColumn(db, table, tableID, query, spec, ixs, rebuild)
	}, spec)
}

// autoValue is an integer column's value as the AUTO_INCREMENT counter
// sees it: n for a positive value; 0 and positive for a negative one,
// which the counter ignores; 0 and not positive for 0 or NULL.
func autoValue(v any) (n uint64, positive bool) {
	var i int64
	switch x := v.(type) {
	case uint8:
		return uint64(x), x > 0
	case uint16:
		return uint64(x), x > 0
	case uint32:
		return uint64(x), x > 0
	case uint64:
		return x, x > 0
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	default:
		return 0, false
	}
	if i < 0 {
		return 0, true
	}
	return uint64(i), i > 0
}
