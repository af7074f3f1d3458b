package server

import (
	"errors"
	"os"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// A connection that sends no command for wait_timeout seconds is closed,
// as in MySQL 8, after an error packet that says why (4031); a client that
// logs in as interactive (the mysql client) gets interactive_timeout as
// its session's wait_timeout.

// clientInteractive is CLIENT_INTERACTIVE, which vitess does not name.
const clientInteractive = 1 << 10

// errInactive is MySQL's ER_CLIENT_INTERACTION_TIMEOUT.
const errInactive = 4031

// interactiveWaitTimeout gives the session of an interactive client
// interactive_timeout as its wait_timeout.
func interactiveWaitTimeout(base *gms.BaseSession, capabilities uint32) {
	if capabilities&clientInteractive == 0 {
		return
	}
	if _, v, ok := gms.SystemVariables.GetGlobal("interactive_timeout"); ok {
		_ = base.SetSessionVariable(gms.NewEmptyContext(), "wait_timeout", v)
	}
}

// idleTimeout is how long the connection waits for its next command: its
// session's wait_timeout (before go-mysql-server makes the session at the
// first command, the global one, or interactive_timeout for an interactive
// client); 0 until the client has authenticated, while connect_timeout's
// deadline holds.
func (pc *protoConn) idleTimeout() time.Duration {
	st := pc.st
	if st == nil || st.mc == nil || !pc.loggedIn.Load() || pc.off {
		return 0
	}
	st.mu.Lock()
	sess := st.sess
	st.mu.Unlock()
	var v any
	if sess != nil {
		v, _ = sess.GetSessionVariable(nil, "wait_timeout")
	} else {
		name := "wait_timeout"
		if st.mc.Capabilities&clientInteractive != 0 {
			name = "interactive_timeout"
		}
		_, v, _ = gms.SystemVariables.GetGlobal(name)
	}
	n, ok := v.(int64)
	if !ok || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// peekCommand peeks at the header of the next packet, waiting for it at
// most the idle timeout when it starts a command: past that it tells the
// client why and fails.
func (pc *protoConn) peekCommand() ([]byte, error) {
	d := time.Duration(0)
	if pc.br.Buffered() == 0 {
		d = pc.idleTimeout()
	}
	if d == 0 {
		return pc.br.Peek(4)
	}
	pc.Conn.SetReadDeadline(time.Now().Add(d))
	hdr, err := pc.br.Peek(4)
	pc.Conn.SetReadDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		msg := "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior."
		body := append([]byte{0xff, errInactive & 0xff, errInactive >> 8, '#'}, "HY000"+msg...)
		_, _ = pc.writeOut(append([]byte{byte(len(body)), byte(len(body) >> 8), byte(len(body) >> 16), 0}, body...))
		if pc.s != nil {
			pc.s.log.Debug("closing an idle connection", "connection", pc.st.mc.ConnectionID, "idle", d)
		}
	}
	return hdr, err
}
