package codec

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Random value generators and the reference SQL comparison shared by the
// tests. Generators deliberately over-sample extremes and near-collisions
// (small domains, shared prefixes) because that is where order bugs hide.

type kind int

const (
	kInt kind = iota
	kUint
	kFloat
	kDecimal
	kBytes
	kTime
	numKinds
)

func (k kind) String() string {
	return [...]string{"int64", "uint64", "float64", "decimal", "bytes", "time"}[k]
}

const testSeed = 20240601

func newRand(t testing.TB) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewSource(testSeed))
}

func randInt64(r *rand.Rand) int64 {
	switch r.Intn(6) {
	case 0:
		ext := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64,
			math.MinInt32, math.MaxInt32, -128, 127, 255, 256}
		return ext[r.Intn(len(ext))]
	case 1:
		return r.Int63n(21) - 10
	case 2:
		v := int64(r.Uint64() >> uint(r.Intn(64)))
		if r.Intn(2) == 0 {
			v = -v
		}
		return v
	default:
		return int64(r.Uint64())
	}
}

func randUint64(r *rand.Rand) uint64 {
	switch r.Intn(5) {
	case 0:
		ext := []uint64{0, 1, 255, 256, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64 - 1, math.MaxUint64}
		return ext[r.Intn(len(ext))]
	case 1:
		return uint64(r.Intn(20))
	case 2:
		return r.Uint64() >> uint(r.Intn(64))
	default:
		return r.Uint64()
	}
}

func randFloat(r *rand.Rand) float64 {
	switch r.Intn(6) {
	case 0:
		ext := []float64{0, math.Copysign(0, -1), 1, -1, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
			math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), 2.2250738585072014e-308,
			-2.2250738585072014e-308, 0.1, -0.1, 1e300, -1e-300}
		return ext[r.Intn(len(ext))]
	case 1:
		return float64(r.Intn(11) - 5)
	case 2:
		return r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
	default:
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) {
				return f
			}
		}
	}
}

func randDecimal(r *rand.Rand) decimal.Decimal {
	switch r.Intn(5) {
	case 0:
		// Small domain with varying scale: many numerically equal values.
		return decimal.New(int64(r.Intn(41)-20)*int64(math.Pow10(r.Intn(3))), int32(-r.Intn(4)))
	case 1:
		return decimal.New(randInt64(r), int32(r.Intn(61)-30))
	default:
		n := 1 + r.Intn(65)
		digits := make([]byte, n)
		for i := range digits {
			if r.Intn(4) == 0 {
				digits[i] = '0'
			} else {
				digits[i] = byte('0' + r.Intn(10))
			}
		}
		c, _ := new(big.Int).SetString(string(digits), 10)
		if r.Intn(2) == 0 {
			c.Neg(c)
		}
		return decimal.NewFromBigInt(c, int32(r.Intn(81)-50))
	}
}

// randBytes favours 0x00, 0x01, 0xFE, 0xFF and short lengths so that escapes,
// terminator look-alikes and mutual prefixes are common.
func randBytes(r *rand.Rand) []byte {
	if r.Intn(4) == 0 {
		b := make([]byte, r.Intn(40))
		r.Read(b)
		return b
	}
	alpha := []byte{0x00, 0x01, 0xFE, 0xFF, 'a'}
	b := make([]byte, r.Intn(7))
	for i := range b {
		b[i] = alpha[r.Intn(len(alpha))]
	}
	return b
}

var (
	minTestTime = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxTestTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// randTime returns times at microsecond precision unless withNanos, in
// assorted zones (the encoding must not depend on the zone).
func randTime(r *rand.Rand, withNanos bool) time.Time {
	var us int64
	switch r.Intn(4) {
	case 0:
		ext := []int64{minTestTime, maxTestTime, 0, -1, 1, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()}
		us = ext[r.Intn(len(ext))]
	case 1:
		us = r.Int63n(2_000_000_000) - 1_000_000_000 // around the epoch
	default:
		us = minTestTime + r.Int63n(maxTestTime-minTestTime)
	}
	t := time.UnixMicro(us)
	if withNanos {
		t = t.Add(time.Duration(r.Intn(1000)))
	}
	zones := []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+1800), time.FixedZone("minus", -8*3600)}
	return t.In(zones[r.Intn(len(zones))])
}

// randValue returns a value of kind k, or NULL with probability nullPct%.
// Byte strings are randomly given as string or []byte, which must be
// interchangeable.
func randValue(r *rand.Rand, k kind, nullPct int) any {
	if r.Intn(100) < nullPct {
		return nil
	}
	switch k {
	case kInt:
		return randInt64(r)
	case kUint:
		return randUint64(r)
	case kFloat:
		return randFloat(r)
	case kDecimal:
		return randDecimal(r)
	case kBytes:
		b := randBytes(r)
		if r.Intn(2) == 0 {
			return string(b)
		}
		return b
	case kTime:
		return randTime(r, r.Intn(3) == 0)
	}
	panic("bad kind")
}

func asBytes(v any) []byte {
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	return v.([]byte)
}

// sqlCompare is the reference order: MySQL comparison of two values of the
// same kind, NULL first.
func sqlCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case uint64:
		return cmp.Compare(x, b.(uint64))
	case float64:
		return cmp.Compare(x, b.(float64)) // -0 == +0 here
	case decimal.Decimal:
		return x.Cmp(b.(decimal.Decimal))
	case []byte, string:
		return bytes.Compare(asBytes(a), asBytes(b))
	case time.Time:
		return cmp.Compare(x.UnixMicro(), b.(time.Time).UnixMicro())
	}
	panic(fmt.Sprintf("sqlCompare: %T", a))
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// sameValue reports whether got is the value want decodes to: exact for
// rows (exactScale), normalized for keys.
func sameValue(want, got any, exactScale bool) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case int64, uint64:
		return want == got
	case float64:
		g, ok := got.(float64)
		if !ok {
			return false
		}
		if exactScale {
			return math.Float64bits(w) == math.Float64bits(g)
		}
		return w == g && !math.Signbit(g) || w == g && w != 0
	case decimal.Decimal:
		g, ok := got.(decimal.Decimal)
		if !ok || !w.Equal(g) {
			return false
		}
		return !exactScale || w.Exponent() == g.Exponent()
	case []byte, string:
		g, ok := got.([]byte)
		return ok && g != nil && bytes.Equal(asBytes(want), g)
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Location() == time.UTC && g.Equal(time.UnixMicro(w.UnixMicro()))
	}
	return false
}
