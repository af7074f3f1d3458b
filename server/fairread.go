package server

import (
	"net"
	"sync/atomic"
	"time"
)

// fairReader is a client connection's socket as the protocol reader sees
// it. It takes turns with the other connections when its client keeps it
// busy.
//
// Go's scheduler looks for connections whose requests have arrived only
// when one of its threads runs out of runnable goroutines (and every 10 ms
// from its monitor thread). A client that answers before the server's
// write returns keeps its connection's goroutine running: its reads find
// the next request already there and never block, so that thread never
// runs out of work. On a server where every thread is busy, two such
// connections hide the requests of all the others for up to 10 ms each
// time, which becomes the transactions' tail latency.
//
// So a connection whose reads have not blocked for fairSlice checks
// whether another connection is blocked in a read of a socket that has
// data (waiters.readyOther). If one is, it sleeps for fairYield: its thread then
// finds nothing runnable, polls the network and runs the waiting
// connection first. If none is, it goes on: sleeping then would only
// leave the thread idle.
type fairReader struct {
	net.Conn
	busySince time.Time    // when its reads last blocked, or it last yielded
	inRead    atomic.Bool  // blocked in a read (seen by other connections)
	fd        atomic.Int32 // the socket, in the poller's set; -1 if not
	yields    int          // turns given up
}

const (
	// fairSlice is how long a connection may keep a thread busy before
	// it looks for connections waiting unseen.
	fairSlice = time.Millisecond
	// fairYield is long enough for the thread to poll the network before
	// the sleeping connection is runnable again.
	fairYield = 2 * time.Microsecond
	// blockedRead: a read that took this long waited for the client.
	blockedRead = 20 * time.Microsecond
)

func newFairReader(c net.Conn) *fairReader {
	f := &fairReader{Conn: c, busySince: time.Now()}
	f.fd.Store(-1)
	waiters.add(f)
	return f
}

func (f *fairReader) Read(p []byte) (int, error) {
	start := time.Now()
	if start.Sub(f.busySince) >= fairSlice {
		if waiters.readyOther(f) {
			f.yields++
			time.Sleep(fairYield)
			start = time.Now()
		}
		f.busySince = start
	}
	f.inRead.Store(true)
	n, err := f.Conn.Read(p)
	f.inRead.Store(false)
	if end := time.Now(); end.Sub(start) >= blockedRead {
		f.busySince = end
	}
	return n, err
}

// Close takes the socket out of the poller's set before closing it, so
// that a new socket given the same descriptor is not mistaken for it. It
// may be called more than once, from any goroutine.
func (f *fairReader) Close() error {
	waiters.remove(f)
	return f.Conn.Close()
}
