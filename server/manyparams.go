package server

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// bitmapOverflows reports whether vitess computes the NULL bitmap of a
// statement's COM_STMT_EXECUTE as (ParamsCount+7)/8 in 16 bits and gets
// it wrong: for 65529 to 65535 parameters (MySQL allows up to 65535).
func bitmapOverflows(p *mysql.PrepareData) bool {
	return int((p.ParamsCount+7)/8) != (int(p.ParamsCount)+7)/8
}

// decodeManyParams decodes the parameters of COM_STMT_EXECUTE packet pkt
// (header included) into the statement's bind variables, and returns the
// packet vitess gets instead: one that binds nothing, so that vitess
// takes every parameter from those bind variables. A malformed packet
// fails the execution with MySQL's 1835.
func (pc *protoConn) decodeManyParams(p *mysql.PrepareData, pkt []byte) []byte {
	body := pkt[4:]
	id := binary.LittleEndian.Uint32(body[1:])
	err := pc.bindAll(p, id, body)
	if err != nil {
		pc.st.mu.Lock()
		if pc.st.execErr == nil {
			pc.st.execErr = map[uint32]error{}
		}
		pc.st.execErr[id] = err
		pc.st.mu.Unlock()
	}
	if p.BindVars == nil {
		p.BindVars = map[string]*querypb.BindVariable{}
	}
	for i := 0; i < len(p.ParamsType); i++ {
		// After an error, the execution fails before binding; vitess
		// still needs every parameter present not to panic.
		k := "v" + strconv.Itoa(i+1)
		if p.BindVars[k] == nil {
			p.BindVars[k] = sqltypes.NullBindVariable
		}
	}
	out := make([]byte, 0, 11)
	out = append(out, body[:1]...)
	if len(body) >= 10 {
		out = append(out, body[1:10]...) // statement id, cursor flags, iteration count
	} else {
		out = append(out, body[1:5]...)
		out = append(out, 0, 1, 0, 0, 0)
	}
	// The (wrong, empty) NULL bitmap, then "no new types".
	out = append(out, 0)
	return packet(0, out)
}

func errMalformed() error {
	return mysql.NewSQLError(1835, "HY000", "Malformed communication packet.")
}

func (pc *protoConn) bindAll(p *mysql.PrepareData, id uint32, body []byte) error {
	n := int(p.ParamsCount)
	if len(body) < 10 {
		return errMalformed()
	}
	pos := 10
	nb := (n + 7) / 8
	if len(body) < pos+nb+1 {
		return errMalformed()
	}
	nulls := body[pos : pos+nb]
	pos += nb
	bound := body[pos]
	pos++
	pc.st.mu.Lock()
	defer pc.st.mu.Unlock()
	types := pc.st.stmtTypes[id]
	if bound == 1 {
		if len(body) < pos+2*n {
			return errMalformed()
		}
		types = append([]byte(nil), body[pos:pos+2*n]...)
		pos += 2 * n
		if pc.st.stmtTypes == nil {
			pc.st.stmtTypes = map[uint32][]byte{}
		}
		pc.st.stmtTypes[id] = types
	}
	if len(types) != 2*n {
		return errMalformed()
	}
	if p.BindVars == nil {
		p.BindVars = make(map[string]*querypb.BindVariable, n)
	}
	for i := 0; i < n; i++ {
		k := "v" + strconv.Itoa(i+1)
		if p.BindVars[k] != nil {
			continue // sent as long data
		}
		if nulls[i/8]&(1<<(i%8)) != 0 {
			p.BindVars[k] = sqltypes.NullBindVariable
			continue
		}
		v, next, ok := binaryValue(body, pos, types[2*i], types[2*i+1]&0x80 != 0)
		if !ok {
			return errMalformed()
		}
		pos = next
		p.BindVars[k] = sqltypes.ValueBindVariable(v)
	}
	return nil
}

// binaryValue decodes one parameter value of the binary protocol, as
// vitess's parseStmtArgs does.
func binaryValue(b []byte, pos int, typ byte, unsigned bool) (sqltypes.Value, int, bool) {
	need := func(k int) bool { return pos+k <= len(b) }
	switch typ {
	case 0x06: // NULL
		return sqltypes.NULL, pos, true
	case 0x01: // TINY
		if !need(1) {
			break
		}
		if unsigned {
			return sqltypes.NewUint64(uint64(b[pos])), pos + 1, true
		}
		return sqltypes.NewInt64(int64(int8(b[pos]))), pos + 1, true
	case 0x02, 0x0d: // SHORT, YEAR
		if !need(2) {
			break
		}
		v := binary.LittleEndian.Uint16(b[pos:])
		if unsigned {
			return sqltypes.NewUint64(uint64(v)), pos + 2, true
		}
		return sqltypes.NewInt64(int64(int16(v))), pos + 2, true
	case 0x03, 0x09: // LONG, INT24
		if !need(4) {
			break
		}
		v := binary.LittleEndian.Uint32(b[pos:])
		if unsigned {
			return sqltypes.NewUint64(uint64(v)), pos + 4, true
		}
		return sqltypes.NewInt64(int64(int32(v))), pos + 4, true
	case 0x08: // LONGLONG
		if !need(8) {
			break
		}
		v := binary.LittleEndian.Uint64(b[pos:])
		if unsigned {
			return sqltypes.NewUint64(v), pos + 8, true
		}
		return sqltypes.NewInt64(int64(v)), pos + 8, true
	case 0x04: // FLOAT
		if !need(4) {
			break
		}
		return sqltypes.NewFloat64(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[pos:])))), pos + 4, true
	case 0x05: // DOUBLE
		if !need(8) {
			break
		}
		return sqltypes.NewFloat64(math.Float64frombits(binary.LittleEndian.Uint64(b[pos:]))), pos + 8, true
	case 0x07, 0x0a, 0x0c: // TIMESTAMP, DATE, DATETIME
		if !need(1) || !need(1+int(b[pos])) {
			break
		}
		d := b[pos+1 : pos+1+int(b[pos])]
		next := pos + 1 + len(d)
		switch len(d) {
		case 0:
			return sqltypes.NewVarChar("0000-00-00 00:00:00"), next, true
		case 4:
			return sqltypes.NewVarChar(fmt.Sprintf("%04d-%02d-%02d", binary.LittleEndian.Uint16(d), d[2], d[3])), next, true
		case 7:
			return sqltypes.NewVarChar(fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", binary.LittleEndian.Uint16(d), d[2], d[3], d[4], d[5], d[6])), next, true
		case 11:
			return sqltypes.NewVarChar(fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", binary.LittleEndian.Uint16(d), d[2], d[3], d[4], d[5], d[6], binary.LittleEndian.Uint32(d[7:]))), next, true
		}
	case 0x0b: // TIME
		if !need(1) || !need(1+int(b[pos])) {
			break
		}
		d := b[pos+1 : pos+1+int(b[pos])]
		next := pos + 1 + len(d)
		if len(d) == 0 {
			return sqltypes.NewVarChar("00:00:00"), next, true
		}
		if len(d) != 8 && len(d) != 12 {
			break
		}
		sign := ""
		if d[0] == 1 {
			sign = "-"
		}
		hours := binary.LittleEndian.Uint32(d[1:])*24 + uint32(d[5])
		s := fmt.Sprintf("%s%02d:%02d:%02d", sign, hours, d[6], d[7])
		if len(d) == 12 {
			s += fmt.Sprintf(".%06d", binary.LittleEndian.Uint32(d[8:]))
		}
		return sqltypes.NewVarChar(s), next, true
	default: // strings, decimals, blobs, JSON, BIT, ENUM, SET, GEOMETRY
		l, next, ok := lenEncInt(b, pos)
		if !ok || uint64(len(b)-next) < l {
			break
		}
		v := append([]byte(nil), b[next:next+int(l)]...)
		return sqltypes.MakeTrusted(sqltypes.VarBinary, v), next + int(l), true
	}
	return sqltypes.NULL, pos, false
}

func lenEncInt(b []byte, pos int) (uint64, int, bool) {
	if pos >= len(b) {
		return 0, pos, false
	}
	switch c := b[pos]; {
	case c < 0xfb:
		return uint64(c), pos + 1, true
	case c == 0xfc && pos+3 <= len(b):
		return uint64(binary.LittleEndian.Uint16(b[pos+1:])), pos + 3, true
	case c == 0xfd && pos+4 <= len(b):
		return uint64(b[pos+1]) | uint64(b[pos+2])<<8 | uint64(b[pos+3])<<16, pos + 4, true
	case c == 0xfe && pos+9 <= len(b):
		return binary.LittleEndian.Uint64(b[pos+1:]), pos + 9, true
	}
	return 0, pos, false
}

// tooManyPlaceholders reports whether a statement has more than MySQL's
// 65,535 placeholders; vitess counts them in 16 bits and would announce
// the statement with (their number mod 65,536) parameters.
func tooManyPlaceholders(query string) bool {
	if strings.Count(query, "?") <= math.MaxUint16 {
		return false
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return false
	}
	n := 0
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if v, ok := node.(*sqlparser.SQLVal); ok && v.Type == sqlparser.ValArg {
			n++
		}
		return true, nil
	}, stmt)
	return n > math.MaxUint16
}
