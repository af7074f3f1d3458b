package server

import (
	"strings"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// Server status flags of handshake, OK and EOF packets (mysql_com.h).
// vitess's go/mysql manages the cursor and more-results bits itself; the
// bits below describe the session, and syncStatus keeps them true.
const (
	statusInTrans         = mysql.ServerInTransaction    // SERVER_STATUS_IN_TRANS
	statusAutocommit      = mysql.ServerStatusAutocommit // SERVER_STATUS_AUTOCOMMIT
	statusDBDropped       = 0x0100                       // SERVER_STATUS_DB_DROPPED, in DROP DATABASE's OK only
	statusNoBackslashEsc  = 0x0200                       // SERVER_STATUS_NO_BACKSLASH_ESCAPES
	statusInTransReadonly = 0x2000                       // SERVER_STATUS_IN_TRANS_READONLY
	sessionStatusMask     = statusInTrans | statusAutocommit | statusNoBackslashEsc | statusInTransReadonly
)

// connState is what the server keeps per client connection beside
// go-mysql-server's session.
type connState struct {
	mc        *mysql.Conn
	handshake uint16 // status flags of the handshake
	// noBackslash mirrors the session's NO_BACKSLASH_ESCAPES for protoConn.
	noBackslash, ansiQuotes atomic.Bool
	// clientCharset mirrors character_set_client for protoConn, as a
	// gms.CharacterSetID: 0 until the session's first statement has run
	// (the handshake's collation says it until then).
	clientCharset atomic.Int32
	// cursor: the COM_STMT_EXECUTE being served opened a cursor.
	cursor atomic.Bool
	mu     sync.Mutex
	sess   gms.Session // the connection's session; replaced by COM_RESET_CONNECTION
	// execErr holds the errors of statements whose next execution must
	// fail: they got COM_STMT_SEND_LONG_DATA for a parameter they do not
	// have (MySQL reports that at COM_STMT_EXECUTE), or a malformed
	// execution that protoConn decoded.
	execErr map[uint32]error
	// stmtTypes are the parameter types last bound, per statement, for
	// statements whose executions the server decodes itself (manyparams.go).
	stmtTypes map[uint32][]byte
	// doStmts are the prepared statements that are DO statements (do.go).
	doStmts map[uint32]bool
	// prepareDo: the COM_STMT_PREPARE being served was a DO that
	// protoConn turned into a SELECT.
	prepareDo atomic.Bool
	// running is the statement being served (interrupt.go).
	running *running
	// prev is closed when the goroutine of an abandoned statement is
	// done; only the connection's goroutine uses it.
	prev chan struct{}
	// work feeds the goroutine that runs the connection's statements
	// (interrupt.go); only the connection's goroutine uses it.
	work chan func()
}

// goStatement runs f on the connection's statement goroutine. That one
// goroutine serves every statement of the connection, so its stack stays
// as deep as go-mysql-server's call chains need: a new goroutine per
// statement would copy its stack several times over as it grows. The
// caller has waited for any earlier statement (waitPrev), so the
// goroutine is free.
func (st *connState) goStatement(f func()) {
	if st.work == nil {
		st.work = make(chan func())
		go func(work <-chan func()) {
			for f := range work {
				f()
			}
		}(st.work)
	}
	st.work <- f
}

// endStatements lets the statement goroutine end once it is idle.
func (st *connState) endStatements() {
	if st.work != nil {
		close(st.work)
		st.work = nil
	}
}

// waitPrev waits until no abandoned statement uses the session.
func (st *connState) waitPrev() {
	if st.prev != nil {
		<-st.prev
		st.prev = nil
	}
}

func (st *connState) session() gms.Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sess
}

// session is connection c's session, nil before it has one.
func (h *handler) session(c *mysql.Conn) gms.Session {
	if st := h.s.connState(c.ConnectionID); st != nil {
		return st.session()
	}
	return nil
}

func (s *Server) connState(id uint32) *connState {
	if v, ok := s.conns.Load(id); ok {
		return v.(*connState)
	}
	return nil
}

// sessionFlags computes the session's status flags.
func sessionFlags(sess gms.Session) uint16 {
	mode, _ := sess.GetSessionVariable(nil, "sql_mode")
	return sessionFlagsIn(sess, mode)
}

// sessionFlagsIn is sessionFlags for a caller that has read the session's
// sql_mode already.
func sessionFlagsIn(sess gms.Session, mode any) uint16 {
	var f uint16
	if v, err := sess.GetSessionVariable(nil, "autocommit"); err == nil && truthy(v) {
		f |= statusAutocommit
	}
	if hasMode(mode, "NO_BACKSLASH_ESCAPES") {
		f |= statusNoBackslashEsc
	}
	// With autocommit on, the transaction go-mysql-server holds while a
	// statement runs is the statement's own; only BEGIN / START
	// TRANSACTION (which make it ignore autocommit) open one for the
	// client, as in MySQL.
	if tx := sess.GetTransaction(); tx != nil && (f&statusAutocommit == 0 || sess.GetIgnoreAutoCommit()) {
		f |= statusInTrans
		if tx.IsReadOnly() {
			f |= statusInTransReadonly
		}
	}
	return f
}

// globalFlags are the flags of a session that does not exist yet, for the
// handshake: they follow the global autocommit and sql_mode.
func globalFlags() uint16 {
	var f uint16 = statusAutocommit
	if gms.SystemVariables == nil {
		return f
	}
	if _, v, ok := gms.SystemVariables.GetGlobal("autocommit"); ok && !truthy(v) {
		f &^= statusAutocommit
	}
	if sv, v, ok := gms.SystemVariables.GetGlobal("sql_mode"); ok {
		if st, isSet := sv.GetType().(gms.SetType); isSet {
			if bits, isBits := v.(uint64); isBits {
				v, _ = st.BitsToString(bits)
			}
		}
		if hasMode(v, "NO_BACKSLASH_ESCAPES") {
			f |= statusNoBackslashEsc
		}
	}
	return f
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int8:
		return x != 0
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case int32:
		return x != 0
	case string:
		return strings.EqualFold(x, "on") || x == "1" || strings.EqualFold(x, "true")
	}
	return false
}

func hasMode(v any, mode string) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for s != "" {
		var m string
		m, s, _ = strings.Cut(s, ",")
		if strings.EqualFold(strings.TrimSpace(m), mode) {
			return true
		}
	}
	return false
}

// syncStatus sets c's session status flags from the session's state, so
// that the next OK or EOF packet tells the client the truth.
func (h *handler) syncStatus(c *mysql.Conn) {
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return
	}
	sess := st.session()
	if sess == nil {
		return
	}
	mode, _ := sess.GetSessionVariable(nil, "sql_mode")
	f := sessionFlagsIn(sess, mode)
	st.noBackslash.Store(f&statusNoBackslashEsc != 0)
	st.ansiQuotes.Store(hasMode(mode, "ANSI_QUOTES") || hasMode(mode, "ANSI"))
	if v, _ := sess.GetSessionVariable(nil, "character_set_client"); v != nil {
		if name, ok := v.(string); ok {
			if cs, err := gms.ParseCharacterSet(name); err == nil {
				st.clientCharset.Store(int32(cs))
			}
		}
	}
	c.StatusFlags = c.StatusFlags&^sessionStatusMask | f
}
