package server_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"
)

// rawConn is a minimal MySQL protocol client that exposes what drivers
// hide: the status flags of the handshake, OK and EOF packets, and
// commands no driver sends (COM_PROCESS_KILL, malformed long data).
type rawConn struct {
	t      testing.TB
	c      net.Conn
	r      *bufio.Reader
	seq    byte
	id     uint32 // connection id from the handshake
	status uint16 // status flags of the handshake
}

// Client capability flags used by rawConn.
const (
	capLongPassword   = 1
	capConnectWithDB  = 8
	capProtocol41     = 0x200
	capTransactions   = 0x2000
	capSecureConn     = 0x8000
	capMultiResults   = 0x20000
	capPluginAuth     = 0x80000
	rawCapabilities   = capLongPassword | capProtocol41 | capTransactions | capSecureConn | capMultiResults | capPluginAuth
	comQuery          = 0x03
	comProcessKill    = 0x0c
	comPing           = 0x0e
	comInitDB         = 0x02
	comStmtPrepare    = 0x16
	comStmtExecute    = 0x17
	comStmtLongData   = 0x18
	comStmtClose      = 0x19
	comStmtReset      = 0x1a
	comResetConn      = 0x1f
	statusInTrans     = 0x0001
	statusAutocommit  = 0x0002
	statusNoBackslash = 0x0200
)

// dialRaw connects as root (no password) and completes the handshake.
func dialRaw(t testing.TB, addr, db string) *rawConn {
	t.Helper()
	return dialRawCaps(t, addr, db, 0)
}

// dialRawCaps is dialRaw with more client capabilities.
func dialRawCaps(t testing.TB, addr, db string, extra uint32) *rawConn {
	t.Helper()
	return dialRawCollation(t, addr, db, extra, 33) // utf8_general_ci
}

// dialRawCollation is dialRawCaps with the handshake's collation id.
func dialRawCollation(t testing.TB, addr, db string, extra uint32, collation byte) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	hs := rc.readPacket()
	if hs[0] != 10 {
		t.Fatalf("handshake protocol version %d", hs[0])
	}
	pos := 1
	for hs[pos] != 0 { // server version
		pos++
	}
	pos++
	rc.id = binary.LittleEndian.Uint32(hs[pos:])
	pos += 4 + 8 + 1 // id, auth data part 1, filler
	pos += 2         // capabilities (low)
	pos++            // character set
	rc.status = binary.LittleEndian.Uint16(hs[pos:])

	caps := uint32(rawCapabilities) | extra
	if db != "" {
		caps |= capConnectWithDB
	}
	var resp []byte
	resp = binary.LittleEndian.AppendUint32(resp, caps)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24)
	resp = append(resp, collation)
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "root"...)
	resp = append(resp, 0, 0) // user, empty auth response
	if db != "" {
		resp = append(append(resp, db...), 0)
	}
	resp = append(append(resp, "mysql_native_password"...), 0)
	rc.seq = 1
	rc.writePacket(resp)
	for {
		p := rc.readPacket()
		switch p[0] {
		case 0x00:
			return rc
		case 0xfe: // auth switch: the empty password's answer is empty
			rc.writePacket(nil)
		case 0x01: // more auth data (caching_sha2 fast path)
			continue
		default:
			t.Fatalf("handshake failed: %v", rc.errOf(p))
		}
	}
}

func (rc *rawConn) readPacket() []byte {
	rc.t.Helper()
	var hdr [4]byte
	if _, err := ioReadFull(rc.r, hdr[:]); err != nil {
		rc.t.Fatalf("read packet header: %v", err)
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	rc.seq = hdr[3] + 1
	p := make([]byte, n)
	if _, err := ioReadFull(rc.r, p); err != nil {
		rc.t.Fatalf("read packet: %v", err)
	}
	return p
}

func ioReadFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writePacket writes one payload, split into 16 MiB - 1 pieces.
func (rc *rawConn) writePacket(p []byte) {
	rc.t.Helper()
	for {
		n := len(p)
		if n > 0xffffff {
			n = 0xffffff
		}
		hdr := []byte{byte(n), byte(n >> 8), byte(n >> 16), rc.seq}
		rc.seq++
		if _, err := rc.c.Write(append(hdr, p[:n]...)); err != nil {
			rc.t.Fatalf("write: %v", err)
		}
		p = p[n:]
		if n < 0xffffff {
			return
		}
	}
}

// command starts a new command.
func (rc *rawConn) command(cmd byte, body []byte) {
	rc.t.Helper()
	rc.seq = 0
	rc.writePacket(append([]byte{cmd}, body...))
}

// rawResult is one response to a command.
type rawResult struct {
	err      *rawError
	affected uint64
	status   uint16 // of the OK packet, or of the result set's last EOF
	// fieldsStatus is the status of the EOF after a result set's columns.
	fieldsStatus uint16
	rows         [][]*string
	cols         int
	// of an OK packet
	insertID uint64
	warnings uint16
	info     string
}

type rawError struct {
	code  uint16
	state string
	msg   string
}

func (e *rawError) Error() string { return fmt.Sprintf("%d (%s): %s", e.code, e.state, e.msg) }

func (rc *rawConn) errOf(p []byte) *rawError {
	e := &rawError{code: binary.LittleEndian.Uint16(p[1:])}
	rest := p[3:]
	if len(rest) > 0 && rest[0] == '#' {
		e.state, rest = string(rest[1:6]), rest[6:]
	}
	e.msg = string(rest)
	return e
}

func lenEnc(p []byte) (uint64, []byte) {
	switch p[0] {
	case 0xfc:
		return uint64(binary.LittleEndian.Uint16(p[1:])), p[3:]
	case 0xfd:
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, p[4:]
	case 0xfe:
		return binary.LittleEndian.Uint64(p[1:]), p[9:]
	}
	return uint64(p[0]), p[1:]
}

// readResult reads an OK, ERR, or text result set.
func (rc *rawConn) readResult() rawResult {
	rc.t.Helper()
	p := rc.readPacket()
	switch p[0] {
	case 0x00:
		var r rawResult
		var rest []byte
		r.affected, rest = lenEnc(p[1:])
		_, rest = lenEnc(rest) // insert id
		r.status = binary.LittleEndian.Uint16(rest)
		return r
	case 0xff:
		return rawResult{err: rc.errOf(p)}
	}
	n, _ := lenEnc(p)
	r := rawResult{cols: int(n)}
	for i := 0; i < r.cols; i++ {
		rc.readPacket()
	}
	if p := rc.readPacket(); p[0] != 0xfe {
		rc.t.Fatalf("no EOF after column definitions: %x", p)
	} else {
		r.fieldsStatus = binary.LittleEndian.Uint16(p[3:])
	}
	for {
		p := rc.readPacket()
		if p[0] == 0xfe && len(p) < 9 {
			r.status = binary.LittleEndian.Uint16(p[3:])
			return r
		}
		if p[0] == 0xff {
			return rawResult{err: rc.errOf(p)}
		}
		row := make([]*string, r.cols)
		for i := range row {
			if p[0] == 0xfb {
				p = p[1:]
				continue
			}
			var l uint64
			l, p = lenEnc(p)
			s := string(p[:l])
			row[i], p = &s, p[l:]
		}
		r.rows = append(r.rows, row)
	}
}

// query runs a statement and returns its result.
func (rc *rawConn) query(q string) rawResult {
	rc.t.Helper()
	rc.command(comQuery, []byte(q))
	return rc.readResult()
}

// mustQuery runs a statement that must succeed.
func (rc *rawConn) mustQuery(q string) rawResult {
	rc.t.Helper()
	r := rc.query(q)
	if r.err != nil {
		rc.t.Fatalf("%s: %v", q, r.err)
	}
	return r
}

// prepare prepares a statement and returns its id and parameter count.
func (rc *rawConn) prepare(q string) (uint32, int, *rawError) {
	rc.t.Helper()
	rc.command(comStmtPrepare, []byte(q))
	p := rc.readPacket()
	if p[0] == 0xff {
		return 0, 0, rc.errOf(p)
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols := int(binary.LittleEndian.Uint16(p[5:]))
	params := int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{params, cols} {
		if n > 0 {
			for i := 0; i < n; i++ {
				rc.readPacket()
			}
			rc.readPacket() // EOF
		}
	}
	return id, params, nil
}

// execute runs prepared statement id with all parameters NULL (nparams of them).
func (rc *rawConn) execute(id uint32, nparams int, types []byte, values []byte) rawResult {
	rc.t.Helper()
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, 0) // no cursor
	b = binary.LittleEndian.AppendUint32(b, 1)
	if nparams > 0 {
		null := make([]byte, (nparams+7)/8)
		if types == nil {
			for i := range null {
				null[i] = 0xff
			}
		}
		b = append(b, null...)
		b = append(b, 1) // new params bound
		if types == nil {
			for i := 0; i < nparams; i++ {
				b = append(b, 6, 0) // MYSQL_TYPE_NULL
			}
		} else {
			b = append(b, types...)
		}
		b = append(b, values...)
	}
	rc.command(comStmtExecute, b)
	return rc.readBinaryResult()
}

// readBinaryResult reads an OK, ERR, or a binary result set (rows unparsed).
func (rc *rawConn) readBinaryResult() rawResult {
	rc.t.Helper()
	p := rc.readPacket()
	switch p[0] {
	case 0x00:
		var r rawResult
		var rest []byte
		r.affected, rest = lenEnc(p[1:])
		r.insertID, rest = lenEnc(rest)
		r.status = binary.LittleEndian.Uint16(rest)
		r.warnings = binary.LittleEndian.Uint16(rest[2:])
		r.info = string(rest[4:])
		return r
	case 0xff:
		return rawResult{err: rc.errOf(p)}
	}
	n, _ := lenEnc(p)
	r := rawResult{cols: int(n)}
	for i := 0; i < r.cols; i++ {
		rc.readPacket()
	}
	rc.readPacket()
	for {
		p := rc.readPacket()
		if p[0] == 0xfe && len(p) < 9 {
			r.status = binary.LittleEndian.Uint16(p[3:])
			return r
		}
		if p[0] == 0xff {
			return rawResult{err: rc.errOf(p)}
		}
		r.rows = append(r.rows, nil)
	}
}
