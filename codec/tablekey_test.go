package codec

import (
	"bytes"
	"cmp"
	"math"
	"math/rand"
	"sort"
	"testing"
)

var extremeIDs = []int64{math.MinInt64, math.MinInt64 + 1, -256, -1, 0, 1, 255, 256, 1 << 40, math.MaxInt64 - 1, math.MaxInt64}

func randID(r *rand.Rand) int64 {
	if r.Intn(2) == 0 {
		return extremeIDs[r.Intn(len(extremeIDs))]
	}
	return randInt64(r)
}

func inRange(key, lo, hi []byte) bool {
	return bytes.Compare(key, lo) >= 0 && (hi == nil || bytes.Compare(key, hi) < 0)
}

func TestRecordKey(t *testing.T) {
	r := newRand(t)
	type rec struct {
		table, handle int64
		key           []byte
	}
	recs := make([]rec, 5000)
	for i := range recs {
		tid, h := randID(r), randID(r)
		key := RecordKey(tid, h)
		recs[i] = rec{tid, h, key}

		gt, gh, err := DecodeRecordKey(key)
		if err != nil || gt != tid || gh != h {
			t.Fatalf("DecodeRecordKey(RecordKey(%d, %d)) = %d, %d, %v", tid, h, gt, gh, err)
		}
		rp := RecordPrefix(tid)
		if !inRange(key, rp, PrefixEnd(rp)) {
			t.Fatalf("record key %x outside its record range", key)
		}
		tp := TablePrefix(tid)
		if !inRange(key, tp, PrefixEnd(tp)) {
			t.Fatalf("record key %x outside its table range", key)
		}
		if other := randID(r); other != tid {
			orp := RecordPrefix(other)
			if inRange(key, orp, PrefixEnd(orp)) {
				t.Fatalf("record key of table %d inside record range of table %d", tid, other)
			}
			otp := TablePrefix(other)
			if inRange(key, otp, PrefixEnd(otp)) {
				t.Fatalf("record key of table %d inside table range of %d", tid, other)
			}
		}
		hb := EncodeHandle(nil, h)
		if dh, err := DecodeHandle(hb); err != nil || dh != h {
			t.Fatalf("DecodeHandle(EncodeHandle(%d)) = %d, %v", h, dh, err)
		}
	}
	// Key order is (table, handle) order.
	for range 20000 {
		a, b := recs[r.Intn(len(recs))], recs[r.Intn(len(recs))]
		want := cmp.Or(cmp.Compare(a.table, b.table), cmp.Compare(a.handle, b.handle))
		if got := bytes.Compare(a.key, b.key); sign(got) != want {
			t.Fatalf("record order (%d,%d) vs (%d,%d): want %d got %d", a.table, a.handle, b.table, b.handle, want, got)
		}
	}

	bad := [][]byte{
		nil,
		RecordKey(1, 2)[:recordKeyLen-1],
		append(RecordKey(1, 2), 0),
		IndexPrefix(1, 2),
		append([]byte{'u'}, RecordKey(1, 2)[1:]...),
	}
	for _, b := range bad {
		if _, _, err := DecodeRecordKey(b); err == nil {
			t.Errorf("DecodeRecordKey(%x) succeeded", b)
		}
	}
	for _, n := range []int{0, 7, 9} {
		if _, err := DecodeHandle(make([]byte, n)); err == nil {
			t.Errorf("DecodeHandle of %d bytes succeeded", n)
		}
	}
}

// TestIndexKey checks round trips, and that after sorting a mix of record
// and index keys from several tables and indexes every (table, index) forms
// one contiguous run, runs are ordered by (table, index), and entries within
// a run are ordered by (values..., handle).
func TestIndexKey(t *testing.T) {
	r := newRand(t)
	tables := []int64{math.MinInt64, -1, 0, 1, 2, math.MaxInt64}
	indexes := []int64{math.MinInt64, -1, 0, 1, 2, 300, math.MaxInt64}
	type entry struct {
		table, index int64 // index == record for record keys
		vals         []any
		handle       int64
		hasHandle    bool
		key          []byte
	}
	const record = math.MinInt64 // sentinel, compared separately
	var entries []entry
	for range 6000 {
		e := entry{table: tables[r.Intn(len(tables))], handle: randID(r)}
		if r.Intn(6) == 0 {
			e.index = record
			e.hasHandle = true
			e.key = RecordKey(e.table, e.handle)
			entries = append(entries, e)
			continue
		}
		e.index = indexes[r.Intn(len(indexes))]
		e.vals = []any{
			randValue(r, kBytes, 15),
			[]any{nil, int64(-1), int64(0), int64(1)}[r.Intn(4)],
		}
		e.hasHandle = r.Intn(3) != 0
		var hp *int64
		if e.hasHandle {
			hp = &e.handle
		}
		prefix := []byte("dst")
		key, err := IndexKey(prefix, e.table, e.index, e.vals, hp)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(key, prefix) {
			t.Fatal("IndexKey did not append to dst")
		}
		e.key = key[len(prefix):]

		vals, h, hasH, err := DecodeIndexKey(e.key, len(e.vals))
		if err != nil {
			t.Fatalf("DecodeIndexKey(%x): %v", e.key, err)
		}
		if hasH != e.hasHandle || (hasH && h != e.handle) {
			t.Fatalf("handle: got %d,%v want %d,%v", h, hasH, e.handle, e.hasHandle)
		}
		for i := range vals {
			if !sameValue(e.vals[i], vals[i], false) {
				t.Fatalf("index value %d: got %#v want %#v", i, vals[i], e.vals[i])
			}
		}
		tid, iid, rest, err := DecodeIndexPrefix(e.key)
		if err != nil || tid != e.table || iid != e.index || len(rest) != len(e.key)-indexPrefixLen {
			t.Fatalf("DecodeIndexPrefix: %d %d %v", tid, iid, err)
		}
		ip := IndexPrefix(e.table, e.index)
		if !inRange(e.key, ip, PrefixEnd(ip)) {
			t.Fatalf("index key outside its index range")
		}
		tp := TablePrefix(e.table)
		if !inRange(e.key, tp, PrefixEnd(tp)) {
			t.Fatalf("index key outside its table range")
		}
		rp := RecordPrefix(e.table)
		if inRange(e.key, rp, PrefixEnd(rp)) {
			t.Fatalf("index key inside the record range")
		}
		if _, _, err := DecodeRecordKey(e.key); err == nil {
			t.Fatalf("index key %x decoded as a record key", e.key)
		}
		entries = append(entries, e)
	}

	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
	type run struct {
		table    int64
		isRecord bool
		index    int64
	}
	runOf := func(e entry) run { return run{e.table, e.index == record && e.vals == nil, e.index} }
	seen := map[run]bool{}
	for i := range entries {
		cur := runOf(entries[i])
		if i == 0 || runOf(entries[i-1]) != cur {
			if seen[cur] {
				t.Fatalf("keys of %+v are not contiguous", cur)
			}
			seen[cur] = true
			if i > 0 {
				prev := runOf(entries[i-1])
				if prev.table > cur.table || (prev.table == cur.table && !prev.isRecord && !cur.isRecord && prev.index > cur.index) {
					t.Fatalf("runs out of order: %+v before %+v", prev, cur)
				}
			}
			continue
		}
		a, b := entries[i-1], entries[i]
		if cur.isRecord {
			if a.handle > b.handle {
				t.Fatalf("record handles out of order")
			}
			continue
		}
		c := 0
		for j := range a.vals {
			if c = sqlCompare(a.vals[j], b.vals[j]); c != 0 {
				break
			}
		}
		if c > 0 {
			t.Fatalf("index entries out of order: %v then %v", a.vals, b.vals)
		}
		if c == 0 && a.hasHandle && b.hasHandle && a.handle > b.handle {
			t.Fatalf("equal index values not ordered by handle")
		}
	}
}

func TestIndexKeyCorrupt(t *testing.T) {
	r := newRand(t)
	h := int64(42)
	for range 500 {
		vals := []any{randValue(r, kBytes, 10), randValue(r, kDecimal, 10), randValue(r, kInt, 10)}
		var hp *int64
		if r.Intn(2) == 0 {
			hp = &h
		}
		key, err := IndexKey(nil, randID(r), randID(r), vals, hp)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(key) {
			_, _, hasH, err := DecodeIndexKey(key[:i], len(vals))
			// Dropping exactly the handle leaves a valid handle-less key.
			if err == nil && !(hp != nil && i == len(key)-handleLen && !hasH) {
				t.Fatalf("truncated index key %x (of %x) decoded", key[:i], key)
			}
		}
		if _, _, _, err := DecodeIndexKey(append(key, 0xAB), len(vals)); err == nil {
			t.Fatalf("index key with a stray trailing byte decoded")
		}
		if _, _, _, err := DecodeIndexKey(key, len(vals)+1); err == nil {
			t.Fatalf("index key decoded with too many columns")
		}
		for range 10 {
			m := append([]byte(nil), key...)
			m[r.Intn(len(m))] ^= byte(1 + r.Intn(255))
			noPanic(t, m, func(b []byte) { _, _, _, _ = DecodeIndexKey(b, 3) })
		}
	}
	if _, _, _, err := DecodeIndexKey(RecordKey(1, 1), 0); err == nil {
		t.Error("record key decoded as an index key")
	}
	if _, _, _, err := DecodeIndexKey(IndexPrefix(1, 1), -1); err == nil {
		t.Error("negative column count accepted")
	}
	if got, err := IndexKey([]byte("x"), 1, 1, []any{int64(1), true}, nil); err == nil || string(got) != "x" {
		t.Errorf("IndexKey with unsupported value: %q, %v", got, err)
	}
}

func FuzzDecodeIndexKey(f *testing.F) {
	h := int64(-7)
	k, _ := IndexKey(nil, 5, 2, []any{"abc", int64(3)}, &h)
	f.Add(k, 2)
	f.Add(RecordKey(5, 1), 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		_, _, _, _ = DecodeIndexKey(b, n)
		_, _, _ = DecodeRecordKey(b)
	})
}
