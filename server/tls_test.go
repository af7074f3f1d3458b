package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

var tlsConfigs atomic.Int64

// caTLS registers a go-sql-driver TLS config that trusts only the CA in
// the server's data directory and checks the host name, and returns its
// name for the DSN's tls parameter.
func caTLS(t *testing.T, dir string) string {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in ca.pem")
	}
	name := "ca" + string(rune('a'+tlsConfigs.Add(1)))
	if err := mysql.RegisterTLSConfig(name, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	return name
}

func openDSN(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sessionStatus(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW SESSION STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW STATUS LIKE %s: %v", name, err)
	}
	return v
}

// TestTLS: with no --ssl-* flag the server generates a CA and a server
// certificate into the data directory; a client that trusts that CA
// connects over TLS, the session's Ssl_version and Ssl_cipher say so
// (and are empty without TLS), the ssl variables name the files, and
// statements that the server rewrites on their way in behave the same
// over TLS.
func TestTLS(t *testing.T) {
	s := servertest.Start(t)
	for _, f := range []string{"ca-key.pem", "server-key.pem"} {
		st, err := os.Stat(filepath.Join(s.Dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, st.Mode().Perm())
		}
	}
	db := openDSN(t, "root:@tcp("+s.Addr()+")/?tls="+caTLS(t, s.Dir))
	db.SetMaxOpenConns(1)
	if v := sessionStatus(t, db, "Ssl_version"); v != "TLSv1.3" {
		t.Errorf("Ssl_version over TLS = %q, want TLSv1.3", v)
	}
	if v := sessionStatus(t, db, "Ssl_cipher"); !strings.HasPrefix(v, "TLS_") {
		t.Errorf("Ssl_cipher over TLS = %q", v)
	}
	plain := openDSN(t, s.DSN(""))
	if v := sessionStatus(t, plain, "Ssl_cipher"); v != "" {
		t.Errorf("Ssl_cipher without TLS = %q, want empty", v)
	}
	var haveSSL, cert, key, ca, rst string
	if err := db.QueryRow("SELECT @@have_ssl, @@ssl_cert, @@ssl_key, @@ssl_ca, @@require_secure_transport").Scan(&haveSSL, &cert, &key, &ca, &rst); err != nil {
		t.Fatal(err)
	}
	if haveSSL != "YES" || cert != filepath.Join(s.Dir, "server-cert.pem") || key != filepath.Join(s.Dir, "server-key.pem") ||
		ca != filepath.Join(s.Dir, "ca.pem") || rst != "0" {
		t.Errorf("have_ssl, ssl_cert, ssl_key, ssl_ca, require_secure_transport = %q %q %q %q %q", haveSSL, cert, key, ca, rst)
	}
	if _, err := db.Exec("SET GLOBAL ssl_cert = '/tmp/x.pem'"); err == nil {
		t.Error("SET GLOBAL ssl_cert succeeded; the server reads it at startup only")
	}
	// NO_BACKSLASH_ESCAPES is applied by the server's connection layer,
	// which must see the statement in the clear.
	if _, err := db.Exec("SET sql_mode = 'NO_BACKSLASH_ESCAPES'"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := db.QueryRow(`SELECT 'a\nb'`).Scan(&got); err != nil || got != `a\nb` {
		t.Errorf(`SELECT 'a\nb' under NO_BACKSLASH_ESCAPES over TLS: %q, %v`, got, err)
	}
	// Prepared statements and a large result go through TLS too.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM (SELECT REPEAT('x', ?) AS c) t WHERE LENGTH(c) = ?", 100000, 100000).Scan(&n); err != nil || n != 1 {
		t.Errorf("prepared statement over TLS: %d, %v", n, err)
	}
	var big string
	if err := db.QueryRow("SELECT REPEAT('y', 300000)").Scan(&big); err != nil || len(big) != 300000 {
		t.Errorf("300 kB result over TLS: %d bytes, %v", len(big), err)
	}
}

// TestTLSCertificatesReused: the generated files are kept and used again
// by the next start.
func TestTLSCertificatesReused(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, "server-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	caBefore, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	s.Close()
	s = servertest.StartDir(t, dir)
	after, _ := os.ReadFile(filepath.Join(dir, "server-cert.pem"))
	caAfter, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if !bytes.Equal(before, after) || !bytes.Equal(caBefore, caAfter) {
		t.Fatal("a restart generated new certificates")
	}
	db := openDSN(t, "root:@tcp("+s.Addr()+")/?tls="+caTLS(t, dir))
	if v := sessionStatus(t, db, "Ssl_version"); v == "" {
		t.Error("no TLS after a restart")
	}
}

// TestTLSCertificateFlags: --ssl-cert and --ssl-key are used instead of
// generated files, and are required together.
func TestTLSCertificateFlags(t *testing.T) {
	certs := servertest.Start(t).Dir // a directory with generated files
	dir := t.TempDir()
	s := servertest.StartConfig(t, dir, func(c *server.Config) {
		c.SSLCert = filepath.Join(certs, "server-cert.pem")
		c.SSLKey = filepath.Join(certs, "server-key.pem")
		c.SSLCA = filepath.Join(certs, "ca.pem")
	})
	if _, err := os.Stat(filepath.Join(dir, "server-cert.pem")); !os.IsNotExist(err) {
		t.Errorf("certificates generated although --ssl-cert was given: %v", err)
	}
	db := openDSN(t, "root:@tcp("+s.Addr()+")/?tls="+caTLS(t, certs))
	var cert string
	if err := db.QueryRow("SELECT @@ssl_cert").Scan(&cert); err != nil || cert != filepath.Join(certs, "server-cert.pem") {
		t.Errorf("@@ssl_cert = %q, %v", cert, err)
	}
	s.Close()
	bad, err := server.Start(server.Config{DataDir: t.TempDir(), StatusPort: -1, SSLCert: filepath.Join(certs, "server-cert.pem")})
	if err == nil {
		bad.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "--ssl-key") {
		t.Errorf("--ssl-cert without --ssl-key: %v", err)
	}
}

// TestRequireSecureTransport: with require_secure_transport ON (SET
// GLOBAL, or the flag) a login without TLS gets MySQL's 3159, one with
// TLS succeeds, and turning it OFF lets plain logins in again.
func TestRequireSecureTransport(t *testing.T) {
	s := servertest.Start(t)
	root := s.DB("")
	if _, err := root.Exec("SET GLOBAL require_secure_transport = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Exec("SET GLOBAL require_secure_transport = OFF") })
	want := "Connections using insecure transport are prohibited while --require_secure_transport=ON."
	checkInsecureRefused(t, s.DSN(""), want)
	secure := openDSN(t, "root:@tcp("+s.Addr()+")/?tls=skip-verify")
	if err := secure.Ping(); err != nil {
		t.Fatalf("TLS login with require_secure_transport=ON: %v", err)
	}
	if _, err := secure.Exec("SET GLOBAL require_secure_transport = OFF"); err != nil {
		t.Fatal(err)
	}
	if err := openDSN(t, s.DSN("")).Ping(); err != nil {
		t.Errorf("plain login after require_secure_transport=OFF: %v", err)
	}
	s.Close()

	s = servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.RequireSecureTransport = true })
	checkInsecureRefused(t, s.DSN(""), want)
	if err := openDSN(t, "root:@tcp("+s.Addr()+")/?tls=skip-verify").Ping(); err != nil {
		t.Errorf("TLS login with --require-secure-transport: %v", err)
	}
}

func checkInsecureRefused(t *testing.T, dsn, want string) {
	t.Helper()
	err := openDSN(t, dsn).Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 3159 || me.Message != want || string(me.SQLState[:]) != "HY000" {
		t.Errorf("plain login with require_secure_transport=ON: %v, want 3159 (HY000) %q", err, want)
	}
}

// TestCachingSha2OverTLS: a caching_sha2_password account logs in over
// TLS (its full authentication sends the password, which vitess accepts
// over TLS only), with a wrong password it gets 1045, and without TLS it
// still gets 1045.
func TestCachingSha2OverTLS(t *testing.T) {
	s := servertest.Start(t)
	if _, err := s.DB("").Exec("CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	db := openDSN(t, "sha:pw@tcp("+s.Addr()+")/?tls=skip-verify")
	var user string
	if err := db.QueryRow("SELECT USER()").Scan(&user); err != nil || !strings.HasPrefix(user, "sha@") {
		t.Fatalf("caching_sha2_password over TLS: %q, %v", user, err)
	}
	for _, dsn := range []string{"sha:wrong@tcp(" + s.Addr() + ")/?tls=skip-verify", "sha:pw@tcp(" + s.Addr() + ")/"} {
		err := openDSN(t, dsn).Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1045 {
			t.Errorf("%s: %v, want 1045", dsn, err)
		}
	}
}

// TestTLSMariadbCLI: the mariadb client connects with --ssl, verifying
// the generated certificate against ca.pem, and is refused with 3159
// without TLS (--skip-ssl: the client uses TLS by default) while
// require_secure_transport is ON.
func TestTLSMariadbCLI(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.Start(t)
	host, port, _ := net.SplitHostPort(s.Addr())
	ca := filepath.Join(s.Dir, "ca.pem")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(client, append([]string{"-h" + host, "-P" + port, "-uroot", "-N"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run("--ssl", "--ssl-ca="+ca, "--ssl-verify-server-cert", "-e", "SHOW STATUS LIKE 'Ssl_version'")
	if err != nil || out != "Ssl_version\tTLSv1.3" {
		t.Fatalf("mariadb --ssl: %v %q", err, out)
	}
	if _, err := s.DB("").Exec("SET GLOBAL require_secure_transport = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.DB("").Exec("SET GLOBAL require_secure_transport = OFF") })
	out, err = run("--skip-ssl", "-e", "SELECT 1")
	if want := "ERROR 3159 (HY000): Connections using insecure transport are prohibited while --require_secure_transport=ON."; err == nil || out != want {
		t.Errorf("mariadb without --ssl: %v %q, want %q", err, out, want)
	}
	out, err = run("--ssl", "-e", "SELECT 1")
	if err != nil || out != "1" {
		t.Errorf("mariadb --ssl with require_secure_transport=ON: %v %q", err, out)
	}
}

// TestTLSDisconnectCancelsStatement: the server notices a TLS client that
// goes away while its statement runs, as it does a plain one, and the
// statement stops; KILL QUERY stops a TLS client's statement with 1317.
func TestTLSDisconnectCancelsStatement(t *testing.T) {
	s := servertest.Start(t)
	admin := s.DB("")
	db := openDSN(t, "root:@tcp("+s.Addr()+")/?tls=skip-verify")
	run := func(ctx context.Context) (*sql.Conn, int64, chan error) {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.ExecContext(ctx, "SELECT SLEEP(60)")
			done <- err
		}()
		waitRunning(t, admin, id)
		return c, id, done
	}

	c, id, done := run(context.Background())
	if _, err := admin.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	var me *mysql.MySQLError
	if err := within(t, "KILL QUERY", done); !errors.As(err, &me) || me.Number != 1317 {
		t.Errorf("KILL QUERY of a TLS client's statement: %v, want 1317", err)
	}
	c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	c, id, done = run(ctx)
	cancel() // go-sql-driver closes the socket
	within(t, "cancelled statement", done)
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("5 s after a TLS client disconnected, its statement still runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTLSHandshakeTimeout: the greeting offers TLS (CLIENT_SSL), and a
// client that asks for TLS and then sends nothing is closed after
// connect_timeout, as one that never answers the greeting.
func TestTLSHandshakeTimeout(t *testing.T) {
	s := servertest.Start(t)
	root := s.DB("")
	resetGlobals(t, s, "connect_timeout = 10")
	if _, err := root.Exec("SET GLOBAL connect_timeout = 2"); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	hs := rc.readPacket()
	pos := bytes.IndexByte(hs[1:], 0) + 2 + 4 + 8 + 1
	if caps := binary.LittleEndian.Uint16(hs[pos:]); caps&0x800 == 0 {
		t.Fatalf("greeting capabilities %#x without CLIENT_SSL", caps)
	}
	req := binary.LittleEndian.AppendUint32(nil, rawCapabilities|0x800)
	req = binary.LittleEndian.AppendUint32(req, 1<<24)
	req = append(req, 33)
	req = append(req, make([]byte, 23)...)
	rc.seq = 1
	rc.writePacket(req)
	start := time.Now()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("socket after the SSL request: %v, want closed by the server", err)
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 5*time.Second {
		t.Fatalf("closed after %v, want about 2s", d)
	}
}
