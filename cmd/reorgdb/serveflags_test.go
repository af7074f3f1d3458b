package main

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestServeLimitFlags: `reorgdb serve --host 0.0.0.0 --max-connections 1`
// keeps its status port on 127.0.0.1 and lets in one client plus one
// administrator; the next client gets 1040.
func TestServeLimitFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	// Beyond loopback, root needs a password from the first start.
	open := startServe(t, "serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--host", "0.0.0.0", "--port", "0", "--status-port", "-1")
	if open.addr != "" || !strings.Contains(open.stderr.String(), "refusing to listen on 0.0.0.0: account 'root'@'localhost' has no password") {
		t.Fatalf("passwordless root on 0.0.0.0: started at %q\n%s", open.addr, open.stderr.String())
	}
	srv := startServe(t, "serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--host", "0.0.0.0", "--port", "0",
		"--status-port", "0", "--max-connections", "1", "--cache-size", "16", "--memtable-size", "4",
		"--initialize-root-password", "pw")
	if srv.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", srv.err, srv.stderr.String())
	}
	m := regexp.MustCompile(`status=(\S+)`).FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("no status address in the log:\n%s", srv.stderr.String())
	}
	if h, _, _ := net.SplitHostPort(m[1]); h != "127.0.0.1" {
		t.Errorf("status port on %s with --host 0.0.0.0, want 127.0.0.1", m[1])
	}
	_, port, _ := net.SplitHostPort(srv.addr)
	addr := net.JoinHostPort("127.0.0.1", port)
	var held []*sql.DB
	defer func() {
		for _, db := range held {
			db.Close()
		}
	}()
	for i := 0; i < 3; i++ {
		db, _ := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/", addr))
		db.SetMaxOpenConns(1)
		held = append(held, db)
		err := db.Ping()
		var me *mysql.MySQLError
		switch {
		case i < 2 && err != nil:
			t.Fatalf("connection %d: %v", i+1, err)
		case i == 2 && (!errors.As(err, &me) || me.Number != 1040):
			t.Fatalf("connection 3 with --max-connections 1: %v, want 1040", err)
		}
	}
	var max int
	if err := held[0].QueryRow("SELECT @@global.max_connections").Scan(&max); err != nil || max != 1 {
		t.Errorf("max_connections %d, %v; want 1", max, err)
	}
}
