package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// plainListener hides the *net.TCPConn type of accepted connections. With
// a TCP connection go-mysql-server starts, for every statement, a goroutine
// that polls the socket's state through /proc every few milliseconds to
// notice dead clients; that costs more than the statements of an OLTP
// workload. A client that disconnects is still noticed on its next read.
//
// Its connections are protoConns, which also fix, on the way in, the
// client commands that vitess's go/mysql mishandles.
//
// It also counts connections against max_connections (limits.go).
type plainListener struct {
	net.Listener
	s *Server
}

func (l plainListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		fc := newFairReader(c)
		pc := &protoConn{Conn: fc, br: bufio.NewReaderSize(fc, 16<<10), srv: l.s}
		pc.handshaking = l.s.tls != nil
		if !l.s.accepted(pc) {
			pc.release()
			go refuse(pc)
			continue
		}
		return pc, nil
	}
}

// Client commands that protoConn looks at (MySQL's COM_ codes).
const (
	comProcessKill     = 0x0c
	comStmtExecute     = 0x17
	comStmtLongData    = 0x18
	comQuery           = 0x03
	comStmtPrepare     = 0x16
	comResetConnection = 0x1f
	comStmtReset       = 0x1a
	maxPacket          = 1<<24 - 1
	clientSSL          = 0x800
)

// protoConn reads the client's packets as vitess would, and rewrites the
// few commands vitess's go/mysql gets wrong before vitess sees them:
//
//   - COM_PROCESS_KILL, which vitess does not know (1047), becomes the
//     statement KILL CONNECTION <id>;
//   - COM_STMT_SEND_LONG_DATA for a statement or parameter that does not
//     exist makes vitess drop the connection; MySQL ignores it and fails
//     the statement's next execution, and so does protoConn;
//   - COM_QUERY and COM_STMT_PREPARE get quantified comparisons
//     (x > ANY (subquery)), which vitess's grammar lacks, rewritten
//     (sql.RewriteQuantified);
//   - COM_QUERY and COM_STMT_PREPARE while sql_mode has
//     NO_BACKSLASH_ESCAPES, which vitess's parser ignores, get their
//     backslashes in string literals doubled (backslash.go);
//   - the OK packet answering COM_RESET_CONNECTION gets true status
//     flags (see Write);
//   - COM_STMT_PREPARE of a statement with a syntax error gets MySQL's
//     1064 (vitess parses it first and answers 1105);
//   - COM_STMT_PREPARE of a DO statement, which vitess cannot parse,
//     prepares the SELECT of its expressions (do.go);
//   - COM_STMT_EXECUTE and COM_STMT_RESET of a statement that does not
//     exist get MySQL's 1243 (vitess answers 2014, or panics);
//   - COM_STMT_EXECUTE of a statement with more than 65528 parameters
//     overflows vitess's 16-bit NULL-bitmap size and panics; protoConn
//     decodes those parameters itself (manyparams.go).
//
// It also sets up TLS when the client asks for it (conntls.go), so that
// all of this applies to TLS connections as well.
//
// All of this runs on the connection's goroutine, between commands, so
// the connection's prepared statements are not in use.
type protoConn struct {
	net.Conn
	br       *bufio.Reader
	remain   int    // bytes of the current packet vitess has not read yet
	pending  []byte // a rewritten packet vitess has not read yet
	lastFull bool   // the previous packet had the maximum size, so this one continues it
	packets  int
	off      bool    // the stream is opaque from here on (a TLS request protoConn cannot serve)
	srv      *Server // counts the connection (limits.go)
	released atomic.Bool
	loggedIn atomic.Bool // the client has authenticated: wait_timeout applies (idle.go)
	s        *Server
	st       *connState
	// resetPending: COM_RESET_CONNECTION was passed on, and vitess will
	// answer it with an OK packet whose status flags it hard-codes to 0.
	resetPending atomic.Bool
	// fixInfo: the next packet written is an OK packet with an info
	// string, gathered in infoOK and rewritten (okinfo.go).
	fixInfo bool
	infoOK  []byte
	tlsState
}

// Write passes vitess's packets on, giving the OK packet that answers
// COM_RESET_CONNECTION the fresh session's status flags. vitess writes
// that packet's header and body with two calls, unbuffered.
func (pc *protoConn) Write(p []byte) (int, error) {
	if pc.handshaking {
		return pc.writeHandshake(p)
	}
	if pc.fixInfo {
		return pc.collectInfoOK(p)
	}
	if pc.resetPending.Load() && pc.st != nil && len(p) >= 7 && p[0] == 0x00 && p[1] == 0 && p[2] == 0 {
		pc.resetPending.Store(false)
		b := append([]byte(nil), p...)
		binary.LittleEndian.PutUint16(b[3:], pc.st.mc.StatusFlags)
		return pc.writeOut(b)
	}
	return pc.writeOut(p)
}

// Close closes the socket and gives its max_connections slot back.
func (pc *protoConn) Close() error {
	pc.release()
	return pc.Conn.Close()
}

// release gives the connection's max_connections slot back, once. A
// connection refused gives it back before the client reads the error, so
// that the client's next attempt finds it free.
func (pc *protoConn) release() {
	if pc.released.CompareAndSwap(false, true) && pc.srv != nil {
		pc.srv.open.Add(-1)
	}
}

func (pc *protoConn) attach(s *Server, st *connState) { pc.s, pc.st = s, st }

func (pc *protoConn) Read(p []byte) (int, error) {
	for {
		if len(pc.pending) > 0 {
			n := copy(p, pc.pending)
			pc.pending = pc.pending[n:]
			return n, nil
		}
		if pc.off || pc.remain > 0 {
			return pc.passOn(p)
		}
		hdr, err := pc.peekCommand()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// As a client that left: vitess then closes the connection
			// without logging an error.
			return 0, io.EOF
		}
		if err != nil {
			return pc.passOn(p)
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		seq := hdr[3]
		cont := pc.lastFull
		pc.lastFull = n == maxPacket
		pc.packets++
		if pc.packets == 1 && n >= 4 {
			// The handshake response, or the SSL request that precedes it.
			if b, err := pc.br.Peek(8); err == nil && binary.LittleEndian.Uint32(b[4:])&clientSSL != 0 {
				if pc.srv == nil || pc.srv.tls == nil || n != sslRequestLen {
					pc.off = true
				} else if err := pc.startTLS(); err != nil {
					return 0, err
				} else {
					continue
				}
			}
		}
		if pc.shifted {
			if seq == 0 {
				// The login is over: Write no longer follows packets.
				pc.shifted, pc.handshaking = false, false
			} else {
				if pc.pending, err = pc.unshift(n); err != nil {
					return 0, err
				}
				continue
			}
		}
		if seq != 0 || cont || n == 0 || n == maxPacket || pc.st == nil || pc.off {
			pc.remain = 4 + n
			return pc.passOn(p)
		}
		b, err := pc.br.Peek(5)
		if err != nil {
			pc.remain = 4 + n
			return pc.passOn(p)
		}
		switch b[4] {
		case comResetConnection:
			pc.resetPending.Store(true)
			pc.remain = 4 + n
			return pc.passOn(p)
		case comProcessKill, comStmtLongData, comStmtExecute, comStmtReset:
		case comStmtPrepare:
		case comQuery:
			if pc.st.noBackslash.Load() {
				break
			}
			if body, err := pc.br.Peek(4 + n); err != nil || hasNonASCII(body[5:]) || rsql.MayHaveQuantified(body[5:]) || rsql.MayHaveLockingClause(body[5:]) || rsql.MayAlterCharset(body[5:]) {
				break // too long to peek, or it may have non-ASCII identifiers, ANY (subquery), FOR SHARE or ALTER ... CHARSET
			}
			fallthrough
		default:
			pc.remain = 4 + n
			return pc.passOn(p)
		}
		pkt := make([]byte, 4+n)
		if _, err := io.ReadFull(pc.br, pkt); err != nil {
			return 0, err
		}
		pc.pending = pc.rewrite(pkt)
	}
}

// passOn hands vitess the rest of the current packet, or everything when
// the stream is not looked at.
func (pc *protoConn) passOn(p []byte) (int, error) {
	if !pc.off && pc.remain > 0 && len(p) > pc.remain {
		p = p[:pc.remain]
	}
	n, err := pc.br.Read(p)
	if pc.remain > 0 {
		pc.remain -= n
	}
	return n, err
}

// rewrite returns what vitess gets instead of the command packet pkt
// (header included); nil drops it.
func (pc *protoConn) rewrite(pkt []byte) []byte {
	body := pkt[4:]
	switch body[0] {
	case comQuery:
		q := pc.st.toUTF8(string(body[1:]))
		if pc.st.noBackslash.Load() {
			q = literalBackslashes(q, pc.st.ansiQuotes.Load())
		}
		q = rsql.RewriteAlterCharset(rsql.RewriteLockingClause(rsql.RewriteQuantified(quoteNonASCIIIdents(q, pc.st.ansiQuotes.Load()))))
		return frame(append([]byte{body[0]}, q...))
	case comStmtPrepare:
		q := pc.st.toUTF8(string(body[1:]))
		if pc.st.noBackslash.Load() {
			q = literalBackslashes(q, pc.st.ansiQuotes.Load())
		}
		q = rsql.RewriteAlterCharset(rsql.RewriteLockingClause(rsql.RewriteQuantified(quoteNonASCIIIdents(q, pc.st.ansiQuotes.Load()))))
		sel, isDo := doAsSelect(q)
		q = sel
		pc.st.prepareDo.Store(isDo)
		// vitess parses the statement itself and answers a syntax error
		// with 1105 and no position; answer MySQL's 1064 instead.
		if _, err := sqlparser.ParseWithOptions(context.Background(), q, sqlparser.ParserOptions{AnsiQuotes: pc.st.ansiQuotes.Load()}); err != nil {
			if errors.Is(err, sqlparser.ErrEmpty) {
				pc.reply(mysql.NewSQLError(mysql.EREmptyQuery, "42000", "Query was empty"))
			} else if se, ok := mapError(mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%s", err.Error()), &stmtInfo{query: q}).(*mysql.SQLError); ok {
				pc.reply(se)
			} else {
				return pkt
			}
			return nil
		}
		return frame(append([]byte{body[0]}, q...))
	case comProcessKill:
		if len(body) < 5 {
			return pkt
		}
		return packet(0, append([]byte{comQuery}, fmt.Sprintf("KILL CONNECTION %d", binary.LittleEndian.Uint32(body[1:]))...))
	case comStmtLongData:
		if len(body) < 7 {
			return nil // MySQL ignores it too
		}
		id := binary.LittleEndian.Uint32(body[1:])
		param := binary.LittleEndian.Uint16(body[5:])
		prep, ok := pc.st.mc.PrepareData[id]
		if !ok {
			return nil // the execution reports the unknown statement
		}
		if param >= prep.ParamsCount {
			pc.st.mu.Lock()
			if pc.st.execErr == nil {
				pc.st.execErr = map[uint32]error{}
			}
			pc.st.execErr[id] = errLongDataArgs()
			pc.st.mu.Unlock()
			return nil
		}
	case comStmtExecute, comStmtReset:
		if len(body) < 5 {
			return pkt
		}
		id := binary.LittleEndian.Uint32(body[1:])
		if body[0] == comStmtExecute {
			pc.st.cursor.Store(len(body) > 5 && body[5] != 0)
		}
		prep, ok := pc.st.mc.PrepareData[id]
		if !ok {
			// vitess answers 2014 (a client-side code) for an unknown
			// statement, and panics on COM_STMT_RESET of one.
			to := "mysqld_stmt_execute"
			if body[0] == comStmtReset {
				to = "mysqld_stmt_reset"
			}
			pc.reply(mysql.NewSQLError(1243, mysql.SSUnknownSQLState, "Unknown prepared statement handler (%d) given to %s", id, to))
			return nil
		}
		if body[0] == comStmtExecute && bitmapOverflows(prep) {
			return pc.decodeManyParams(prep, pkt)
		}
	}
	return pkt
}

// reply answers the command just read with an error packet, written
// directly: vitess has flushed its previous answer and does not see this
// command.
func (pc *protoConn) reply(err *mysql.SQLError) {
	msg := err.Message
	p := []byte{0xff, byte(err.Num), byte(err.Num >> 8), '#'}
	p = append(p, (err.State + "HY000")[:5]...)
	p = append(p, msg...)
	pc.writeOut(packet(1, p))
}

// packet frames a payload shorter than 16 MiB.
func packet(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// frame frames a command's payload of any size.
func frame(payload []byte) []byte {
	var out []byte
	for seq := byte(0); ; seq++ {
		n := min(len(payload), maxPacket)
		out = append(out, packet(seq, payload[:n])...)
		payload = payload[n:]
		if n < maxPacket {
			return out
		}
	}
}

// errLongDataArgs is MySQL's answer to executing a statement that was
// sent long data for a parameter it does not have.
func errLongDataArgs() error {
	return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Incorrect arguments to mysqld_stmt_send_long_data")
}
