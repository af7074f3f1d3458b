package server

import (
	"strings"
	"testing"
)

func TestDumpCompat(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"SELECT 1 /* a */ /* b */", "SELECT 1 /* a */ /* b */"},
		{"/*!80001 CREATE ROLE IF NOT EXISTS 'r'/*!80001 @'%'*/ */", "/*!80001 CREATE ROLE IF NOT EXISTS 'r' */"},
		{"/*M!100005 GRANT 'r'/*!80001 @'%'*/ TO 'u'@'%'*/", "/*M!100005 GRANT 'r' TO 'u'@'%'*/"},
		{"/*!80001 SELECT '/* x */', 1 /* y */ */ /* z */", "/*!80001 SELECT '/* x */', 1  */ /* z */"},
		{"SELECT 'a /*! b', '*/' /* c */", "SELECT 'a /*! b', '*/' /* c */"},
	} {
		if got := dumpCompat(c.in); got != c.out {
			t.Errorf("dumpCompat(%q) = %q, want %q", c.in, got, c.out)
		}
	}
	table := emptyDefaultRolesTable
	for _, c := range []struct{ in, out string }{
		{"SELECT * FROM mysql.default_roles", "SELECT * FROM " + table + " AS `default_roles`"},
		{"SELECT 1 FROM mysql.user mu LEFT JOIN mysql.default_roles using (USER, HOST)",
			"SELECT 1 FROM mysql.user mu LEFT JOIN " + table + " AS `default_roles` using (USER, HOST)"},
		{"SELECT d.USER FROM `mysql`.`DEFAULT_ROLES` AS d", "SELECT d.USER FROM " + table + " AS d"},
		{"SELECT 'mysql.default_roles', x FROM mysql.default_roles_x", "SELECT 'mysql.default_roles', x FROM mysql.default_roles_x"},
	} {
		if got := dumpCompat(c.in); got != c.out {
			t.Errorf("dumpCompat(%q) = %q, want %q", c.in, got, c.out)
		}
	}
	if q := "SELECT 1"; !strings.EqualFold(executableText("/*!80001 "+q+" */;"), q) || executableText("/*!90000 "+q+" */") == q {
		t.Errorf("executableText of a versioned statement")
	}
	hash := "$A$005$\x00'\\x"
	in := "CREATE USER `u`@`%` IDENTIFIED WITH 'caching_sha2_password' AS " + authLiteral(hash) + " REQUIRE NONE"
	want := "CREATE USER `u`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$\\0\\'\\\\x' REQUIRE NONE"
	if got := hexAuthAsString(in); got != want {
		t.Errorf("hexAuthAsString(%q) = %q, want %q", in, got, want)
	}
}
