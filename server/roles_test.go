package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestRoleStatements: SET ROLE, ALTER USER ... DEFAULT ROLE, CURRENT_ROLE()
// and GRANT ... TO CURRENT_USER() as MySQL 8 takes them, with its errors.
func TestRoleStatements(t *testing.T) {
	s := servertest.Start(t)
	rootExec(t, s, "CREATE USER u IDENTIFIED BY 'pw'", "CREATE ROLE r1, r2", "GRANT r2, r1 TO u", "CREATE ROLE r3",
		"GRANT r3 TO CURRENT_USER()", "/*!80001 ALTER USER 'u'@'%' DEFAULT ROLE NONE */")
	root := s.DB("")
	query(t, root, "SELECT CURRENT_ROLE()", "`r3`@`%`")
	u := openDSN(t, "u:pw@tcp("+s.Addr()+")/")
	query(t, u, "SELECT CURRENT_ROLE()", "`r1`@`%`,`r2`@`%`")
	for _, q := range []string{"SET ROLE NONE", "SET ROLE DEFAULT", "SET ROLE ALL", "SET ROLE ALL EXCEPT r1", "SET ROLE r1, 'r2'@'%'"} {
		execT(t, u, q)
	}
	_, err := u.Exec("SET ROLE r1, r3")
	expectError(t, err, 3530, "`r3`@`%` is not granted to `u`@`%`")
	execT(t, root, "ALTER USER u DEFAULT ROLE r1, r2")
	_, err = root.Exec("ALTER USER u DEFAULT ROLE r3")
	expectError(t, err, 3530, "`r3`@`%` is not granted to `u`@`%`")
	_, err = root.Exec("ALTER USER nobody DEFAULT ROLE ALL")
	expectError(t, err, 1396, "Operation ALTER USER failed for 'nobody'@'%'")
	execT(t, root, "ALTER USER IF EXISTS nobody DEFAULT ROLE ALL")
	_, err = u.Exec("ALTER USER u DEFAULT ROLE ALL")
	expectError(t, err, 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
	query(t, root, "SELECT count(*) FROM mysql.default_roles", "0")

	// SET DEFAULT ROLE, as SHOW GRANTS and account dumps write it.
	execT(t, root, "SET DEFAULT ROLE r1, r2 TO u")
	execT(t, root, "/*!80001 SET DEFAULT ROLE ALL TO 'u'@'%' */")
	execT(t, root, "SET DEFAULT ROLE NONE TO u, root@localhost")
	_, err = root.Exec("SET DEFAULT ROLE r3 TO u")
	expectError(t, err, 3530, "`r3`@`%` is not granted to `u`@`%`")
	_, err = root.Exec("SET DEFAULT ROLE ALL TO nobody")
	expectError(t, err, 1396, "Operation SET DEFAULT ROLE failed for 'nobody'@'%'")
	execT(t, u, "SET DEFAULT ROLE r1 TO u") // one's own, roles granted to one
	_, err = u.Exec("SET DEFAULT ROLE NONE TO root@localhost")
	expectError(t, err, 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
}
