package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// The server side of the prepared-statement fast path (see sql/fastpath.go):
// statements recognised at COM_STMT_PREPARE are kept per connection and
// statement id, and COM_STMT_EXECUTE runs them without go-mysql-server's
// binding and analysis, through the same steps its handler takes for a
// bound plan (process list, session command hooks, transaction start and
// autocommit, tracked iterator) but spooling the rows inline.

// fastStmts holds the recognised prepared statements of all connections.
type fastStmts struct {
	mu    sync.Mutex
	conns map[uint32]map[uint32]*fastEntry
	// text statements of each connection by their normalized text
	// (fasttext.go)
	text map[uint32]map[string]*fastEntry
	// token keys of text statements (texttokens.go)
	shapes map[uint32]map[string]*textShape
	// disabled turns the fast path off (tests and A/B measurements).
	disabled bool
	hits     atomic.Int64 // executions served by the fast path
	// text statements recognised by their token key, without parsing
	shapeHits atomic.Int64
}

type fastEntry struct {
	query string
	stmt  *rsql.FastStmt
	// fields of the last execution's result columns, reused while the
	// schema and character_set_results stay the same
	fieldsSch     gms.Schema
	fieldsCharset gms.CharacterSetID
	fields        []*querypb.Field
}

// fastPathOff is set by REORGDB_FASTPATH=off in the environment, for A/B
// measurements with one binary.
var fastPathOff = os.Getenv("REORGDB_FASTPATH") == "off"

func (f *fastStmts) get(conn, id uint32, query string) *fastEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.disabled || fastPathOff {
		return nil
	}
	e := f.conns[conn][id]
	if e == nil || e.query != query {
		return nil
	}
	return e
}

// put records statement id of a connection; live lists the connection's
// prepared statements, so that closed ones are dropped (COM_STMT_CLOSE
// does not reach the handler).
func (f *fastStmts) put(conn, id uint32, e *fastEntry, live map[uint32]*mysql.PrepareData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		f.conns = map[uint32]map[uint32]*fastEntry{}
	}
	m := f.conns[conn]
	if m == nil {
		m = map[uint32]*fastEntry{}
		f.conns[conn] = m
	}
	if e == nil {
		delete(m, id)
	} else {
		m[id] = e
	}
	if len(m) > 16 {
		for sid := range m {
			if _, ok := live[sid]; !ok && sid != id {
				delete(m, sid)
			}
		}
	}
}

func (f *fastStmts) dropConn(conn uint32) {
	f.mu.Lock()
	delete(f.conns, conn)
	delete(f.text, conn)
	delete(f.shapes, conn)
	f.mu.Unlock()
}

// SetFastPath turns the prepared-statement fast path on or off (on by
// default); statements already prepared keep going to the slow path while
// it is off.
func (s *Server) SetFastPath(on bool) {
	s.fast.mu.Lock()
	s.fast.disabled = !on
	s.fast.mu.Unlock()
}

// FastPathHits is the number of executions the fast path has served.
func (s *Server) FastPathHits() int64 { return s.fast.hits.Load() }

// fastPrepare recognises a statement just prepared by go-mysql-server.
func (h *handler) fastPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) {
	fs := &h.s.fast
	var e *fastEntry
	if sm := h.sessions(); sm != nil {
		if sqlCtx, err := sm.NewContextWithQuery(ctx, c, query); err == nil {
			if st := h.s.engine.PrepareFast(sqlCtx, query); st != nil {
				e = &fastEntry{query: query, stmt: st}
			}
		}
	}
	fs.put(c.ConnectionID, p.StatementID, e, c.PrepareData)
}

func (h *handler) sessions() *gmsserver.SessionManager {
	if h.s.mysql == nil {
		return nil
	}
	return h.s.mysql.SessionManager()
}

// fastExecute runs a recognised statement; handled is false when the
// statement must go through go-mysql-server (nothing was sent then).
func (h *handler) fastExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) (handled bool, err error) {
	e := h.s.fast.get(c.ConnectionID, p.StatementID, p.PrepareStmt)
	if e == nil {
		return false, nil
	}
	node, ok := e.stmt.Bind(p.BindVars)
	if !ok {
		return false, nil
	}
	sm := h.sessions()
	if sm == nil {
		return false, nil
	}
	query := p.PrepareStmt
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return true, err
	}
	return h.fastRun(sqlCtx, c, query, e, node, cb)
}

// fastRun runs node, the bound fast statement of entry e, as
// go-mysql-server's handler runs a bound plan; handled is false when the
// statement must go through go-mysql-server after all (nothing was sent
// then).
func (h *handler) fastRun(sqlCtx *gms.Context, c *mysql.Conn, query string, e *fastEntry, node gms.Node, cb func(*sqltypes.Result) error) (handled bool, err error) {
	if ok, _ := gms.HasDefaultValue(sqlCtx, sqlCtx.Session, "sql_select_limit"); !ok {
		return false, nil
	}
	fallback, sent := false, false
	err = func() error {
		sqlCtx, err := sqlCtx.ProcessList.BeginQuery(sqlCtx, query)
		if err != nil {
			return err
		}
		defer sqlCtx.ProcessList.EndQuery(sqlCtx)
		if err := gms.SessionCommandBegin(sqlCtx.Session); err != nil {
			return err
		}
		defer gms.SessionCommandEnd(sqlCtx.Session)
		sqlCtx.ClearWarnings()

		sch, iter, _, err := h.s.engine.SQL.PrepQueryPlanForExecution(sqlCtx, query, node, nil)
		if errors.Is(err, rsql.ErrFastFallback) {
			fallback = true
			return nil
		}
		if err != nil {
			return err
		}
		if types.IsOkResultSchema(sch) {
			return h.fastOK(sqlCtx, c, node, iter, cb)
		}
		// Row values point into vals' chunks until the client has them,
		// which with a server-side cursor is after this returns: chunks
		// are neither reused nor pooled. Results go out in batches of rowsBatch rows,
		// like go-mysql-server's.
		var vals sqlValues
		fields := e.fieldsFor(sqlCtx, sch)
		res := &sqltypes.Result{Fields: fields}
		for {
			row, err := iter.Next(sqlCtx)
			if err == io.EOF {
				break
			}
			if err != nil {
				iter.Close(sqlCtx)
				return err
			}
			out, err := vals.fromRow(sqlCtx, sch, row)
			if err != nil {
				iter.Close(sqlCtx)
				return err
			}
			res.Rows = append(res.Rows, out)
			res.RowsAffected++
			if len(res.Rows) == rowsBatch {
				if err := cb(res); err != nil {
					iter.Close(sqlCtx)
					return err
				}
				res = &sqltypes.Result{Fields: fields}
				sent = true
			}
		}
		if err := iter.Close(sqlCtx); err != nil {
			return err
		}
		if sent && len(res.Rows) == 0 {
			setStatusFlags(sqlCtx, c)
			return nil
		}
		setStatusFlags(sqlCtx, c)
		return cb(res)
	}()
	if fallback {
		return false, nil
	}
	for _, name := range e.stmt.Counters() {
		gms.IncrementStatusVariable(sqlCtx, name, 1)
	}
	h.s.fast.hits.Add(1)
	if err != nil {
		err = gms.CastSQLError(err)
	}
	return true, err
}

// fastOK sends the OK packet of a write statement as go-mysql-server's
// handler does (resultFromOkResult).
func (h *handler) fastOK(ctx *gms.Context, c *mysql.Conn, node gms.Node, iter gms.RowIter, cb func(*sqltypes.Result) error) error {
	fin, _ := node.(interface{ Finish(*gms.Context, bool) })
	row, err := iter.Next(ctx)
	if cerr := iter.Close(ctx); err == nil {
		err = cerr
	}
	if fin != nil {
		fin.Finish(ctx, err == nil)
	}
	if err != nil {
		return err
	}
	ok, isOK := row[0].(types.OkResult)
	if !isOK {
		return fmt.Errorf("reorgdb: fast write returned %T", row[0])
	}
	res := &sqltypes.Result{RowsAffected: ok.RowsAffected, InsertID: ok.InsertID}
	if ok.Info != nil {
		res.Info = ok.Info.String()
	}
	setStatusFlags(ctx, c)
	return cb(res)
}

// rowsBatch is how many rows go to the client per callback, as in
// go-mysql-server's handler.
const rowsBatch = 128

// setStatusFlags sets the autocommit and in-transaction bits of the
// connection's status, as go-mysql-server does after each statement.
func setStatusFlags(ctx *gms.Context, c *mysql.Conn) {
	if v, err := ctx.GetSessionVariable(ctx, gms.AutoCommitSessionVar); err == nil {
		if on, err := gms.ConvertToBool(ctx, v); err == nil {
			if on {
				c.StatusFlags |= uint16(mysql.ServerStatusAutocommit)
			} else {
				c.StatusFlags &^= uint16(mysql.ServerStatusAutocommit)
			}
		}
	}
	if ctx.GetTransaction() != nil {
		c.StatusFlags |= uint16(mysql.ServerInTransaction)
	} else {
		c.StatusFlags &^= uint16(mysql.ServerInTransaction)
	}
}

// fieldsFor describes the result columns as go-mysql-server's handler
// does (server.schemaToFields, which is not exported).
func (e *fastEntry) fieldsFor(ctx *gms.Context, sch gms.Schema) []*querypb.Field {
	cs := ctx.GetCharacterSetResults()
	if e.fields != nil && e.fieldsCharset == cs && len(e.fieldsSch) == len(sch) && (len(sch) == 0 || &e.fieldsSch[0] == &sch[0]) {
		return e.fields
	}
	fields := make([]*querypb.Field, len(sch))
	for i, c := range sch {
		charset := uint32(gms.Collation_Default.CharacterSet())
		if ct, ok := c.Type.(gms.TypeWithCollation); ok {
			charset = uint32(ct.Collation().CharacterSet())
		}
		if types.IsBinaryType(c.Type) {
			charset = uint32(gms.Collation_binary)
		} else if cs != gms.CharacterSet_Unspecified {
			charset = uint32(cs)
		}
		var flags querypb.MySqlFlag
		if !c.Nullable {
			flags |= querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if c.AutoIncrement {
			flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if c.PrimaryKey {
			flags |= querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(c.Type) {
			flags |= querypb.MySqlFlag_UNSIGNED_FLAG
		}
		f := &querypb.Field{
			Name: c.Name, OrgName: c.Name, Table: c.Source, OrgTable: c.Source, Database: c.DatabaseSource,
			Type: c.Type.Type(), Charset: charset, ColumnLength: c.Type.MaxTextResponseByteLength(ctx), Flags: uint32(flags),
		}
		if types.IsDecimal(c.Type) {
			f.Decimals = uint32(c.Type.(gms.DecimalType).Scale())
		} else if p := rsql.Precision(c.Type); p >= 0 {
			f.Decimals = uint32(p)
		}
		fields[i] = f
	}
	e.fields, e.fieldsSch, e.fieldsCharset = fields, sch, cs
	return fields
}

// sqlValues hands out the wire values of result rows, and the bytes
// they point to, from shared chunks. A result's rows are written to the
// client together and then dropped, so one row's values keeping a chunk
// alive costs nothing; a full chunk is left as it is and a new one taken,
// never copied as go-mysql-server's ByteBuffer does when it doubles.
type sqlValues struct {
	free []sqltypes.Value
	rows int    // rows the next chunk of values holds: doubles from one up to rowsBatch
	buf  []byte // bytes of values; appended to, never rewritten
	// utf8Results is whether strings go to the client in utf8mb4
	// (character_set_results utf8mb4, binary or NULL): 0 until asked.
	utf8Results int8
}

const (
	valueBytesMin = 512      // the first chunk of value bytes of a statement
	valueBytesMax = 16 << 10 // the largest chunk taken when one fills
	valueBytesLow = 64       // a chunk with less room left is replaced
)

// fromRow is go-mysql-server's RowToSQL without a projection.
func (v *sqlValues) fromRow(ctx *gms.Context, sch gms.Schema, row gms.Row) ([]sqltypes.Value, error) {
	n := len(sch)
	if len(v.free) < n {
		v.rows = min(max(2*v.rows, 1), rowsBatch)
		v.free = make([]sqltypes.Value, v.rows*n)
	}
	out := v.free[:n:n]
	v.free = v.free[n:]
	for i, col := range sch {
		if row[i] == nil {
			out[i] = sqltypes.NULL
			continue
		}
		val, err := v.sql(ctx, col.Type, row[i])
		if err != nil {
			return nil, err
		}
		out[i] = val
	}
	return out, nil
}

// sql is t.SQL of x, written into the current chunk when it fits there.
func (v *sqlValues) sql(ctx *gms.Context, t gms.Type, x any) (sqltypes.Value, error) {
	if s, ok := x.(string); ok {
		if val, ok := v.utf8String(ctx, t, s); ok {
			return val, nil
		}
	}
	if cap(v.buf)-len(v.buf) < valueBytesLow {
		v.buf = make([]byte, 0, min(max(2*cap(v.buf), valueBytesMin), valueBytesMax))
	}
	at := len(v.buf)
	val, err := t.SQL(ctx, v.buf[at:at], x)
	// Keep the bytes SQL appended in place. If they did not fit, append
	// made them a slice of their own, and the next value takes a new
	// chunk.
	switch raw := val.Raw(); {
	case len(raw) == 0:
	case len(raw) <= cap(v.buf)-at && &raw[0] == &v.buf[:at+1][at]:
		v.buf = v.buf[:at+len(raw)]
	default:
		v.buf = v.buf[:cap(v.buf)]
	}
	return val, err
}

// utf8String is t.SQL of a string that goes to the client as it is: a
// utf8mb4 column's value, sent in utf8mb4. The value points at the
// string's bytes instead of a copy; strings are immutable, and the
// protocol writer only reads them. ok is false when t.SQL must convert.
func (v *sqlValues) utf8String(ctx *gms.Context, t gms.Type, s string) (val sqltypes.Value, ok bool) {
	st, isStr := t.(types.StringType)
	if !isStr || s == "" || types.IsBinaryType(st) || st.CharacterSet() != gms.CharacterSet_utf8mb4 {
		return sqltypes.Value{}, false
	}
	if v.utf8Results == 0 {
		v.utf8Results = -1
		switch ctx.GetCharacterSetResults() {
		case gms.CharacterSet_Unspecified, gms.CharacterSet_binary, gms.CharacterSet_utf8mb4:
			v.utf8Results = 1
		}
	}
	// An invalid string takes t.SQL's path, which reports it.
	if v.utf8Results < 0 || !utf8.ValidString(s) {
		return sqltypes.Value{}, false
	}
	return sqltypes.MakeTrusted(st.Type(), unsafe.Slice(unsafe.StringData(s), len(s))), true
}
