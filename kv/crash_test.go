package kv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The crash test runs a transfer workload in a child process (this test
// binary re-executed), SIGKILLs it mid-flight, and checks the reopened store.

const (
	crashDirEnv    = "KV_CRASH_CHILD_DIR"
	crashSeqEnv    = "KV_CRASH_CHILD_SEQ"
	crashNoSyncEnv = "KV_CRASH_CHILD_NOSYNC"
	crashAccounts  = 16
	crashInitial   = 1000
	crashMarkers   = 3 // per-transaction marker keys, all written with its seq
	crashAckPrefix = "ack "
)

func crashMarkerKey(seq, j int) []byte { return fmt.Appendf(nil, "m/%09d/%d", seq, j) }

// TestCrashChild is the child side; it does nothing unless started by
// TestCrashAtomicity.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashAtomicity")
	}
	firstSeq, _ := strconv.Atoi(os.Getenv(crashSeqEnv))
	// Aggressive background GC adds deletions to the mix being killed.
	s, err := Open(Options{Dir: dir, GCLifetime: time.Millisecond, GCInterval: 10 * time.Millisecond,
		NoSync: os.Getenv(crashNoSyncEnv) != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var seq atomic.Int64
	seq.Store(int64(firstSeq))
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(firstSeq)))
			for {
				n := int(seq.Add(1))
				for {
					txn := s.Begin()
					err := transfer(txn, rng.IntN(crashAccounts), rng.IntN(crashAccounts), 1+rng.IntN(10))
					for j := range crashMarkers {
						err = errors.Join(err, txn.Set(crashMarkerKey(n, j), []byte(strconv.Itoa(n))))
					}
					var ts uint64
					if err == nil {
						ts, err = txn.Commit()
					}
					if errors.Is(err, ErrWriteConflict) {
						continue
					}
					if err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(2)
					}
					out.Lock()
					fmt.Printf("%s%d %d\n", crashAckPrefix, n, ts)
					out.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
}

func TestCrashAtomicity(t *testing.T) {
	testCrash(t, false, 100, 50)
}

// TestCrashNoSync checks the relaxed mode's promise: a commit acknowledged
// without fsync has still reached the operating system, so killing the
// process loses none (only an OS crash or power loss may). The child commits
// thousands of transactions a second here, so a kill lands among many
// acknowledged but unsynced commits.
func TestCrashNoSync(t *testing.T) {
	testCrash(t, true, 3000, 1000)
}

func testCrash(t *testing.T, noSync bool, minAcks, step int) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, GCInterval: -1})
	must(t, err)
	txn := s.Begin()
	for i := range crashAccounts {
		must(t, txn.Set(fmt.Appendf(nil, "acct%02d", i), []byte(strconv.Itoa(crashInitial))))
	}
	_, err = txn.Commit()
	must(t, err)
	must(t, s.Close())

	acked := map[int]bool{}
	var maxAckTS uint64
	nextSeq := 0
	for round := range 3 {
		seqs, ts := runCrashChild(t, dir, nextSeq, minAcks+round*step, noSync)
		for _, n := range seqs {
			acked[n] = true
			nextSeq = max(nextSeq, n)
		}
		maxAckTS = max(maxAckTS, ts)
		// Sequence numbers of transactions in flight at the kill may or may
		// not have committed; the next round starts well above them.
		nextSeq += 1000

		verifyCrashState(t, dir, acked, maxAckTS)
	}
}

// runCrashChild starts the child, kills it after it acknowledged at least
// minAcks commits, and returns every acknowledged seq and the largest
// acknowledged commit timestamp.
func runCrashChild(t *testing.T, dir string, firstSeq, minAcks int, noSync bool) (seqs []int, maxTS uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSeqEnv+"="+strconv.Itoa(firstSeq))
	if noSync {
		cmd.Env = append(cmd.Env, crashNoSyncEnv+"=1")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())

	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, crashAckPrefix)
		if !ok {
			continue
		}
		var n int
		var ts uint64
		if _, err := fmt.Sscan(rest, &n, &ts); err != nil {
			// A line cut short by the kill was never fully acknowledged.
			continue
		}
		seqs = append(seqs, n)
		maxTS = max(maxTS, ts)
		if len(seqs) == minAcks && !killed {
			// Kill at a random point of the ongoing workload; lines already
			// written keep draining below.
			time.AfterFunc(time.Duration(rand.IntN(20))*time.Millisecond, func() {
				_ = cmd.Process.Kill()
			})
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited after %d acks: %v\n%s", len(seqs), err, stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("child not killed by signal: %v\n%s", err, stderr.String())
	}
	return seqs, maxTS
}

func verifyCrashState(t *testing.T, dir string, acked map[int]bool, maxAckTS uint64) {
	t.Helper()
	s, err := Open(Options{Dir: dir, GCInterval: -1})
	must(t, err)
	defer func() { must(t, s.Close()) }()
	if r := s.ReadTS(); r < maxAckTS {
		t.Fatalf("ReadTS %d after restart below acknowledged commit %d", r, maxAckTS)
	}
	txn := s.Begin()
	defer txn.Rollback()

	if sum := sumAccounts(t, scanTxn(t, txn, []byte("acct"), []byte("acct~"), false)); sum != crashAccounts*crashInitial {
		t.Fatalf("sum of balances %d, want %d: a transfer was applied partially", sum, crashAccounts*crashInitial)
	}
	markers := map[int]int{}
	for _, p := range scanTxn(t, txn, []byte("m/"), []byte("m0"), false) {
		var n, j int
		if _, err := fmt.Sscanf(p.k, "m/%d/%d", &n, &j); err != nil || p.v != strconv.Itoa(n) {
			t.Fatalf("bad marker %q=%q", p.k, p.v)
		}
		markers[n]++
	}
	for n, c := range markers {
		if c != crashMarkers {
			t.Fatalf("transaction %d is partially present: %d of %d markers", n, c, crashMarkers)
		}
	}
	for n := range acked {
		if markers[n] != crashMarkers {
			t.Fatalf("acknowledged transaction %d lost", n)
		}
	}
	t.Logf("%d transactions present, %d acknowledged", len(markers), len(acked))

	// New timestamps are above everything handed out before the crash.
	w := s.Begin()
	must(t, w.Set([]byte("probe"), []byte("x")))
	ts, err := w.Commit()
	must(t, err)
	if ts <= maxAckTS {
		t.Fatalf("commit timestamp %d after restart not above %d", ts, maxAckTS)
	}
}
