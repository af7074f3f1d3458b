// Package servertest starts real ReorgDB servers for tests: an in-process
// server on a temporary data directory, reached through go-sql-driver/mysql.
package servertest

import (
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server"
)

// Server is a running test server.
type Server struct {
	*server.Server
	Dir string
	t   testing.TB
}

// Start runs a server on a fresh directory; it is closed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartDir(t, t.TempDir())
}

// StartDir runs a server on dir (which may hold an earlier server's data)
// with relaxed durability (--no-sync: no fsync on commit; a killed process
// keeps its acknowledged commits, an OS crash may lose the last second's).
func StartDir(t testing.TB, dir string) *Server { return start(t, dir, true, nil) }

// StartDurable is StartDir with durable commits.
func StartDurable(t testing.TB, dir string) *Server { return start(t, dir, false, nil) }

// StartConfig is StartDir with changes to the server's configuration.
func StartConfig(t testing.TB, dir string, mod func(*server.Config)) *Server {
	return start(t, dir, true, mod)
}

func start(t testing.TB, dir string, noSync bool, mod func(*server.Config)) *Server {
	t.Helper()
	level := slog.LevelWarn
	if os.Getenv("REORGDB_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	cfg := server.Config{
		DataDir:    dir,
		Port:       0,
		StatusPort: 0,
		NoSync:     noSync,
		Testing:    true,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := server.Start(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	ts := &Server{Server: s, Dir: dir, t: t}
	t.Cleanup(func() { s.Close() })
	return ts
}

// DSN returns a go-sql-driver DSN for database db ("" for none).
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("root:@tcp(%s)/%s?interpolateParams=false&parseTime=true", s.Addr(), db)
}

// DB opens a connection pool to database db, creating the database first.
func (s *Server) DB(db string) *sql.DB {
	s.t.Helper()
	if db != "" {
		root, err := sql.Open("mysql", s.DSN(""))
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := root.Exec("CREATE DATABASE IF NOT EXISTS " + db); err != nil {
			s.t.Fatal(err)
		}
		root.Close()
	}
	conn, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { conn.Close() })
	return conn
}
