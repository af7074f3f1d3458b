package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestLoadDataLocal: LOAD DATA LOCAL INFILE is refused with MySQL 8's
// 3948 while local_infile is OFF (its default) and loads the client's
// file once SET GLOBAL local_infile = 1.
func TestLoadDataLocal(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rows.tsv")
	if err := os.WriteFile(file, []byte("1\ta\n2\tb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(file)
	defer mysql.DeregisterLocalFile(file)
	load := "LOAD DATA LOCAL INFILE '" + file + "' INTO TABLE t"
	_, err := db.Exec(load)
	if err == nil || !strings.Contains(err.Error(), "Error 3948 (42000): Loading local data is disabled; this must be enabled on both the client and server sides") {
		t.Fatalf("with local_infile OFF: %v, want 3948", err)
	}
	if _, err := db.Exec("SET GLOBAL local_infile = 1"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("SET GLOBAL local_infile = 0")
	if _, err := db.Exec(load); err != nil {
		t.Fatalf("with local_infile ON: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE v IN ('a', 'b')").Scan(&n); err != nil || n != 2 {
		t.Fatalf("loaded rows: %d, %v; want 2", n, err)
	}
}
