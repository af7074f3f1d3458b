package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/shopspring/decimal"
)

// Row value layout:
//
//	uvarint column count
//	per column: uvarint column ID, 1-byte type tag, payload
//
// Rows are never compared bytewise, so the payloads favour size and decode
// speed over order: zig-zag varints for integers and times (microseconds),
// raw little-endian IEEE bits for floats (exact, -0 and all), uvarint-length
// prefixed bytes, and decimals as exponent + coefficient so the scale survives
// a round trip (1.50 stays 1.50, unlike in keys).
//
// Because each column is tagged with its ID, a row written under an older
// schema stays readable after ADD/DROP COLUMN: dropped columns are skipped and
// added ones are simply absent. NULLs are written explicitly (2 bytes) rather
// than omitted, so that "absent" can be told apart from "NULL" and a column
// added with a DEFAULT can read that default for old rows without turning
// explicit NULLs into the default (see NewRowDecoderWithDefaults).
const (
	rowNull       byte = 0
	rowInt        byte = 1
	rowUint       byte = 2
	rowFloat      byte = 3
	rowBytes      byte = 4
	rowDecimal    byte = 5 // varint exponent, varint coefficient
	rowDecimalBig byte = 6 // varint exponent, sign byte, uvarint length, big-endian magnitude
	rowTime       byte = 7
)

// EncodeRow appends a row value holding vals[i] under column ID colIDs[i].
// Column IDs must be non-negative and should be distinct. On error dst is
// returned unchanged.
func EncodeRow(dst []byte, colIDs []int64, vals []any) ([]byte, error) {
	if len(colIDs) != len(vals) {
		return dst, fmt.Errorf("codec: EncodeRow got %d column IDs and %d values", len(colIDs), len(vals))
	}
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(colIDs)))
	for i, id := range colIDs {
		if id < 0 {
			return dst[:start], fmt.Errorf("codec: negative column ID %d", id)
		}
		dst = binary.AppendUvarint(dst, uint64(id))
		var err error
		if dst, err = appendRowValue(dst, vals[i]); err != nil {
			return dst[:start], fmt.Errorf("column %d: %w", id, err)
		}
	}
	return dst, nil
}

func appendRowValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, rowNull), nil
	case int64:
		return binary.AppendVarint(append(dst, rowInt), x), nil
	case int:
		return binary.AppendVarint(append(dst, rowInt), int64(x)), nil
	case int32:
		return binary.AppendVarint(append(dst, rowInt), int64(x)), nil
	case int16:
		return binary.AppendVarint(append(dst, rowInt), int64(x)), nil
	case int8:
		return binary.AppendVarint(append(dst, rowInt), int64(x)), nil
	case uint64:
		return binary.AppendUvarint(append(dst, rowUint), x), nil
	case uint:
		return binary.AppendUvarint(append(dst, rowUint), uint64(x)), nil
	case uint32:
		return binary.AppendUvarint(append(dst, rowUint), uint64(x)), nil
	case uint16:
		return binary.AppendUvarint(append(dst, rowUint), uint64(x)), nil
	case uint8:
		return binary.AppendUvarint(append(dst, rowUint), uint64(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(dst, rowFloat), math.Float64bits(x)), nil
	case []byte:
		dst = binary.AppendUvarint(append(dst, rowBytes), uint64(len(x)))
		return append(dst, x...), nil
	case string:
		dst = binary.AppendUvarint(append(dst, rowBytes), uint64(len(x)))
		return append(dst, x...), nil
	case time.Time:
		return binary.AppendVarint(append(dst, rowTime), x.UnixMicro()), nil
	case decimal.Decimal:
		return appendRowDecimal(dst, x), nil
	}
	return dst, fmt.Errorf("%w: %T", ErrUnsupportedType, v)
}

func appendRowDecimal(dst []byte, d decimal.Decimal) []byte {
	c := d.Coefficient()
	if c.IsInt64() {
		dst = binary.AppendVarint(append(dst, rowDecimal), int64(d.Exponent()))
		return binary.AppendVarint(dst, c.Int64())
	}
	dst = binary.AppendVarint(append(dst, rowDecimalBig), int64(d.Exponent()))
	var sign byte
	if c.Sign() < 0 {
		sign = 1
	}
	n := (c.BitLen() + 7) / 8
	dst = binary.AppendUvarint(append(dst, sign), uint64(n))
	dst = append(dst, make([]byte, n)...)
	c.FillBytes(dst[len(dst)-n:])
	return dst
}

// RowDecoder extracts a fixed list of columns from row values. It is
// immutable after construction and safe for concurrent use, so one decoder
// can be cached per table schema.
type RowDecoder struct {
	colIDs []int64
	// dense maps column ID -> output position+1 (0: not wanted). It is used
	// when the wanted IDs are small, which is the normal case since IDs are
	// allocated sequentially per table; otherwise sparse is used.
	dense  []int32
	sparse map[int64]int32
	// dups lists output positions whose column ID repeats an earlier one;
	// they are filled by copying after decoding.
	dups     []dupCol
	distinct int // number of distinct non-negative wanted IDs
	defaults []any
}

type dupCol struct{ dst, src int32 }

const denseMaxID = 1024

// NewRowDecoder returns a decoder producing the columns colIDs, in that order.
// Columns missing from a row decode as nil.
func NewRowDecoder(colIDs []int64) *RowDecoder {
	return NewRowDecoderWithDefaults(colIDs, nil)
}

// NewRowDecoderWithDefaults is like NewRowDecoder, but a column missing from
// a row (one added to the schema after the row was written) decodes as
// defaults[i] instead of nil. A column stored as NULL still decodes as nil.
// defaults may be nil or shorter than colIDs; default values are shared by
// all decoded rows and must not be mutated.
func NewRowDecoderWithDefaults(colIDs []int64, defaults []any) *RowDecoder {
	d := &RowDecoder{colIDs: append([]int64(nil), colIDs...)}
	if len(defaults) > 0 {
		d.defaults = make([]any, len(colIDs))
		copy(d.defaults, defaults)
	}
	var maxID int64 = -1
	for _, id := range colIDs {
		maxID = max(maxID, id)
	}
	if maxID < denseMaxID || maxID < 8*int64(len(colIDs)) {
		d.dense = make([]int32, maxID+1)
	} else {
		d.sparse = make(map[int64]int32, len(colIDs))
	}
	for i, id := range colIDs {
		if id < 0 {
			continue // cannot occur in a row; always absent
		}
		var first int32
		if d.dense != nil {
			first = d.dense[id]
		} else {
			first = d.sparse[id]
		}
		if first != 0 {
			d.dups = append(d.dups, dupCol{dst: int32(i), src: first - 1})
			continue
		}
		if d.dense != nil {
			d.dense[id] = int32(i) + 1
		} else {
			d.sparse[id] = int32(i) + 1
		}
		d.distinct++
	}
	return d
}

// ColumnIDs returns the wanted column IDs in output order; the slice is
// shared with the decoder and must not be modified.
func (d *RowDecoder) ColumnIDs() []int64 { return d.colIDs }

func (d *RowDecoder) lookup(id uint64) int32 {
	if d.dense != nil {
		if id < uint64(len(d.dense)) {
			return d.dense[id] - 1
		}
		return -1
	}
	if id > math.MaxInt64 {
		return -1
	}
	return d.sparse[int64(id)] - 1
}

// Decode fills dst[i] with the value of column colIDs[i]. Decoding stops as
// soon as every wanted column has been found, so corruption after the last
// wanted column may go unnoticed. []byte results are copies that do not
// alias row.
func (d *RowDecoder) Decode(row []byte, dst []any) error {
	if len(dst) < len(d.colIDs) {
		return fmt.Errorf("codec: Decode needs %d destinations, got %d", len(d.colIDs), len(dst))
	}
	dst = dst[:len(d.colIDs)]
	if d.defaults != nil {
		copy(dst, d.defaults)
	} else {
		clear(dst)
	}
	return decodeInto(d, row, dst, decodeRowValue)
}

// DecodeRaw is Decode without boxing: dst[i] is column colIDs[i] as
// stored, with bytes aliasing row (valid while row is), so a caller that
// converts the values itself allocates only what it keeps.
func (d *RowDecoder) DecodeRaw(row []byte, dst []Raw) error {
	if len(dst) < len(d.colIDs) {
		return fmt.Errorf("codec: DecodeRaw needs %d destinations, got %d", len(d.colIDs), len(dst))
	}
	dst = dst[:len(d.colIDs)]
	for i := range dst {
		dst[i] = Raw{}
		if d.defaults != nil && d.defaults[i] != nil {
			dst[i] = Raw{Kind: RawOther, V: d.defaults[i]}
		}
	}
	return decodeInto(d, row, dst, decodeRawValue)
}

// decodeInto walks row's columns and stores the wanted ones with value.
func decodeInto[T any](d *RowDecoder, row []byte, dst []T, value func([]byte, int, byte) (T, int, error)) error {
	n, k := binary.Uvarint(row)
	if k <= 0 {
		return corrupt("bad row column count")
	}
	if n > uint64(len(row)) { // every column takes at least 2 bytes
		return corrupt("row column count exceeds row size")
	}
	pos := k
	remaining := d.distinct
	for c := uint64(0); c < n && remaining > 0; c++ {
		id, k := binary.Uvarint(row[pos:])
		if k <= 0 {
			return corrupt("bad column ID")
		}
		pos += k
		if pos >= len(row) {
			return corrupt("truncated row")
		}
		tag := row[pos]
		pos++
		out := d.lookup(id)
		var err error
		if out < 0 {
			pos, err = skipRowValue(row, pos, tag)
		} else {
			dst[out], pos, err = value(row, pos, tag)
			remaining--
		}
		if err != nil {
			return err
		}
	}
	for _, dc := range d.dups {
		dst[dc.dst] = dst[dc.src]
	}
	return nil
}

// RawKind says which field of a Raw holds its value.
type RawKind uint8

const (
	RawNull  RawKind = iota
	RawInt           // int64(N)
	RawUint          // N
	RawFloat         // math.Float64frombits(N)
	RawBytes         // B, aliasing the decoded row
	RawOther         // V: a time.Time, a decimal.Decimal or a column's default
)

// Raw is one column value as DecodeRaw found it.
type Raw struct {
	Kind RawKind
	N    uint64
	B    []byte
	V    any
}

// Borrowed is Canonical without the copy: bytes alias the decoded row, so
// the value is valid only while the row is, for a caller that uses it and
// keeps nothing of it.
func (r Raw) Borrowed() any {
	if r.Kind == RawBytes && len(r.B) > 0 {
		return r.B
	}
	return r.Canonical()
}

// Canonical is the value Decode gives for the same column: bytes are
// copied.
func (r Raw) Canonical() any {
	switch r.Kind {
	case RawInt:
		return int64(r.N)
	case RawUint:
		return r.N
	case RawFloat:
		return math.Float64frombits(r.N)
	case RawBytes:
		if len(r.B) == 0 {
			return emptyBytes
		}
		return append([]byte(nil), r.B...)
	case RawOther:
		return r.V
	}
	return nil
}

func decodeRawValue(row []byte, pos int, tag byte) (Raw, int, error) {
	switch tag {
	case rowNull:
		return Raw{}, pos, nil
	case rowInt:
		v, k := binary.Varint(row[pos:])
		if k <= 0 {
			return Raw{}, pos, corrupt("bad int")
		}
		return Raw{Kind: RawInt, N: uint64(v)}, pos + k, nil
	case rowUint:
		v, k := binary.Uvarint(row[pos:])
		if k <= 0 {
			return Raw{}, pos, corrupt("bad uint")
		}
		return Raw{Kind: RawUint, N: v}, pos + k, nil
	case rowFloat:
		if len(row)-pos < 8 {
			return Raw{}, pos, corrupt("truncated float")
		}
		return Raw{Kind: RawFloat, N: binary.LittleEndian.Uint64(row[pos:])}, pos + 8, nil
	case rowBytes:
		l, k := binary.Uvarint(row[pos:])
		if k <= 0 || l > uint64(len(row)-pos-k) {
			return Raw{}, pos, corrupt("bad bytes length")
		}
		pos += k
		end := pos + int(l)
		return Raw{Kind: RawBytes, B: row[pos:end:end]}, end, nil
	}
	v, pos, err := decodeRowValue(row, pos, tag)
	return Raw{Kind: RawOther, V: v}, pos, err
}

// emptyBytes is returned for empty strings instead of allocating: it is
// non-nil (empty string is not NULL) and has zero capacity, so appending to
// it can never affect another row.
var emptyBytes = []byte{}

func decodeRowValue(row []byte, pos int, tag byte) (any, int, error) {
	switch tag {
	case rowNull:
		return nil, pos, nil
	case rowInt:
		v, k := binary.Varint(row[pos:])
		if k <= 0 {
			return nil, pos, corrupt("bad int")
		}
		return v, pos + k, nil
	case rowUint:
		v, k := binary.Uvarint(row[pos:])
		if k <= 0 {
			return nil, pos, corrupt("bad uint")
		}
		return v, pos + k, nil
	case rowFloat:
		if len(row)-pos < 8 {
			return nil, pos, corrupt("truncated float")
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(row[pos:])), pos + 8, nil
	case rowBytes:
		l, k := binary.Uvarint(row[pos:])
		if k <= 0 || l > uint64(len(row)-pos-k) {
			return nil, pos, corrupt("bad bytes length")
		}
		pos += k
		if l == 0 {
			return emptyBytes, pos, nil
		}
		b := make([]byte, l)
		copy(b, row[pos:])
		return b, pos + int(l), nil
	case rowTime:
		v, k := binary.Varint(row[pos:])
		if k <= 0 {
			return nil, pos, corrupt("bad time")
		}
		return time.UnixMicro(v).UTC(), pos + k, nil
	case rowDecimal, rowDecimalBig:
		return decodeRowDecimal(row, pos, tag)
	}
	return nil, pos, corrupt(fmt.Sprintf("unknown row value tag %d", tag))
}

func decodeRowDecimal(row []byte, pos int, tag byte) (any, int, error) {
	exp, k := binary.Varint(row[pos:])
	if k <= 0 || exp < math.MinInt32 || exp > math.MaxInt32 {
		return nil, pos, corrupt("bad decimal exponent")
	}
	pos += k
	if tag == rowDecimal {
		c, k := binary.Varint(row[pos:])
		if k <= 0 {
			return nil, pos, corrupt("bad decimal coefficient")
		}
		return decimal.New(c, int32(exp)), pos + k, nil
	}
	if pos >= len(row) || row[pos] > 1 {
		return nil, pos, corrupt("bad decimal sign")
	}
	neg := row[pos] == 1
	pos++
	l, k := binary.Uvarint(row[pos:])
	if k <= 0 || l > uint64(len(row)-pos-k) {
		return nil, pos, corrupt("bad decimal length")
	}
	pos += k
	c := new(big.Int).SetBytes(row[pos : pos+int(l)])
	if neg {
		c.Neg(c)
	}
	return decimal.NewFromBigInt(c, int32(exp)), pos + int(l), nil
}

// skipRowValue advances past a value without materializing it, so reading a
// few columns of a wide row costs little more than finding them.
func skipRowValue(row []byte, pos int, tag byte) (int, error) {
	switch tag {
	case rowNull:
		return pos, nil
	case rowInt, rowUint, rowTime:
		return skipVarint(row, pos)
	case rowFloat:
		if len(row)-pos < 8 {
			return pos, corrupt("truncated float")
		}
		return pos + 8, nil
	case rowBytes:
		l, k := binary.Uvarint(row[pos:])
		if k <= 0 || l > uint64(len(row)-pos-k) {
			return pos, corrupt("bad bytes length")
		}
		return pos + k + int(l), nil
	case rowDecimal:
		pos, err := skipVarint(row, pos)
		if err != nil {
			return pos, err
		}
		return skipVarint(row, pos)
	case rowDecimalBig:
		pos, err := skipVarint(row, pos)
		if err != nil {
			return pos, err
		}
		if pos >= len(row) {
			return pos, corrupt("truncated decimal")
		}
		pos++
		l, k := binary.Uvarint(row[pos:])
		if k <= 0 || l > uint64(len(row)-pos-k) {
			return pos, corrupt("bad decimal length")
		}
		return pos + k + int(l), nil
	}
	return pos, corrupt(fmt.Sprintf("unknown row value tag %d", tag))
}

func skipVarint(row []byte, pos int) (int, error) {
	for i := pos; i < len(row) && i < pos+binary.MaxVarintLen64; i++ {
		if row[i] < 0x80 {
			return i + 1, nil
		}
	}
	return pos, corrupt("bad varint")
}
