package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestIdleTimeout: a connection idle past its session's wait_timeout is
// closed; one used within it is kept.
func TestIdleTimeout(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	ctx := context.Background()
	idle, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, err := idle.ExecContext(ctx, "SET SESSION wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := busy.ExecContext(ctx, "SET SESSION wait_timeout = 3"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		time.Sleep(600 * time.Millisecond)
		if _, err := busy.ExecContext(ctx, "DO 1"); err != nil {
			t.Fatalf("a connection used every 0.6 s with wait_timeout 3: %v", err)
		}
	}
	if _, err := idle.ExecContext(ctx, "DO 1"); err == nil {
		t.Fatal("a connection idle for 2.4 s with wait_timeout 1 still answers")
	}
	if _, err := db.ExecContext(ctx, "DO 1"); err != nil {
		t.Fatalf("a new connection after another timed out: %v", err)
	}
}
