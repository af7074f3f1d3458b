package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

var (
	// ErrCorrupt is wrapped by every error caused by malformed or truncated
	// input to a decoder.
	ErrCorrupt = errors.New("codec: corrupt encoding")
	// ErrUnsupportedType is wrapped when an encoder is handed a Go value
	// that is not one of the canonical kinds.
	ErrUnsupportedType = errors.New("codec: unsupported value type")
)

func corrupt(what string) error { return fmt.Errorf("%w: %s", ErrCorrupt, what) }

// Key kind tags. Their relative order only matters for NULL, which must be
// the smallest so that NULLs come first in every index, like MySQL. The
// remaining values are spaced out to leave room for future kinds.
const (
	tagNull    byte = 0x00
	tagInt     byte = 0x10
	tagUint    byte = 0x11
	tagFloat   byte = 0x12
	tagDecimal byte = 0x13
	tagBytes   byte = 0x14
	tagTime    byte = 0x15
)

const signBit = uint64(1) << 63

// Escaping for byte strings (the CockroachDB scheme). A 0x00 in the data is
// written as 0x00 0xFF and the value ends with 0x00 0x01. The terminator is
// smaller than any continuation (escaped zero or ordinary byte), so a string
// sorts before all strings it is a proper prefix of, and no encoding is a
// prefix of another, which is what makes tuple concatenation order-preserving.
// This scheme was chosen over fixed-size groups because the encoding of a
// string without its terminator is a byte prefix of the encoding of every
// string that extends it; that is exactly what LIKE 'abc%' range scans need.
const (
	escByte  byte = 0x00
	escZero  byte = 0xFF
	escTerm  byte = 0x01
	termSize      = 2
)

// Decimal sign markers, ordered negative < zero < positive.
const (
	decNeg  byte = 0x01
	decZero byte = 0x02
	decPos  byte = 0x03
)

// EncodeKey appends the memcomparable encoding of v to dst.
//
// For a and b of the same kind, bytes.Compare(EncodeKey(a), EncodeKey(b)) has
// the sign of the SQL comparison of a and b; NULL sorts before everything.
// Strings compare bytewise, which is the order of the binary collations and
// also of utf8mb4_bin / utf8mb4_0900_bin, because UTF-8 byte order equals
// code point order. Case-insensitive collations and PAD SPACE semantics are
// applied above this layer (by encoding a weight string instead of the raw
// text). Floats are ordered numerically with -0 encoded as +0; NaN is
// rejected. Decimals that are numerically equal encode identically whatever
// their scale. Times are truncated to the microsecond.
//
// On error dst is returned unchanged.
func EncodeKey(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, tagNull), nil
	case int64:
		return appendKeyInt(dst, tagInt, x), nil
	case int:
		return appendKeyInt(dst, tagInt, int64(x)), nil
	case int32:
		return appendKeyInt(dst, tagInt, int64(x)), nil
	case int16:
		return appendKeyInt(dst, tagInt, int64(x)), nil
	case int8:
		return appendKeyInt(dst, tagInt, int64(x)), nil
	case uint64:
		return binary.BigEndian.AppendUint64(append(dst, tagUint), x), nil
	case uint:
		return binary.BigEndian.AppendUint64(append(dst, tagUint), uint64(x)), nil
	case uint32:
		return binary.BigEndian.AppendUint64(append(dst, tagUint), uint64(x)), nil
	case uint16:
		return binary.BigEndian.AppendUint64(append(dst, tagUint), uint64(x)), nil
	case uint8:
		return binary.BigEndian.AppendUint64(append(dst, tagUint), uint64(x)), nil
	case float64:
		if x != x {
			return dst, fmt.Errorf("%w: NaN cannot be stored in a key", ErrUnsupportedType)
		}
		return binary.BigEndian.AppendUint64(append(dst, tagFloat), floatKeyBits(x)), nil
	case decimal.Decimal:
		return appendKeyDecimal(dst, x)
	case []byte:
		return appendEscapedBytes(append(dst, tagBytes), x, true), nil
	case string:
		return appendEscapedString(append(dst, tagBytes), x, true), nil
	case time.Time:
		return appendKeyInt(dst, tagTime, x.UnixMicro()), nil
	}
	return dst, fmt.Errorf("%w: %T", ErrUnsupportedType, v)
}

// EncodeKeyTuple appends the encodings of vals in order. Because every single
// encoding is prefix-free, comparing two tuples' bytes compares them
// lexicographically element by element.
func EncodeKeyTuple(dst []byte, vals ...any) ([]byte, error) {
	start := len(dst)
	for _, v := range vals {
		var err error
		if dst, err = EncodeKey(dst, v); err != nil {
			return dst[:start], err
		}
	}
	return dst, nil
}

// EncodeBytesPrefix appends the key encoding of the string s without its
// terminator. Every string having s as a prefix encodes to a key in
// [result, PrefixEnd(result)), and no other string does, so the pair bounds a
// prefix (LIKE 'abc%') scan. It composes with preceding EncodeKey output for
// scans on the last column of a composite index.
func EncodeBytesPrefix(dst []byte, s []byte) []byte {
	return appendEscapedBytes(append(dst, tagBytes), s, false)
}

// EncodeStringPrefix is EncodeBytesPrefix for a string argument.
func EncodeStringPrefix(dst []byte, s string) []byte {
	return appendEscapedString(append(dst, tagBytes), s, false)
}

// PrefixEnd returns the smallest byte string that is greater than every byte
// string having b as a prefix, or nil if there is none (b empty or all 0xFF).
// The result is freshly allocated; b is not modified.
func PrefixEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xFF {
			end := make([]byte, i+1)
			copy(end, b)
			end[i]++
			return end
		}
	}
	return nil
}

// DecodeKey decodes one value produced by EncodeKey and returns the bytes
// following it. Byte strings are returned as freshly allocated []byte (never
// nil, so an empty string stays distinguishable from NULL); decimals come back
// normalized (1.50 decodes as 1.5).
func DecodeKey(b []byte) (v any, rest []byte, err error) {
	if len(b) == 0 {
		return nil, b, corrupt("empty key")
	}
	switch b[0] {
	case tagNull:
		return nil, b[1:], nil
	case tagInt:
		if len(b) < 9 {
			return nil, b, corrupt("truncated int")
		}
		return int64(binary.BigEndian.Uint64(b[1:]) ^ signBit), b[9:], nil
	case tagUint:
		if len(b) < 9 {
			return nil, b, corrupt("truncated uint")
		}
		return binary.BigEndian.Uint64(b[1:]), b[9:], nil
	case tagFloat:
		if len(b) < 9 {
			return nil, b, corrupt("truncated float")
		}
		f := floatFromKeyBits(binary.BigEndian.Uint64(b[1:]))
		if f != f {
			return nil, b, corrupt("NaN in key")
		}
		return f, b[9:], nil
	case tagTime:
		if len(b) < 9 {
			return nil, b, corrupt("truncated time")
		}
		return time.UnixMicro(int64(binary.BigEndian.Uint64(b[1:]) ^ signBit)).UTC(), b[9:], nil
	case tagBytes:
		s, rest, err := decodeEscaped(b[1:])
		if err != nil {
			return nil, b, err
		}
		return s, rest, nil
	case tagDecimal:
		d, rest, err := decodeKeyDecimal(b[1:])
		if err != nil {
			return nil, b, err
		}
		return d, rest, nil
	}
	return nil, b, corrupt("unknown key tag 0x" + strconv.FormatUint(uint64(b[0]), 16))
}

func appendKeyInt(dst []byte, tag byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tag), uint64(v)^signBit)
}

// floatKeyBits maps IEEE-754 bits onto an unsigned order: positives get the
// sign bit set so they sort above negatives, and negatives are complemented
// because their magnitude order is reversed.
func floatKeyBits(f float64) uint64 {
	b := math.Float64bits(f)
	if b == signBit { // -0 must equal +0
		b = 0
	}
	if b&signBit != 0 {
		return ^b
	}
	return b | signBit
}

func floatFromKeyBits(u uint64) float64 {
	if u&signBit != 0 {
		return math.Float64frombits(u &^ signBit)
	}
	return math.Float64frombits(^u)
}

func appendEscapedBytes(dst, s []byte, terminate bool) []byte {
	dst = slices.Grow(dst, len(s)+termSize)
	for {
		i := bytes.IndexByte(s, escByte)
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, escZero)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	if terminate {
		dst = append(dst, escByte, escTerm)
	}
	return dst
}

func appendEscapedString(dst []byte, s string, terminate bool) []byte {
	dst = slices.Grow(dst, len(s)+termSize)
	for {
		i := strings.IndexByte(s, escByte)
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, escZero)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	if terminate {
		dst = append(dst, escByte, escTerm)
	}
	return dst
}

func decodeEscaped(b []byte) (out, rest []byte, err error) {
	i := bytes.IndexByte(b, escByte)
	if i < 0 || i+1 >= len(b) {
		return nil, b, corrupt("unterminated string")
	}
	// Sized for the common no-escape case; make never returns nil, which
	// keeps "" distinct from NULL.
	out = make([]byte, 0, i)
	for {
		out = append(out, b[:i]...)
		switch b[i+1] {
		case escTerm:
			return out, b[i+2:], nil
		case escZero:
			out = append(out, 0)
			b = b[i+2:]
		default:
			return nil, b, corrupt("bad string escape")
		}
		i = bytes.IndexByte(b, escByte)
		if i < 0 || i+1 >= len(b) {
			return nil, b, corrupt("unterminated string")
		}
	}
}

// Decimal key layout (after the tag):
//
//	sign marker, then for non-zero values:
//	exponent E (4 bytes, sign-flipped big-endian int32) and mantissa digits
//	packed two per byte (d1*10+d2+1, so 1..100), terminated by 0x00.
//
// The value is 0.d1d2...dn * 10^E with d1 != 0 and trailing zeros stripped,
// which makes the representation unique per numeric value (so 1.5 and 1.50
// encode identically) and lets a longer mantissa with an equal prefix sort
// after the shorter one, matching numeric order. An odd digit count pads the
// last pair with a zero digit, which does not change the value. For negative
// numbers everything after the marker is complemented, reversing the order
// of magnitudes.
func appendKeyDecimal(dst []byte, d decimal.Decimal) ([]byte, error) {
	sign := d.Sign()
	if sign == 0 {
		return append(dst, tagDecimal, decZero), nil
	}
	var buf [40]byte
	digits, exp := decimalDigits(buf[:0], d)
	e := exp + int64(len(digits))
	if e < math.MinInt32 || e > math.MaxInt32 {
		return dst, fmt.Errorf("%w: decimal exponent out of range", ErrUnsupportedType)
	}
	marker := decPos
	if sign < 0 {
		marker = decNeg
	}
	dst = append(dst, tagDecimal, marker)
	body := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(e))^(1<<31))
	for i := 0; i < len(digits); i += 2 {
		hi := digits[i] - '0'
		var lo byte
		if i+1 < len(digits) {
			lo = digits[i+1] - '0'
		}
		dst = append(dst, hi*10+lo+1)
	}
	dst = append(dst, 0)
	if sign < 0 {
		for i := body; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst, nil
}

// decimalDigits appends the decimal digits of |coefficient| with trailing
// zeros removed and returns the exponent adjusted accordingly, so that
// |d| = digits * 10^exp.
func decimalDigits(buf []byte, d decimal.Decimal) ([]byte, int64) {
	// Coefficient copies the big.Int; shopspring offers no allocation-free
	// way to test whether the coefficient fits in 64 bits.
	c := d.Coefficient()
	if c.IsInt64() {
		v := c.Int64()
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		buf = strconv.AppendUint(buf, u, 10)
	} else {
		buf = c.Abs(c).Append(buf, 10)
	}
	exp := int64(d.Exponent())
	for len(buf) > 0 && buf[len(buf)-1] == '0' {
		buf = buf[:len(buf)-1]
		exp++
	}
	return buf, exp
}

func decodeKeyDecimal(b []byte) (decimal.Decimal, []byte, error) {
	if len(b) == 0 {
		return decimal.Decimal{}, b, corrupt("truncated decimal")
	}
	var inv byte
	switch b[0] {
	case decZero:
		return decimal.New(0, 0), b[1:], nil
	case decPos:
	case decNeg:
		inv = 0xFF
	default:
		return decimal.Decimal{}, b, corrupt("bad decimal sign")
	}
	if len(b) < 6 {
		return decimal.Decimal{}, b, corrupt("truncated decimal")
	}
	eu := binary.BigEndian.Uint32(b[1:5])
	if inv != 0 {
		eu = ^eu
	}
	e := int64(int32(eu ^ (1 << 31)))
	var buf [64]byte
	digits := buf[:0]
	i := 5
	for {
		if i >= len(b) {
			return decimal.Decimal{}, b, corrupt("unterminated decimal")
		}
		x := b[i] ^ inv
		i++
		if x == 0 {
			break
		}
		if x > 100 {
			return decimal.Decimal{}, b, corrupt("bad decimal digit pair")
		}
		x--
		digits = append(digits, '0'+x/10, '0'+x%10)
	}
	if len(digits) == 0 || digits[0] == '0' {
		return decimal.Decimal{}, b, corrupt("non-canonical decimal mantissa")
	}
	if digits[len(digits)-1] == '0' { // padding of an odd digit count
		digits = digits[:len(digits)-1]
	}
	exp := e - int64(len(digits))
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return decimal.Decimal{}, b, corrupt("decimal exponent out of range")
	}
	rest := b[i:]
	if len(digits) <= 18 {
		var v int64
		for _, c := range digits {
			v = v*10 + int64(c-'0')
		}
		if inv != 0 {
			v = -v
		}
		return decimal.New(v, int32(exp)), rest, nil
	}
	c, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return decimal.Decimal{}, b, corrupt("bad decimal digits")
	}
	if inv != 0 {
		c.Neg(c)
	}
	return decimal.NewFromBigInt(c, int32(exp)), rest, nil
}
