package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// metricValue reads a counter's or gauge's value or a histogram's sample
// count.
func metricValue(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	must(t, m.Write(&out))
	if h := out.GetHistogram(); h != nil {
		return float64(h.GetSampleCount())
	}
	if g := out.GetGauge(); g != nil {
		return g.GetValue()
	}
	return out.GetCounter().GetValue()
}

// openTest opens a store in a fresh directory. Tests default to NoSync (the
// durability tests opt back in) and to no background GC.
func openTest(t testing.TB, mod func(*Options)) *Store {
	t.Helper()
	opts := Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, CacheSize: 8 << 20, quietFlushEvery: -1}
	if mod != nil {
		mod(&opts)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !s.isClosed() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return s
}

// beginAt starts a transaction reading at an arbitrary timestamp, registered
// like any other so GC honours it.
func (s *Store) beginAt(ts uint64) *Txn {
	s.mu.Lock()
	s.live[ts]++
	s.mu.Unlock()
	return newTxn(s, ts)
}

type kvPair struct{ k, v string }

func commitWrites(t testing.TB, s *Store, kvs ...string) uint64 {
	t.Helper()
	txn := s.Begin()
	for i := 0; i < len(kvs); i += 2 {
		if kvs[i+1] == "<del>" {
			must(t, txn.Delete([]byte(kvs[i])))
		} else {
			must(t, txn.Set([]byte(kvs[i]), []byte(kvs[i+1])))
		}
	}
	ts, err := txn.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func getString(t testing.TB, txn *Txn, key string) (string, bool) {
	t.Helper()
	v, ok, err := txn.Get([]byte(key))
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if ok && v == nil {
		t.Fatalf("Get(%q): found with nil value", key)
	}
	return string(v), ok
}

func wantGet(t testing.TB, txn *Txn, key, want string) {
	t.Helper()
	got, ok := getString(t, txn, key)
	switch {
	case want == "<none>" && ok:
		t.Fatalf("Get(%q) = %q, want absent", key, got)
	case want != "<none>" && !ok:
		t.Fatalf("Get(%q) absent, want %q", key, want)
	case want != "<none>" && got != want:
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

func collect(t testing.TB, it Iterator) []kvPair {
	t.Helper()
	var out []kvPair
	for ; it.Valid(); it.Next() {
		out = append(out, kvPair{string(it.Key()), string(it.Value())})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	must(t, it.Close())
	return out
}

func scanTxn(t testing.TB, txn *Txn, lower, upper []byte, reverse bool) []kvPair {
	t.Helper()
	return collect(t, txn.NewIter(lower, upper, reverse))
}

func wantScan(t testing.TB, got []kvPair, want ...string) {
	t.Helper()
	var w []kvPair
	for i := 0; i < len(want); i += 2 {
		w = append(w, kvPair{want[i], want[i+1]})
	}
	if !slices.Equal(got, w) {
		t.Fatalf("scan = %q, want %q", got, w)
	}
}

// rawVersions counts the physical versions stored per user key.
func rawVersions(t testing.TB, s *Store) map[string]int {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: userSpaceStart})
	must(t, err)
	defer it.Close()
	out := map[string]int{}
	for it.First(); it.Valid(); it.Next() {
		p, _, err := splitVersionKey(it.Key())
		must(t, err)
		out[string(appendUnescaped(nil, p))]++
	}
	must(t, it.Error())
	return out
}

// version is one committed write in the reference model.
type version struct {
	ts  uint64
	val string
	del bool
}

// model is a reference MVCC history: per key, versions in commit order.
type model map[string][]version

func (m model) at(ts uint64) map[string]string {
	out := map[string]string{}
	for k, vs := range m {
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].ts <= ts {
				if !vs[i].del {
					out[k] = vs[i].val
				}
				break
			}
		}
	}
	return out
}

// keyPool mixes keys that stress the escaping: embedded and trailing zero
// bytes, 0xFF bytes, the empty key and keys that prefix each other.
func keyPool(rng *rand.Rand, extra int) []string {
	keys := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x00\xff", "\x01", "a", "a\x00",
		"a\x00\x00", "a\x00b", "a\x01", "ab", "abc", "b", "\xff", "\xff\x00", "\xff\xff"}
	for range extra {
		n := rng.IntN(5)
		k := make([]byte, n)
		for i := range k {
			k[i] = []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}[rng.IntN(6)]
		}
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// randomHistory commits n random transactions, some keys much hotter than
// others so that long version chains exist, and returns the model.
func randomHistory(t testing.TB, s *Store, rng *rand.Rand, keys []string, n int) (model, []uint64) {
	t.Helper()
	return randomHistoryReading(t, s, rng, keys, n, false)
}

// randomHistoryReading is randomHistory whose transactions, if readFirst,
// read each key before they write it, as an UPDATE or an INSERT's
// duplicate check does.
func randomHistoryReading(t testing.TB, s *Store, rng *rand.Rand, keys []string, n int, readFirst bool) (model, []uint64) {
	t.Helper()
	m := model{}
	var stamps []uint64
	hot := keys[:3]
	for i := range n {
		txn := s.Begin()
		writes := map[string]version{}
		for range 1 + rng.IntN(4) {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(3) == 0 {
				k = hot[rng.IntN(len(hot))]
			}
			if readFirst {
				_, _, err := txn.Get([]byte(k))
				must(t, err)
			}
			if rng.IntN(4) == 0 {
				must(t, txn.Delete([]byte(k)))
				writes[k] = version{del: true}
			} else {
				v := fmt.Sprintf("v%d-%d", i, rng.IntN(1000))
				must(t, txn.Set([]byte(k), []byte(v)))
				writes[k] = version{val: v}
			}
		}
		ts, err := txn.Commit()
		must(t, err)
		stamps = append(stamps, ts)
		for k, v := range writes {
			v.ts = ts
			m[k] = append(m[k], v)
		}
	}
	return m, stamps
}

// randomViews picks read timestamps at or above sp: sp itself, the last
// commit, and random commits and the instants after them.
func randomViews(rng *rand.Rand, stamps []uint64, sp uint64) []uint64 {
	views := []uint64{sp, stamps[len(stamps)-1]}
	for range 4 {
		if ts := stamps[rng.IntN(len(stamps))]; ts >= sp {
			views = append(views, ts, ts+1)
		}
	}
	return views
}

// checkViews runs checkView from a snapshot at each of views.
func checkViews(t testing.TB, s *Store, m model, keys []string, rng *rand.Rand, views []uint64) {
	t.Helper()
	for _, ts := range views {
		txn := s.beginAt(ts)
		checkView(t, txn, m.at(ts), keys, rng)
		txn.Rollback()
	}
}

// checkView compares everything txn can read with want: point reads of every
// pool key and scans in both directions over random bounds.
func checkView(t testing.TB, txn *Txn, want map[string]string, keys []string, rng *rand.Rand) {
	t.Helper()
	for _, k := range keys {
		got, ok := getString(t, txn, k)
		if w, wok := want[k]; ok != wok || got != w {
			t.Fatalf("ts %d: Get(%q) = %q,%v want %q,%v", txn.StartTS(), k, got, ok, w, wok)
		}
	}
	bound := func() []byte {
		if rng.IntN(4) == 0 {
			return nil
		}
		return []byte(keys[rng.IntN(len(keys))])
	}
	for i := range 12 {
		lo, hi := bound(), bound()
		if i == 0 {
			lo, hi = nil, nil
		}
		var exp []kvPair
		for k, v := range want {
			if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
				exp = append(exp, kvPair{k, v})
			}
		}
		slices.SortFunc(exp, func(a, b kvPair) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
		if got := scanTxn(t, txn, lo, hi, false); !slices.Equal(got, exp) {
			t.Fatalf("ts %d: forward [%q,%q) = %q\nwant %q", txn.StartTS(), lo, hi, got, exp)
		}
		slices.Reverse(exp)
		if got := scanTxn(t, txn, lo, hi, true); !slices.Equal(got, exp) {
			t.Fatalf("ts %d: reverse [%q,%q) = %q\nwant %q", txn.StartTS(), lo, hi, got, exp)
		}
	}
}

func waitFor(t testing.TB, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkKept checks that the store holds, per key of m, exactly the
// versions newer than sp and the newest at or below it (unless
// dropTombstone and that one is a tombstone), and that removed, nonzero,
// counts the rest.
func checkKept(t testing.TB, s *Store, m model, sp uint64, dropTombstone bool, removed int) {
	t.Helper()
	raw := rawVersions(t, s)
	wantRemoved := 0
	for k, vs := range m {
		keep := 0
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].ts > sp {
				keep++
				continue
			}
			if !dropTombstone || !vs[i].del {
				keep++
			}
			break
		}
		wantRemoved += len(vs) - keep
		if raw[k] != keep {
			t.Fatalf("key %q: %d versions left, want %d", k, raw[k], keep)
		}
	}
	if removed != wantRemoved || removed == 0 {
		t.Fatalf("removed %d versions, want %d", removed, wantRemoved)
	}
}

// uncachedIter is NewIter answered by Pebble alone, never by the range
// cache: what the cache's answers must equal.
func (t *Txn) uncachedIter(lower, upper []byte) Iterator {
	snap, err := newMVCCIter(t.s.db, lower, upper, t.readTS, false, nil)
	if err != nil {
		return &errIter{err: err}
	}
	it := newTxnIterOver(t, snap, lower, upper, false)
	it.idx = len(t.iters)
	t.iters = append(t.iters, it)
	return it
}
