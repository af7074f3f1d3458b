package server_test

import (
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAccessDenied: bad credentials get MySQL's 1045 with the user, host
// and whether a password was given, for an unknown user as for a known
// one, over mysql_native_password and caching_sha2_password.
func TestAccessDenied(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("")
	if _, err := db.Exec("CREATE USER 'app'@'%' IDENTIFIED BY 'secret'"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ user, pass, want string }{
		{"nobody", "", "Access denied for user 'nobody'@'localhost' (using password: NO)"},
		{"nobody", "x", "Access denied for user 'nobody'@'localhost' (using password: YES)"},
		{"app", "wrong", "Access denied for user 'app'@'localhost' (using password: YES)"},
		{"app", "", "Access denied for user 'app'@'localhost' (using password: NO)"},
		{"root", "x", "Access denied for user 'root'@'localhost' (using password: YES)"},
	} {
		for _, plugin := range []string{"", "&allowNativePasswords=true"} {
			c2, err := sql.Open("mysql", c.user+":"+c.pass+"@tcp("+s.Addr()+")/"+"?timeout=5s"+plugin)
			if err != nil {
				t.Fatal(err)
			}
			err = c2.Ping()
			c2.Close()
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1045 || me.Message != c.want || string(me.SQLState[:]) != "28000" {
				t.Errorf("%s/%q: got %v, want 1045 (28000) %q", c.user, c.pass, err, c.want)
			}
		}
	}
	// A caching_sha2_password account needs TLS for its full
	// authentication: without it, it gets 1045 (the log says why)
	// rather than a handshake error (TestCachingSha2OverTLS logs in).
	if _, err := db.Exec("CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	sha, _ := sql.Open("mysql", "sha:pw@tcp("+s.Addr()+")/")
	err := sha.Ping()
	sha.Close()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1045 || me.Message != "Access denied for user 'sha'@'localhost' (using password: YES)" {
		t.Errorf("caching_sha2_password account without TLS: %v", err)
	}
	// The right password still works, and the server still serves.
	ok, _ := sql.Open("mysql", "app:secret@tcp("+s.Addr()+")/")
	defer ok.Close()
	if err := ok.Ping(); err != nil {
		t.Fatalf("app with its password: %v", err)
	}
}

// TestAccessDeniedCLI: the mariadb client, which used to report a
// malformed packet for an unknown user, prints MySQL's 1045.
func TestAccessDeniedCLI(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.Start(t)
	host, port, _ := net.SplitHostPort(s.Addr())
	for _, c := range []struct{ args, want string }{
		{"-unobody", "ERROR 1045 (28000): Access denied for user 'nobody'@'localhost' (using password: NO)"},
		{"-unobody -px", "ERROR 1045 (28000): Access denied for user 'nobody'@'localhost' (using password: YES)"},
		{"-uroot -pwrong", "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)"},
	} {
		args := append([]string{"-h" + host, "-P" + port, "-e", "SELECT 1"}, strings.Fields(c.args)...)
		out, err := exec.Command(client, args...).CombinedOutput()
		if err == nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("mariadb %s: %v %q, want %q", c.args, err, out, c.want)
		}
	}
	out, err := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "-N", "-e", "SELECT 1").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("root: %v %q", err, out)
	}
}

func mariadbPath(t *testing.T) string {
	p, err := exec.LookPath("mariadb")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the mariadb client is not installed; .ci/run installs it")
		}
		t.Skip("the mariadb client is not installed (apt-get install mariadb-client)")
	}
	return p
}
