package server_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAccountLock: CREATE USER ... ACCOUNT LOCK makes an account that
// cannot log in, with MySQL 8's 3118 for the right password and 1045
// for a wrong one (IF NOT EXISTS leaves an existing one as it is), ALTER
// USER ... ACCOUNT LOCK | UNLOCK sets the lock with MySQL 8's errors, and
// the lock survives a restart.
func TestAccountLock(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	rootExec(t, s, "CREATE USER u IDENTIFIED BY 'pw'", "CREATE USER lk IDENTIFIED BY 'pw' ACCOUNT LOCK",
		"CREATE USER IF NOT EXISTS u IDENTIFIED BY 'pw' ACCOUNT LOCK")
	expectError(t, loginErr(t, s, "lk", "pw", ""), 3118, "Access denied for user 'lk'@'localhost'. Account is locked.")
	expectDenied(t, loginErr(t, s, "lk", "wrong", ""), "lk")
	rootExec(t, s, "CREATE USER nopw ACCOUNT LOCK")
	expectCode(t, loginErr(t, s, "nopw", "", ""), 3118)
	if err := loginErr(t, s, "u", "pw", ""); err != nil {
		t.Fatalf("CREATE USER IF NOT EXISTS ... ACCOUNT LOCK locked an existing account: %v", err)
	}
	if got := rowStrings(t, s.DB(""), "SHOW CREATE USER lk")[0]; !strings.Contains(got, " ACCOUNT LOCK ") {
		t.Fatalf("SHOW CREATE USER lk: %s", got)
	}
	rootExec(t, s, "ALTER USER lk ACCOUNT UNLOCK", "/*!80001 ALTER USER u, 'lk'@'%' ACCOUNT LOCK */")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = servertest.StartDir(t, dir)
	for _, name := range []string{"u", "lk"} {
		if err := loginErr(t, s, name, "pw", ""); err == nil {
			t.Fatalf("%s logged in after ALTER USER ... ACCOUNT LOCK and a restart", name)
		}
	}
	rootExec(t, s, "ALTER USER IF EXISTS u, nobody ACCOUNT UNLOCK")
	if err := loginErr(t, s, "u", "pw", ""); err != nil {
		t.Fatalf("u after ACCOUNT UNLOCK: %v", err)
	}
	root := s.DB("")
	_, err := root.Exec("ALTER USER lk, nobody, nobody2 ACCOUNT UNLOCK")
	expectError(t, err, 1396, "Operation ALTER USER failed for 'nobody'@'%','nobody2'@'%'")
	if err := loginErr(t, s, "lk", "pw", ""); err == nil {
		t.Fatal("a refused ALTER USER ... ACCOUNT UNLOCK unlocked lk")
	}
	u := openDSN(t, "u:pw@tcp("+s.Addr()+")/")
	_, err = u.Exec("ALTER USER lk ACCOUNT UNLOCK")
	expectError(t, err, 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
}
