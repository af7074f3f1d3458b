package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestIndexBuildTempDirFull: an ingest ADD INDEX whose sort files do not
// fit the temp dir (a 1 MiB tmpfs) fails with MySQL's 1878, rolls back
// with the reason in ADMIN SHOW DDL JOBS, leaves the temp dir empty and
// the table as it was; the same index then builds in transactional mode,
// which needs no temp space.
func TestIndexBuildTempDirFull(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	tmp := mountTmpfs(t, 1<<20)
	srv := startServe(t, "serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--temp-dir", tmp,
		"--port", "0", "--status-port", "-1", "--no-sync")
	if srv.addr == "" {
		t.Fatalf("server exited at start: %v\n%s", srv.err, srv.stderr.String())
	}
	db := srv.db(t)
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE DATABASE app", "USE app", "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(100))",
		"SET GLOBAL innodb_ddl_buffer_size = 65536"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for b := 0; b < 30; b++ {
		var sb strings.Builder
		for i := 0; i < 1000; i++ {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, "(%d, '%s%d')", b*1000+i, strings.Repeat("x", 60), b*1000+i)
		}
		if _, err := db.Exec("INSERT INTO t VALUES " + sb.String()); err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.Exec("ALTER TABLE t ADD INDEX c_idx (c)")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1878 || !strings.Contains(me.Message, "Temporary file write failure") {
		t.Fatalf("ADD INDEX with a full temp dir: got %v, want error 1878", err)
	}
	var state, msg string
	if err := db.QueryRow("SELECT state, error FROM information_schema.ddl_jobs ORDER BY job_id DESC LIMIT 1").Scan(&state, &msg); err != nil {
		t.Fatal(err)
	}
	if state != "rollback done" || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("job: %s, %q", state, msg)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("temp files left: %v", ents)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET GLOBAL tidb_ddl_enable_fast_reorg = OFF", "ALTER TABLE t ADD INDEX c_idx (c)", "ADMIN CHECK TABLE t"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
