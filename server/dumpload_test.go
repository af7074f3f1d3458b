package server_test

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestLoadPhpMyAdminDump feeds a phpMyAdmin export of WordPress tables
// (utf8mb4_unicode_520_ci, keys added after the rows, AUTO_INCREMENT
// given by MODIFY) to the mariadb client, and checks that the tables work
// as WordPress uses them.
func TestLoadPhpMyAdminDump(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.Start(t)
	db := s.DB("wp")
	dump, err := os.Open("testdata/wordpress-phpmyadmin.sql")
	if err != nil {
		t.Fatal(err)
	}
	defer dump.Close()
	host, port, _ := net.SplitHostPort(s.Addr())
	cmd := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "wp")
	cmd.Stdin = dump
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s", err, out)
	}
	execT(t, db, "INSERT INTO wp_options (option_name, option_value) VALUES ('admin_email', 'a@example.com')")
	query(t, db, "SELECT option_id FROM wp_options WHERE option_name = 'ADMIN_EMAIL'", "4")
	_, err = db.Exec("INSERT INTO wp_options (option_name, option_value) VALUES ('Home', 'x')")
	expectCode(t, err, 1062) // 'home' is there, and the collation ignores case
	execT(t, db, "INSERT INTO wp_postmeta (post_id, meta_key, meta_value) VALUES (1, '_edit_lock', '1')")
	query(t, db, "SELECT meta_id FROM wp_postmeta WHERE meta_key = '_edit_lock'", "2")
	query(t, db, "SELECT ID FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' ORDER BY post_date DESC", "1")
	for _, tbl := range []string{"wp_options", "wp_posts", "wp_postmeta", "wp_term_relationships"} {
		execT(t, db, "ADMIN CHECK TABLE "+tbl)
	}
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE wp_posts").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`ID` bigint unsigned NOT NULL AUTO_INCREMENT", "KEY `post_name` (`post_name`(191))", "AUTO_INCREMENT=3", "COLLATE=utf8mb4_unicode_520_ci"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE wp_posts lacks %q:\n%s", want, create)
		}
	}
}
