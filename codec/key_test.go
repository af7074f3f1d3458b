package codec

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func mustKey(t testing.TB, v any) []byte {
	t.Helper()
	b, err := EncodeKey(nil, v)
	if err != nil {
		t.Fatalf("EncodeKey(%#v): %v", v, err)
	}
	return b
}

// TestKeyOrder checks sign(bytes.Compare(enc(a), enc(b))) == sign(cmp(a, b))
// per kind, with NULLs mixed in: first over random pairs, then over adjacent
// elements of the SQL-sorted sequence (which, by transitivity, pins down the
// order of every pair).
func TestKeyOrder(t *testing.T) {
	for k := kind(0); k < numKinds; k++ {
		t.Run(k.String(), func(t *testing.T) {
			r := newRand(t)
			const n = 3000
			vals := make([]any, n)
			encs := make([][]byte, n)
			for i := range vals {
				vals[i] = randValue(r, k, 3)
				encs[i] = mustKey(t, vals[i])
			}
			check := func(i, j int) {
				want := sign(sqlCompare(vals[i], vals[j]))
				if got := sign(bytes.Compare(encs[i], encs[j])); got != want {
					t.Fatalf("order mismatch: cmp(%v, %v) = %d but bytes compare = %d\n%x\n%x",
						vals[i], vals[j], want, got, encs[i], encs[j])
				}
			}
			for range 20000 {
				check(r.Intn(n), r.Intn(n))
			}
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return sqlCompare(vals[idx[a]], vals[idx[b]]) < 0 })
			for i := 1; i < n; i++ {
				check(idx[i-1], idx[i])
			}
		})
	}
}

func TestNullSortsFirst(t *testing.T) {
	r := newRand(t)
	null := mustKey(t, nil)
	for k := kind(0); k < numKinds; k++ {
		for range 200 {
			v := randValue(r, k, 0)
			if bytes.Compare(null, mustKey(t, v)) >= 0 {
				t.Fatalf("NULL does not sort before %v", v)
			}
		}
	}
	// Also in a tuple: (NULL, max) < (min, min).
	a, _ := EncodeKeyTuple(nil, nil, int64(math.MaxInt64))
	b, _ := EncodeKeyTuple(nil, int64(math.MinInt64), int64(math.MinInt64))
	if bytes.Compare(a, b) >= 0 {
		t.Fatal("tuple with leading NULL does not sort first")
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for k := kind(0); k < numKinds; k++ {
		t.Run(k.String(), func(t *testing.T) {
			r := newRand(t)
			for range 5000 {
				v := randValue(r, k, 5)
				enc := mustKey(t, v)
				trailer := []byte{0x00, 0xFF, 0x01}
				got, rest, err := DecodeKey(append(enc, trailer...))
				if err != nil {
					t.Fatalf("DecodeKey(%x) for %v: %v", enc, v, err)
				}
				if !bytes.Equal(rest, trailer) {
					t.Fatalf("DecodeKey of %v left rest %x", v, rest)
				}
				if !sameValue(v, got, false) {
					t.Fatalf("round trip: %#v -> %x -> %#v", v, enc, got)
				}
				// Re-encoding the decoded (normalized) value is a fixed point.
				if again := mustKey(t, got); !bytes.Equal(again, enc) {
					t.Fatalf("re-encode of %v differs: %x vs %x", got, again, enc)
				}
			}
		})
	}
}

func TestKeyNormalization(t *testing.T) {
	eq := func(name string, a, b any) {
		t.Helper()
		if ea, eb := mustKey(t, a), mustKey(t, b); !bytes.Equal(ea, eb) {
			t.Errorf("%s: %v and %v encode differently: %x vs %x", name, a, b, ea, eb)
		}
	}
	eq("negative zero", 0.0, math.Copysign(0, -1))
	eq("decimal scale", decimal.RequireFromString("1.50"), decimal.RequireFromString("1.5"))
	eq("decimal scale neg", decimal.RequireFromString("-100"), decimal.New(-1, 2))
	eq("decimal zero", decimal.New(0, 5), decimal.RequireFromString("0.000"))
	eq("decimal zero value", decimal.Decimal{}, decimal.New(0, -3))
	eq("string/bytes", "a\x00b", []byte("a\x00b"))
	eq("int widths", int64(-5), int8(-5))
	eq("uint widths", uint64(200), uint8(200))
	tm := time.Date(2024, 2, 29, 12, 0, 0, 123456789, time.UTC)
	eq("time zone", tm, tm.In(time.FixedZone("x", 3600)))
	eq("time truncation", tm, tm.Truncate(time.Microsecond))

	r := newRand(t)
	for range 2000 {
		d := randDecimal(r)
		k := r.Intn(20)
		c := d.Coefficient()
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
		eq("random rescale", d, decimal.NewFromBigInt(c, d.Exponent()-int32(k)))
	}
}

func TestEncodeKeyErrors(t *testing.T) {
	for _, v := range []any{true, float32(1), struct{}{}, math.NaN(), &decimal.Decimal{}, time.Second} {
		dst := []byte("keep")
		got, err := EncodeKey(dst, v)
		if err == nil {
			t.Errorf("EncodeKey(%T) succeeded", v)
		}
		if !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("EncodeKey(%T) error %v does not wrap ErrUnsupportedType", v, err)
		}
		if string(got) != "keep" {
			t.Errorf("EncodeKey(%T) modified dst on error: %q", v, got)
		}
	}
	if got, err := EncodeKeyTuple([]byte("x"), int64(1), true); err == nil || string(got) != "x" {
		t.Errorf("EncodeKeyTuple with bad element: %q, %v", got, err)
	}
	huge := decimal.New(1, math.MaxInt32)
	if _, err := EncodeKey(nil, huge); err == nil {
		t.Error("decimal with exponent overflow accepted")
	}
}

// TestTupleOrder checks that tuple encodings order lexicographically. Small
// domains make equal leading elements common, so later elements matter.
func TestTupleOrder(t *testing.T) {
	r := newRand(t)
	kinds := []kind{kBytes, kInt, kDecimal, kFloat, kTime, kUint}
	type tuple struct {
		vals []any
		enc  []byte
	}
	gen := func() tuple {
		vals := make([]any, 3)
		ks := []kind{kinds[0], kinds[1], kinds[2]}
		for i, k := range ks {
			switch {
			case r.Intn(8) == 0:
				vals[i] = nil
			case k == kInt:
				vals[i] = int64(r.Intn(3) - 1)
			case k == kBytes:
				vals[i] = []byte{0, 0xFF, 1, 'a'}[:r.Intn(4)]
			default:
				vals[i] = randValue(r, k, 0)
			}
		}
		enc, err := EncodeKeyTuple([]byte("prefix"), vals...)
		if err != nil {
			t.Fatal(err)
		}
		return tuple{vals, enc}
	}
	lex := func(a, b []any) int {
		for i := range a {
			if c := sqlCompare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	for range 3 {
		r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		ts := make([]tuple, 1000)
		for i := range ts {
			ts[i] = gen()
		}
		for range 20000 {
			a, b := ts[r.Intn(len(ts))], ts[r.Intn(len(ts))]
			if want, got := sign(lex(a.vals, b.vals)), sign(bytes.Compare(a.enc, b.enc)); want != got {
				t.Fatalf("tuple order: %v vs %v: want %d got %d", a.vals, b.vals, want, got)
			}
		}
		// Decoding a tuple gives back its elements in order.
		for _, tp := range ts[:100] {
			rest := tp.enc[len("prefix"):]
			for i, want := range tp.vals {
				var v any
				var err error
				if v, rest, err = DecodeKey(rest); err != nil || !sameValue(want, v, false) {
					t.Fatalf("tuple element %d: got %v, %v want %v", i, v, err, want)
				}
			}
			if len(rest) != 0 {
				t.Fatalf("tuple leftover %x", rest)
			}
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0xFF, 0xFF}, nil},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte{'a', 0xFF}, []byte{'b'}},
		{[]byte{'a', 0xFE, 0xFF, 0xFF}, []byte{'a', 0xFF}},
		{[]byte{'t', 0x80}, []byte{'t', 0x81}},
	}
	for _, c := range cases {
		orig := append([]byte(nil), c.in...)
		got := PrefixEnd(c.in)
		if !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
		if !bytes.Equal(orig, c.in) {
			t.Errorf("PrefixEnd modified its input")
		}
	}
	// Property: PrefixEnd(p) bounds exactly the strings with prefix p.
	r := newRand(t)
	for range 20000 {
		p, x := randBytes(r), randBytes(r)
		if r.Intn(2) == 0 {
			x = append(append([]byte(nil), p...), x...)
		}
		end := PrefixEnd(p)
		in := bytes.Compare(x, p) >= 0 && (end == nil || bytes.Compare(x, end) < 0)
		if in != bytes.HasPrefix(x, p) {
			t.Fatalf("PrefixEnd(%x) = %x: x=%x in range %v, has prefix %v", p, end, x, in, bytes.HasPrefix(x, p))
		}
	}
}

// TestStringPrefixRange checks the LIKE 'prefix%' contract: a string's key
// lies in [EncodeBytesPrefix(p), PrefixEnd(...)) iff the string starts with
// p, including under a preceding column and with a trailing handle.
func TestStringPrefixRange(t *testing.T) {
	r := newRand(t)
	for range 30000 {
		p, s := randBytes(r), randBytes(r)
		if r.Intn(2) == 0 {
			s = append(append([]byte(nil), p...), s...)
		}
		lead := int64(r.Intn(3))
		lo, _ := EncodeKey(nil, lead)
		if r.Intn(2) == 0 {
			lo = EncodeBytesPrefix(lo, p)
		} else {
			lo = EncodeStringPrefix(lo, string(p))
		}
		hi := PrefixEnd(lo)
		key, _ := EncodeKeyTuple(nil, int64(1), s)
		key = EncodeHandle(key, randInt64(r))
		in := bytes.Compare(key, lo) >= 0 && bytes.Compare(key, hi) < 0
		if want := lead == 1 && bytes.HasPrefix(s, p); in != want {
			t.Fatalf("prefix %x (lead %d) vs string %x: in range %v, want %v\nlo=%x hi=%x key=%x",
				p, lead, s, in, want, lo, hi, key)
		}
	}
}

// TestDecodeKeyCorrupt: every strict prefix of a valid encoding must be
// rejected (encodings are prefix-free and self-delimiting), and arbitrary
// garbage or bit flips must never panic.
func TestDecodeKeyCorrupt(t *testing.T) {
	r := newRand(t)
	for k := kind(0); k < numKinds; k++ {
		for range 300 {
			enc := mustKey(t, randValue(r, k, 5))
			for i := range len(enc) {
				if v, _, err := DecodeKey(enc[:i]); err == nil {
					t.Fatalf("truncated %s key %x (of %x) decoded to %v", k, enc[:i], enc, v)
				} else if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
			}
			for range 20 {
				m := append([]byte(nil), enc...)
				m[r.Intn(len(m))] ^= byte(1 + r.Intn(255))
				noPanic(t, m, func(b []byte) { _, _, _ = DecodeKey(b) })
			}
		}
	}
	bad := [][]byte{
		{0xEE},
		{tagBytes, 'a', 0x00, 0x02},
		{tagBytes, 'a', 0x00},
		{tagDecimal, 0x07},
		{tagDecimal, decPos, 0x80, 0, 0, 1, 101, 0},
		{tagDecimal, decPos, 0x80, 0, 0, 1, 0},
		{tagDecimal, decPos, 0x80, 0, 0, 1, 1, 0},
		{tagDecimal, decPos, 0, 0, 0, 0, 11, 0},
		{tagFloat, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for _, b := range bad {
		if v, _, err := DecodeKey(b); err == nil {
			t.Errorf("DecodeKey(%x) = %v, want error", b, v)
		}
	}
	for range 20000 {
		g := make([]byte, r.Intn(24))
		r.Read(g)
		if len(g) > 0 && r.Intn(2) == 0 {
			g[0] = []byte{tagNull, tagInt, tagUint, tagFloat, tagDecimal, tagBytes, tagTime}[r.Intn(7)]
		}
		noPanic(t, g, func(b []byte) { _, _, _ = DecodeKey(b) })
	}
}

func noPanic(t *testing.T, in []byte, f func([]byte)) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("panic on input %x: %v", in, p)
		}
	}()
	f(in)
}

func TestEncodeKeyAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	vals := map[string]any{
		"int64":   int64(-123456789),
		"uint64":  uint64(math.MaxUint64),
		"float64": -3.25,
		"string":  "hello\x00world",
		"bytes":   []byte("bin\x00\x00ary\xff"),
		"time":    time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC),
		"null":    nil,
	}
	for name, v := range vals {
		allocs := testing.AllocsPerRun(200, func() {
			var err error
			if buf, err = EncodeKey(buf[:0], v); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("EncodeKey(%s) allocates %.1f times per call", name, allocs)
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	r := rand.New(rand.NewSource(testSeed))
	for k := kind(0); k < numKinds; k++ {
		b, _ := EncodeKey(nil, randValue(r, k, 0))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, rest, err := DecodeKey(b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the consumed bytes, except for
		// non-canonical decimal/float spellings that normalize.
		enc, err := EncodeKey(nil, v)
		if err != nil {
			t.Fatalf("decoded %#v does not re-encode: %v", v, err)
		}
		if _, isDec := v.(decimal.Decimal); !isDec && !bytes.Equal(enc, b[:len(b)-len(rest)]) {
			if _, isFloat := v.(float64); !isFloat {
				t.Fatalf("re-encode of %#v = %x, consumed %x", v, enc, b[:len(b)-len(rest)])
			}
		}
	})
}
