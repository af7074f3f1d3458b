package sql

import (
	"math"
	"unsafe"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/reorgdb/reorgdb/codec"
)

// rowAlloc hands out a statement's result rows and their strings from
// shared chunks: a range read of a hundred rows costs a few allocations
// instead of several per row. A row or string keeps its whole chunk alive,
// so it serves only rows that are dropped together once written to the
// client (the fast path's results), never rows a plan keeps. A nil
// *rowAlloc allocates each row and string on its own.
type rowAlloc struct {
	rows []any
	strs []byte
}

const (
	rowChunk    = 32       // rows per chunk of row slots
	strChunkMin = 1 << 10  // first string chunk of a statement
	strChunkMax = 16 << 10 // strings longer than a quarter of this get their own allocation
)

func (a *rowAlloc) row(n int) gms.Row {
	if a == nil || n == 0 {
		return make(gms.Row, n)
	}
	if len(a.rows) < n {
		a.rows = make([]any, rowChunk*n)
	}
	r := a.rows[:n:n]
	a.rows = a.rows[n:]
	return r
}

// str returns b as a string. Chunk bytes are written once, before the
// string that covers them is made, and never again.
func (a *rowAlloc) str(b []byte) string {
	if a == nil || len(b) == 0 || len(b) > strChunkMax/4 {
		return string(b)
	}
	if cap(a.strs)-len(a.strs) < len(b) {
		size := min(max(2*cap(a.strs), strChunkMin), strChunkMax)
		a.strs = make([]byte, 0, max(size, len(b)))
	}
	start := len(a.strs)
	a.strs = append(a.strs, b...)
	return unsafe.String(&a.strs[start], len(b))
}

// fromRaw is fromCanonical of r.Canonical() without boxing the
// intermediate value or copying bytes that end up in a string.
func fromRaw(k valueKind, t gms.Type, r codec.Raw, a *rowAlloc) (any, error) {
	switch r.Kind {
	case codec.RawNull:
		return nil, nil
	case codec.RawInt:
		v := int64(r.N)
		switch k {
		case kindInt8:
			return int8(v), nil
		case kindInt16, kindYear:
			return int16(v), nil
		case kindInt32:
			return int32(v), nil
		case kindInt64:
			return v, nil
		case kindTimespan:
			return types.Timespan(v), nil
		}
	case codec.RawUint:
		switch k {
		case kindUint8:
			return uint8(r.N), nil
		case kindUint16, kindEnum:
			return uint16(r.N), nil
		case kindUint32:
			return uint32(r.N), nil
		case kindUint64, kindBit, kindSet:
			return r.N, nil
		}
	case codec.RawFloat:
		f := math.Float64frombits(r.N)
		switch k {
		case kindFloat32:
			return float32(f), nil
		case kindFloat64:
			return f, nil
		}
	case codec.RawBytes:
		if k == kindString {
			return a.str(r.B), nil
		}
	}
	return fromCanonical(k, t, r.Canonical())
}
