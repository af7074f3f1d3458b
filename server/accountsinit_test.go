package server_test

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestFirstStartAccounts: as mysqld --initialize, the first start creates
// root@localhost (no password, or --initialize-root-password's) and later
// starts change no account, so a password set stays; a server listening
// beyond loopback refuses to start while an account has no password.
func TestFirstStartAccounts(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("")
	fkWant(t, db, "SELECT user, host FROM mysql.user WHERE user = 'root'", "root,localhost")
	mustExecDB(t, db, "ALTER USER root@localhost IDENTIFIED BY 'pw'")
	s.Close()

	// Restarted, beyond loopback: root keeps its password.
	s = servertest.StartConfig(t, dir, func(c *server.Config) { c.Host = "0.0.0.0" })
	if err := s.DB("").Ping(); err == nil || !strings.Contains(err.Error(), "1045") {
		t.Fatalf("root without its password: %v", err)
	}
	withPW := openDSN(t, fmt.Sprintf("root:pw@tcp(%s)/", s.Addr()))
	fkWant(t, withPW, "SELECT COUNT(*) FROM mysql.user WHERE user = 'root'", "1")
	s.Close()

	// A new data directory beyond loopback needs a root password.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, err := server.Start(server.Config{DataDir: t.TempDir(), Host: "0.0.0.0", StatusPort: -1, NoSync: true, Logger: logger})
	if err == nil || !strings.Contains(err.Error(), "refusing to listen on 0.0.0.0: account 'root'@'localhost' has no password") {
		t.Fatalf("passwordless root on 0.0.0.0: %v", err)
	}
	s = servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.Host, c.InitialRootPassword = "0.0.0.0", "pw3" })
	fkWant(t, openDSN(t, fmt.Sprintf("root:pw3@tcp(%s)/", s.Addr())), "SELECT 1", "1")

	// --user accounts are made sure of on every start, at '%' and 'localhost'.
	dir = t.TempDir()
	s = servertest.StartConfig(t, dir, func(c *server.Config) { c.Users = map[string]string{"app": "secret"} })
	app := openDSN(t, fmt.Sprintf("app:secret@tcp(%s)/", s.Addr()))
	fkWant(t, app, "SELECT user, host FROM mysql.user ORDER BY host", "app,%;app,localhost")
}
