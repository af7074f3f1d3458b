//go:build !linux

package server

// waiters does nothing where there is no epoll: connections never yield.
var waiters waitSet

type waitSet struct{}

func (waitSet) add(*fairReader)                  {}
func (waitSet) remove(*fairReader)               {}
func (waitSet) readyOther(self *fairReader) bool { return false }
