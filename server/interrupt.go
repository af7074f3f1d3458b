package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// Statements that cannot be stopped from inside: go-mysql-server's parser
// and analyzer look at no context (an IN list of 100,000 values or a UNION
// of 10,000 SELECTs spend minutes in quadratic analyzer code). So, as
// MySQL's KILL does, a statement runs on a goroutine other than the
// connection's (one per connection, connState.goStatement), while the
// connection's goroutine waits for it, for a KILL of it, for its
// max_execution_time, or for its client to disconnect. When one of those
// comes first the statement is abandoned: the client gets its error at
// once (1317, or 3024), the statement's context is cancelled, its
// transaction releases its metadata lock and can no longer commit
// (sql.Session.Interrupt), and nothing it sends afterwards reaches the
// client. The goroutine finishes its work in the background; the
// connection's next command waits for it, since the session is not safe
// for two statements at once.

// watchAfter is how long a statement runs before a goroutine starts
// watching its client's socket for a disconnect; shorter statements cost
// nothing more.
const watchAfter = 100 * time.Millisecond

// abandonAfter is how long an interrupted statement has to end by itself
// before it is abandoned.
const abandonAfter = 300 * time.Millisecond

// errAbandoned marks, for errors.Is, the error of a statement that was
// abandoned while its goroutine went on (what fn stores is not to be
// read then).
var errAbandoned = errors.New("statement abandoned")

type abandoned struct{ err error }

func (a abandoned) Error() string        { return a.err.Error() }
func (a abandoned) Unwrap() error        { return a.err }
func (a abandoned) Is(target error) bool { return target == errAbandoned }

func unwrapAbandoned(err error) error {
	if a, ok := err.(abandoned); ok {
		return a.err
	}
	return err
}

// running is one statement being served.
type running struct {
	cancel   context.CancelFunc
	stop     chan struct{} // closed by interrupt
	once     sync.Once
	reason   error // why it was interrupted, set before stop closes
	mu       sync.Mutex
	detached bool // abandoned: its callbacks no longer reach the client
	killTxn  bool // the interrupt also ends the statement's transaction
}

// interrupt stops the statement with err; the first reason wins.
// endTxn: the statement's transaction ends too (KILL CONNECTION, a
// disconnect), not just the statement.
func (r *running) interrupt(err error, endTxn bool) {
	r.once.Do(func() {
		r.reason = err
		r.killTxn = endTxn
		close(r.stop)
		r.cancel()
	})
}

// gate wraps a result callback so that it does nothing once the
// statement is abandoned.
func (r *running) gate(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return func(res *sqltypes.Result, more bool) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.detached {
			return rsql.ErrInterrupted()
		}
		return cb(res, more)
	}
}

func errTimeExceeded() error {
	return mysql.NewSQLError(3024, mysql.SSUnknownSQLState, "Query execution was interrupted, maximum statement execution time exceeded")
}

// interruptRunning interrupts connection id's running statement, if any.
func (s *Server) interruptRunning(id uint32, err error, endTxn bool) {
	st := s.connState(id)
	if st == nil {
		return
	}
	st.mu.Lock()
	r := st.running
	st.mu.Unlock()
	if r != nil {
		r.interrupt(err, endTxn)
	}
}

// afterKill makes a successful KILL take effect on the statement the
// killed connection is running: go-mysql-server cancels its context
// (which its analyzer does not look at) and, for KILL CONNECTION, closes
// the socket.
func (h *handler) afterKill(query string) {
	m := reKillKind.FindStringSubmatch(query)
	if m == nil {
		return
	}
	id, err := strconv.ParseUint(m[2], 10, 32)
	if err != nil {
		return
	}
	endTxn := !strings.HasPrefix(strings.ToUpper(m[1]), "QUERY")
	h.s.interruptRunning(uint32(id), rsql.ErrInterrupted(), endTxn)
}

var reKillKind = regexp.MustCompile(`(?is)^\s*KILL\s+((?:CONNECTION|QUERY)\s+)?(\d+)\s*;?\s*$`)

// reExecHint finds the MAX_EXECUTION_TIME optimizer hint of a SELECT.
var reExecHint = regexp.MustCompile(`(?is)^\s*\(?\s*SELECT\s*/\*\+[^*]*?\bMAX_EXECUTION_TIME\s*\(\s*(\d+)\s*\)`)

// execTimeout is the statement's max_execution_time: the hint's, else the
// session's; it applies to SELECT statements only, as in MySQL.
func execTimeout(sess gms.Session, query string) time.Duration {
	if statementType(query) != "select" {
		return 0
	}
	if m := reExecHint.FindStringSubmatch(query); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
		return 0
	}
	if sess == nil {
		return 0
	}
	v, err := sess.GetSessionVariable(nil, "max_execution_time")
	if err != nil {
		return 0
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case uint64:
		n = int64(x)
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case uint32:
		n = int64(x)
	}
	if n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Millisecond
}

// run serves one statement through fn, which gets a context to pass to
// go-mysql-server and a gate for its result callback, on a goroutine of
// its own, and returns its error, or the interruption's. timed: the
// statement is executed, and max_execution_time applies if it is a
// SELECT (not to its preparation).
func (h *handler) run(ctx context.Context, c *mysql.Conn, query string, timed bool, fn func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error) error {
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return fn(ctx, func(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn { return cb })
	}
	// A statement abandoned earlier may still be busy with the session.
	st.waitPrev()
	sess := st.session()
	explicit := false
	if sess != nil {
		f := sessionFlags(sess)
		explicit = f&statusInTrans != 0 || f&statusAutocommit == 0
	}
	qctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel, stop: make(chan struct{})}
	st.mu.Lock()
	st.running = r
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		if st.running == r {
			st.running = nil
		}
		st.mu.Unlock()
	}()
	if d := execTimeout(sess, query); d > 0 && timed {
		t := time.AfterFunc(d, func() { r.interrupt(errTimeExceeded(), false) })
		defer t.Stop()
	}

	done := make(chan struct{})
	var err error
	h.s.background.Add(1)
	st.goStatement(func() {
		defer h.s.background.Add(-1)
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				h.s.log.Error("panic in statement", "query", truncate(query, 200), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "internal error: %v", p)
			}
		}()
		err = fn(qctx, r.gate)
	})

	var watch *watcher
	timer := time.NewTimer(watchAfter)
	defer timer.Stop()
	for {
		select {
		case <-done:
			watch.end()
			cancel()
			select {
			case <-r.stop:
				// Interrupted, but it ended by itself (having seen its
				// context, it may have failed for that reason).
				return r.reason
			default:
			}
			return err
		case <-r.stop:
			watch.end()
			// Most statements see their context and end by themselves,
			// with the session theirs to the end; give them a moment.
			grace := time.NewTimer(abandonAfter)
			select {
			case <-done:
				grace.Stop()
				cancel()
				return r.reason
			case <-grace.C:
			}
			r.mu.Lock()
			r.detached = true
			r.mu.Unlock()
			// The transaction of an autocommit statement is the
			// statement's; an explicit transaction outlives KILL QUERY
			// (and keeps its metadata lock, as in MySQL).
			var rs *rsql.Session
			if s, ok := st.session().(*rsql.Session); ok && (r.killTxn || !explicit) {
				rs = s
				rs.Interrupt()
			}
			prev := make(chan struct{})
			st.prev = prev
			go func() {
				<-done
				if rs != nil {
					rs.EndInterrupt()
				}
				close(prev)
			}()
			return abandoned{r.reason}
		case <-timer.C:
			if watch == nil && !reLoadData.MatchString(query) {
				watch = startWatch(c, r)
			}
		}
	}
}

// reLoadData: LOAD DATA LOCAL reads the file from the client while it
// runs, so its socket is not watched.
var reLoadData = regexp.MustCompile(`(?is)^\s*LOAD\b`)

// watcher notices a client that disconnects while its statement runs,
// by reading ahead on the socket: MySQL clients send nothing while they
// wait for an answer, so EOF or an error means the client is gone, and a
// byte read is kept for the connection's next read.
type watcher struct {
	pc   *protoConn
	done chan struct{}
}

func startWatch(c *mysql.Conn, r *running) *watcher {
	pc, ok := c.Conn.(*protoConn)
	if !ok {
		return nil
	}
	w := &watcher{pc: pc, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		_, err := pc.br.Peek(1)
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		r.interrupt(rsql.ErrInterrupted(), true)
	}()
	return w
}

// end stops the watcher before the connection reads again.
func (w *watcher) end() {
	if w == nil {
		return
	}
	w.pc.Conn.SetReadDeadline(time.Now())
	<-w.done
	w.pc.Conn.SetReadDeadline(time.Time{})
}
