package server_test

import (
	"database/sql"
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
	expectRowsDB(t, db, "SELECT user, host FROM mysql.user WHERE user = 'root'", "root,localhost")
	mustExecDB(t, db, "ALTER USER root@localhost IDENTIFIED BY 'pw'")
	s.Close()

	// Restarted, beyond loopback: root keeps its password.
	s = servertest.StartConfig(t, dir, func(c *server.Config) { c.Host = "0.0.0.0" })
	if err := s.DB("").Ping(); err == nil || !strings.Contains(err.Error(), "1045") {
		t.Fatalf("root without its password: %v", err)
	}
	withPW := openDB(t, fmt.Sprintf("root:pw@tcp(%s)/", s.Addr()))
	expectRowsDB(t, withPW, "SELECT COUNT(*) FROM mysql.user WHERE user = 'root'", "1")
	s.Close()

	// A new data directory beyond loopback needs a root password.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, err := server.Start(server.Config{DataDir: t.TempDir(), Host: "0.0.0.0", StatusPort: -1, NoSync: true, Logger: logger})
	if err == nil || !strings.Contains(err.Error(), "refusing to listen on 0.0.0.0: account 'root'@'localhost' has no password") {
		t.Fatalf("passwordless root on 0.0.0.0: %v", err)
	}
	s = servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.Host, c.InitialRootPassword = "0.0.0.0", "pw3" })
	expectRowsDB(t, openDB(t, fmt.Sprintf("root:pw3@tcp(%s)/", s.Addr())), "SELECT 1", "1")

	// --user accounts are made sure of on every start, at '%' and 'localhost'.
	dir = t.TempDir()
	s = servertest.StartConfig(t, dir, func(c *server.Config) { c.Users = map[string]string{"app": "secret"} })
	app := openDB(t, fmt.Sprintf("app:secret@tcp(%s)/", s.Addr()))
	expectRowsDB(t, app, "SELECT user, host FROM mysql.user ORDER BY host", "app,%", "app,localhost")
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// expectRowsDB checks every row of q, each as its values joined by ','.
func expectRowsDB(t *testing.T, db *sql.DB, q string, want ...string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var got []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
		}
		got = append(got, strings.Join(parts, ","))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s: got %q, want %q", q, got, want)
	}
}
