package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The full-disk test runs `reorgdb serve` (this test binary re-executed,
// the real command and signal handling) on a small tmpfs, fills it through
// SQL, and checks: a write fails with MySQL error 1021 at once instead of
// hanging, reads work, SIGTERM shuts the server down within seconds, a
// restart on the still-full disk neither spins nor loses anything, and once
// space is freed a restart has every acknowledged commit and takes writes.

const serveChildEnv = "REORGDB_SERVE_CHILD_ARGS"

// TestServeChild is the child side: `reorgdb serve` with the arguments in
// the environment.
func TestServeChild(t *testing.T) {
	args := os.Getenv(serveChildEnv)
	if args == "" {
		t.Skip("helper process for TestDiskFull")
	}
	cmd := serveCmd()
	cmd.SetArgs(strings.Fields(args))
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "reorgdb:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// mountTmpfs mounts a tmpfs of size bytes for the test, or skips the test
// where it cannot (not root), except in CI, where it must run.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		// Only a machine that forbids mounts (no root, or a container
		// without the capability) skips; the full-disk logic itself is
		// also tested without privileges in package kv.
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mounting a tmpfs is not permitted here: %v", err)
		}
		t.Fatalf("mount a %d-byte tmpfs on %s: %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// serveChild is one run of the server in a child process.
type serveChild struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	stderr *lockedBuffer
	exited chan struct{}
	err    error // Wait's, once exited is closed
}

var reStarted = regexp.MustCompile(`ReorgDB started"? addr=(\S+)`)

// startServe starts `reorgdb serve` and returns once it listens, or nil if
// it exits first (with its output in the child's stderr).
func startServe(t *testing.T, args ...string) *serveChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), serveChildEnv+"="+strings.Join(args, " "))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &serveChild{t: t, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
	})
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			c.stderr.WriteString(line + "\n")
			if m := reStarted.FindStringSubmatch(line); m != nil {
				started <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	select {
	case c.addr = <-started:
		return c
	case <-c.exited:
		return c
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start in 30s:\n%s", c.stderr.String())
	}
	return c
}

// stop sends SIGTERM and returns how long the server took to exit.
func (c *serveChild) stop() time.Duration {
	c.t.Helper()
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		c.t.Fatalf("server still running 20s after SIGTERM:\n%s", c.stderr.tail(3000))
	}
	return time.Since(start)
}

func (c *serveChild) db(t *testing.T) *sql.DB {
	db, err := sql.Open("mysql", fmt.Sprintf("root:@tcp(%s)/?interpolateParams=false", c.addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) tail(n int) string {
	s := b.String()
	return s[max(0, len(s)-n):]
}

// diskFullValue is row id's value: incompressible, so that it really takes
// its size on disk.
func diskFullValue(id int) []byte {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	v := make([]byte, 48<<10)
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return v
}

func TestDiskFull(t *testing.T) {
	for _, mode := range []string{"durable", "no-sync"} {
		t.Run(mode, func(t *testing.T) { testDiskFull(t, mode == "no-sync") })
	}
}

func testDiskFull(t *testing.T, noSync bool) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	const fsSize = 64 << 20
	mnt := mountTmpfs(t, fsSize)
	data := filepath.Join(mnt, "data")
	// Most of the file system goes to a ballast file, which stands for what
	// an operator deletes to free space; the server fills the rest.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 36<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--data-dir", data, "--port", "0", "--status-port", "-1",
		"--cache-size", "12", "--memtable-size", "2"}
	if noSync {
		args = append(args, "--no-sync")
	}

	srv := startServe(t, args...)
	if srv.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", srv.err, srv.stderr.String())
	}
	db := srv.db(t)
	run := func(db *sql.DB, timeout time.Duration, q string, args ...any) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		start := time.Now()
		_, err := db.ExecContext(ctx, q, args...)
		if ctx.Err() != nil {
			t.Fatalf("%.40s hung for %v:\n%s", q, timeout, srv.stderr.tail(3000))
		}
		return time.Since(start), err
	}
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v LONGBLOB)"} {
		if _, err := run(db, 10*time.Second, q); err != nil {
			t.Fatal(err)
		}
	}

	// Fill the disk. Every insert either is acknowledged or fails with
	// 1021, each within seconds.
	acked := 0
	var fullErr *mysql.MySQLError
	for id := 1; ; id++ {
		took, err := run(db, 10*time.Second, "INSERT INTO app.t VALUES (?, ?)", id, diskFullValue(id))
		if err == nil {
			acked = id
			continue
		}
		if !errors.As(err, &fullErr) || fullErr.Number != 1021 {
			t.Fatalf("insert %d failed with %v, want error 1021:\n%s", id, err, srv.stderr.tail(3000))
		}
		t.Logf("insert %d failed after %v: %v", id, took, err)
		if id < 50 {
			t.Fatalf("disk full after only %d inserts", id)
		}
		break
	}
	// Writes keep failing fast, including DDL; reads work.
	for _, q := range []string{"INSERT INTO app.t VALUES (1000000, 'x')", "UPDATE app.t SET v = 'y' WHERE id = 1",
		"CREATE TABLE app.u (id INT PRIMARY KEY)", "CREATE INDEX iv ON app.t (v(10))"} {
		took, err := run(db, 10*time.Second, q)
		if !errors.As(err, &fullErr) || fullErr.Number != 1021 {
			t.Fatalf("%s on a full disk: %v, want error 1021", q, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s took %v to fail", q, took)
		}
	}
	checkRows(t, db, acked, false)
	srv.checkIdle(t)

	took := srv.stop()
	t.Logf("SIGTERM on a full disk: exited after %v (%v)", took, srv.err)
	if took > 5*time.Second {
		t.Errorf("shutdown on a full disk took %v", took)
	}

	// A restart on the still-full disk must not spin or lose anything: it
	// serves reads (and refuses writes), or it fails at once.
	srv = startServe(t, args...)
	if srv.addr != "" {
		db = srv.db(t)
		checkRows(t, db, acked, false)
		srv.checkIdle(t)
		// Writes fail at once, or succeed if the restart freed room.
		took, err := run(db, 10*time.Second, "INSERT INTO app.t VALUES (?, ?)", acked+1, diskFullValue(acked+1))
		switch {
		case err == nil:
			acked++
		case !errors.As(err, &fullErr) || fullErr.Number != 1021:
			t.Fatalf("insert after a restart on a full disk: %v, want error 1021", err)
		case took > 2*time.Second:
			t.Errorf("insert after a restart on a full disk took %v to fail", took)
		}
		t.Logf("insert after a restart on the full disk: %v", err)
		if took := srv.stop(); took > 5*time.Second {
			t.Errorf("second shutdown on a full disk took %v", took)
		}
	} else {
		t.Logf("restart on the full disk failed: %v\n%s", srv.err, srv.stderr.tail(1000))
		if !strings.Contains(srv.stderr.String(), "disk full") {
			t.Fatalf("restart failed but not for a full disk:\n%s", srv.stderr.String())
		}
	}

	// Free space: every acknowledged commit is there, and writes work.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	srv = startServe(t, args...)
	if srv.addr == "" {
		t.Fatalf("restart after freeing space failed: %v\n%s", srv.err, srv.stderr.String())
	}
	db = srv.db(t)
	checkRows(t, db, acked, true)
	if _, err := run(db, 10*time.Second, "INSERT INTO app.t VALUES (?, ?)", acked+1, diskFullValue(acked+1)); err != nil {
		t.Fatalf("insert after freeing space: %v", err)
	}
	srv.stop()
}

// checkIdle checks that the server, idle on a full disk, neither spins
// retrying its background work nor floods the log doing so.
func (c *serveChild) checkIdle(t *testing.T) {
	t.Helper()
	const window = 3 * time.Second
	cpu0, lines0 := c.cpuTime(t), strings.Count(c.stderr.String(), "\n")
	time.Sleep(window)
	cpu, lines := c.cpuTime(t)-cpu0, strings.Count(c.stderr.String(), "\n")-lines0
	t.Logf("idle on a full disk for %v: %v of CPU, %d log lines", window, cpu, lines)
	if cpu > window/4 || lines > 20 {
		t.Errorf("server busy on a full disk: %v of CPU and %d log lines in %v:\n%s", cpu, lines, window, c.stderr.tail(2000))
	}
}

// cpuTime is the child's user plus system CPU time so far.
func (c *serveChild) cpuTime(t *testing.T) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 14th and 15th fields of the line.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// checkRows checks that rows 1..acked are there (and, with values, intact).
func checkRows(t *testing.T, db *sql.DB, acked int, values bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := "SELECT id, LENGTH(v) FROM app.t ORDER BY id"
	if values {
		q = "SELECT id, v FROM app.t ORDER BY id"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	defer rows.Close()
	want := 1
	for rows.Next() {
		var id int
		var v []byte
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if id != want {
			t.Fatalf("row %d missing (next row %d)", want, id)
		}
		if values && !bytes.Equal(v, diskFullValue(id)) {
			t.Fatalf("row %d has a wrong value", id)
		}
		want++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read: %v", err)
	}
	if want-1 != acked {
		t.Fatalf("%d rows, %d acknowledged (the insert that failed is not one)", want-1, acked)
	}
	t.Logf("%d rows read, %d acknowledged", want-1, acked)
}
