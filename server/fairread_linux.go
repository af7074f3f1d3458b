package server

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// waiters is the set of client sockets, in an epoll instance of its own
// (level-triggered, apart from the Go runtime's): it answers "does any
// socket have unread data" without disturbing the runtime's poller.
var waiters = newWaitSet()

type waitSet struct {
	epfd  int // -1: unavailable, and no connection yields
	conns sync.Map
}

func newWaitSet() *waitSet {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		fd = -1
	}
	return &waitSet{epfd: fd}
}

func (w *waitSet) add(f *fairReader) {
	sc, ok := f.Conn.(syscall.Conn)
	if w.epfd < 0 || !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) == nil {
			f.fd.Store(int32(fd))
			w.conns.Store(int32(fd), f)
		}
	})
}

func (w *waitSet) remove(f *fairReader) {
	fd := f.fd.Swap(-1)
	if fd < 0 {
		return
	}
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	w.conns.CompareAndDelete(fd, f)
}

// readyOther reports whether a connection other than self is blocked in a
// read of a socket that has data.
func (w *waitSet) readyOther(self *fairReader) bool {
	if w.epfd < 0 {
		return false
	}
	var evs [16]unix.EpollEvent
	n, err := unix.EpollWait(w.epfd, evs[:], 0)
	for i := 0; err == nil && i < n; i++ {
		if v, ok := w.conns.Load(evs[i].Fd); ok && v != self && v.(*fairReader).inRead.Load() {
			return true
		}
	}
	return false
}
