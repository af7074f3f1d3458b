package server_test

import (
	"database/sql"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

func isMySQLError(err error, code uint16, msg string) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == code && me.Message == msg
}

// TestMaxConnections: with --max-connections 3, a fourth client without
// SUPER gets 1040, an account with SUPER gets the one reserved slot,
// and a fifth connection gets 1040 whoever it is; a slot freed is usable
// again, and SET GLOBAL max_connections moves the limit at once.
func TestMaxConnections(t *testing.T) {
	s := servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.MaxConnections = 3 })
	root := s.DB("d")
	resetGlobals(t, s, "max_connections = 151")
	root.SetMaxOpenConns(1)
	if _, err := root.Exec("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec("GRANT SELECT ON d.* TO 'app'@'%'"); err != nil {
		t.Fatal(err)
	}
	var max int
	if err := root.QueryRow("SELECT @@global.max_connections").Scan(&max); err != nil || max != 3 {
		t.Fatalf("max_connections %d, %v", max, err)
	}
	open := func(user string) (*sql.DB, error) {
		db, _ := sql.Open("mysql", user+"@tcp("+s.Addr()+")/d")
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		if err := db.Ping(); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	// root's pool holds one connection; sockets closed before (creating
	// the database, say) hold their slots until the server reads their EOF.
	waitOpen := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); s.OpenConnections() != n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", s.OpenConnections(), n)
			}
		}
	}
	waitOpen(1)
	var held []*sql.DB
	defer func() {
		for _, db := range held {
			db.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		db, err := open("app:pw")
		if err != nil {
			t.Fatalf("connection %d: %v", i+2, err)
		}
		held = append(held, db)
	}
	if _, err := open("app:pw"); !isMySQLError(err, 1040, "Too many connections") {
		t.Fatalf("4th connection as app: %v, want 1040", err)
	}
	admin, err := open("root:")
	if err != nil {
		t.Fatalf("4th connection as root (SUPER): %v", err)
	}
	if _, err := open("root:"); !isMySQLError(err, 1040, "Too many connections") {
		t.Fatalf("5th connection as root: %v, want 1040", err)
	}
	// The refused connections gave their slots back.
	admin.Close()
	held[0].Close()
	held = held[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		db, err := open("app:pw")
		if err == nil {
			held = append(held, db)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot is not reused: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitOpen(3)
	if _, err := root.Exec("SET GLOBAL max_connections = 4"); err != nil {
		t.Fatal(err)
	}
	db, err := open("app:pw")
	if err != nil {
		t.Fatalf("after SET GLOBAL max_connections = 4: %v", err)
	}
	held = append(held, db)
	if _, err := open("app:pw"); !isMySQLError(err, 1040, "Too many connections") {
		t.Fatalf("5th connection with max_connections 4: %v, want 1040", err)
	}
}

// TestConnectTimeout: a socket that never answers the greeting is closed
// after connect_timeout seconds, and its slot is given back.
func TestConnectTimeout(t *testing.T) {
	s := servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.MaxConnections = 2 })
	root := s.DB("")
	resetGlobals(t, s, "max_connections = 151", "connect_timeout = 10")
	root.SetMaxOpenConns(1)
	root.SetMaxIdleConns(1)
	if _, err := root.Exec("SET GLOBAL connect_timeout = 2"); err != nil {
		t.Fatal(err)
	}
	var id1 int
	if err := root.QueryRow("SELECT CONNECTION_ID()").Scan(&id1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// root's connection and the idle sockets take max_connections and
	// the reserved slot.
	probe, _ := sql.Open("mysql", "root:@tcp("+s.Addr()+")/")
	defer probe.Close()
	if err := probe.Ping(); !isMySQLError(err, 1040, "Too many connections") {
		t.Fatalf("fourth connection: %v, want 1040", err)
	}
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Fatalf("idle socket: %v, want closed by the server", err)
		}
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 5*time.Second {
		t.Fatalf("idle sockets closed after %v, want about 2s", d)
	}
	if err := probe.Ping(); err != nil {
		t.Fatalf("after the idle sockets were closed: %v", err)
	}
	// A client that logged in keeps its connection past connect_timeout.
	var id2 int
	if err := root.QueryRow("SELECT CONNECTION_ID()").Scan(&id2); err != nil || id2 != id1 {
		t.Fatalf("connection id %d, %v; want %d: the logged-in connection was closed", id2, err, id1)
	}
}

// resetGlobals sets global variables back when the test ends: they are
// the process's, shared by the servers of later tests.
func resetGlobals(t *testing.T, s *servertest.Server, assignments ...string) {
	t.Cleanup(func() {
		db, err := sql.Open("mysql", s.DSN(""))
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		for _, a := range assignments {
			// Sockets the test just closed may hold their slots for a
			// moment, until the server reads their EOF.
			deadline := time.Now().Add(5 * time.Second)
			for {
				_, err := db.Exec("SET GLOBAL " + a)
				if err == nil {
					break
				}
				if !isMySQLErrorCode(err, 1040) || time.Now().After(deadline) {
					t.Errorf("SET GLOBAL %s: %v", a, err)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
}

// TestTooManyConnectionsCLI: the mariadb client prints 1040 for a
// connection refused in place of the greeting.
func TestTooManyConnectionsCLI(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.MaxConnections = 1 })
	resetGlobals(t, s, "max_connections = 151")
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	out, err := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "--skip-ssl", "-e", "SELECT 1").CombinedOutput()
	if err == nil || strings.TrimSpace(string(out)) != "ERROR 1040 (08004): Too many connections" {
		t.Errorf("mariadb over the limit: %v %q", err, out)
	}
	for _, c := range idle {
		c.Close()
	}
}
