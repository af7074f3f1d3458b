package server

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// handler wraps go-mysql-server's protocol handler to give errors MySQL's
// exact texts, count statements, and turn a panic inside one statement
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

func (h *handler) done(query string, err error) error {
	result := "ok"
	if err != nil {
		result = "error"
	}
	h.s.stmts.WithLabelValues(statementType(query), result).Inc()
	return fixError(err)
}

func (h *handler) ComInitDB(c *mysql.Conn, db string) error {
	return fixError(h.Handler.ComInitDB(c, db))
}

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (err error) {
	defer h.recoverTo(&err, query)
	if isAdmin(query) {
		var res *sqltypes.Result
		if res, err = h.admin(c, query); err == nil {
			err = cb(res, false)
		}
		return h.done(query, err)
	}
	if q, noop := h.ifExists(c, query); noop {
		return h.done(query, cb(&sqltypes.Result{}, false))
	} else {
		query = q
	}
	if query, err = checkDDLOptions(query); err != nil {
		return h.done(query, err)
	}
	err = h.Handler.ComQuery(ctx, c, query, cb)
	return h.done(query, err)
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (rest string, err error) {
	defer h.recoverTo(&err, query)
	if isAdmin(query) {
		var res *sqltypes.Result
		if res, err = h.admin(c, query); err == nil {
			err = cb(res, false)
		}
		return "", h.done(query, err)
	}
	if q, noop := h.ifExists(c, query); noop {
		return "", h.done(query, cb(&sqltypes.Result{}, false))
	} else {
		query = q
	}
	if query, err = checkDDLOptions(query); err != nil {
		return "", h.done(query, err)
	}
	rest, err = h.Handler.ComMultiQuery(ctx, c, query, cb)
	stmt := query
	if len(rest) <= len(query) {
		stmt = query[:len(query)-len(rest)]
	}
	return rest, h.done(stmt, err)
}

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) (f []*querypb.Field, err error) {
	defer h.recoverTo(&err, query)
	if query, err = checkDDLOptions(query); err != nil {
		return nil, err
	}
	f, err = h.Handler.ComPrepare(ctx, c, query, p)
	return f, fixError(err)
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) (err error) {
	defer h.recoverTo(&err, p.PrepareStmt)
	err = h.Handler.ComStmtExecute(ctx, c, p, cb)
	return h.done(p.PrepareStmt, err)
}

func (h *handler) ComParsedQuery(ctx context.Context, c *mysql.Conn, query string, parsed sqlparser.Statement, cb mysql.ResultSpoolFn) (err error) {
	defer h.recoverTo(&err, query)
	err = h.ext.ComParsedQuery(ctx, c, query, parsed, cb)
	return h.done(query, err)
}

func (h *handler) ComPrepareParsed(ctx context.Context, c *mysql.Conn, query string, parsed sqlparser.Statement, p *mysql.PrepareData) (pq mysql.ParsedQuery, f []*querypb.Field, err error) {
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
	defer h.recoverTo(&err, query)
	err = h.ext.ComExecuteBound(ctx, c, query, bq, cb)
	return h.done(query, err)
}

// fixError gives go-mysql-server's generic texts MySQL's wording where
// clients and tests match on it.
func fixError(err error) error {
	se, ok := err.(*mysql.SQLError)
	if !ok {
		return err
	}
	switch se.Num {
	case mysql.ERDupEntry:
		msg := se.Message
		if i := strings.Index(msg, "Duplicate entry '"); i > 0 {
			return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", msg[i:])
		}
		if se.State == "" || se.State == mysql.SSUnknownSQLState {
			return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", msg)
		}
	case mysql.ERNoSuchTable:
		if m := reTableNotFound.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "Table '%s' doesn't exist", m[1])
		}
	case mysql.ERBadDb:
		if m := reDBNotFound.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", m[1])
		}
	case mysql.ERCantDropFieldOrKey:
		if m := reCantDrop.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", m[1])
		}
	case mysql.ERUnknownError:
		msg := se.Message
		if m := reBlobKey.FindStringSubmatch(msg); m != nil {
			return mysql.NewSQLError(mysql.ERBlobKeyWithoutLength, "42000", "BLOB/TEXT column '%s' used in key specification without a key length", m[1])
		}
		if strings.HasPrefix(msg, "incorrect prefix key") {
			return mysql.NewSQLError(mysql.ERWrongSubKey, "HY000", "Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")
		}
		if strings.HasSuffix(msg, "cannot be altered") {
			return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState, "This version of ReorgDB doesn't yet support 'ALTER TABLE column changes' (%s)", msg)
		}
		if m := reTableExists.FindStringSubmatch(msg); m != nil {
			return mysql.NewSQLError(mysql.ERTableExists, "42S01", "Table '%s' already exists", m[1])
		}
		switch {
		case strings.HasPrefix(msg, "syntax error"):
			return mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; %s", msg)
		case strings.HasPrefix(msg, "column \"") && strings.Contains(msg, "could not be found"):
			return mysql.NewSQLError(mysql.ERBadFieldError, mysql.SSBadFieldError, "%s", msg)
		}
	}
	return err
}

var (
	reTableNotFound = regexp.MustCompile(`^table not found: (.*)$`)
	reDBNotFound    = regexp.MustCompile(`^database not found: (.*)$`)
	reBlobKey       = regexp.MustCompile(`^blob/text column '(.*)' used in key specification without a key length`)
	reTableExists   = regexp.MustCompile(`^table with name (.*) already exists$`)
	reCantDrop      = regexp.MustCompile(`^(?:error: )?can't drop '(.*)'; check that column/key exists$`)
)

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
	end := strings.IndexFunc(q, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if end < 0 {
		end = len(q)
	}
	w := strings.ToLower(q[:end])
	switch w {
	case "select", "insert", "update", "delete", "replace", "begin", "start", "commit", "rollback",
		"create", "drop", "alter", "show", "set", "use", "truncate", "admin", "explain", "describe", "desc":
		return w
	}
	return "other"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
