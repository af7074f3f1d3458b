package codec

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func BenchmarkEncodeKey(b *testing.B) {
	cases := []struct {
		name string
		v    any
	}{
		{"int64", int64(-1234567890)},
		{"float64", 3.14159},
		{"string16", "0123456789abcdef"},
		{"bytes-escaped", []byte("ab\x00cd\x00ef\x00gh")},
		{"time", time.Date(2024, 5, 6, 7, 8, 9, 10000, time.UTC)},
		{"decimal", decimal.New(-1234567, -2)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = EncodeKey(buf[:0], c.v)
			}
		})
	}
}

func BenchmarkIndexKey(b *testing.B) {
	vals := []any{"customer-000123", int64(42)}
	h := int64(987654321)
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = IndexKey(buf[:0], 17, 3, vals, &h)
	}
}

func BenchmarkDecodeKey(b *testing.B) {
	key, _ := EncodeKeyTuple(nil, int64(-1234567890), "0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		_, rest, _ := DecodeKey(key)
		_, _, _ = DecodeKey(rest)
	}
}

// benchRow is a 12-column row with a typical mix of types.
func benchRow() ([]int64, []any) {
	ids := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	vals := []any{
		int64(1000001), "alice@example.com", "Alice Liddell", int64(37),
		decimal.New(1234599, -2), 4.75, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), nil,
		uint64(1 << 40), "some longer free-text comment column value", int64(-5), []byte{1, 2, 3},
	}
	return ids, vals
}

func BenchmarkEncodeRow(b *testing.B) {
	ids, vals := benchRow()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = EncodeRow(buf[:0], ids, vals)
	}
}

func BenchmarkRowDecoderDecode(b *testing.B) {
	ids, vals := benchRow()
	row, _ := EncodeRow(nil, ids, vals)
	b.Run("all", func(b *testing.B) {
		dec := NewRowDecoder(ids)
		dst := make([]any, len(ids))
		b.ReportAllocs()
		for b.Loop() {
			_ = dec.Decode(row, dst)
		}
	})
	b.Run("2-of-12", func(b *testing.B) {
		dec := NewRowDecoder([]int64{11, 4})
		dst := make([]any, 2)
		b.ReportAllocs()
		for b.Loop() {
			_ = dec.Decode(row, dst)
		}
	})
	b.Run("ints-only", func(b *testing.B) {
		dec := NewRowDecoder([]int64{1, 4, 11})
		dst := make([]any, 3)
		b.ReportAllocs()
		for b.Loop() {
			_ = dec.Decode(row, dst)
		}
	})
	b.Run("sparse-ids", func(b *testing.B) {
		big := make([]int64, len(ids))
		for i, id := range ids {
			big[i] = id << 40
		}
		srow, _ := EncodeRow(nil, big, vals)
		dec := NewRowDecoder(big)
		dst := make([]any, len(big))
		b.ReportAllocs()
		for b.Loop() {
			_ = dec.Decode(srow, dst)
		}
	})
}
