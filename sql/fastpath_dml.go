package sql

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
)

// The write statements of the fast path (issue 13):
//
//	UPDATE [db.]t SET col = col + N WHERE pk = ?
//	UPDATE [db.]t SET col = ? WHERE pk = ?
//	DELETE FROM [db.]t WHERE pk = ?
//	INSERT INTO [db.]t (every column [but AUTO_INCREMENT]) VALUES (?, ...)
//
// The row is read by its key as go-mysql-server's point lookup reads it
// (lookup.go), and written through
// the table's editor (editor.go), which keeps every index in step with its
// online schema change. Anything whose outcome depends on more than the
// editor and a plain conversion — an error from the conversion, a value
// out of the column's range, NULL into NOT NULL, a negative AUTO_INCREMENT
// value, privileges the user may lack — is left to go-mysql-server
// (ErrFastFallback) before anything is written, so that its errors,
// warnings and quirks stay exactly its own.

const (
	dmlUpdate = iota + 1
	dmlDelete
	dmlInsert
)

// fastDML is the write part of a FastStmt.
type fastDML struct {
	kind int
	// UPDATE: SET setCol = setCol + incr when isIncr, else = setParam
	setCol   string
	isIncr   bool
	incr     int64
	setParam string
	// INSERT: the statement's columns and their parameters, in order
	insCols   []string
	insParams []string

	// resolved for one table definition
	tbl    *Table
	setPos int   // UPDATE: schema position of setCol
	insPos []int // INSERT: schema position of each insCols entry
}

// parseFastDML matches the write shapes; fs has its table set.
func parseFastDML(stmt sqlparser.Statement) *FastStmt {
	switch s := stmt.(type) {
	case *sqlparser.Update:
		if len(s.Comments) > 0 || s.Ignore != "" || s.With != nil || len(s.OrderBy) > 0 || s.Limit != nil ||
			len(s.Returning) > 0 || len(s.TableExprs) != 1 || len(s.Exprs) != 1 {
			return nil
		}
		fs := fastTable(s.TableExprs[0])
		if fs == nil || !fs.parseKeyWhere(s.Where) {
			return nil
		}
		d := &fastDML{kind: dmlUpdate}
		a := s.Exprs[0]
		name, ok := fs.colName(a.Name)
		if !ok {
			return nil
		}
		d.setCol = name
		switch e := a.Expr.(type) {
		case *sqlparser.SQLVal:
			p, ok := paramName(e)
			if !ok || p == fs.param {
				return nil
			}
			d.setParam = p
		case *sqlparser.BinaryExpr:
			// col + N, N a non-negative integer literal
			if e.Operator != sqlparser.PlusStr {
				return nil
			}
			c, ok := e.Left.(*sqlparser.ColName)
			if !ok {
				return nil
			}
			if n, ok := fs.colName(c); !ok || !strings.EqualFold(n, name) {
				return nil
			}
			v, ok := e.Right.(*sqlparser.SQLVal)
			if !ok || v.Type != sqlparser.IntVal {
				return nil
			}
			n, err := strconv.ParseInt(string(v.Val), 10, 32)
			if err != nil || n < 0 {
				return nil
			}
			d.isIncr, d.incr = true, n
		default:
			return nil
		}
		fs.dml = d
		return fs
	case *sqlparser.Delete:
		if len(s.Comments) > 0 || len(s.Targets) > 0 || s.With != nil || len(s.Partitions) > 0 || len(s.OrderBy) > 0 ||
			s.Limit != nil || len(s.Returning) > 0 || len(s.TableExprs) != 1 {
			return nil
		}
		fs := fastTable(s.TableExprs[0])
		if fs == nil || !fs.parseKeyWhere(s.Where) {
			return nil
		}
		fs.dml = &fastDML{kind: dmlDelete}
		return fs
	case *sqlparser.Insert:
		if s.Action != sqlparser.InsertStr || len(s.Comments) > 0 || s.Ignore != "" || s.With != nil ||
			len(s.Partitions) > 0 || len(s.Returning) > 0 || len(s.OnDup) > 0 || len(s.Columns) == 0 ||
			!s.Table.SchemaQualifier.IsEmpty() || s.Table.Name.IsEmpty() {
			return nil
		}
		av, ok := s.Rows.(*sqlparser.AliasedValues)
		if !ok || !av.As.IsEmpty() || len(av.Columns) > 0 || len(av.Values) != 1 || len(av.Values[0]) != len(s.Columns) {
			return nil
		}
		fs := &FastStmt{db: s.Table.DbQualifier.String(), table: s.Table.Name.String()}
		d := &fastDML{kind: dmlInsert}
		seen := map[string]bool{}
		for i, c := range s.Columns {
			name := strings.ToLower(c.String())
			if seen[name] {
				return nil
			}
			seen[name] = true
			v, ok := av.Values[0][i].(*sqlparser.SQLVal)
			if !ok {
				return nil
			}
			p, ok := paramName(v)
			if !ok || slices.Contains(d.insParams, p) {
				return nil
			}
			d.insCols = append(d.insCols, c.String())
			d.insParams = append(d.insParams, p)
		}
		fs.dml = d
		return fs
	}
	return nil
}

// fastTable is the FastStmt of a plain table reference (no alias, hints,
// AS OF or partitions).
func fastTable(te sqlparser.TableExpr) *FastStmt {
	ate, ok := te.(*sqlparser.AliasedTableExpr)
	if !ok || !ate.As.IsEmpty() || ate.Hints != nil || ate.AsOf != nil || len(ate.Partitions) > 0 || ate.Lateral {
		return nil
	}
	tn, ok := ate.Expr.(sqlparser.TableName)
	if !ok || !tn.SchemaQualifier.IsEmpty() || tn.Name.IsEmpty() {
		return nil
	}
	return &FastStmt{db: tn.DbQualifier.String(), table: tn.Name.String()}
}

// colName is the name of a column of the statement's table, qualified
// by nothing or by the table as the statement names it.
func (fs *FastStmt) colName(c *sqlparser.ColName) (string, bool) {
	if c == nil || c.StoredProcVal != nil || !c.Qualifier.SchemaQualifier.IsEmpty() {
		return "", false
	}
	if q := c.Qualifier; !q.Name.IsEmpty() {
		if !strings.EqualFold(q.Name.String(), fs.table) || !strings.EqualFold(q.DbQualifier.String(), fs.db) {
			return "", false
		}
	}
	return c.Name.String(), true
}

func paramName(v *sqlparser.SQLVal) (string, bool) {
	if v.Type != sqlparser.ValArg || len(v.Val) < 2 || v.Val[0] != ':' {
		return "", false
	}
	return string(v.Val[1:]), true
}

// parseKeyWhere matches WHERE col = ? (or ? = col), setting fs.key and
// fs.param.
func (fs *FastStmt) parseKeyWhere(w *sqlparser.Where) bool {
	if w == nil || w.Type != sqlparser.WhereStr {
		return false
	}
	cmp, ok := w.Expr.(*sqlparser.ComparisonExpr)
	if !ok || cmp.Operator != sqlparser.EqualStr || cmp.Escape != nil {
		return false
	}
	l, r := cmp.Left, cmp.Right
	if _, ok := l.(*sqlparser.SQLVal); ok {
		l, r = r, l
	}
	c, ok := l.(*sqlparser.ColName)
	if !ok {
		return false
	}
	if fs.key, ok = fs.colName(c); !ok {
		return false
	}
	v, ok := r.(*sqlparser.SQLVal)
	if !ok {
		return false
	}
	fs.param, ok = paramName(v)
	return ok
}

// resolveDML binds a write statement to table definition m of database d.
func (fs *FastStmt) resolveDML(d *catalog.Database, m *tableMeta) error {
	if m.handlePos < 0 || m.hasVirtual {
		return ErrFastFallback
	}
	for _, c := range m.schema {
		// Generated values and ON UPDATE are go-mysql-server's to compute.
		if c.Generated != nil || c.OnUpdate != nil {
			return ErrFastFallback
		}
	}
	dm := fs.dml
	tbl := &Table{db: &Database{e: fs.e, def: d}, m: m}
	pos := func(name string) int {
		for i, c := range m.schema {
			if strings.EqualFold(c.Name, name) {
				return i
			}
		}
		return -1
	}
	switch dm.kind {
	case dmlUpdate, dmlDelete:
		if !strings.EqualFold(m.schema[m.handlePos].Name, fs.key) {
			return ErrFastFallback
		}
		if dm.kind == dmlUpdate {
			p := pos(dm.setCol)
			if p < 0 || p == m.handlePos {
				return ErrFastFallback
			}
			typ := m.schema[p].Type
			if dm.isIncr && !isHandleType(typ) || !dm.isIncr && !isHandleType(typ) && !fastStringType(m, p) {
				return ErrFastFallback
			}
			dm.setPos = p
		}
	case dmlInsert:
		// Every column, or every one but AUTO_INCREMENT: other defaults
		// are go-mysql-server's to fill in.
		if len(dm.insCols) != len(m.schema) && (m.autoPos < 0 || len(dm.insCols) != len(m.schema)-1) {
			return ErrFastFallback
		}
		ps := make([]int, len(dm.insCols))
		for i, c := range dm.insCols {
			p := pos(c)
			if p < 0 || !isHandleType(m.schema[p].Type) && !fastStringType(m, p) {
				return ErrFastFallback
			}
			ps[i] = p
		}
		if len(ps) < len(m.schema) && slices.Contains(ps, m.autoPos) {
			return ErrFastFallback // some other column is left out
		}
		dm.insPos = ps
	}
	dm.tbl = tbl
	fs.t, fs.sch = tbl, types.OkResultSchema
	return nil
}

// fastStringType: a character or byte string column, whose value from a
// string parameter is the column type's Convert of it.
func fastStringType(m *tableMeta, p int) bool {
	if k := m.kinds[p]; k != kindString && k != kindBytes {
		return false
	}
	_, ok := m.schema[p].Type.(gms.StringType)
	return ok
}

// bindLiteral is the value go-mysql-server's binder makes of a parameter
// (sqlparser.ExprFromValue, then Builder.ConvertVal) for NULL, integers
// and strings; ok is false for any other type.
func bindLiteral(bv *querypb.BindVariable) (v any, isInt, ok bool) {
	if bv == nil {
		return nil, false, false
	}
	switch {
	case bv.Type == sqltypes.Null:
		return nil, false, true
	case sqltypes.IsSigned(bv.Type) || sqltypes.IsUnsigned(bv.Type):
		v, ok := convertIntLiteral(string(bv.Value))
		return v, true, ok
	case bv.Type == sqltypes.VarChar || bv.Type == sqltypes.VarBinary || bv.Type == sqltypes.Char ||
		bv.Type == sqltypes.Binary || bv.Type == sqltypes.Text || bv.Type == sqltypes.Blob:
		return string(bv.Value), false, true
	}
	return nil, false, false
}

// convertIntLiteral is planbuilder's convertInt: the smallest of int8,
// uint8, int16, ... uint64 that holds the value.
func convertIntLiteral(s string) (any, bool) {
	if v, err := strconv.ParseInt(s, 10, 8); err == nil {
		return int8(v), true
	}
	if v, err := strconv.ParseUint(s, 10, 8); err == nil {
		return uint8(v), true
	}
	if v, err := strconv.ParseInt(s, 10, 16); err == nil {
		return int16(v), true
	}
	if v, err := strconv.ParseUint(s, 10, 16); err == nil {
		return uint16(v), true
	}
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(v), true
	}
	if v, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(v), true
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	return nil, false
}

// bindDML makes the node of one execution of a write statement.
func (fs *FastStmt) bindDML(vars map[string]*querypb.BindVariable) (gms.Node, bool) {
	dm := fs.dml
	n := &dmlExec{fs: fs}
	want := 1
	if dm.kind == dmlUpdate && !dm.isIncr {
		want = 2
	}
	if dm.kind == dmlInsert {
		want = len(dm.insParams)
	}
	if len(vars) != want {
		return nil, false
	}
	if dm.kind != dmlInsert {
		// A NULL key or one above every handle matches nothing; how
		// go-mysql-server plans (and counts) that is left to it.
		h, st, ok := bindHandle(vars[fs.param])
		if !ok || st != 0 {
			return nil, false
		}
		n.h = h
	}
	switch {
	case dm.kind == dmlUpdate && !dm.isIncr:
		v, isInt, ok := bindLiteral(vars[dm.setParam])
		if !ok {
			return nil, false
		}
		n.vals, n.isInt = []any{v}, []bool{isInt}
	case dm.kind == dmlInsert:
		n.vals, n.isInt = make([]any, len(dm.insParams)), make([]bool, len(dm.insParams))
		for i, p := range dm.insParams {
			v, isInt, ok := bindLiteral(vars[p])
			if !ok {
				return nil, false
			}
			n.vals[i], n.isInt[i] = v, isInt
		}
	}
	return n, true
}

// dmlExec is one execution of a write statement. It does its work when
// go-mysql-server builds its iterator, so that ErrFastFallback reaches
// the server before any result; its result is one OkResult row.
type dmlExec struct {
	fs    *FastStmt
	h     int64
	vals  []any
	isInt []bool

	res                     types.OkResult
	setFound                bool // UPDATE sets FOUND_ROWS to the rows matched
	prevRowCount, prevFound int64
}

var _ gms.ExecSourceRel = (*dmlExec)(nil)

func (n *dmlExec) Resolved() bool { return true }
func (n *dmlExec) String() string {
	return fmt.Sprintf("ReorgDBFastDML(%s.%s)", n.fs.db, n.fs.table)
}
func (n *dmlExec) Schema() gms.Schema   { return types.OkResultSchema }
func (n *dmlExec) Children() []gms.Node { return nil }
func (n *dmlExec) IsReadOnly() bool     { return false }
func (n *dmlExec) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// Finish sets ROW_COUNT() and FOUND_ROWS() as go-mysql-server's
// accumulator does for the statement; the server calls it once the
// result's iterator is closed, whose tracking sets them as for a SELECT.
func (n *dmlExec) Finish(ctx *gms.Context, ok bool) {
	if !ok {
		ctx.SetLastQueryInfoInt(gms.RowCount, n.prevRowCount)
		ctx.SetLastQueryInfoInt(gms.FoundRows, n.prevFound)
		return
	}
	ctx.SetLastQueryInfoInt(gms.RowCount, int64(n.res.RowsAffected))
	if n.setFound {
		ctx.SetLastQueryInfoInt(gms.FoundRows, int64(n.res.Info.(plan.UpdateInfo).Matched))
	} else {
		ctx.SetLastQueryInfoInt(gms.FoundRows, n.prevFound)
	}
}

// mayWrite reports whether the session's user holds every one of privs on
// the table.
func (e *Engine) mayWrite(ctx *gms.Context, m *tableMeta, privs ...gms.PrivilegeType) bool {
	db := e.SQL.Analyzer.Catalog.MySQLDb
	if db == nil || !db.Enabled() || m.def.ID >= catalog.TempIDBase {
		return true
	}
	return db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(
		gms.PrivilegeCheckSubject{Database: m.dbName, Table: m.def.Name}, privs...))
}

func (n *dmlExec) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	fs := n.fs
	tx, db, err := fs.resolveIn(ctx)
	if err != nil {
		return nil, err
	}
	// A read-only transaction's refusal is go-mysql-server's to give, and
	// so are triggers (a trigger changes the database's definition, not
	// the table's, so resolve's cache does not see it).
	if d, ok := tx.schema.Database(db); tx.readOnly || ok && len(d.Triggers) > 0 {
		return nil, ErrFastFallback
	}
	// So is read_only's (sql/readonly.go), which is an analyzer rule.
	if readOnly.Load() || superReadOnly.Load() {
		return nil, ErrFastFallback
	}
	// Foreign keys and checks are go-mysql-server's to enforce. Whether
	// another table references this one is asked of the transaction's
	// schema on every execution, since it changes without this table's
	// definition changing.
	if hasConstraints(tx.schema, db, fs.m.def) {
		return nil, ErrFastFallback
	}
	var privs []gms.PrivilegeType
	switch fs.dml.kind {
	case dmlUpdate:
		privs = []gms.PrivilegeType{gms.PrivilegeType_Update, gms.PrivilegeType_Select}
	case dmlDelete:
		privs = []gms.PrivilegeType{gms.PrivilegeType_Delete, gms.PrivilegeType_Select}
	case dmlInsert:
		privs = []gms.PrivilegeType{gms.PrivilegeType_Insert}
	}
	if !fs.e.mayWrite(ctx, fs.m, privs...) {
		return nil, ErrFastFallback
	}
	n.prevRowCount = ctx.GetLastQueryInfoInt(gms.RowCount)
	n.prevFound = ctx.GetLastQueryInfoInt(gms.FoundRows)
	switch fs.dml.kind {
	case dmlUpdate:
		err = n.update(ctx, tx)
	case dmlDelete:
		err = n.delete(ctx, tx)
	case dmlInsert:
		err = n.insert(ctx)
	}
	if fs.dml.kind != dmlInsert && !errors.Is(err, ErrFastFallback) {
		// the primary-key point read of go-mysql-server's plan
		addStatus(ctx, "Handler_read_key", 1)
	}
	if err != nil {
		return nil, err
	}
	return oneRow(gms.Row{n.res}), nil
}

// read locks the row with the statement's key and returns it as it is
// now (a current read, see locking.go), or nil.
func (n *dmlExec) read(ctx *gms.Context, tx *Transaction) (gms.Row, error) {
	m := n.fs.m
	val, found, err := tx.LockedRead(ctx, codec.RecordKey(m.def.ID, n.h))
	if err != nil || !found {
		return nil, err
	}
	return n.fs.dml.tbl.decodeRow(n.h, val, true)
}

func (n *dmlExec) update(ctx *gms.Context, tx *Transaction) error {
	dm, m := n.fs.dml, n.fs.m
	n.setFound = true
	old, err := n.read(ctx, tx)
	if err != nil {
		return err
	}
	if old == nil {
		n.res = types.OkResult{Info: plan.UpdateInfo{}}
		return nil
	}
	col := m.schema[dm.setPos]
	var v any
	if dm.isIncr {
		if old[dm.setPos] != nil {
			cur, ok := intValue(old[dm.setPos])
			if !ok || cur > math.MaxInt64-dm.incr {
				return ErrFastFallback
			}
			v = cur + dm.incr
		}
	} else {
		v = n.vals[0]
		// Numbers go into integer columns and strings into string
		// columns only: other pairs convert with warnings of their own.
		if v != nil && n.isInt[0] != isHandleType(col.Type) {
			return ErrFastFallback
		}
	}
	if v == nil {
		if !col.Nullable {
			return ErrFastFallback
		}
	} else {
		// SetField's conversion; out of range is 1264 in strict mode
		// (strictupdate.go) and a clipped value otherwise.
		cv, inRange, err := col.Type.Convert(ctx, v)
		if err != nil || inRange != gms.InRange {
			return ErrFastFallback
		}
		v = cv
	}
	newRow := old.Copy()
	newRow[dm.setPos] = v
	same, err := old.Equals(ctx, newRow, m.schema)
	if err != nil {
		return err
	}
	info := plan.UpdateInfo{Matched: 1}
	if !same {
		if err := n.edit(ctx, old, newRow); err != nil {
			return err
		}
		info.Updated = 1
	}
	affected := info.Updated
	if ctx.Client().Capabilities&mysql.CapabilityClientFoundRows != 0 {
		affected = info.Matched
	}
	n.res = types.OkResult{RowsAffected: uint64(affected), Info: info}
	return nil
}

func (n *dmlExec) delete(ctx *gms.Context, tx *Transaction) error {
	old, err := n.read(ctx, tx)
	if err != nil || old == nil {
		n.res = types.NewOkResult(0)
		return err
	}
	if err := n.edit(ctx, old, nil); err != nil {
		return err
	}
	n.res = types.NewOkResult(1)
	return nil
}

func (n *dmlExec) insert(ctx *gms.Context) error {
	dm, m := n.fs.dml, n.fs.m
	row := make(gms.Row, len(m.schema))
	// The AUTO_INCREMENT column's value as bound; generate is set when it
	// is left out, NULL or 0 (without NO_AUTO_VALUE_ON_ZERO), which makes
	// go-mysql-server take the counter's next value.
	var given any
	generate := m.autoPos >= 0
	for i, p := range dm.insPos {
		v, col := n.vals[i], m.schema[p]
		if v == nil {
			if p == m.autoPos {
				continue
			}
			if !col.Nullable {
				return ErrFastFallback // 1048
			}
			continue
		}
		if n.isInt[i] != isHandleType(col.Type) {
			return ErrFastFallback
		}
		cv, inRange, err := col.Type.Convert(ctx, v)
		if err != nil || inRange != gms.InRange {
			return ErrFastFallback
		}
		if p == m.autoPos {
			iv, ok := intValue(cv)
			switch {
			case !ok || iv < 0:
				return ErrFastFallback // a negative value skips the counter
			case iv == 0:
				if gms.LoadSqlMode(ctx).ModeEnabled(gms.NoAutoValueOnZero) {
					return ErrFastFallback
				}
				continue
			}
			given, generate = v, false
		}
		row[p] = cv
	}
	var insertID uint64
	if m.autoPos >= 0 {
		if generate {
			// go-mysql-server holds the AUTO_INCREMENT lock while a
			// statement generates values, except in lock mode 2.
			if _, mode, _ := gms.SystemVariables.GetGlobal("innodb_autoinc_lock_mode"); mode != int64(2) {
				unlock, err := dm.tbl.AutoIncrementSetter(ctx).AcquireAutoIncrementLock(ctx)
				if err != nil {
					return err
				}
				defer unlock()
			}
		}
		// go-mysql-server's AutoIncrement takes the next value, or moves
		// the counter past the given one, before the row is written,
		// whether or not the write then fails.
		seq, err := dm.tbl.GetNextAutoIncrementValue(ctx, given)
		if err != nil {
			return err
		}
		if generate {
			// as AutoIncrement converts it: a value beyond the column's
			// range is clipped, not refused
			cv, _, err := m.schema[m.autoPos].Type.Convert(ctx, seq)
			if err != nil {
				return err
			}
			row[m.autoPos] = cv
		}
		// The OK packet carries the column's value, given or generated.
		iv, _ := intValue(row[m.autoPos])
		insertID = uint64(iv)
	}
	if err := n.edit(ctx, nil, row); err != nil {
		return gms.NewWrappedInsertError(row, err)
	}
	if generate {
		ctx.SetLastQueryInfoInt(gms.LastInsertId, int64(insertID))
	}
	n.res = types.OkResult{RowsAffected: 1, InsertID: insertID}
	return nil
}

// edit runs one row change through the table's editor the way
// go-mysql-server's TableEditorIter does: a failed change is rolled back
// to where the statement began, leaving the transaction as it was.
func (n *dmlExec) edit(ctx *gms.Context, old, row gms.Row) error {
	tbl := n.fs.dml.tbl
	var ed interface {
		gms.EditOpenerCloser
		gms.Closer
	}
	var change func() error
	switch n.fs.dml.kind {
	case dmlUpdate:
		u := tbl.Updater(ctx)
		ed, change = u, func() error { return u.Update(ctx, old, row) }
	case dmlDelete:
		d := tbl.Deleter(ctx)
		ed, change = d, func() error { return d.Delete(ctx, old) }
	default:
		i := tbl.Inserter(ctx)
		ed, change = i, func() error { return i.Insert(ctx, row) }
	}
	ed.StatementBegin(ctx)
	err := change()
	if err == nil {
		err = ed.StatementComplete(ctx)
	}
	if err != nil {
		_ = ed.DiscardChanges(ctx, err)
		_ = ed.Close(ctx)
		return err
	}
	return ed.Close(ctx)
}

// intValue is an integer column's value as int64.
func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}
