package sql

import (
	"context"
	"sync"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/variables"
)

func plContext(id uint32, pid uint64) *gms.Context {
	// The engine sets these up; the list counts connections and running
	// queries in them.
	if gms.StatusVariables == nil {
		variables.InitStatusVariables()
	}
	sess := gms.NewBaseSessionWithClientServer("", gms.Client{Address: "127.0.0.1:1", User: "u"}, id)
	return gms.NewContext(context.Background(), gms.WithSession(sess), gms.WithPid(pid))
}

func procOf(t *testing.T, pl *processList, id uint32) gms.Process {
	t.Helper()
	for _, p := range pl.Processes() {
		if p.Connection == id {
			return p
		}
	}
	t.Fatalf("connection %d not in the process list", id)
	return gms.Process{}
}

func TestProcessListQueryLifecycle(t *testing.T) {
	pl := newProcessList()
	ctx := plContext(7, 100)
	pl.AddConnection(7, "127.0.0.1:1")
	pl.ConnectionReady(ctx.Session)
	if p := procOf(t, pl, 7); p.Command != gms.ProcessCommandSleep || p.User != "u" {
		t.Fatalf("after ready: %+v", p)
	}
	qctx, err := pl.BeginQuery(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if p := procOf(t, pl, 7); p.Command != gms.ProcessCommandQuery || p.Query != "SELECT 1" || p.QueryPid != 100 {
		t.Fatalf("during the query: %+v", p)
	}
	if _, err := pl.BeginQuery(plContext(7, 100), "SELECT 2"); !gms.ErrPidAlreadyUsed.Is(err) {
		t.Fatalf("second query with pid 100: %v, want ErrPidAlreadyUsed", err)
	}
	pl.AddTableProgress(100, "t", 10)
	pl.UpdateTableProgress(100, "t", 3)
	if prog := procOf(t, pl, 7).Progress["t"]; prog.Total != 10 || prog.Done != 3 {
		t.Fatalf("progress %+v, want 3 of 10", prog)
	}
	pl.UpdatePartitionProgress(100, "t", "p0", 2)
	pl.AddPartitionProgress(100, "t", "p1", 5)
	pl.UpdatePartitionProgress(100, "t", "p1", 1)
	pl.AddPartitionProgress(100, "none", "p0", 5) // an untracked table: ignored
	parts := procOf(t, pl, 7).Progress["t"].PartitionsProgress
	if p0, p1 := parts["p0"], parts["p1"]; len(parts) != 2 || p0.Done != 2 || p0.Total != -1 || p1.Done != 1 || p1.Total != 5 {
		t.Fatalf("partition progress %+v, want p0 2 of unknown, p1 1 of 5", parts)
	}
	if _, ok := procOf(t, pl, 7).Progress["none"]; ok {
		t.Fatal("a partition of an untracked table made the table tracked")
	}
	pl.Kill(7)
	if qctx.Err() == nil {
		t.Fatal("KILL did not cancel the running query")
	}
	pl.EndQuery(qctx)
	if p := procOf(t, pl, 7); p.Command != gms.ProcessCommandSleep || p.Query != "" || p.QueryPid != 0 {
		t.Fatalf("after the query: %+v", p)
	}
	// The pid is free again once its query ended.
	q2, err := pl.BeginQuery(plContext(7, 100), "SELECT 3")
	if err != nil {
		t.Fatal(err)
	}
	pl.RemoveConnection(7)
	if q2.Err() == nil {
		t.Fatal("removing the connection did not cancel its query")
	}
	for _, p := range pl.Processes() {
		if p.Connection == 7 {
			t.Fatal("removed connection still listed")
		}
	}
	if _, err := pl.BeginQuery(plContext(7, 101), "SELECT 4"); err == nil {
		t.Fatal("a query on an unregistered connection began")
	}
}

// Many connections run queries at once while the list is read and
// queries are killed; every connection ends idle.
func TestProcessListConcurrentConnections(t *testing.T) {
	pl := newProcessList()
	_ = plContext(0, 0)
	const conns, queries = 8, 500
	for id := uint32(1); id <= conns; id++ {
		pl.AddConnection(id, "127.0.0.1:1")
		pl.ConnectionReady(plContext(id, 0).Session)
	}
	var wg sync.WaitGroup
	for id := uint32(1); id <= conns; id++ {
		wg.Go(func() {
			for q := range queries {
				pid := uint64(id)*1_000_000 + uint64(q)
				ctx, err := pl.BeginQuery(plContext(id, pid), "SELECT 1")
				if err != nil {
					t.Error(err)
					return
				}
				pl.UpdateTableProgress(pid, "t", 1)
				pl.EndQuery(ctx)
			}
		})
	}
	wg.Go(func() {
		for range queries {
			_ = pl.Processes()
			pl.Kill(1)
		}
	})
	wg.Wait()
	for _, p := range pl.Processes() {
		if p.Command != gms.ProcessCommandSleep || p.QueryPid != 0 {
			t.Errorf("connection %d left as %+v", p.Connection, p)
		}
	}
}
