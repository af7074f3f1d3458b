package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// handler wraps go-mysql-server's protocol handler to keep the status
// flags of OK and EOF packets true (status.go), give errors MySQL's codes
// and texts (errors.go), refuse what go-mysql-server would mishandle
// (precheck.go), count statements, and turn a panic inside one statement
// into error 1105 for that client instead of a dead server.
type handler struct {
	mysql.Handler
	ext mysql.ExtendedHandler
	s   *Server
}

func newHandler(h mysql.Handler, s *Server) *handler {
	ext, _ := h.(mysql.ExtendedHandler)
	return &handler{Handler: h, ext: ext, s: s}
}

func (h *handler) recoverTo(err *error, query string) {
	if r := recover(); r != nil {
		h.s.log.Error("panic in statement", "query", truncate(query, 200), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "internal error: %v", r)
	}
}

func (h *handler) done(c *mysql.Conn, query string, err error) error {
	outcome := 0
	if err != nil {
		outcome = 1
	}
	h.s.stmtCounts[statementType(query)][outcome].Inc()
	h.afterStatement(c, query)
	if err == nil {
		return nil
	}
	return mapError(err, h.stmtInfo(c, query))
}

// NewConnection registers the connection and gives the handshake the
// status flags a new session will have.
func (h *handler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	st := &connState{mc: c}
	st.handshake = globalFlags()
	st.noBackslash.Store(st.handshake&statusNoBackslashEsc != 0)
	c.StatusFlags = c.StatusFlags&^sessionStatusMask | st.handshake
	h.s.conns.Store(c.ConnectionID, st)
	if pc, ok := c.Conn.(*protoConn); ok {
		pc.attach(h.s, st)
	}
}

func (h *handler) ConnectionClosed(c *mysql.Conn) {
	h.waitPrev(c)
	if st := h.s.connState(c.ConnectionID); st != nil {
		st.endStatements()
	}
	defer h.s.conns.Delete(c.ConnectionID)
	h.s.fast.dropConn(c.ConnectionID)
	h.Handler.ConnectionClosed(c)
}

func (h *handler) ConnectionAborted(c *mysql.Conn, reason string) error {
	if st := h.s.connState(c.ConnectionID); st != nil {
		st.endStatements()
	}
	h.s.conns.Delete(c.ConnectionID)
	h.s.fast.dropConn(c.ConnectionID)
	return h.Handler.ConnectionAborted(c, reason)
}

// ComResetConnection: the connection's prepared statements (and their fast
// paths) are gone.
func (h *handler) ComResetConnection(c *mysql.Conn) error {
	h.waitPrev(c)
	defer h.syncStatus(c)
	h.s.fast.dropConn(c.ConnectionID)
	if st := h.s.connState(c.ConnectionID); st != nil {
		st.mu.Lock()
		st.execErr, st.stmtTypes, st.doStmts = nil, nil, nil
		st.mu.Unlock()
	}
	return fixError(h.Handler.ComResetConnection(c))
}

func (h *handler) ComInitDB(c *mysql.Conn, db string) error {
	h.waitPrev(c)
	defer h.syncStatus(c)
	return fixError(h.Handler.ComInitDB(c, db))
}

// waitPrev waits until no abandoned statement of c uses its session.
func (h *handler) waitPrev(c *mysql.Conn) {
	if st := h.s.connState(c.ConnectionID); st != nil {
		st.waitPrev()
	}
}

// spool wraps a result callback: before vitess writes an OK packet or a
// result set's header, the status flags are brought up to date and the
// result gets MySQL's affected-row count.
func (h *handler) spool(c *mysql.Conn, query string, cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	typ := statementType(query)
	dbBefore := ""
	if typ == "drop" {
		dbBefore = h.currentDB(c)
	}
	return func(r *sqltypes.Result, more bool) error {
		h.syncStatus(c)
		if typ == "set" && r != nil && len(r.Fields) == 0 {
			// MySQL reports 0 rows affected for every SET statement.
			r.RowsAffected = 0
		}
		if dbBefore != "" && h.currentDB(c) == "" && reDropDB.MatchString(query) {
			// The OK of DROP DATABASE says the current database went.
			c.StatusFlags |= statusDBDropped
			defer func() { c.StatusFlags &^= statusDBDropped }()
		}
		if r != nil && len(r.Fields) > 0 {
			rsql.FixFields(r.Fields, func() []int8 { return h.resultPrecisions(c, query) })
			aliasCase(r.Fields, query)
		}
		if r != nil {
			rsql.FixValues(r.Fields, r.Rows)
		}
		if r != nil && len(r.Fields) == 0 && r.Info != "" {
			return writeInfoOK(c, r, more, cb)
		}
		return cb(r, more)
	}
}

// resultPrecisions is what the planner recorded of query's temporal
// result columns (rsql.FixFields).
func (h *handler) resultPrecisions(c *mysql.Conn, query string) []int8 {
	if st := h.s.connState(c.ConnectionID); st != nil {
		if sess, ok := st.session().(*rsql.Session); ok {
			return sess.ResultPrecisions(query)
		}
	}
	return nil
}

var reDropDB = regexp.MustCompile(`(?i)^\s*DROP\s+(?:DATABASE|SCHEMA)\b`)

// currentDB is the connection's current database.
func (h *handler) currentDB(c *mysql.Conn) string {
	if st := h.s.connState(c.ConnectionID); st != nil {
		if sess := st.session(); sess != nil {
			return sess.GetCurrentDatabase()
		}
	}
	return ""
}

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (err error) {
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	query = dumpCompat(query)
	if q, isDo := doAsSelect(query); isDo {
		query, cb = q, okOnly(cb)
	}
	cb = h.spool(c, query, cb)
	if rsql.IsResetPersist(query) {
		return h.done(c, query, h.resetPersist(c, query, cb))
	}
	if rsql.IsOptimize(query) {
		return h.done(c, query, h.optimize(ctx, c, query, cb))
	}
	if tables, ok, perr := rsql.ChecksumTables(query); ok || perr != nil {
		if perr == nil {
			perr = h.checksum(ctx, c, query, tables, cb)
		}
		return h.done(c, query, perr)
	}
	if isAdmin(query) {
		var res *sqltypes.Result
		if res, err = h.admin(c, query); err == nil {
			err = cb(res, false)
		}
		return h.done(c, query, err)
	}
	if res, ok, serr := h.mysqlSchema(c, query); ok {
		if serr == nil {
			serr = cb(res, false)
		}
		return h.done(c, query, serr)
	}
	if res, ok, serr := h.showCreateUser(c, query); ok {
		if serr == nil {
			serr = cb(res, false)
		}
		return h.done(c, query, serr)
	}
	if err = h.precheck(c, query); err != nil {
		return h.done(c, query, err)
	}
	if err = h.commitBeforeAccounts(ctx, c, query); err != nil {
		return h.done(c, query, err)
	}
	query, acctAfter, handled, err := h.accountTLSBefore(c, query)
	if err == nil && handled {
		if err = cb(&sqltypes.Result{}, false); err == nil && acctAfter != nil {
			err = acctAfter()
		}
	}
	if err != nil || handled {
		return h.done(c, query, err)
	}
	txnOnce, err := h.txnOnceBefore(c, query)
	if err != nil {
		return h.done(c, query, err)
	}
	if q, noop := h.ifExists(c, query); noop {
		return h.done(c, query, cb(&sqltypes.Result{}, false))
	} else {
		query = q
	}
	query = rsql.QuotePrimaryInHints(query)
	if query, err = checkDDLOptions(query); err != nil {
		return h.done(c, query, err)
	}
	alterIx, err := rsql.ParseAlterIndex(query)
	if err != nil {
		return h.done(c, query, err)
	}
	if handled, ferr := h.fastInline(ctx, c, query, func(r *sqltypes.Result) error { return cb(r, false) }); handled {
		return h.done(c, query, ferr)
	}
	err = unwrapAbandoned(h.run(ctx, c, query, true, func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		gated := gate(cb)
		if alterIx != nil {
			return h.alterIndex(ctx, c, query, alterIx, func(r *sqltypes.Result) error { return gated(r, false) })
		}
		// The fast path (fasttext.go) runs here too, so that
		// max_execution_time stops it as it stops the slow path.
		if handled, ferr := h.fastQuery(ctx, c, query, func(r *sqltypes.Result) error { return gated(r, false) }); handled {
			return ferr
		}
		return h.Handler.ComQuery(ctx, c, query, gated)
	}))
	if err == nil {
		h.afterKill(query)
		if txnOnce != nil {
			txnOnce()
		}
		if acctAfter != nil {
			err = acctAfter()
		}
	}
	return h.done(c, query, err)
}

// fastInline serves a text statement through the fast path on the
// connection's own goroutine, as the prepared fast path is served: what
// such a statement waits for (row locks) ends on its
// context, which KILL cancels, so it never needs abandoning (run), and a
// hand-off to another goroutine would cost more than the statement. One
// with a max_execution_time goes through run, whose timer stops it.
func (h *handler) fastInline(ctx context.Context, c *mysql.Conn, query string, cb func(*sqltypes.Result) error) (handled bool, err error) {
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return false, nil
	}
	st.waitPrev()
	if execTimeout(st.session(), query) > 0 {
		return false, nil
	}
	return h.fastQuery(ctx, c, query, cb)
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (rest string, err error) {
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	query = dumpCompat(query)
	if q, isDo := doAsSelect(query); isDo {
		query, cb = q, okOnly(cb)
	}
	if rsql.IsResetPersist(query) {
		return "", h.done(c, query, h.resetPersist(c, query, h.spool(c, query, cb)))
	}
	if rsql.IsOptimize(query) {
		return "", h.done(c, query, h.optimize(ctx, c, query, h.spool(c, query, cb)))
	}
	if tables, ok, perr := rsql.ChecksumTables(query); ok || perr != nil {
		if perr == nil {
			perr = h.checksum(ctx, c, query, tables, h.spool(c, query, cb))
		}
		return "", h.done(c, query, perr)
	}
	if isAdmin(query) {
		var res *sqltypes.Result
		if res, err = h.admin(c, query); err == nil {
			err = h.spool(c, query, cb)(res, false)
		}
		return "", h.done(c, query, err)
	}
	if res, ok, serr := h.showCreateUser(c, query); ok {
		if serr == nil {
			serr = h.spool(c, query, cb)(res, false)
		}
		return "", h.done(c, query, serr)
	}
	first, others := query, ""
	if strings.Contains(query, ";") { // else it is one statement
		if f, r, serr := sqlparser.SplitStatement(query); serr == nil && f != "" {
			first, others = f, r
		}
	}
	if res, ok, serr := h.mysqlSchema(c, first); ok {
		if serr != nil {
			return "", h.done(c, first, serr)
		}
		return others, h.done(c, first, h.spool(c, first, cb)(res, false))
	}
	if err = h.precheck(c, first); err != nil {
		return "", h.done(c, first, err)
	}
	if err = h.commitBeforeAccounts(ctx, c, first); err != nil {
		return "", h.done(c, first, err)
	}
	// ALTER USER loses its REQUIRE clause, a GRANT names the account of
	// CURRENT_USER(): first is a prefix of query.
	var acctAfter func() error
	if f, after, handled, aerr := h.accountTLSBefore(c, first); aerr != nil || handled {
		if aerr == nil && after != nil {
			aerr = after()
		}
		if aerr == nil {
			aerr = h.spool(c, first, cb)(&sqltypes.Result{}, others != "")
		}
		if aerr != nil {
			others = ""
		}
		return others, h.done(c, first, aerr)
	} else if (after != nil || f != first) && strings.HasPrefix(query, first) {
		query, first, acctAfter = f+query[len(first):], f, after
	}
	txnOnce, err := h.txnOnceBefore(c, first)
	if err != nil {
		return "", h.done(c, first, err)
	}
	if q, noop := h.ifExists(c, query); noop {
		return "", h.done(c, query, h.spool(c, query, cb)(&sqltypes.Result{}, false))
	} else {
		query = q
	}
	query = rsql.QuotePrimaryInHints(query)
	if query, err = checkDDLOptions(query); err != nil {
		return "", h.done(c, query, err)
	}
	// A text without ';' is one statement (fasttext.go), whose
	// process-list entry go-mysql-server trims.
	one := gms.RemoveSpaceAndDelimiter(query, ';')
	if alterIx, aerr := rsql.ParseAlterIndex(first); aerr != nil {
		return "", h.done(c, first, aerr)
	} else if alterIx != nil && !strings.Contains(one, ";") {
		err = unwrapAbandoned(h.run(ctx, c, one, true, func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
			gated := gate(h.spool(c, query, cb))
			return h.alterIndex(ctx, c, one, alterIx, func(r *sqltypes.Result) error { return gated(r, false) })
		}))
		return "", h.done(c, query, err)
	}
	if !strings.Contains(one, ";") {
		spool := h.spool(c, query, cb)
		if handled, ferr := h.fastInline(ctx, c, one, func(r *sqltypes.Result) error { return spool(r, false) }); handled {
			return "", h.done(c, query, ferr)
		}
	}
	// The callback gets the results of query's first statement only,
	// whose type statementType sees.
	var got string
	err = h.run(ctx, c, first, true, func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		gated := gate(h.spool(c, query, cb))
		if !strings.Contains(one, ";") {
			if handled, ferr := h.fastQuery(ctx, c, one, func(r *sqltypes.Result) error { return gated(r, false) }); handled {
				got = ""
				return ferr
			}
		}
		var rerr error
		got, rerr = h.Handler.ComMultiQuery(ctx, c, query, gated)
		return rerr
	})
	stmt := query
	if errors.Is(err, errAbandoned) {
		// The rest of the statements are not run, as in MySQL.
		err, stmt = errors.Unwrap(err), first
	} else if rest = got; len(rest) <= len(query) {
		stmt = query[:len(query)-len(rest)]
	}
	if err == nil {
		h.afterKill(stmt)
		if txnOnce != nil {
			txnOnce()
		}
		if acctAfter != nil {
			err = acctAfter()
		}
	}
	return rest, h.done(c, stmt, err)
}

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) (f []*querypb.Field, err error) {
	h.waitPrev(c)
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	if err = h.precheck(c, query); err != nil {
		return nil, err
	}
	if err = checkPreparedRequire(query); err != nil {
		return nil, err
	}
	if query, err = checkDDLOptions(query); err != nil {
		return nil, err
	}
	if st, aerr := rsql.ParseAlterIndex(query); aerr != nil || st != nil {
		// Run as text only (alterindex.go); prepared, it would do nothing.
		return nil, mysql.NewSQLError(1295, "HY000", "This command is not supported in the prepared statement protocol yet")
	}
	if tooManyPlaceholders(query) {
		return nil, mysql.NewSQLError(1390, mysql.SSUnknownSQLState, "Prepared statement contains too many placeholders")
	}
	// go-mysql-server analyses the statement to prepare it, which a huge
	// one makes take minutes: KILL and a disconnect stop it too.
	var got []*querypb.Field
	err = h.run(ctx, c, query, false, func(ctx context.Context, _ func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		var perr error
		got, perr = h.Handler.ComPrepare(ctx, c, query, p)
		return perr
	})
	if errors.Is(err, errAbandoned) {
		err = errors.Unwrap(err)
	} else {
		f = got
	}
	rsql.FixFields(f, func() []int8 { return h.resultPrecisions(c, query) })
	aliasCase(f, query)
	if err != nil {
		err = mapError(err, h.stmtInfo(c, query))
	} else {
		h.fastPrepare(ctx, c, query, p)
	}
	if st := h.s.connState(c.ConnectionID); st != nil && st.prepareDo.Swap(false) && err == nil {
		f = nil
		st.markDo(p.StatementID)
	}
	return f, err
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) (err error) {
	// With a cursor this runs on a goroutine of its own while the
	// connection's goroutine serves fetches and sets cursor flags; it then
	// touches the flags only before handing over its first result.
	// A statement abandoned earlier may still be busy with the session
	// (interrupt.go); the fast path uses it too.
	h.waitPrev(c)
	cursor := false
	if st := h.s.connState(c.ConnectionID); st != nil {
		cursor = st.cursor.Load()
	}
	binCB := cb
	cb = func(r *sqltypes.Result) error {
		zeroDatesBinary(r)
		return binCB(r)
	}
	called := false
	defer func() {
		if !cursor || !called {
			h.syncStatus(c)
		}
	}()
	defer h.recoverTo(&err, p.PrepareStmt)
	if st := h.s.connState(c.ConnectionID); st != nil {
		st.mu.Lock()
		bad := st.execErr[p.StatementID]
		delete(st.execErr, p.StatementID)
		st.mu.Unlock()
		if bad != nil {
			return h.done(c, p.PrepareStmt, bad)
		}
	}
	var inner mysql.ResultSpoolFn = func(r *sqltypes.Result, _ bool) error { return cb(r) }
	if st := h.s.connState(c.ConnectionID); st != nil && st.isDo(p.StatementID) {
		inner = okOnly(inner)
	}
	spool := h.spool(c, p.PrepareStmt, inner)
	send := func(r *sqltypes.Result) error {
		if cursor && called {
			return cb(r)
		}
		called = true
		return spool(r, false)
	}
	if handled, ferr := h.fastExecute(ctx, c, p, send); handled {
		return h.done(c, p.PrepareStmt, ferr)
	}
	// Prepared account statements have no REQUIRE (ComPrepare), but
	// CREATE and DROP USER reset it and ALTER USER may be done here.
	if err = h.commitBeforeAccounts(ctx, c, p.PrepareStmt); err != nil {
		return h.done(c, p.PrepareStmt, err)
	}
	_, acctAfter, acctDone, err := h.accountTLSBefore(c, p.PrepareStmt)
	if err == nil && acctDone {
		err = send(&sqltypes.Result{})
	}
	if err != nil || acctDone {
		if err == nil && acctAfter != nil {
			err = acctAfter()
		}
		return h.done(c, p.PrepareStmt, err)
	}
	exec := func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		gated := gate(spool)
		return h.Handler.ComStmtExecute(ctx, c, p, func(r *sqltypes.Result) error {
			if cursor && called {
				return cb(r)
			}
			called = true
			return gated(r, false)
		})
	}
	if cursor {
		// The cursor's fetches are served while this runs.
		err = exec(ctx, func(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn { return cb })
	} else {
		err = unwrapAbandoned(h.run(ctx, c, p.PrepareStmt, true, exec))
	}
	if err == nil && acctAfter != nil {
		err = acctAfter()
	}
	return h.done(c, p.PrepareStmt, err)
}

func (h *handler) ComParsedQuery(ctx context.Context, c *mysql.Conn, query string, parsed sqlparser.Statement, cb mysql.ResultSpoolFn) (err error) {
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	err = h.ext.ComParsedQuery(ctx, c, query, parsed, h.spool(c, query, cb))
	return h.done(c, query, err)
}

func (h *handler) ComPrepareParsed(ctx context.Context, c *mysql.Conn, query string, parsed sqlparser.Statement, p *mysql.PrepareData) (pq mysql.ParsedQuery, f []*querypb.Field, err error) {
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	pq, f, err = h.ext.ComPrepareParsed(ctx, c, query, parsed, p)
	return pq, f, fixError(err)
}

func (h *handler) ComBind(ctx context.Context, c *mysql.Conn, query string, pq mysql.ParsedQuery, p *mysql.PrepareData) (bq mysql.BoundQuery, f []*querypb.Field, err error) {
	defer h.recoverTo(&err, query)
	bq, f, err = h.ext.ComBind(ctx, c, query, pq, p)
	return bq, f, fixError(err)
}

func (h *handler) ComExecuteBound(ctx context.Context, c *mysql.Conn, query string, bq mysql.BoundQuery, cb mysql.ResultSpoolFn) (err error) {
	defer h.syncStatus(c)
	defer h.recoverTo(&err, query)
	err = h.ext.ComExecuteBound(ctx, c, query, bq, h.spool(c, query, cb))
	return h.done(c, query, err)
}

// statementType is the first keyword of a statement, for metrics.
func statementType(q string) string {
	q = strings.TrimLeft(q, " \t\r\n(")
	for strings.HasPrefix(q, "/*") {
		end := strings.Index(q, "*/")
		if end < 0 {
			break
		}
		q = strings.TrimLeft(q[end+2:], " \t\r\n(")
	}
	// Lowered into a stack buffer: this runs several times per statement.
	var buf [len("describe") + 1]byte
	n := 0
	for ; n < len(q) && n < len(buf); n++ {
		c := q[n]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		} else if c < 'a' || c > 'z' {
			break
		}
		buf[n] = c
	}
	if n == len(buf) {
		return "other"
	}
	for _, w := range statementTypes {
		if string(buf[:n]) == w {
			return w
		}
	}
	return "other"
}

// statementTypes are the first keywords statementType tells apart.
var statementTypes = [...]string{"select", "insert", "update", "delete", "replace", "begin", "start", "commit", "rollback",
	"create", "drop", "alter", "show", "set", "use", "truncate", "admin", "explain", "describe", "desc"}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// resetPersist runs RESET PERSIST, which go-mysql-server's parser does
// not know. Its warning (IF EXISTS of a variable not persisted) replaces
// the previous statement's, as a statement's warnings do.
func (h *handler) resetPersist(c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	h.waitPrev(c)
	warn, err := h.s.engine.ResetPersist(query, h.s.hasPrivilege(c.UserData, "system_variables_admin"))
	if err != nil {
		return err
	}
	if st := h.s.connState(c.ConnectionID); st != nil {
		if sess := st.session(); sess != nil {
			sess.ClearWarnings()
			if warn != nil {
				sess.Warn(&gms.Warning{Level: "Warning", Code: warn.Num, Message: warn.Message})
			}
		}
	}
	return cb(&sqltypes.Result{}, false)
}

// optimize runs OPTIMIZE TABLE, which go-mysql-server's parser does not
// know, and answers with MySQL's result set.
func (h *handler) optimize(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	h.waitPrev(c)
	if err := rsql.ReadOnlyRefuses(h.s.hasPrivilege(c.UserData, "connection_admin")); err != nil {
		return err
	}
	db := h.currentDB(c)
	// Through run, so that KILL QUERY and a client that goes away stop
	// a long compaction.
	return unwrapAbandoned(h.run(ctx, c, query, false, func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		res, err := h.s.engine.Optimize(ctx, h.session(c), query, db)
		if err != nil {
			return err
		}
		out := &sqltypes.Result{Fields: []*querypb.Field{varcharField("Table"), varcharField("Op"), varcharField("Msg_type"), varcharField("Msg_text")}}
		for _, r := range res {
			out.Rows = append(out.Rows, []sqltypes.Value{sqltypes.NewVarChar(r.Table), sqltypes.NewVarChar(r.Op), sqltypes.NewVarChar(r.MsgType), sqltypes.NewVarChar(r.MsgText)})
		}
		return gate(cb)(out, false)
	}))
}
