package main

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestServeTLSFlags: `reorgdb serve` generates its certificates into the
// data directory with no --ssl-* flag; another server given those files
// with --ssl-cert, --ssl-key and --ssl-ca uses them instead of
// generating its own, and with --require-secure-transport refuses a
// plain login with 3159 and accepts a TLS one that verifies the server
// against the CA.
func TestServeTLSFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	first := filepath.Join(t.TempDir(), "data")
	gen := startServe(t, "serve", "--data-dir", first, "--port", "0", "--status-port", "-1", "--cache-size", "16", "--memtable-size", "4")
	if gen.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", gen.err, gen.stderr.String())
	}
	second := filepath.Join(t.TempDir(), "data")
	srv := startServe(t, "serve", "--data-dir", second, "--port", "0", "--status-port", "-1", "--cache-size", "16", "--memtable-size", "4",
		"--ssl-cert", filepath.Join(first, "server-cert.pem"), "--ssl-key", filepath.Join(first, "server-key.pem"),
		"--ssl-ca", filepath.Join(first, "ca.pem"), "--require-secure-transport")
	if srv.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", srv.err, srv.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(second, "server-cert.pem")); !os.IsNotExist(err) {
		t.Errorf("a certificate was generated although --ssl-cert was given: %v", err)
	}
	plain, _ := sql.Open("mysql", "root:@tcp("+srv.addr+")/")
	defer plain.Close()
	var me *mysql.MySQLError
	if err := plain.Ping(); !errors.As(err, &me) || me.Number != 3159 {
		t.Errorf("plain login with --require-secure-transport: %v, want 3159", err)
	}
	pem, err := os.ReadFile(filepath.Join(first, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	if err := mysql.RegisterTLSConfig("servetls", &tls.Config{RootCAs: pool, ServerName: "localhost"}); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("mysql", "root:@tcp("+srv.addr+")/?tls=servetls")
	defer db.Close()
	var cert, rst string
	if err := db.QueryRow("SELECT @@ssl_cert, @@require_secure_transport").Scan(&cert, &rst); err != nil ||
		cert != filepath.Join(first, "server-cert.pem") || rst != "1" {
		t.Errorf("over TLS: @@ssl_cert %q, @@require_secure_transport %q, %v", cert, rst, err)
	}
}
