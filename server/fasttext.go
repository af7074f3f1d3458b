package server

import (
	"context"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The fast path for text statements (COM_QUERY). Clients that put their
// values into the statement text (PyMySQL, go-sql-driver with
// interpolateParams, sysbench's oltp_insert) would otherwise pay for
// go-mysql-server's parse, bind and analysis on every statement. The
// statement's literals are turned into bind variables
// (sqlparser.Normalize); if the result is a shape the prepared-statement
// fast path serves, it runs as an execution of that prepared statement
// would.
//
// That is exact because go-mysql-server binds a parameter by turning it
// back into a literal (sqlparser.ExprFromValue): an Int64 bind variable
// becomes the IntVal and a VarBinary one the StrVal that Normalize took
// it from, so the prepared statement with these values means what the
// text meant. Normalize's other kind, Float64, comes back as a float
// where the text had a DECIMAL (1.5) and is refused, like IN lists.
// Literals Normalize leaves alone (NULL, TRUE, hex, bit, introducers such
// as _utf8mb4'x', which wrap the string) leave an expression where the
// shape wants a parameter, so the statement is not a fast shape.

// textCacheSize bounds the normalized statements kept per connection.
const textCacheSize = 64

// shapeGet returns the cached shape of a connection's token key.
func (f *fastStmts) shapeGet(conn uint32, key string) *textShape {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shapes[conn][key]
}

func (f *fastStmts) shapePut(conn uint32, key string, s *textShape) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shapes == nil {
		f.shapes = map[uint32]map[string]*textShape{}
	}
	m := f.shapes[conn]
	if m == nil {
		m = map[string]*textShape{}
		f.shapes[conn] = m
	}
	if len(m) >= textCacheSize {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = s
}

// textGet returns the entry of a connection's normalized statement; an
// entry without stmt records a statement that is no fast shape.
func (f *fastStmts) textGet(conn uint32, key string) (e *fastEntry, found bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, found = f.text[conn][key]
	return e, found
}

func (f *fastStmts) textPut(conn uint32, key string, e *fastEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.text == nil {
		f.text = map[uint32]map[string]*fastEntry{}
	}
	m := f.text[conn]
	if m == nil {
		m = map[string]*fastEntry{}
		f.text[conn] = m
	}
	if len(m) >= textCacheSize {
		// An arbitrary victim: a client with more distinct statements
		// than this cycles through them whatever is evicted.
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = e
}

func (f *fastStmts) off() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.disabled || fastPathOff
}

// maxFastText is the longest text statement the fast path considers.
const maxFastText = 8 << 10

// textCandidate is the cheap test a text statement must pass before it is
// parsed: one statement (no ';', which could start another), no comment
// that could be a hint or versioned code, and a first keyword the fast
// path serves. A long statement is not one: the fast path serves
// single-row statements, and tokenizing a multi-row INSERT of a bulk load
// or a restored dump only to find so would cost about as much as
// go-mysql-server's own parse of it.
func textCandidate(q string) bool {
	if len(q) > maxFastText || strings.IndexByte(q, ';') >= 0 || strings.Contains(q, "/*") || len(q) < 7 {
		return false
	}
	kw := q[:6]
	return strings.EqualFold(kw, "select") || strings.EqualFold(kw, "update") ||
		strings.EqualFold(kw, "delete") || strings.EqualFold(kw, "insert")
}

// fastQuery serves a text statement through the fast path; handled is
// false when go-mysql-server must run it (nothing was sent then).
func (h *handler) fastQuery(ctx context.Context, c *mysql.Conn, query string, cb func(*sqltypes.Result) error) (handled bool, err error) {
	fs := &h.s.fast
	// go-mysql-server trims the statement so before parsing it.
	q := gms.RemoveSpaceAndDelimiter(query, ';')
	if fs.off() || !textCandidate(q) {
		return false, nil
	}
	sm := h.sessions()
	if sm == nil {
		return false, nil
	}
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return false, nil
	}
	// The sql_mode's parser options (ANSI_QUOTES) are go-mysql-server's.
	opts := gms.LoadSqlMode(sqlCtx).ParserOptions()
	tokKey, lits, tokOK := textTokens(q, opts.AnsiQuotes)
	if tokOK {
		if sh := fs.shapeGet(c.ConnectionID, tokKey); sh != nil {
			if sh.e == nil {
				return false, nil
			}
			if vars, ok := sh.bind(lits); ok {
				if node, ok := sh.e.stmt.Bind(vars); ok {
					fs.shapeHits.Add(1)
					return h.fastRun(sqlCtx, c, query, sh.e, node, cb)
				}
			}
		}
	}
	e, key, vars, notFast := h.parseText(sqlCtx, c, q, opts)
	if tokOK && notFast && litsBindable(lits) {
		fs.shapePut(c.ConnectionID, tokKey, &textShape{})
	}
	if e == nil {
		return false, nil
	}
	node, ok := e.stmt.Bind(vars)
	if !ok {
		return false, nil
	}
	if tokOK {
		if sh := shapeOf(e, lits, key, vars); sh != nil {
			fs.shapePut(c.ConnectionID, tokKey, sh)
		}
	}
	return h.fastRun(sqlCtx, c, query, e, node, cb)
}

// parseText parses and normalizes a text statement and finds its fast
// statement (e nil if none); notFast says its shape is one the fast path
// never serves, whatever its literals.
func (h *handler) parseText(sqlCtx *gms.Context, c *mysql.Conn, q string, opts sqlparser.ParserOptions) (e *fastEntry, key string, vars map[string]*querypb.BindVariable, notFast bool) {
	fs := &h.s.fast
	stmt, err := sqlparser.ParseWithOptions(sqlCtx, q, opts)
	if err != nil {
		return nil, "", nil, false
	}
	// Placeholders of the text's own would share names with those
	// Normalize makes.
	if len(sqlparser.GetBindvars(stmt)) > 0 {
		return nil, "", nil, false
	}
	vars = map[string]*querypb.BindVariable{}
	sqlparser.Normalize(stmt, vars, "v")
	for _, bv := range vars {
		if bv.Type != sqltypes.Int64 && bv.Type != sqltypes.VarBinary {
			return nil, "", nil, false
		}
	}
	key = sqlparser.String(stmt)
	e, found := fs.textGet(c.ConnectionID, key)
	if !found {
		st, shape := h.s.engine.PrepareFastText(sqlCtx, stmt)
		switch {
		case st != nil:
			e = &fastEntry{query: key, stmt: st}
			fs.textPut(c.ConnectionID, key, e)
		case !shape:
			e = &fastEntry{query: key}
			fs.textPut(c.ConnectionID, key, e)
		}
	}
	if e == nil {
		return nil, key, vars, false
	}
	if e.stmt == nil {
		return nil, key, vars, true
	}
	return e, key, vars, false
}
