package server

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"

	"github.com/dolthub/vitess/go/mysql"
)

// TLS is set up by protoConn rather than by vitess, so that protoConn
// still sees the client's commands in the clear (vitess would wrap the
// socket under protoConn, and every fix in conn.go would be lost on a
// TLS connection). vitess is told nothing of TLS until the login:
//
//   - the greeting vitess writes gets the CLIENT_SSL capability;
//   - the client's SSL request (packet 1) is answered by protoConn's own
//     TLS handshake and never reaches vitess;
//   - as vitess did not see packet 1, its sequence numbers are one behind
//     the client's until the login ends: protoConn lowers those of the
//     client's packets and raises those of vitess's by one, until the
//     client's first command (sequence 0);
//   - the auth methods mark the connection as TLS for vitess (tlsLogin),
//     which caching_sha2_password's full authentication requires.

// sslRequestLen is the length of the SSL request packet's payload.
const sslRequestLen = 32

// tlsState is protoConn's part in TLS; it is used on the connection's
// goroutine only, before and during the login.
type tlsState struct {
	tc *tls.Conn // the TLS session, once the client has asked for it
	// handshaking: Write follows vitess's packets, to offer TLS in the
	// greeting and to renumber packets while shifted.
	handshaking bool
	greeted     bool
	shifted     bool
	outHdr      [4]byte
	outHdrN     int // bytes of the current packet's header written
	outLen      int // payload length of the current packet
	outRemain   int // bytes of its payload not written yet
}

// writeOut writes to the client, through TLS once it is set up.
func (pc *protoConn) writeOut(b []byte) (int, error) {
	if pc.tc != nil {
		return pc.tc.Write(b)
	}
	return pc.Conn.Write(b)
}

// writeHandshake writes vitess's packets of the handshake, offering TLS
// in the greeting and renumbering them while shifted.
func (pc *protoConn) writeHandshake(p []byte) (int, error) {
	b := append([]byte(nil), p...)
	for i := 0; i < len(b); {
		if pc.outRemain == 0 {
			if pc.outHdrN == 3 && pc.shifted {
				b[i]++
			}
			pc.outHdr[pc.outHdrN] = b[i]
			pc.outHdrN++
			i++
			if pc.outHdrN == 4 {
				pc.outHdrN = 0
				pc.outLen = int(pc.outHdr[0]) | int(pc.outHdr[1])<<8 | int(pc.outHdr[2])<<16
				pc.outRemain = pc.outLen
			}
			continue
		}
		n := min(pc.outRemain, len(b)-i)
		if !pc.greeted && n == pc.outLen {
			offerTLS(b[i : i+n])
		}
		pc.outRemain -= n
		i += n
		if pc.outRemain == 0 && !pc.greeted {
			pc.greeted = true
			pc.handshaking = pc.shifted
		}
	}
	n, err := pc.writeOut(b)
	return min(n, len(p)), err
}

// offerTLS sets CLIENT_SSL in a greeting's capabilities.
func offerTLS(greeting []byte) {
	if len(greeting) == 0 || greeting[0] != 10 {
		return // not a protocol 10 greeting (an error packet)
	}
	pos := 1
	for pos < len(greeting) && greeting[pos] != 0 { // server version
		pos++
	}
	pos += 1 + 4 + 8 + 1 // NUL, connection id, auth data part 1, filler
	if pos+2 <= len(greeting) {
		greeting[pos+1] |= clientSSL >> 8
	}
}

// startTLS consumes the client's SSL request and runs the TLS handshake,
// within the connect_timeout deadline the socket has.
func (pc *protoConn) startTLS() error {
	if _, err := pc.br.Discard(4 + sslRequestLen); err != nil {
		return err
	}
	// The client's first TLS bytes may already be in br.
	tc := tls.Server(bufferedConn{pc.Conn, pc.br}, pc.srv.tls)
	if err := tc.Handshake(); err != nil {
		return err
	}
	pc.tc = tc
	pc.br = bufio.NewReaderSize(tc, 16<<10)
	pc.handshaking, pc.shifted = true, true
	return nil
}

// unshift passes on the header of the client's next packet, of length n,
// with the sequence number vitess expects; its payload follows as is.
func (pc *protoConn) unshift(n int) ([]byte, error) {
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(pc.br, hdr); err != nil {
		return nil, err
	}
	hdr[3]--
	pc.remain = n
	return hdr, nil
}

// bufferedConn reads a socket through a reader that may hold some of its
// bytes already.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// tlsLogin tells vitess that c uses TLS, once protoConn has set it up.
func tlsLogin(c *mysql.Conn) {
	if pc, ok := c.Conn.(*protoConn); ok && pc.tc != nil {
		c.Capabilities |= mysql.CapabilityClientSSL
	}
}

// tlsSession is the TLS state of c's connection, if it uses TLS.
func tlsSession(c *mysql.Conn) (tls.ConnectionState, bool) {
	if pc, ok := c.Conn.(*protoConn); ok && pc.tc != nil {
		return pc.tc.ConnectionState(), true
	}
	return tls.ConnectionState{}, false
}
