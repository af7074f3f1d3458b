package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// loginErr logs in as user with password, over TLS if tlsName is set.
func loginErr(t *testing.T, s *servertest.Server, user, password, tlsName string) error {
	t.Helper()
	dsn := user + ":" + password + "@tcp(" + s.Addr() + ")/"
	if tlsName != "" {
		dsn += "?tls=" + tlsName
	}
	var got string
	err := openDSN(t, dsn).QueryRow("SELECT CURRENT_USER()").Scan(&got)
	if err == nil && !strings.HasPrefix(got, user+"@") {
		t.Fatalf("logged in as %s: CURRENT_USER() = %q", user, got)
	}
	return err
}

// expectDenied checks MySQL 8's answer to a login that does not meet the
// account's REQUIRE: the 1045 of a wrong password.
func expectDenied(t *testing.T, err error, user string) {
	t.Helper()
	want := "Access denied for user '" + user + "'@'localhost' (using password: YES)"
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1045 || me.Message != want {
		t.Fatalf("login of %s: %v, want 1045 %q", user, err, want)
	}
}

func rootExec(t *testing.T, s *servertest.Server, queries ...string) {
	t.Helper()
	db := s.DB("")
	defer db.Close()
	for _, q := range queries {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestAccountRequireSSL: an account created or altered with REQUIRE SSL
// is refused without TLS and admitted with it, SHOW CREATE USER shows it,
// REQUIRE NONE lifts it, it survives a restart (which drops requirements
// of accounts that are gone), and an account dropped and re-created,
// also by prepared statements, starts without it.
func TestAccountRequireSSL(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	rootExec(t, s,
		"CREATE USER 'sec'@'%' IDENTIFIED BY 'pw' REQUIRE SSL",
		"CREATE USER 'plain'@'%' IDENTIFIED BY 'REQUIRE SSL'",
		"CREATE USER 'none'@'%' IDENTIFIED BY 'pw' REQUIRE NONE",
		"/* a comment */ CREATE USER 'sec2'@'%' IDENTIFIED BY 'pw' REQUIRE SSL")
	expectDenied(t, loginErr(t, s, "sec2", "pw", ""), "sec2")
	expectDenied(t, loginErr(t, s, "sec", "pw", ""), "sec")
	if err := loginErr(t, s, "sec", "pw", "skip-verify"); err != nil {
		t.Fatalf("REQUIRE SSL account over TLS: %v", err)
	}
	for _, u := range []struct{ user, pw string }{{"plain", "REQUIRE SSL"}, {"none", "pw"}} {
		if err := loginErr(t, s, u.user, u.pw, ""); err != nil {
			t.Fatalf("%s without TLS: %v", u.user, err)
		}
	}

	showCreateUser(t, s, "sec", "CREATE USER `sec`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*D821809F681A40A6E379B50D0463EFAE20BDD122'"+
		" REQUIRE SSL PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT"+
		" PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT")
	rootExec(t, s, "ALTER USER 'sec'@'%' REQUIRE NONE")
	if got := showCreateUser(t, s, "'sec'@'%'", ""); !strings.Contains(got, " REQUIRE NONE ") {
		t.Errorf("SHOW CREATE USER after REQUIRE NONE: %s", got)
	}
	if err := loginErr(t, s, "sec", "pw", ""); err != nil {
		t.Fatalf("after ALTER USER ... REQUIRE NONE, without TLS: %v", err)
	}
	rootExec(t, s, "ALTER USER sec IDENTIFIED BY 'pw2' REQUIRE /* c */ SSL")
	expectDenied(t, loginErr(t, s, "sec", "pw2", ""), "sec")
	if err := loginErr(t, s, "sec", "pw2", "skip-verify"); err != nil {
		t.Fatalf("new password over TLS after ALTER USER: %v", err)
	}

	// An entry whose account is gone (a crash between the two writes) is
	// dropped at startup.
	cat := s.Engine().Catalog()
	blob, err := cat.AccountTLS()
	if err != nil || !strings.Contains(string(blob), `"sec"`) {
		t.Fatalf("stored requirements %s, %v", blob, err)
	}
	ghost := strings.Replace(string(blob), "[", `[{"user":"ghost","host":"%","require":"SSL"},`, 1)
	if err := cat.SetAccountTLS([]byte(ghost)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = servertest.StartDir(t, dir)
	if blob, err := s.Engine().Catalog().AccountTLS(); err != nil || strings.Contains(string(blob), "ghost") {
		t.Errorf("after a restart, stored requirements %s, %v", blob, err)
	}
	expectDenied(t, loginErr(t, s, "sec", "pw2", ""), "sec")
	if err := loginErr(t, s, "sec", "pw2", "skip-verify"); err != nil {
		t.Fatalf("REQUIRE SSL account over TLS after a restart: %v", err)
	}
	if err := loginErr(t, s, "none", "pw", ""); err != nil {
		t.Fatalf("REQUIRE NONE account without TLS after a restart: %v", err)
	}

	rootExec(t, s, "DROP USER sec", "CREATE USER sec IDENTIFIED BY 'pw3'")
	if err := loginErr(t, s, "sec", "pw3", ""); err != nil {
		t.Fatalf("re-created account without REQUIRE, without TLS: %v", err)
	}
	// Prepared DROP USER and CREATE USER reset it too.
	rootExec(t, s, "ALTER USER sec REQUIRE SSL")
	root := s.DB("")
	for _, q := range []string{"DROP USER sec", "CREATE USER sec IDENTIFIED BY 'pw3'", "ALTER USER sec"} {
		stmt, err := root.Prepare(q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		if _, err := stmt.Exec(); err != nil {
			t.Fatalf("execute %s: %v", q, err)
		}
		stmt.Close()
	}
	if err := loginErr(t, s, "sec", "pw3", ""); err != nil {
		t.Fatalf("account re-created by prepared statements, without TLS: %v", err)
	}
	_, err = root.Exec("CREATE USER p1 IDENTIFIED BY 'pw' REQUIRE SSL /* ? */", 1)
	expectCode(t, err, 1295)
	// IF NOT EXISTS of an existing account changes nothing.
	rootExec(t, s, "CREATE USER IF NOT EXISTS sec IDENTIFIED BY 'pw3' REQUIRE SSL")
	if err := loginErr(t, s, "sec", "pw3", ""); err != nil {
		t.Fatalf("after CREATE USER IF NOT EXISTS of an existing account: %v", err)
	}
}

// TestAccountRequireUnsupported: the REQUIRE forms ReorgDB does not keep
// are refused with 1235, and create nothing.
func TestAccountRequireUnsupported(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	rootExec(t, s, "CREATE USER u1 IDENTIFIED BY 'pw'")
	for _, q := range []string{
		"CREATE USER r1 REQUIRE SUBJECT '/CN=client'",
		"CREATE USER r1 REQUIRE CIPHER 'AES' AND ISSUER '/CN=ca'",
		"ALTER USER u1 REQUIRE ISSUER '/CN=ca'",
		"GRANT SELECT ON *.* TO u1 REQUIRE SSL",
	} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE user = 'r1'").Scan(&n); err != nil || n != 0 {
		t.Errorf("refused CREATE USER left %d accounts, %v", n, err)
	}
	if err := loginErr(t, s, "u1", "pw", ""); err != nil {
		t.Errorf("u1 without TLS after a refused ALTER USER: %v", err)
	}
	_, err := db.Exec("ALTER USER nobody REQUIRE SSL")
	expectCode(t, err, 1396)
	if _, err := db.Exec("ALTER USER IF EXISTS nobody REQUIRE SSL"); err != nil {
		t.Errorf("ALTER USER IF EXISTS of an unknown account: %v", err)
	}
	// Without CREATE USER, an account cannot change another's REQUIRE.
	rootExec(t, s, "CREATE USER u2 IDENTIFIED BY 'pw' REQUIRE SSL")
	u1 := openDSN(t, "u1:pw@tcp("+s.Addr()+")/")
	_, err = u1.Exec("ALTER USER u2 REQUIRE NONE")
	expectCode(t, err, 1227)
	expectDenied(t, loginErr(t, s, "u2", "pw", ""), "u2")

	// SHOW CREATE USER: an account sees its own, not another's.
	var own string
	if err := u1.QueryRow("SHOW CREATE USER CURRENT_USER()").Scan(&own); err != nil || !strings.HasPrefix(own, "CREATE USER `u1`@`%`") {
		t.Errorf("SHOW CREATE USER CURRENT_USER() as u1: %q, %v", own, err)
	}
	_, err = u1.Exec("SHOW CREATE USER u2")
	expectCode(t, err, 1044)
	_, err = db.Exec("SHOW CREATE USER nobody")
	expectCode(t, err, 1396)
}

// TestAlterUserKeepsPassword: an ALTER USER that names no password keeps
// the account's password; ALTER USER ... REQUIRE works inside a
// multi-statement text; under super_read_only it is refused.
func TestAlterUserKeepsPassword(t *testing.T) {
	s := servertest.Start(t)
	rootExec(t, s, "CREATE USER k IDENTIFIED BY 'pw'", "ALTER USER k", "ALTER USER k REQUIRE NONE")
	if err := loginErr(t, s, "k", "pw", ""); err != nil {
		t.Fatalf("login with the password after ALTER USER k: %v", err)
	}
	expectCode(t, loginErr(t, s, "k", "", ""), 1045)

	root := s.DB("")
	rootExec(t, s, "SET GLOBAL super_read_only = ON")
	t.Cleanup(func() { root.Exec("SET GLOBAL super_read_only = OFF") })
	_, err := root.Exec("ALTER USER k REQUIRE SSL")
	expectCode(t, err, 1290)
	rootExec(t, s, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")

	// In a multi-statement text, the statements after it run too.
	multi := openDSN(t, "root:@tcp("+s.Addr()+")/?multiStatements=true")
	var one int
	if err := multi.QueryRow("ALTER USER k REQUIRE SSL; SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("ALTER USER k REQUIRE SSL; SELECT 1: %d, %v", one, err)
	}
	expectDenied(t, loginErr(t, s, "k", "pw", ""), "k")
	if _, err := multi.Exec("ALTER USER k IDENTIFIED BY 'pw' REQUIRE NONE; DO 1"); err != nil {
		t.Fatal(err)
	}
	if err := loginErr(t, s, "k", "pw", ""); err != nil {
		t.Fatalf("after a multi-statement ALTER USER ... REQUIRE NONE: %v", err)
	}
	rootExec(t, s, "SET GLOBAL super_read_only = ON")
	_, err = root.Exec("ALTER USER k REQUIRE SSL")
	expectCode(t, err, 1290)
	rootExec(t, s, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
	if err := loginErr(t, s, "k", "pw", ""); err != nil {
		t.Fatalf("ALTER USER refused under super_read_only changed the account: %v", err)
	}
}

// TestAccountRequireX509: REQUIRE X509 admits only TLS connections whose
// client certificate is signed by the server's CA.
func TestAccountRequireX509(t *testing.T) {
	s := servertest.Start(t)
	rootExec(t, s, "CREATE USER 'x5'@'%' IDENTIFIED BY 'pw' REQUIRE X509")
	expectDenied(t, loginErr(t, s, "x5", "pw", ""), "x5")
	expectDenied(t, loginErr(t, s, "x5", "pw", "skip-verify"), "x5")
	name := "x509client"
	if err := mysql.RegisterTLSConfig(name, &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{clientCert(t, s.Dir)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := loginErr(t, s, "x5", "pw", name); err != nil {
		t.Fatalf("REQUIRE X509 with a client certificate: %v", err)
	}
}

// clientCert issues a client certificate signed by the CA the server
// generated in dir.
func clientCert(t *testing.T, dir string) tls.Certificate {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: "client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// showCreateUser returns SHOW CREATE USER's statement for account, and
// checks it is want unless want is empty.
func showCreateUser(t *testing.T, s *servertest.Server, account, want string) string {
	t.Helper()
	db := s.DB("")
	defer db.Close()
	rows, err := db.Query("SHOW CREATE USER " + account)
	if err != nil {
		t.Fatalf("SHOW CREATE USER %s: %v", account, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var got string
	if !rows.Next() || rows.Scan(&got) != nil {
		t.Fatalf("SHOW CREATE USER %s: no row, %v", account, rows.Err())
	}
	if len(cols) != 1 || cols[0] != "CREATE USER for sec@%" && want != "" {
		t.Errorf("SHOW CREATE USER %s: columns %q", account, cols)
	}
	if want != "" && got != want {
		t.Errorf("SHOW CREATE USER %s:\n got %s\nwant %s", account, got, want)
	}
	return got
}
