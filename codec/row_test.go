package codec

import (
	"errors"
	"math"
	"math/big"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// randRowValue extends randValue with values only rows can hold exactly
// (NaN, -0, decimal scale) and the narrower integer types.
func randRowValue(r *rand.Rand) any {
	switch r.Intn(12) {
	case 0:
		return nil
	case 1:
		return []any{math.NaN(), math.Copysign(0, -1), []byte{}, "", decimal.New(150, -2),
			decimal.New(0, -3), decimal.Decimal{}}[r.Intn(7)]
	case 2:
		// Coefficients beyond int64 take the big-decimal path.
		c := new(big.Int).Lsh(big.NewInt(r.Int63()), uint(64+r.Intn(100)))
		if r.Intn(2) == 0 {
			c.Neg(c)
		}
		return decimal.NewFromBigInt(c, int32(r.Intn(61)-30))
	}
	return randValue(r, kind(r.Intn(int(numKinds))), 0)
}

func randColIDs(r *rand.Rand, n int, maxID int64) []int64 {
	seen := map[int64]bool{}
	ids := make([]int64, 0, n)
	for len(ids) < n {
		id := r.Int63n(maxID)
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRowRoundTrip encodes rows under random column IDs (small/dense and
// huge/sparse) and decodes random subsets, in random order, mixed with IDs
// the row does not contain and with repeated IDs.
func TestRowRoundTrip(t *testing.T) {
	r := newRand(t)
	for iter := range 3000 {
		maxID := []int64{16, 200, 5000, 1 << 50}[iter%4]
		n := r.Intn(min(20, int(maxID)))
		ids := randColIDs(r, n, maxID)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = randRowValue(r)
		}
		prefix := []byte("dst")
		row, err := EncodeRow(prefix, ids, vals)
		if err != nil {
			t.Fatal(err)
		}
		row = row[len(prefix):]
		byID := map[int64]any{}
		for i, id := range ids {
			byID[id] = vals[i]
		}

		var want []int64
		for _, id := range ids {
			if r.Intn(2) == 0 {
				want = append(want, id)
			}
		}
		for range r.Intn(4) {
			want = append(want, r.Int63n(maxID)) // usually absent
		}
		if len(want) > 0 && r.Intn(4) == 0 {
			want = append(want, want[r.Intn(len(want))]) // duplicate
		}
		r.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })

		dec := NewRowDecoder(want)
		dst := make([]any, len(want))
		for i := range dst {
			dst[i] = "stale" // must be overwritten, including for absent columns
		}
		if err := dec.Decode(row, dst); err != nil {
			t.Fatalf("Decode: %v (ids %v, want %v)", err, ids, want)
		}
		for i, id := range want {
			v, present := byID[id]
			if !present {
				if dst[i] != nil {
					t.Fatalf("absent column %d decoded as %#v", id, dst[i])
				}
				continue
			}
			if !sameValue(v, dst[i], true) {
				t.Fatalf("column %d: wrote %#v, read %#v", id, v, dst[i])
			}
		}
		checkDecodeRaw(t, dec, row, dst)
	}
}

// checkDecodeRaw checks that DecodeRaw finds what Decode did (want).
func checkDecodeRaw(t *testing.T, dec *RowDecoder, row []byte, want []any) {
	t.Helper()
	raw := make([]Raw, len(want))
	for i := range raw {
		raw[i] = Raw{Kind: RawBytes, B: []byte("stale")}
	}
	if err := dec.DecodeRaw(row, raw); err != nil {
		t.Fatalf("DecodeRaw: %v", err)
	}
	for i, w := range want {
		for _, got := range []any{raw[i].Canonical(), raw[i].Borrowed()} {
			if f, ok := w.(float64); ok { // NaN is not DeepEqual to itself
				g, ok := got.(float64)
				if !ok || math.Float64bits(f) != math.Float64bits(g) {
					t.Fatalf("column %d: Decode read %#v, DecodeRaw %#v", i, w, got)
				}
				continue
			}
			if !reflect.DeepEqual(w, got) {
				t.Fatalf("column %d: Decode read %#v, DecodeRaw %#v", i, w, got)
			}
		}
	}
}

// TestRawBorrowed: Borrowed bytes alias the row, Canonical's are a copy.
func TestRawBorrowed(t *testing.T) {
	row, err := EncodeRow(nil, []int64{1}, []any{[]byte("abc")})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]Raw, 1)
	if err := NewRowDecoder([]int64{1}).DecodeRaw(row, raw); err != nil {
		t.Fatal(err)
	}
	owned, borrowed := raw[0].Canonical().([]byte), raw[0].Borrowed().([]byte)
	clear(row)
	if string(owned) != "abc" {
		t.Errorf("Canonical changed with the row: %q", owned)
	}
	if string(borrowed) != "\x00\x00\x00" {
		t.Errorf("Borrowed did not alias the row: %q", borrowed)
	}
}

func TestRowDecoderDefaults(t *testing.T) {
	row, err := EncodeRow(nil, []int64{1, 2}, []any{int64(10), nil})
	if err != nil {
		t.Fatal(err)
	}
	dec := NewRowDecoderWithDefaults([]int64{2, 3, 1, 4}, []any{"d2", "d3", "d1"})
	dst := make([]any, 4)
	if err := dec.Decode(row, dst); err != nil {
		t.Fatal(err)
	}
	if dst[0] != nil {
		t.Errorf("stored NULL replaced by default: %#v", dst[0])
	}
	if dst[1] != "d3" {
		t.Errorf("absent column did not get its default: %#v", dst[1])
	}
	if dst[2] != int64(10) {
		t.Errorf("present column: %#v", dst[2])
	}
	if dst[3] != nil {
		t.Errorf("absent column without default: %#v", dst[3])
	}
	checkDecodeRaw(t, dec, row, dst)
	if got := dec.ColumnIDs(); len(got) != 4 || got[3] != 4 {
		t.Errorf("ColumnIDs = %v", got)
	}
}

func TestRowEdgeCases(t *testing.T) {
	if _, err := EncodeRow(nil, []int64{1}, nil); err == nil {
		t.Error("mismatched lengths accepted")
	}
	if got, err := EncodeRow([]byte("x"), []int64{-1}, []any{int64(1)}); err == nil || string(got) != "x" {
		t.Errorf("negative column ID: %q, %v", got, err)
	}
	if got, err := EncodeRow([]byte("x"), []int64{1}, []any{true}); !errors.Is(err, ErrUnsupportedType) || string(got) != "x" {
		t.Errorf("unsupported type: %q, %v", got, err)
	}
	row, _ := EncodeRow(nil, []int64{1, 2}, []any{int64(1), "s"})
	if err := NewRowDecoder([]int64{1, 2}).Decode(row, make([]any, 1)); err == nil {
		t.Error("short dst accepted")
	}
	// Empty row and empty decoder.
	empty, _ := EncodeRow(nil, nil, nil)
	dst := []any{"stale"}
	if err := NewRowDecoder([]int64{7}).Decode(empty, dst); err != nil || dst[0] != nil {
		t.Errorf("empty row: %v %#v", err, dst)
	}
	if err := NewRowDecoder(nil).Decode(row, nil); err != nil {
		t.Errorf("no wanted columns: %v", err)
	}
	// Negative wanted IDs are simply never present.
	dst = make([]any, 2)
	if err := NewRowDecoder([]int64{-5, 2}).Decode(row, dst); err != nil || dst[0] != nil || string(dst[1].([]byte)) != "s" {
		t.Errorf("negative wanted id: %v %#v", err, dst)
	}
	// Returned bytes must not alias the row.
	dst = make([]any, 1)
	_ = NewRowDecoder([]int64{2}).Decode(row, dst)
	row[len(row)-1] = 'X'
	if string(dst[0].([]byte)) != "s" {
		t.Error("decoded []byte aliases the row buffer")
	}
	// Narrow integer types widen.
	row, _ = EncodeRow(nil, []int64{1, 2, 3}, []any{int8(-3), uint16(7), int(5)})
	dst = make([]any, 3)
	_ = NewRowDecoder([]int64{1, 2, 3}).Decode(row, dst)
	if dst[0] != int64(-3) || dst[1] != uint64(7) || dst[2] != int64(5) {
		t.Errorf("widening: %#v", dst)
	}
	// Times come back in UTC.
	tm := time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.FixedZone("x", -3600))
	row, _ = EncodeRow(nil, []int64{1}, []any{tm})
	_ = NewRowDecoder([]int64{1}).Decode(row, dst[:1])
	if got := dst[0].(time.Time); !got.Equal(tm) || got.Location() != time.UTC {
		t.Errorf("time: %v", got)
	}
}

// TestRowCorrupt: with a decoder that wants every column plus one the row
// lacks (so it can never stop early), every strict prefix of a row must be
// rejected; random corruption must never panic.
func TestRowCorrupt(t *testing.T) {
	r := newRand(t)
	for range 400 {
		n := 1 + r.Intn(8)
		ids := randColIDs(r, n, 300)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = randRowValue(r)
		}
		row, err := EncodeRow(nil, ids, vals)
		if err != nil {
			t.Fatal(err)
		}
		all := NewRowDecoder(append(append([]int64(nil), ids...), 1000))
		few := NewRowDecoder(ids[:1])
		dst := make([]any, n+1)
		for i := range len(row) {
			if err := all.Decode(row[:i], dst); err == nil {
				t.Fatalf("truncated row %x (of %x) decoded", row[:i], row)
			} else if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			noPanic(t, row[:i], func(b []byte) { _ = few.Decode(b, dst) })
		}
		for range 30 {
			m := append([]byte(nil), row...)
			for range 1 + r.Intn(3) {
				m[r.Intn(len(m))] = byte(r.Intn(256))
			}
			noPanic(t, m, func(b []byte) { _ = all.Decode(b, dst) })
			noPanic(t, m, func(b []byte) { _ = few.Decode(b, dst) })
		}
	}
	dec := NewRowDecoder([]int64{1, 2})
	dst := make([]any, 2)
	for range 20000 {
		g := make([]byte, r.Intn(20))
		r.Read(g)
		noPanic(t, g, func(b []byte) { _ = dec.Decode(b, dst) })
	}
	bad := [][]byte{
		{},
		{0x80},                         // unterminated count
		{5, 1, rowInt},                 // count larger than the row
		{1, 1, 99, 0},                  // unknown tag
		{1, 1, rowBytes, 5, 'a'},       // bytes length past end
		{1, 1, rowDecimalBig, 0, 2, 0}, // bad sign byte
		{1, 1, rowDecimal, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0}, // exponent beyond int32
	}
	for _, b := range bad {
		if err := NewRowDecoder([]int64{1, 9}).Decode(b, dst); err == nil {
			t.Errorf("Decode(%x) succeeded", b)
		}
	}
}

// TestRowDecoderAllocs pins the cost model: decoding allocates only for the
// wanted values themselves (one box per int64 outside [0,255]), nothing per
// skipped column and nothing for lookups, on both the dense and map paths.
func TestRowDecoderAllocs(t *testing.T) {
	for _, base := range []int64{1, 1 << 40} {
		var ids []int64
		var vals []any
		for i := range int64(30) {
			ids = append(ids, base+i)
			switch i % 5 {
			case 0:
				vals = append(vals, int64(-1000000-i))
			case 1:
				vals = append(vals, "skipped string value")
			case 2:
				vals = append(vals, decimal.New(12345, -2))
			case 3:
				vals = append(vals, 2.5)
			default:
				vals = append(vals, nil)
			}
		}
		row, err := EncodeRow(nil, ids, vals)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{base + 25, base + 5, base + 999, base + 4} // 2 ints, 1 absent, 1 NULL
		dec := NewRowDecoder(want)
		dst := make([]any, len(want))
		allocs := testing.AllocsPerRun(200, func() {
			if err := dec.Decode(row, dst); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 2 {
			t.Errorf("base %d: Decode allocates %.1f times, want <= 2 (the two boxed ints)", base, allocs)
		}
		if dst[0] != int64(-1000025) || dst[1] != int64(-1000005) || dst[2] != nil || dst[3] != nil {
			t.Errorf("decoded %#v", dst)
		}
	}
}

func FuzzRowDecoder(f *testing.F) {
	row, _ := EncodeRow(nil, []int64{1, 2, 3, 4}, []any{int64(1), "x", decimal.New(5, -1), nil})
	f.Add(row)
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]any, 3)
		_ = NewRowDecoder([]int64{2, 4, 7}).Decode(b, dst)
		_ = NewRowDecoder([]int64{1 << 40, 1}).Decode(b, dst[:2])
	})
}
