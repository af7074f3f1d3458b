package sql

import (
	"context"
	"errors"
	"sync"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// processList is go-mysql-server's process list (SHOW PROCESSLIST, KILL)
// with a lock per connection instead of one for all: every statement
// registers itself at its start and end, and under one lock a connection
// that collides with another parks and is then woken behind the rest of
// the other's statement, which made the workload's tail latency. The map
// of connections takes its lock only when connections come and go; the
// running queries' pids are a concurrent map.
type processList struct {
	mu    sync.RWMutex
	conns map[uint32]*procEntry
	pids  sync.Map // query pid -> connection id
}

type procEntry struct {
	mu sync.Mutex
	p  gms.Process
}

var _ gms.ProcessList = (*processList)(nil)

func newProcessList() *processList {
	return &processList{conns: make(map[uint32]*procEntry)}
}

// lockRunning locks e if it (possibly nil) is running the query with pid,
// and reports whether it did.
func (e *procEntry) lockRunning(pid uint64) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	if e.p.QueryPid != pid {
		e.mu.Unlock()
		return false
	}
	return true
}

func (pl *processList) entry(connID uint32) *procEntry {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	return pl.conns[connID]
}

// byPid is the entry of the connection running the query with pid.
func (pl *processList) byPid(pid uint64) *procEntry {
	id, ok := pl.pids.Load(pid)
	if !ok {
		return nil
	}
	return pl.entry(id.(uint32))
}

// Processes implements sql.ProcessList.
func (pl *processList) Processes() []gms.Process {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	out := make([]gms.Process, 0, len(pl.conns))
	for _, e := range pl.conns {
		e.mu.Lock()
		p := e.p
		p.Progress = make(map[string]gms.TableProgress, len(e.p.Progress))
		for name, prog := range e.p.Progress {
			parts := make(map[string]gms.PartitionProgress, len(prog.PartitionsProgress))
			for pn, pp := range prog.PartitionsProgress {
				parts[pn] = pp
			}
			p.Progress[name] = gms.TableProgress{Progress: prog.Progress, PartitionsProgress: parts}
		}
		e.mu.Unlock()
		out = append(out, p)
	}
	return out
}

// AddConnection implements sql.ProcessList.
func (pl *processList) AddConnection(id uint32, addr string) {
	gms.StatusVariables.IncrementGlobal("Threads_connected", 1)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.conns[id] = &procEntry{p: gms.Process{
		Connection: id,
		Command:    gms.ProcessCommandConnect,
		Host:       addr,
		User:       "unauthenticated user",
		StartedAt:  time.Now(),
	}}
}

// ConnectionReady implements sql.ProcessList.
func (pl *processList) ConnectionReady(sess gms.Session) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.conns[sess.ID()] = &procEntry{p: gms.Process{
		Connection: sess.ID(),
		Command:    gms.ProcessCommandSleep,
		Host:       sess.Client().Address,
		User:       sess.Client().User,
		StartedAt:  time.Now(),
		Database:   sess.GetCurrentDatabase(),
	}}
}

// RemoveConnection implements sql.ProcessList.
func (pl *processList) RemoveConnection(connID uint32) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	e := pl.conns[connID]
	if e == nil {
		return
	}
	gms.StatusVariables.IncrementGlobal("Threads_connected", -1)
	e.mu.Lock()
	if e.p.Kill != nil {
		e.p.Kill()
	}
	if e.p.QueryPid != 0 {
		pl.pids.Delete(e.p.QueryPid)
	}
	e.mu.Unlock()
	delete(pl.conns, connID)
}

// BeginQuery implements sql.ProcessList.
func (pl *processList) BeginQuery(ctx *gms.Context, query string) (*gms.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	gms.StatusVariables.IncrementGlobal("Threads_running", 1)
	id, pid := ctx.Session.ID(), ctx.Pid()
	e := pl.entry(id)
	if e == nil {
		return nil, errors.New("internal error: connection not registered with process list")
	}
	if _, used := pl.pids.LoadOrStore(pid, id); used {
		return nil, gms.ErrPidAlreadyUsed.New(pid)
	}
	qctx, cancel := context.WithCancel(ctx)
	ctx = ctx.WithContext(qctx)
	e.mu.Lock()
	e.p.Command = gms.ProcessCommandQuery
	e.p.Query = query
	e.p.QueryPid = pid
	e.p.StartedAt = time.Now()
	e.p.Kill = cancel
	e.mu.Unlock()
	return ctx, nil
}

// EndQuery implements sql.ProcessList.
func (pl *processList) EndQuery(ctx *gms.Context) {
	if ctx.IsInterpreted() {
		return
	}
	pid := ctx.Pid()
	pl.pids.Delete(pid)
	e := pl.entry(ctx.Session.ID())
	if !e.lockRunning(pid) {
		return
	}
	defer e.mu.Unlock()
	if lq := longQueryTime(); lq > 0 && time.Since(e.p.StartedAt).Seconds() > lq {
		gms.IncrementStatusVariable(ctx, "Slow_queries", 1)
	}
	gms.StatusVariables.IncrementGlobal("Threads_running", -1)
	e.p.Command = gms.ProcessCommandSleep
	e.p.Query = ""
	e.p.StartedAt = time.Now()
	e.p.Kill()
	e.p.Kill = nil
	e.p.QueryPid = 0
	e.p.Progress = nil
}

func longQueryTime() float64 {
	_, v, _ := gms.SystemVariables.GetGlobal("long_query_time")
	f, _ := v.(float64)
	return f
}

// BeginOperation implements sql.ProcessList.
func (pl *processList) BeginOperation(ctx *gms.Context) (*gms.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return nil, errors.New("internal error: connection not registered with process list")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		return nil, errors.New("internal error: attempt to begin operation on connection which was already running one")
	}
	sub, cancel := ctx.NewSubContext()
	e.p.Kill = cancel
	return sub, nil
}

// EndOperation implements sql.ProcessList.
func (pl *processList) EndOperation(ctx *gms.Context) {
	if ctx.IsInterpreted() {
		return
	}
	if e := pl.entry(ctx.Session.ID()); e != nil {
		e.mu.Lock()
		if e.p.Kill != nil {
			e.p.Kill()
			e.p.Kill = nil
		}
		e.mu.Unlock()
	}
}

// Kill implements sql.ProcessList.
func (pl *processList) Kill(connID uint32) {
	if e := pl.entry(connID); e != nil {
		e.mu.Lock()
		if e.p.Kill != nil {
			e.p.Kill()
		}
		e.mu.Unlock()
	}
}

// withProgress runs f on the progress of the query with pid, if it runs.
func (pl *processList) withProgress(pid uint64, f func(map[string]gms.TableProgress)) {
	e := pl.byPid(pid)
	if !e.lockRunning(pid) {
		return
	}
	defer e.mu.Unlock()
	// Made on first use: most statements track no progress.
	if e.p.Progress == nil {
		e.p.Progress = make(map[string]gms.TableProgress)
	}
	f(e.p.Progress)
}

// UpdateTableProgress implements sql.ProcessList.
func (pl *processList) UpdateTableProgress(pid uint64, name string, delta int64) {
	pl.withProgress(pid, func(m map[string]gms.TableProgress) {
		prog, ok := m[name]
		if !ok {
			prog = gms.NewTableProgress(name, -1)
		}
		prog.Done += delta
		m[name] = prog
	})
}

// UpdatePartitionProgress implements sql.ProcessList.
func (pl *processList) UpdatePartitionProgress(pid uint64, table, partition string, delta int64) {
	pl.withPartition(pid, table, partition, func(pp *gms.PartitionProgress) { pp.Done += delta })
}

// AddTableProgress implements sql.ProcessList.
func (pl *processList) AddTableProgress(pid uint64, name string, total int64) {
	pl.withProgress(pid, func(m map[string]gms.TableProgress) {
		if prog, ok := m[name]; ok {
			prog.Total = total
			m[name] = prog
		} else {
			m[name] = gms.NewTableProgress(name, total)
		}
	})
}

// AddPartitionProgress implements sql.ProcessList.
func (pl *processList) AddPartitionProgress(pid uint64, table, partition string, total int64) {
	pl.withPartition(pid, table, partition, func(pp *gms.PartitionProgress) { pp.Total = total })
}

// withPartition runs f on the progress of a partition of a table the
// query with pid tracks, a new one (of unknown total) if it has none yet.
func (pl *processList) withPartition(pid uint64, table, partition string, f func(*gms.PartitionProgress)) {
	pl.withProgress(pid, func(m map[string]gms.TableProgress) {
		tp, ok := m[table]
		if !ok {
			return
		}
		pp, ok := tp.PartitionsProgress[partition]
		if !ok {
			pp = gms.PartitionProgress{Progress: gms.Progress{Name: partition, Total: -1}}
		}
		f(&pp)
		tp.PartitionsProgress[partition] = pp
	})
}

// RemoveTableProgress implements sql.ProcessList.
func (pl *processList) RemoveTableProgress(pid uint64, name string) {
	pl.withProgress(pid, func(m map[string]gms.TableProgress) { delete(m, name) })
}

// RemovePartitionProgress implements sql.ProcessList.
func (pl *processList) RemovePartitionProgress(pid uint64, table, partition string) {
	pl.withProgress(pid, func(m map[string]gms.TableProgress) {
		if tp, ok := m[table]; ok {
			delete(tp.PartitionsProgress, partition)
		}
	})
}
