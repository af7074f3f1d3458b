package server_test

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server"
)

// TestFaultInjectionNeedsTestingFlag: the variables that crash tests use to
// stop a build at a phase exist only in a server started with Testing
// (reorgdb serve --testing). The server runs in a child process, because
// the system variables are process-wide.
func TestFaultInjectionNeedsTestingFlag(t *testing.T) {
	for _, testing_ := range []bool{false, true} {
		child := exec.Command(os.Args[0], "-test.run=^TestPlainServerChild$")
		child.Env = append(os.Environ(), "REORGDB_PLAIN_CHILD_DIR="+t.TempDir(), fmt.Sprintf("REORGDB_PLAIN_CHILD_TESTING=%v", testing_))
		stdout, _ := child.StdoutPipe()
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		dsn := ""
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "DSN "); ok {
				dsn = v
				break
			}
		}
		if dsn == "" {
			child.Process.Kill()
			t.Fatal("child did not start")
		}
		go io.Copy(io.Discard, stdout)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Exec("SET GLOBAL reorgdb_ddl_test_stall_phase = 'merge'")
		db.Close()
		child.Process.Kill()
		child.Wait()
		var me *mysql.MySQLError
		switch {
		case testing_ && err != nil:
			t.Fatalf("with Testing: %v", err)
		case !testing_ && (!errors.As(err, &me) || me.Number != 1193):
			t.Fatalf("without Testing: got %v, want error 1193 (unknown system variable)", err)
		}
	}
}

// TestPlainServerChild is the child of TestFaultInjectionNeedsTestingFlag.
func TestPlainServerChild(t *testing.T) {
	dir := os.Getenv("REORGDB_PLAIN_CHILD_DIR")
	if dir == "" {
		return
	}
	s, err := server.Start(server.Config{DataDir: dir, StatusPort: -1, NoSync: true,
		Testing: os.Getenv("REORGDB_PLAIN_CHILD_TESTING") == "true",
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("DSN root:@tcp(%s)/\n", s.Addr())
	select {}
}
