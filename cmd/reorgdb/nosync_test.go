package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestNoSyncSurvivesKill: `reorgdb serve --no-sync` is SIGKILLed while
// clients commit as fast as they can; after a restart every commit the
// server acknowledged is there. (Before the relaxed mode wrote each commit
// to the OS before acknowledging it, a kill lost the last few.)
func TestNoSyncSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	args := []string{"serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--port", "0", "--status-port", "-1",
		"--cache-size", "16", "--memtable-size", "4", "--no-sync"}
	srv := startServe(t, args...)
	if srv.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", srv.err, srv.stderr.String())
	}
	db := srv.db(t)
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, w INT, v VARCHAR(100))"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	const workers, minAcks = 4, 3000
	var mu sync.Mutex
	acked := map[int]bool{}
	var total atomic.Int64
	var next atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			conn, err := db.Conn(ctx)
			if err != nil {
				return
			}
			defer conn.Close()
			for ctx.Err() == nil {
				id := int(next.Add(1))
				if _, err := conn.ExecContext(ctx, "INSERT INTO app.t VALUES (?, ?, ?)", id, w, fmt.Sprint("value-", id)); err != nil {
					return // the kill
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
				total.Add(1)
			}
		})
	}
	for total.Load() < minAcks {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	cancel()
	wg.Wait()

	srv = startServe(t, args...)
	if srv.addr == "" {
		t.Fatalf("restart failed: %v\n%s", srv.err, srv.stderr.String())
	}
	db = srv.db(t)
	rows, err := db.Query("SELECT id, v FROM app.t")
	if err != nil {
		t.Fatal(err)
	}
	present := map[int]bool{}
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if v != fmt.Sprint("value-", id) {
			t.Fatalf("row %d has %q", id, v)
		}
		present[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	lost := 0
	for id := range acked {
		if !present[id] {
			lost++
		}
	}
	t.Logf("%d commits acknowledged before the kill, %d rows after the restart, %d lost", len(acked), len(present), lost)
	if lost > 0 {
		t.Fatalf("%d acknowledged commits lost", lost)
	}
	srv.stop()
}
