//go:build linux

package server

import (
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

// waitFor polls cond, since data written on loopback reaches the other
// socket asynchronously.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWaitSetReadyOther(t *testing.T) {
	s1, _ := tcpPair(t)
	s2, c2 := tcpPair(t)
	busy, waiting := newFairReader(s1), newFairReader(s2)
	defer busy.Close()
	if busy.fd.Load() < 0 || waiting.fd.Load() < 0 {
		t.Fatal("sockets not in the poller's set")
	}

	if waiters.readyOther(busy) {
		t.Fatal("no socket has data, yet another connection is ready")
	}
	// Data that no one is blocked reading: the connection is busy, and
	// will find it itself.
	if _, err := c2.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if waiters.readyOther(busy) {
		t.Fatal("a connection not blocked in a read counted as waiting")
	}
	waiting.inRead.Store(true)
	waitFor(t, "the waiting connection is seen", func() bool { return waiters.readyOther(busy) })
	if waiters.readyOther(waiting) {
		t.Fatal("a connection counted itself as waiting")
	}

	// Once its data is read, it is no longer waiting.
	buf := make([]byte, 64)
	if _, err := waiting.Conn.Read(buf); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the drained socket is not ready", func() bool { return !waiters.readyOther(busy) })

	// Closing takes the socket out of the set.
	if _, err := c2.Write([]byte("again")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the waiting connection is seen again", func() bool { return waiters.readyOther(busy) })
	fd := waiting.fd.Load()
	if err := waiting.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waiting.Close(); err == nil {
		t.Fatal("a second Close did not report the socket closed")
	}
	if _, ok := waiters.conns.Load(fd); ok || waiting.fd.Load() != -1 {
		t.Fatal("a closed connection is still in the poller's set")
	}
	if waiters.readyOther(busy) {
		t.Fatal("a closed connection counted as waiting")
	}
}

// A connection busy for longer than its slice yields if another connection
// waits with data, and reads on without sleeping if none does.
func TestFairReaderYields(t *testing.T) {
	s1, c1 := tcpPair(t)
	s2, c2 := tcpPair(t)
	busy, other := newFairReader(s1), newFairReader(s2)
	defer busy.Close()
	defer other.Close()
	if _, err := c1.Write(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	read := func() (yielded bool) {
		t.Helper()
		busy.busySince = time.Now().Add(-2 * fairSlice)
		n := busy.yields
		if _, err := busy.Read(buf); err != nil {
			t.Fatal(err)
		}
		if time.Since(busy.busySince) > fairSlice {
			t.Fatal("a connection busy for longer than its slice did not start a new one")
		}
		return busy.yields > n
	}
	if read() {
		t.Fatal("yielded with no other connection waiting")
	}
	other.inRead.Store(true)
	if read() {
		t.Fatal("yielded to a connection whose socket has no data")
	}
	if _, err := c2.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other connection is seen", func() bool { return waiters.readyOther(busy) })
	if !read() {
		t.Fatal("did not yield to a connection waiting with data")
	}
}
