package sql

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
)

// The fast path for prepared statements (issue 13). go-mysql-server keeps
// only the parsed statement of a prepared statement and binds and analyzes
// it again on every COM_STMT_EXECUTE, which costs more than reading the
// row. For the shapes OLTP benchmarks send, the server recognises the
// statement once at PREPARE (FastStmt) and runs a ReorgDB node on each
// EXECUTE that reads its parameter directly. Anything outside the shape,
// or a schema in which it no longer fits, goes through go-mysql-server.

// ErrFastFallback is returned by a fast node that cannot serve the
// statement after all (the schema changed under it, a privilege check
// failed, a value go-mysql-server converts with an error or warning): the
// caller runs the statement through go-mysql-server instead. The node has
// written nothing when it returns it.
var ErrFastFallback = errors.New("reorgdb: fast path does not apply")

// FastStmt is a prepared statement of one of the shapes
//
//	SELECT col[, col...] | * FROM [db.]t WHERE pk = ?
//	SELECT [DISTINCT] col[, col...] | * FROM [db.]t WHERE pk BETWEEN ? AND ? [ORDER BY col [ASC|DESC]]
//	SELECT SUM(col) FROM [db.]t WHERE pk BETWEEN ? AND ?
//	UPDATE [db.]t SET col = col + N | col = ? WHERE pk = ?
//	DELETE FROM [db.]t WHERE pk = ?
//	INSERT INTO [db.]t (every column [but AUTO_INCREMENT]) VALUES (?, ...)
//	BEGIN | START TRANSACTION [READ ONLY | READ WRITE], COMMIT
//
// where pk is the table's integer primary key (the row handle). It is
// owned by one connection; it is not safe for concurrent use.
type FastStmt struct {
	e     *Engine
	db    string // "" = the session's current database
	table string
	star  bool
	cols  []string
	key   string // the column compared with the parameter
	param string // the parameter's bind variable name ("v1")

	between  bool   // pk BETWEEN param AND param2
	param2   string // the upper bound's bind variable
	distinct bool
	orderBy  string // "" = no ORDER BY
	desc     bool
	orderPos int    // position of orderBy in the result columns, when resolved
	sum      bool   // SELECT SUM(cols[0]): its only result column
	sumName  string // the result column's name, as written
	sumArg   *gms.Column
	// text: a text statement (PrepareFastText), whose result columns must
	// describe themselves exactly as go-mysql-server's do
	text bool

	dml *fastDML // a write statement (fastpath_dml.go)
	// BEGIN / START TRANSACTION [READ ONLY | READ WRITE] and COMMIT run
	// the node go-mysql-server's binder makes of them, without its bind
	// and analysis.
	txn int

	// resolved for one table definition
	m      *tableMeta
	dbUsed string     // the database name it was resolved under
	t      *Table     // projected table of m, decodes the selected columns
	sch    gms.Schema // result columns
}

// PrepareFast recognises a statement the fast path serves, or returns
// nil. Each EXECUTE resolves it again in its transaction's schema and
// describes the result columns as go-mysql-server would at that point.
func (e *Engine) PrepareFast(ctx *gms.Context, query string) *FastStmt {
	fs := parseFast(query)
	if fs == nil {
		return nil
	}
	fs.e = e
	if fs.txn != 0 {
		return fs
	}
	db := fs.db
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if err := fs.resolve(ctx, e.schemaFor(ctx), db); err != nil {
		return nil
	}
	return fs
}

// PrepareFastText recognises a text statement (COM_QUERY) whose literals
// sqlparser.Normalize has turned into bind variables. shape is false when
// the statement is not one the text fast path serves whatever the schema,
// which the caller may remember; st is nil also when the statement does
// not fit the current schema, which a later statement may change.
func (e *Engine) PrepareFastText(ctx *gms.Context, stmt sqlparser.Statement) (st *FastStmt, shape bool) {
	fs := parseFastStmt(stmt)
	// BEGIN and COMMIT have no literals. SUM's result column is named by
	// the text as written (spacing, case), which the normalized statement
	// the caller keys its cache by does not keep. With ORDER BY,
	// go-mysql-server's result columns lose their PRI_KEY and
	// AUTO_INCREMENT flags or keep them depending on its plan (a sort by
	// the key of SELECT * is no sort), which the fast path does not follow.
	if fs == nil || fs.txn != 0 || fs.sum || fs.orderBy != "" {
		return nil, false
	}
	fs.e, fs.text = e, true
	db := fs.db
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if err := fs.resolve(ctx, e.schemaFor(ctx), db); err != nil {
		return nil, true
	}
	return fs, true
}

// Counters returns the status variables go-mysql-server increments for
// one execution of the statement ("Questions" when it starts, "Com_select"
// or "Com_update", ... while it binds it); the server increments them when
// the fast path serves the execution.
func (fs *FastStmt) Counters() []string {
	switch {
	case fs.txn != 0:
		return []string{"Questions"}
	case fs.dml == nil:
		return []string{"Questions", "Com_select"}
	case fs.dml.kind == dmlUpdate:
		return []string{"Questions", "Com_update"}
	case fs.dml.kind == dmlDelete:
		return []string{"Questions", "Com_delete"}
	}
	return []string{"Questions", "Com_insert"}
}

const (
	txnBegin = iota + 1
	txnBeginReadOnly
	txnCommit
)

// parseFast matches the statement text against the served shapes.
func parseFast(query string) *FastStmt {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return nil
	}
	return parseFastStmt(stmt)
}

// parseFastStmt matches a parsed statement against the served shapes.
func parseFastStmt(stmt sqlparser.Statement) *FastStmt {
	switch st := stmt.(type) {
	case *sqlparser.Begin:
		fs := &FastStmt{txn: txnBegin}
		if st.TransactionCharacteristic == sqlparser.TxReadOnly {
			fs.txn = txnBeginReadOnly
		}
		return fs
	case *sqlparser.Commit:
		return &FastStmt{txn: txnCommit}
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok {
		return parseFastDML(stmt)
	}
	if len(sel.Comments) > 0 || sel.QueryOpts != (sqlparser.QueryOpts{Distinct: sel.QueryOpts.Distinct}) || sel.With != nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.Window != nil ||
		sel.Limit != nil || sel.Lock != "" || sel.Into != nil || sel.Where == nil ||
		sel.Where.Type != sqlparser.WhereStr || len(sel.From) != 1 || len(sel.SelectExprs) == 0 {
		return nil
	}
	ate, ok := sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok || !ate.As.IsEmpty() || ate.Hints != nil || ate.AsOf != nil || len(ate.Partitions) > 0 || ate.Lateral {
		return nil
	}
	tn, ok := ate.Expr.(sqlparser.TableName)
	if !ok || !tn.SchemaQualifier.IsEmpty() || tn.Name.IsEmpty() {
		return nil
	}
	fs := &FastStmt{db: tn.DbQualifier.String(), table: tn.Name.String()}
	colOf := func(e sqlparser.Expr) (string, bool) {
		c, ok := e.(*sqlparser.ColName)
		if !ok || c.StoredProcVal != nil || !c.Qualifier.SchemaQualifier.IsEmpty() {
			return "", false
		}
		if q := c.Qualifier; !q.Name.IsEmpty() {
			if !strings.EqualFold(q.Name.String(), fs.table) || !strings.EqualFold(q.DbQualifier.String(), fs.db) {
				return "", false
			}
		}
		return c.Name.String(), true
	}
	for _, se := range sel.SelectExprs {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			if len(sel.SelectExprs) != 1 || !x.TableName.IsEmpty() {
				return nil
			}
			fs.star = true
		case *sqlparser.AliasedExpr:
			if !x.As.IsEmpty() {
				return nil
			}
			if f, ok := x.Expr.(*sqlparser.FuncExpr); ok {
				// SUM(col), alone
				if len(sel.SelectExprs) != 1 || !f.Name.EqualString("sum") || !f.Qualifier.IsEmpty() || f.Distinct ||
					f.Over != nil || len(f.Exprs) != 1 || x.InputExpression == "" {
					return nil
				}
				arg, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
				if !ok || !arg.As.IsEmpty() {
					return nil
				}
				name, ok := colOf(arg.Expr)
				if !ok {
					return nil
				}
				fs.sum, fs.sumName, fs.cols = true, x.InputExpression, []string{name}
				continue
			}
			name, ok := colOf(x.Expr)
			if !ok {
				return nil
			}
			for _, c := range fs.cols {
				if strings.EqualFold(c, name) {
					return nil
				}
			}
			fs.cols = append(fs.cols, name)
		default:
			return nil
		}
	}
	param := func(e sqlparser.Expr) (string, bool) {
		v, ok := e.(*sqlparser.SQLVal)
		if !ok || v.Type != sqlparser.ValArg || len(v.Val) < 2 || v.Val[0] != ':' {
			return "", false
		}
		return string(v.Val[1:]), true
	}
	switch w := sel.Where.Expr.(type) {
	case *sqlparser.ComparisonExpr:
		if w.Operator != sqlparser.EqualStr || w.Escape != nil || sel.QueryOpts.Distinct || len(sel.OrderBy) > 0 || fs.sum {
			return nil
		}
		l, r := w.Left, w.Right
		if _, ok := l.(*sqlparser.SQLVal); ok {
			l, r = r, l
		}
		if fs.key, ok = colOf(l); !ok {
			return nil
		}
		if fs.param, ok = param(r); !ok {
			return nil
		}
	case *sqlparser.RangeCond:
		if w.Operator != sqlparser.BetweenStr {
			return nil
		}
		fs.between, fs.distinct = true, sel.QueryOpts.Distinct
		if fs.sum && (fs.distinct || len(sel.OrderBy) > 0) {
			return nil
		}
		if fs.key, ok = colOf(w.Left); !ok {
			return nil
		}
		if fs.param, ok = param(w.From); !ok {
			return nil
		}
		if fs.param2, ok = param(w.To); !ok || fs.param2 == fs.param {
			return nil
		}
		switch len(sel.OrderBy) {
		case 0:
		case 1:
			o := sel.OrderBy[0]
			if fs.orderBy, ok = colOf(o.Expr); !ok {
				return nil
			}
			switch o.Direction {
			case sqlparser.AscScr, "":
			case sqlparser.DescScr:
				fs.desc = true
			default:
				return nil
			}
			if !fs.star && !slices.ContainsFunc(fs.cols, func(c string) bool { return strings.EqualFold(c, fs.orderBy) }) {
				return nil // sorting by a column not selected
			}
		default:
			return nil
		}
	default:
		return nil
	}
	return fs
}

// resolve binds the statement to the table definition in s, or to the
// session's temporary table of that name, and fails when the statement no
// longer fits it.
func (fs *FastStmt) resolve(ctx *gms.Context, s *catalog.Schema, db string) error {
	if db == "" {
		return ErrFastFallback
	}
	d, ok := s.Database(db)
	if !ok {
		return ErrFastFallback
	}
	def, ok := tempFor(ctx, d.ID, fs.table)
	if !ok {
		def, ok = s.Table(d.ID, fs.table)
	}
	if !ok {
		return ErrFastFallback
	}
	m, err := metaFor(d.Name, def)
	if err != nil {
		return ErrFastFallback
	}
	if m == fs.m && db == fs.dbUsed {
		return nil
	}
	if fs.dml != nil {
		if err := fs.resolveDML(d, m); err != nil {
			return err
		}
		fs.m, fs.dbUsed = m, db
		return nil
	}
	// A table with a virtual column decodes whole rows whatever the
	// projection (the virtual values are computed over them), which the
	// fast nodes' projected decoding does not do.
	if m.hasVirtual || m.handlePos < 0 || !strings.EqualFold(m.schema[m.handlePos].Name, fs.key) {
		return ErrFastFallback
	}
	t := &Table{m: m}
	var sch gms.Schema
	if fs.star {
		sch = m.schema
	} else {
		// go-mysql-server names a selected column as the statement
		// spells it, its table in lower case and its database as the
		// statement or the session names it.
		cols := make([]string, len(fs.cols))
		sch = make(gms.Schema, len(fs.cols))
		for i, c := range fs.cols {
			for _, col := range m.schema {
				if strings.EqualFold(col.Name, c) {
					cols[i] = col.Name
					nc := *col
					nc.Name, nc.Source, nc.DatabaseSource = c, strings.ToLower(fs.table), db
					sch[i] = &nc
					break
				}
			}
			if cols[i] == "" {
				return ErrFastFallback
			}
		}
		t = t.WithProjections(cols).(*Table)
		if fs.sum {
			// go-mysql-server sums integers as DOUBLE into a column
			// named as written, of no table, marked NOT NULL.
			if !isHandleType(sch[0].Type) { // integers of up to 32 bits or signed
				return ErrFastFallback
			}
			fs.sumArg = sch[0]
			sch = gms.Schema{{Name: fs.sumName, Type: types.Float64}}
		}
	}
	if fs.text && !fs.star {
		// Whether go-mysql-server's result columns keep these flags
		// depends on the plan it makes of the projection.
		for _, c := range sch {
			if c.PrimaryKey || c.AutoIncrement {
				return ErrFastFallback
			}
		}
	}
	fs.orderPos = -1
	if fs.orderBy != "" {
		for i, c := range sch {
			if strings.EqualFold(c.Name, fs.orderBy) {
				fs.orderPos = i
				break
			}
		}
		if fs.orderPos < 0 {
			return ErrFastFallback
		}
	}
	fs.m, fs.dbUsed, fs.t, fs.sch = m, db, t, sch
	return nil
}

// Bind makes the node of one execution from the parameters. ok is false
// when a parameter is not one the fast path converts exactly as
// go-mysql-server would; the statement then takes the slow path.
func (fs *FastStmt) Bind(vars map[string]*querypb.BindVariable) (node gms.Node, ok bool) {
	switch fs.txn {
	case txnBegin:
		return plan.NewStartTransaction(gms.ReadWrite), len(vars) == 0
	case txnBeginReadOnly:
		return plan.NewStartTransaction(gms.ReadOnly), len(vars) == 0
	case txnCommit:
		return plan.NewCommit(), len(vars) == 0
	}
	if fs.dml != nil {
		return fs.bindDML(vars)
	}
	if !fs.between {
		if len(vars) != 1 {
			return nil, false
		}
		h, st, ok := bindHandle(vars[fs.param])
		if !ok {
			return nil, false
		}
		return &pointSelect{fs: fs, h: h, none: st != 0}, true
	}
	if len(vars) != 2 {
		return nil, false
	}
	lo, los, ok := bindHandle(vars[fs.param])
	if !ok {
		return nil, false
	}
	hi, his, ok := bindHandle(vars[fs.param2])
	if !ok {
		return nil, false
	}
	n := &rangeSelect{fs: fs, lo: lo, hi: hi}
	switch {
	case los != 0 || his == boundNull:
		n.none = true // NULL bounds, or a lower bound above every handle
	case his == boundAbove:
		n.hi = math.MaxInt64
	}
	if n.lo > n.hi {
		n.none = true
	}
	return n, true
}

const (
	boundNull  = 1 // the parameter is NULL
	boundAbove = 2 // the parameter is above every int64
)

// bindHandle converts a parameter compared with the integer handle
// column. ok is false when go-mysql-server's conversion is left to it.
func bindHandle(bv *querypb.BindVariable) (h int64, state int, ok bool) {
	if bv == nil {
		return 0, 0, false
	}
	switch {
	case bv.Type == sqltypes.Null:
		return 0, boundNull, true // pk = NULL is never true
	case sqltypes.IsSigned(bv.Type):
		h, err := strconv.ParseInt(string(bv.Value), 10, 64)
		return h, 0, err == nil
	case sqltypes.IsUnsigned(bv.Type):
		u, err := strconv.ParseUint(string(bv.Value), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if u > math.MaxInt64 {
			return 0, boundAbove, true // no handle column holds it
		}
		return int64(u), 0, true
	case bv.Type == sqltypes.VarChar || bv.Type == sqltypes.VarBinary || bv.Type == sqltypes.Char ||
		bv.Type == sqltypes.Binary || bv.Type == sqltypes.Text || bv.Type == sqltypes.Blob:
		// Only plain decimal integers: MySQL's string-to-number
		// conversion of anything else (spaces, signs, exponents, trailing
		// text) is left to go-mysql-server.
		s := string(bv.Value)
		if !plainInt(s) {
			return 0, 0, false
		}
		h, err := strconv.ParseInt(s, 10, 64)
		return h, 0, err == nil
	}
	return 0, 0, false
}

func plainInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pointSelect reads one row by its handle.
type pointSelect struct {
	fs   *FastStmt
	h    int64
	none bool
}

var _ gms.ExecSourceRel = (*pointSelect)(nil)

func (n *pointSelect) Resolved() bool { return true }
func (n *pointSelect) String() string {
	return fmt.Sprintf("ReorgDBPointSelect(%s.%s = %d)", n.fs.db, n.fs.table, n.h)
}
func (n *pointSelect) Schema() gms.Schema   { return n.fs.sch }
func (n *pointSelect) Children() []gms.Node { return nil }
func (n *pointSelect) IsReadOnly() bool     { return true }
func (n *pointSelect) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// resolveIn resolves the statement in the schema of ctx's transaction and
// returns the transaction and the database it resolved under.
func (fs *FastStmt) resolveIn(ctx *gms.Context) (*Transaction, string, error) {
	tx, err := txnFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	db := fs.db
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	return tx, db, fs.resolve(ctx, tx.schema, db)
}

// begin resolves the statement in the statement's transaction's schema
// (the one its metadata lock holds).
func (fs *FastStmt) begin(ctx *gms.Context) (*Transaction, error) {
	tx, _, err := fs.resolveIn(ctx)
	if err != nil {
		return nil, err
	}
	if !fs.e.mayRead(ctx, fs.m) {
		return nil, ErrFastFallback
	}
	return tx, nil
}

func (n *pointSelect) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	fs := n.fs
	tx, err := fs.begin(ctx)
	if err != nil {
		return nil, err
	}
	if n.none {
		return &rowsIter{}, nil
	}
	// the point read of go-mysql-server's plan
	addStatus(ctx, "Handler_read_key", 1)
	val, found, err := tx.txn.Get(codec.RecordKey(fs.m.def.ID, n.h))
	if err != nil || !found {
		return &rowsIter{}, err
	}
	row, err := fs.t.decodeRow(n.h, val, false)
	if err != nil {
		return nil, err
	}
	return oneRow(row), nil
}

// mayRead reports whether the session's user may SELECT from the table;
// go-mysql-server's analyzer checks this on the slow path.
func (e *Engine) mayRead(ctx *gms.Context, m *tableMeta) bool {
	db := e.SQL.Analyzer.Catalog.MySQLDb
	if db == nil || !db.Enabled() || m.def.ID >= catalog.TempIDBase {
		return true
	}
	return db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(
		gms.PrivilegeCheckSubject{Database: m.dbName, Table: m.def.Name}, gms.PrivilegeType_Select))
}

// rowsIter yields rows the fast path made for this statement alone, so
// unlike go-mysql-server's slice iterator it need not copy them.
type rowsIter struct {
	rows []gms.Row
	one  [1]gms.Row // the rows of oneRow, without a slice of their own
}

// oneRow iterates over the single row r.
func oneRow(r gms.Row) *rowsIter {
	it := &rowsIter{}
	it.one[0] = r
	it.rows = it.one[:]
	return it
}

func (it *rowsIter) Next(*gms.Context) (gms.Row, error) {
	if len(it.rows) == 0 {
		return nil, io.EOF
	}
	r := it.rows[0]
	it.rows = it.rows[1:]
	return r, nil
}

func (it *rowsIter) Close(*gms.Context) error { return nil }
