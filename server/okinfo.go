package server

import (
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// vitess writes the info string of an OK packet ("Rows matched: 1
// Changed: 1  Warnings: 0", "Statement prepared", ...) behind a '#' byte,
// where MySQL and MariaDB servers write it as a length-encoded string.
// Clients read that byte as a length of 35: libmariadb and libmysqlclient
// (the mysql and mariadb command-line clients, and every driver built on
// them) truncate a longer info and fail with "malformed packet" on a
// shorter one.
//
// writeInfoOK therefore has such an OK packet start a write of its own
// (the packets before it are flushed first), and protoConn rewrites it on
// its way out (collectInfoOK).

// writeInfoOK passes r, an OK result with an info string, to cb so that
// its packet is the first protoConn gets next.
func writeInfoOK(c *mysql.Conn, r *sqltypes.Result, more bool, cb mysql.ResultSpoolFn) error {
	pc, ok := c.Conn.(*protoConn)
	if !ok {
		return cb(r, more)
	}
	if err := c.FlushBuffer(); err != nil {
		return err
	}
	pc.infoOK = pc.infoOK[:0]
	pc.fixInfo = true
	return cb(r, more)
}

// collectInfoOK gathers the OK packet writeInfoOK announced, which vitess
// may write in pieces or with more packets behind it, and writes it out
// rewritten once complete.
func (pc *protoConn) collectInfoOK(p []byte) (int, error) {
	pc.infoOK = append(pc.infoOK, p...)
	if len(pc.infoOK) < 4 {
		return len(p), nil
	}
	n := 4 + (int(pc.infoOK[0]) | int(pc.infoOK[1])<<8 | int(pc.infoOK[2])<<16)
	if len(pc.infoOK) < n {
		return len(p), nil
	}
	pc.fixInfo = false
	out := append(fixInfoOK(pc.infoOK[:n]), pc.infoOK[n:]...)
	if _, err := pc.writeOut(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// fixInfoOK rewrites packet b (header included), an OK packet as vitess's
// writeOKPacketWithInfo makes it, into MySQL's encoding of its info. Any
// other packet is returned as it is.
func fixInfoOK(b []byte) []byte {
	payload := b[4:]
	if len(payload) < 1 || payload[0] != 0x00 {
		return b
	}
	pos := 1
	for range 2 { // affected rows, last insert id
		var ok bool
		if _, pos, ok = lenEncInt(payload, pos); !ok {
			return b
		}
	}
	pos += 4 // status flags, warnings
	if pos >= len(payload) || payload[pos] != '#' {
		return b
	}
	info := payload[pos+1:]
	out := append([]byte(nil), b[:4+pos]...)
	out = appendLenEncInt(out, uint64(len(info)))
	out = append(out, info...)
	n := len(out) - 4
	out[0], out[1], out[2] = byte(n), byte(n>>8), byte(n>>16)
	return out
}

func appendLenEncInt(b []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	b = append(b, 0xfe)
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}
