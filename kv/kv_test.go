package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyEncodingOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := keyPool(rng, 300)
	for i, a := range keys {
		ea := appendVersionKey(nil, []byte(a), 100)
		p, ts, err := splitVersionKey(ea)
		if err != nil || ts != 100 || string(appendUnescaped(nil, p)) != a {
			t.Fatalf("round trip of %q: %q %d %v", a, appendUnescaped(nil, p), ts, err)
		}
		if bytes.HasPrefix(ea, metaPrefix) || bytes.Compare(ea, userSpaceStart) < 0 {
			t.Fatalf("%q encodes into the metadata space", a)
		}
		// Newer versions sort first, and all stay within the key's bounds.
		newer := appendVersionKey(nil, []byte(a), 101)
		lo := appendPrefix(nil, []byte(a))
		hi := appendPrefixEnd(nil, lo)
		if bytes.Compare(newer, ea) >= 0 {
			t.Fatalf("%q: newer version does not sort first", a)
		}
		for _, b := range keys[i+1:] {
			// keys is sorted, so every version of b sorts after a's.
			eb := appendVersionKey(nil, []byte(b), 1)
			if bytes.Compare(ea, eb) >= 0 || bytes.Compare(newer, eb) >= 0 {
				t.Fatalf("order of %q and %q not preserved", a, b)
			}
			if bytes.Compare(eb, hi) < 0 {
				t.Fatalf("%q's version falls inside %q's bounds", b, a)
			}
			if bytes.Compare(appendPrefix(nil, []byte(b)), ea) <= 0 {
				t.Fatalf("bound of %q does not exclude versions of %q", b, a)
			}
		}
		for _, b := range keys[:i] {
			if eb := appendVersionKey(nil, []byte(b), ^uint64(0)>>1); bytes.Compare(eb, lo) >= 0 {
				t.Fatalf("%q's version falls inside %q's bounds", b, a)
			}
		}
	}
}

func TestSnapshotVisibility(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1")
	before := s.Begin()
	defer before.Rollback()

	ts := commitWrites(t, s, "a", "2", "b", "1")
	if before.StartTS() >= ts {
		t.Fatalf("snapshot %d not below commit %d", before.StartTS(), ts)
	}
	wantGet(t, before, "a", "1")
	wantGet(t, before, "b", "<none>")
	wantScan(t, scanTxn(t, before, nil, nil, false), "a", "1")
	wantScan(t, scanTxn(t, before, nil, nil, true), "a", "1")

	after := s.Begin()
	defer after.Rollback()
	if after.StartTS() < ts || s.ReadTS() < ts {
		t.Fatalf("start %d / ReadTS %d below last commit %d", after.StartTS(), s.ReadTS(), ts)
	}
	wantGet(t, after, "a", "2")
	wantGet(t, after, "b", "1")
	wantScan(t, scanTxn(t, after, nil, nil, false), "a", "2", "b", "1")
}

func TestTombstonesHide(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1", "b", "2", "c", "3")
	old := s.Begin()
	defer old.Rollback()
	commitWrites(t, s, "b", "<del>")

	txn := s.Begin()
	defer txn.Rollback()
	wantGet(t, txn, "b", "<none>")
	wantScan(t, scanTxn(t, txn, nil, nil, false), "a", "1", "c", "3")
	wantScan(t, scanTxn(t, txn, nil, nil, true), "c", "3", "a", "1")
	wantScan(t, scanTxn(t, txn, []byte("b"), []byte("c"), false))
	// The snapshot from before the delete still has it.
	wantGet(t, old, "b", "2")
	wantScan(t, scanTxn(t, old, nil, nil, true), "c", "3", "b", "2", "a", "1")

	// Re-creating the key after the delete.
	commitWrites(t, s, "b", "again")
	txn2 := s.Begin()
	defer txn2.Rollback()
	wantGet(t, txn2, "b", "again")
}

func TestIteratorBoundsAndReverse(t *testing.T) {
	s := openTest(t, nil)
	for i := range 10 {
		commitWrites(t, s, fmt.Sprintf("k%d", i), strconv.Itoa(i))
	}
	txn := s.Begin()
	defer txn.Rollback()
	wantScan(t, scanTxn(t, txn, []byte("k3"), []byte("k6"), false), "k3", "3", "k4", "4", "k5", "5")
	wantScan(t, scanTxn(t, txn, []byte("k3"), []byte("k6"), true), "k5", "5", "k4", "4", "k3", "3")
	wantScan(t, scanTxn(t, txn, []byte("k8"), nil, false), "k8", "8", "k9", "9")
	wantScan(t, scanTxn(t, txn, []byte("k8"), nil, true), "k9", "9", "k8", "8")
	wantScan(t, scanTxn(t, txn, nil, []byte("k1"), true), "k0", "0")
	wantScan(t, scanTxn(t, txn, []byte("k35"), []byte("k4"), false))
	wantScan(t, scanTxn(t, txn, []byte("k5"), []byte("k5"), true))
	wantScan(t, scanTxn(t, txn, []byte("k6"), []byte("k3"), false))
	wantScan(t, scanTxn(t, txn, []byte("k6"), []byte("k3"), true))

	// Stop early and close mid-way.
	it := txn.NewIter(nil, nil, true)
	if !it.Valid() || string(it.Key()) != "k9" {
		t.Fatalf("first reverse key %q", it.Key())
	}
	must(t, it.Close())
}

// TestRandomizedSnapshots checks point reads and scans at many timestamps of
// a random history (long version chains, tombstones, awkward keys) against a
// reference model, with and without buffered writes on top.
func TestRandomizedSnapshots(t *testing.T) {
	s := openTest(t, nil)
	rng := rand.New(rand.NewPCG(7, 7))
	keys := keyPool(rng, 25)
	m, stamps := randomHistory(t, s, rng, keys, 300)
	if n := len(m[keys[0]]); n < 30 {
		t.Fatalf("hot key has only %d versions", n)
	}
	for i := range 25 {
		ts := stamps[rng.IntN(len(stamps))] - uint64(rng.IntN(2))
		if i == 0 {
			ts = stamps[len(stamps)-1]
		}
		txn := s.beginAt(ts)
		want := m.at(ts)
		checkView(t, txn, want, keys, rng)
		if i%2 == 1 {
			for range 1 + rng.IntN(6) {
				k := keys[rng.IntN(len(keys))]
				if rng.IntN(3) == 0 {
					must(t, txn.Delete([]byte(k)))
					delete(want, k)
				} else {
					want[k] = fmt.Sprintf("own%d", rng.IntN(100))
					must(t, txn.Set([]byte(k), []byte(want[k])))
				}
			}
			checkView(t, txn, want, keys, rng)
		}
		txn.Rollback()
	}
}

func TestWriteConflict(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "k", "0")
	t1, t2 := s.Begin(), s.Begin()
	must(t, t1.Set([]byte("k"), []byte("1")))
	must(t, t2.Set([]byte("k"), []byte("2")))
	must(t, t2.Set([]byte("other"), []byte("2")))
	if _, err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err := t2.Commit()
	if !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("second committer: %v, want ErrWriteConflict", err)
	}
	if _, _, err := t2.Get([]byte("k")); !errors.Is(err, ErrTxnDone) {
		t.Fatalf("conflicting txn not finished: %v", err)
	}
	check := s.Begin()
	wantGet(t, check, "k", "1")
	wantGet(t, check, "other", "<none>") // all-or-nothing
	check.Rollback()

	// A blind delete conflicts as well, and a txn starting after the
	// winner's commit does not.
	t3, t4 := s.Begin(), s.Begin()
	must(t, t3.Delete([]byte("k")))
	must(t, t4.Set([]byte("k"), []byte("4")))
	_, err = t3.Commit()
	must(t, err)
	if _, err := t4.Commit(); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("delete/put: %v, want ErrWriteConflict", err)
	}
	t5 := s.Begin()
	must(t, t5.Set([]byte("k"), []byte("5")))
	_, err = t5.Commit()
	must(t, err)

	if got := metricValue(t, s.metrics.conflicts); got != 2 {
		t.Fatalf("conflicts metric = %v, want 2", got)
	}
	if got := metricValue(t, s.metrics.aborts); got != 2 {
		t.Fatalf("aborts metric = %v, want 2", got)
	}
}

func TestDisjointWritersBothCommit(t *testing.T) {
	s := openTest(t, nil)
	t1, t2 := s.Begin(), s.Begin()
	must(t, t1.Set([]byte("a"), []byte("1")))
	must(t, t2.Set([]byte("b"), []byte("2")))
	// Reading the other's key is fine under snapshot isolation.
	wantGet(t, t1, "b", "<none>")
	ts1, err := t1.Commit()
	must(t, err)
	ts2, err := t2.Commit()
	must(t, err)
	if ts2 <= ts1 {
		t.Fatalf("commit timestamps not increasing: %d then %d", ts1, ts2)
	}
	txn := s.Begin()
	defer txn.Rollback()
	wantScan(t, scanTxn(t, txn, nil, nil, false), "a", "1", "b", "2")
}

// TestConcurrentCounter is the lost-update check: every increment is a
// read-modify-write retried on conflict, so the total must be exact.
func TestConcurrentCounter(t *testing.T) {
	s := openTest(t, nil)
	const workers, perWorker = 8, 60
	var wg sync.WaitGroup
	var retries atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				for {
					txn := s.Begin()
					v, _, err := txn.Get([]byte("counter"))
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(v))
					_ = txn.Set([]byte("counter"), []byte(strconv.Itoa(n+1)))
					// A private key too: its writes must not be lost either.
					_ = txn.Set(fmt.Appendf(nil, "w%d", w), []byte(strconv.Itoa(n+1)))
					_, err = txn.Commit()
					if err == nil {
						break
					}
					if !errors.Is(err, ErrWriteConflict) {
						t.Error(err)
						return
					}
					retries.Add(1)
				}
			}
		})
	}
	wg.Wait()
	txn := s.Begin()
	defer txn.Rollback()
	wantGet(t, txn, "counter", strconv.Itoa(workers*perWorker))
	t.Logf("%d conflicts retried", retries.Load())
	if got := metricValue(t, s.metrics.conflicts); got != float64(retries.Load()) {
		t.Fatalf("conflict metric %v, retries %d", got, retries.Load())
	}
}

// TestCommitVisibleToNextTxn: once Commit returns, a transaction begun by the
// same client sees it, even while other commits race through the pipeline.
// It also checks that concurrent snapshots are stable: two scans in one
// transaction must agree although commits land in between.
func TestCommitVisibleToNextTxn(t *testing.T) {
	s := openTest(t, nil)
	const accounts = 10
	for i := range accounts {
		commitWrites(t, s, fmt.Sprintf("acct%02d", i), "100")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			key := fmt.Appendf(nil, "own%d", w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				txn := s.Begin()
				err := txn.Set(key, []byte(strconv.Itoa(i)))
				if err == nil {
					err = transfer(txn, rng.IntN(accounts), rng.IntN(accounts), 1)
				}
				var ts uint64
				if err == nil {
					ts, err = txn.Commit()
				}
				if errors.Is(err, ErrWriteConflict) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if r := s.ReadTS(); r < ts {
					t.Errorf("ReadTS %d below just-returned commit %d", r, ts)
					return
				}
				check := s.Begin()
				v, _, err := check.Get(key)
				check.Rollback()
				if err != nil || string(v) != strconv.Itoa(i) {
					t.Errorf("own commit %d not visible: got %q, %v", i, v, err)
					return
				}
			}
		})
	}
	for range 100 {
		txn := s.Begin()
		first := scanTxn(t, txn, []byte("acct"), []byte("acct~"), false)
		second := scanTxn(t, txn, []byte("acct"), []byte("acct~"), true)
		slices.Reverse(second)
		if !slices.Equal(first, second) {
			t.Fatalf("snapshot changed within a transaction:\n%v\n%v", first, second)
		}
		sum := 0
		for _, p := range first {
			n, _ := strconv.Atoi(p.v)
			sum += n
		}
		if sum != accounts*100 {
			t.Fatalf("sum %d, want %d: a commit was seen partially", sum, accounts*100)
		}
		txn.Rollback()
	}
}

// transfer moves amount between two accounts within txn. It returns errors
// instead of failing the test so worker goroutines can use it.
func transfer(txn *Txn, from, to, amount int) error {
	for _, d := range []struct{ i, delta int }{{from, -amount}, {to, amount}} {
		k := fmt.Appendf(nil, "acct%02d", d.i)
		v, _, err := txn.Get(k)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return fmt.Errorf("account %d: %w", d.i, err)
		}
		if err := txn.Set(k, []byte(strconv.Itoa(n+d.delta))); err != nil {
			return err
		}
	}
	return nil
}

func TestReadYourOwnWrites(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1", "c", "3", "e", "5")
	txn := s.Begin()
	defer txn.Rollback()
	if !txn.IsReadOnly() {
		t.Fatal("fresh txn not read-only")
	}
	must(t, txn.Set([]byte("b"), []byte("2")))   // between committed keys
	must(t, txn.Delete([]byte("c")))             // hides a committed key
	must(t, txn.Set([]byte("e"), []byte("55")))  // shadows a committed key
	must(t, txn.Set([]byte("g"), []byte("7")))   // after the last key
	must(t, txn.Delete([]byte("zz")))            // deletes nothing
	must(t, txn.Set([]byte("0"), []byte("")))    // empty value, first key
	must(t, txn.Set([]byte("x"), []byte("tmp"))) // written then deleted
	must(t, txn.Delete([]byte("x")))
	if txn.IsReadOnly() {
		t.Fatal("txn with writes reports read-only")
	}

	wantGet(t, txn, "a", "1")
	wantGet(t, txn, "b", "2")
	wantGet(t, txn, "c", "<none>")
	wantGet(t, txn, "e", "55")
	wantGet(t, txn, "x", "<none>")
	wantGet(t, txn, "0", "")
	wantScan(t, scanTxn(t, txn, nil, nil, false), "0", "", "a", "1", "b", "2", "e", "55", "g", "7")
	wantScan(t, scanTxn(t, txn, nil, nil, true), "g", "7", "e", "55", "b", "2", "a", "1", "0", "")
	wantScan(t, scanTxn(t, txn, []byte("b"), []byte("f"), false), "b", "2", "e", "55")
	wantScan(t, scanTxn(t, txn, []byte("b"), []byte("f"), true), "e", "55", "b", "2")
	wantScan(t, scanTxn(t, txn, []byte("c"), []byte("e"), true))
	wantScan(t, scanTxn(t, txn, []byte("f"), []byte("b"), false))
	wantScan(t, scanTxn(t, txn, []byte("f"), []byte("b"), true))

	// Values handed out are the caller's.
	v, _, _ := txn.Get([]byte("e"))
	v[0] = 'X'
	wantGet(t, txn, "e", "55")

	_, err := txn.Commit()
	must(t, err)
	after := s.Begin()
	defer after.Rollback()
	wantScan(t, scanTxn(t, after, nil, nil, false), "0", "", "a", "1", "b", "2", "e", "55", "g", "7")
}

func TestIteratorFrozenAgainstOwnWrites(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1", "b", "2")
	txn := s.Begin()
	defer txn.Rollback()
	must(t, txn.Set([]byte("c"), []byte("3")))
	it := txn.NewIter(nil, nil, false)
	var got []kvPair
	for ; it.Valid(); it.Next() {
		got = append(got, kvPair{string(it.Key()), string(it.Value())})
		// An UPDATE-like loop writing while it scans.
		must(t, txn.Set(append(bytes.Clone(it.Key()), '+'), []byte("new")))
		must(t, txn.Set([]byte("c"), []byte("changed")))
	}
	must(t, it.Err())
	must(t, it.Close())
	wantScan(t, got, "a", "1", "b", "2", "c", "3")
	wantScan(t, scanTxn(t, txn, nil, nil, false),
		"a", "1", "a+", "new", "b", "2", "b+", "new", "c", "changed", "c+", "new")
}

func TestSavepoints(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "committed")
	txn := s.Begin()
	defer txn.Rollback()

	empty := txn.Savepoint()
	must(t, txn.Set([]byte("a"), []byte("1")))
	sp1 := txn.Savepoint()
	must(t, txn.Set([]byte("b"), []byte("2")))
	must(t, txn.Delete([]byte("a")))
	sp2 := txn.Savepoint()
	must(t, txn.Set([]byte("c"), []byte("3")))
	wantScan(t, scanTxn(t, txn, nil, nil, false), "b", "2", "c", "3")

	txn.RollbackTo(sp2)
	wantScan(t, scanTxn(t, txn, nil, nil, false), "b", "2")
	txn.RollbackTo(sp1)
	wantScan(t, scanTxn(t, txn, nil, nil, false), "a", "1")
	wantGet(t, txn, "b", "<none>")
	// A savepoint survives being rolled back to.
	must(t, txn.Set([]byte("d"), []byte("4")))
	txn.RollbackTo(sp1)
	wantScan(t, scanTxn(t, txn, nil, nil, false), "a", "1")
	// Rolling back to a later savepoint after an earlier one still works:
	// savepoints are independent snapshots.
	txn.RollbackTo(sp2)
	wantScan(t, scanTxn(t, txn, nil, nil, false), "b", "2")

	txn.RollbackTo(empty)
	if !txn.IsReadOnly() {
		t.Fatal("rollback to empty savepoint left writes")
	}
	wantGet(t, txn, "a", "committed")

	must(t, txn.Set([]byte("e"), []byte("5")))
	txn.RollbackTo(sp1)
	_, err := txn.Commit()
	must(t, err)
	check := s.Begin()
	defer check.Rollback()
	wantScan(t, scanTxn(t, check, nil, nil, false), "a", "1")
}

func TestTxnDone(t *testing.T) {
	s := openTest(t, nil)
	commitWrites(t, s, "a", "1")

	ro := s.Begin()
	ts, err := ro.Commit()
	if err != nil || ts != ro.StartTS() {
		t.Fatalf("read-only commit = %d, %v", ts, err)
	}

	txn := s.Begin()
	must(t, txn.Set([]byte("b"), []byte("2")))
	open := txn.NewIter(nil, nil, false)
	_, err = txn.Commit()
	must(t, err)
	if open.Valid() || !errors.Is(open.Err(), ErrTxnDone) {
		t.Fatalf("iterator open at commit: valid=%v err=%v", open.Valid(), open.Err())
	}
	must(t, open.Close())
	for name, err := range map[string]error{
		"Set":    txn.Set([]byte("x"), nil),
		"Delete": txn.Delete([]byte("x")),
		"Iter":   txn.NewIter(nil, nil, false).Err(),
	} {
		if !errors.Is(err, ErrTxnDone) {
			t.Errorf("%s after commit: %v", name, err)
		}
	}
	if _, _, err := txn.Get([]byte("a")); !errors.Is(err, ErrTxnDone) {
		t.Errorf("Get after commit: %v", err)
	}
	if _, err := txn.Commit(); !errors.Is(err, ErrTxnDone) {
		t.Errorf("second Commit: %v", err)
	}
	txn.Rollback()
	txn.Rollback()

	rb := s.Begin()
	must(t, rb.Set([]byte("c"), []byte("3")))
	rb.Rollback()
	rb.Rollback()
	check := s.Begin()
	wantGet(t, check, "c", "<none>")
	check.Rollback()

	s.mu.Lock()
	live := len(s.live)
	s.mu.Unlock()
	if live != 0 {
		t.Fatalf("%d snapshot registrations leaked", live)
	}
	if got := metricValue(t, s.metrics.commits); got != 3 {
		t.Fatalf("commits metric = %v, want 3", got)
	}
	if got := metricValue(t, s.metrics.aborts); got != 1 {
		t.Fatalf("aborts metric = %v, want 1", got)
	}
	if n := metricValue(t, s.metrics.commitDur); n != 2 {
		t.Fatalf("commit duration observations = %v, want 2", n)
	}
}

func TestTimestampsMonotonicAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	var last uint64
	for round := range 3 {
		s, err := Open(Options{Dir: dir, GCInterval: -1})
		must(t, err)
		if r := s.ReadTS(); r < last {
			t.Fatalf("round %d: ReadTS %d below previous commit %d", round, r, last)
		}
		if round > 0 {
			txn := s.Begin()
			wantGet(t, txn, "k", strconv.Itoa(round-1))
			txn.Rollback()
		}
		for range 5 {
			ts := commitWrites(t, s, "k", strconv.Itoa(round))
			if ts <= last {
				t.Fatalf("round %d: timestamp %d not above %d", round, ts, last)
			}
			last = ts
		}
		must(t, s.Close())
	}
}

// TestTimestampsSurviveClockRegression: the persisted high-water mark keeps
// timestamps increasing even when the wall clock is behind the previous run.
func TestTimestampsSurviveClockRegression(t *testing.T) {
	defer func(orig func() uint64) { wallClock = orig }(wallClock)
	dir := t.TempDir()
	var base uint64 = 1 << 62
	wallClock = func() uint64 { return base }

	s, err := Open(Options{Dir: dir, GCInterval: -1})
	must(t, err)
	var last uint64
	for range 3 {
		last = commitWrites(t, s, "k", "v")
	}
	must(t, s.Close())

	base -= uint64(time.Hour)
	s, err = Open(Options{Dir: dir, GCInterval: -1})
	must(t, err)
	defer func() { must(t, s.Close()) }()
	if r := s.ReadTS(); r < last {
		t.Fatalf("ReadTS %d below previous commit %d", r, last)
	}
	if ts := commitWrites(t, s, "k", "w"); ts <= last {
		t.Fatalf("timestamp %d after clock regression not above %d", ts, last)
	}
}

// TestLargeWriteBufferScan crosses the write-buffer iterator's chunk
// boundaries in both directions with committed keys interleaved.
func TestLargeWriteBufferScan(t *testing.T) {
	s := openTest(t, nil)
	committed := s.Begin()
	for i := 0; i < 300; i += 2 {
		must(t, committed.Set(fmt.Appendf(nil, "k%03d", i), []byte("c")))
	}
	_, err := committed.Commit()
	must(t, err)

	txn := s.Begin()
	defer txn.Rollback()
	want := map[string]string{}
	for i := 0; i < 300; i += 2 {
		want[fmt.Sprintf("k%03d", i)] = "c"
	}
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%03d", i)
		switch i % 6 {
		case 1, 3:
			must(t, txn.Set([]byte(k), []byte("own")))
			want[k] = "own"
		case 4:
			must(t, txn.Delete([]byte(k)))
			delete(want, k)
		}
	}
	var keys []string
	for i := range 301 {
		keys = append(keys, fmt.Sprintf("k%03d", i))
	}
	checkView(t, txn, want, keys, rand.New(rand.NewPCG(5, 5)))
}

// TestInflightCommitsHoldReadTS drives the in-flight queue directly: ReadTS
// stays below the oldest unapplied commit, and a commit that finishes first
// waits for its predecessors before reporting success.
func TestInflightCommitsHoldReadTS(t *testing.T) {
	s := openTest(t, nil)
	ts1, err := s.beginCommit()
	must(t, err)
	ts2, err := s.beginCommit()
	must(t, err)
	if ts2 <= ts1 {
		t.Fatalf("timestamps %d, %d", ts1, ts2)
	}
	if r := s.ReadTS(); r != ts1-1 {
		t.Fatalf("ReadTS %d with %d in flight, want %d", r, ts1, ts1-1)
	}
	if txn := s.Begin(); txn.StartTS() != ts1-1 {
		t.Fatalf("Begin at %d, want %d", txn.StartTS(), ts1-1)
	} else {
		txn.Rollback()
	}
	ended := make(chan struct{})
	go func() {
		s.endCommit(ts2)
		close(ended)
	}()
	select {
	case <-ended:
		t.Fatal("later commit returned before the earlier one was applied")
	case <-time.After(50 * time.Millisecond):
	}
	if r := s.ReadTS(); r != ts1-1 {
		t.Fatalf("ReadTS %d, want %d", r, ts1-1)
	}
	s.endCommit(ts1)
	<-ended
	if r := s.ReadTS(); r != ts2 {
		t.Fatalf("ReadTS %d after both applied, want %d", r, ts2)
	}
}
