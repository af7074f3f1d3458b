package server_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestSetPersist: SET PERSIST sets a variable and keeps it across a
// restart (winning over the flag), SET PERSIST_ONLY keeps it for the next
// start only, SET GLOBAL is not kept, RESET PERSIST forgets, all in
// MySQL's mysqld-auto.cnf; bad values, unknown variables and accounts
// without SUPER are refused with MySQL's errors.
func TestSetPersist(t *testing.T) {
	dir := t.TempDir()
	// The variables are the process's, shared by later tests' servers.
	t.Cleanup(func() {
		gms.SystemVariables.AssignValues(map[string]any{"max_connections": 151, "tidb_ddl_reorg_batch_size": 256,
			"tidb_ddl_enable_fast_reorg": 1, "connect_timeout": 10})
		// A variable added again gets its default back.
		if sv, _, ok := gms.SystemVariables.GetGlobal("back_log"); ok {
			gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{sv})
		}
	})
	s := servertest.StartDir(t, dir)
	db := s.DB("")
	db.SetMaxOpenConns(1)
	defaults := []string{"max_connections = 151", "tidb_ddl_reorg_batch_size = 256", "tidb_ddl_enable_fast_reorg = ON", "connect_timeout = 10"}
	mustExec := func(db *sql.DB, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	globals := func(db *sql.DB) (maxConn, batch, fast, connTimeout int) {
		t.Helper()
		if err := db.QueryRow("SELECT @@global.max_connections, @@global.tidb_ddl_reorg_batch_size, @@global.tidb_ddl_enable_fast_reorg, @@global.connect_timeout").Scan(&maxConn, &batch, &fast, &connTimeout); err != nil {
			t.Fatal(err)
		}
		return
	}
	mustExec(db,
		"SET PERSIST max_connections = 100",
		"SET PERSIST_ONLY tidb_ddl_reorg_batch_size = 512",
		"SET @@persist.tidb_ddl_enable_fast_reorg = OFF",
		"SET GLOBAL connect_timeout = 20",
		"SET PERSIST_ONLY back_log = 100")
	if m, b, f, c := globals(db); m != 100 || b != 256 || f != 0 || c != 20 {
		t.Fatalf("after SET PERSIST: max_connections %d, batch %d, fast_reorg %d, connect_timeout %d; want 100, 256, 0, 20", m, b, f, c)
	}
	var backLog int
	if err := db.QueryRow("SELECT @@global.back_log").Scan(&backLog); err != nil || backLog == 100 {
		t.Errorf("SET PERSIST_ONLY back_log changed it at once: %d, %v", backLog, err)
	}
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"SET PERSIST tidb_ddl_enable_fast_reorg = 'maybe'", 1231, "Variable 'tidb_ddl_enable_fast_reorg' can't be set to the value of 'maybe'"},
		{"SET PERSIST no_such_variable = 1", 1193, "Unknown system variable 'no_such_variable'"},
		{"SET PERSIST version = 'x'", 1238, "Variable 'version' is a read only variable"},
		{"SET PERSIST back_log = 100", 1238, "Variable 'back_log' is a read only variable"},
		{"SET PERSIST time_zone = 'bogus'", 1298, "Unknown or incorrect time zone: 'bogus'"},
		{"RESET PERSIST no_such_variable", 3615, "Variable no_such_variable does not exist in persisted config file"},
	} {
		if _, err := db.Exec(c.q); !isMySQLError(err, c.code, c.msg) {
			t.Errorf("%s: %v, want %d %q", c.q, err, c.code, c.msg)
		}
	}
	if _, err := db.Exec("RESET PERSIST IF EXISTS no_such_variable"); err != nil {
		t.Errorf("RESET PERSIST IF EXISTS: %v", err)
	}
	var level, msg string
	var code int
	if err := db.QueryRow("SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 3615 {
		t.Errorf("warning of RESET PERSIST IF EXISTS: %d %q, %v", code, msg, err)
	}
	mustExec(db, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'", "GRANT ALL ON *.* TO 'app'@'%'", "REVOKE SUPER ON *.* FROM 'app'@'%'")
	app, _ := sql.Open("mysql", "app:pw@tcp("+s.Addr()+")/")
	defer app.Close()
	const denied = "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"
	for _, q := range []string{"SET PERSIST max_connections = 10", "RESET PERSIST"} {
		if _, err := app.Exec(q); !isMySQLError(err, 1227, denied) {
			t.Errorf("app: %s: %v, want 1227", q, err)
		}
	}

	var file struct {
		Version int                        `json:"Version"`
		Server  map[string]json.RawMessage `json:"mysql_server"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "mysqld-auto.cnf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil || file.Version != 1 {
		t.Fatalf("mysqld-auto.cnf: %v, %s", err, data)
	}
	want := map[string]string{"max_connections": "100", "tidb_ddl_reorg_batch_size": "512", "tidb_ddl_enable_fast_reorg": "OFF"}
	// Variables only a restart changes are kept apart, as MySQL does.
	if len(file.Server) != len(want)+1 {
		t.Errorf("mysqld-auto.cnf holds %d entries, want %d: %s", len(file.Server), len(want)+1, data)
	}
	var static map[string]struct{ Value string }
	if err := json.Unmarshal(file.Server["mysql_server_static_options"], &static); err != nil || len(static) != 1 || static["back_log"].Value != "100" {
		t.Errorf("mysqld-auto.cnf static options: %v, %v", static, err)
	}
	for k, v := range want {
		var pv struct{ Value string }
		if err := json.Unmarshal(file.Server[k], &pv); err != nil || pv.Value != v {
			t.Errorf("mysqld-auto.cnf: %s = %q, want %q (%v)", k, pv.Value, v, err)
		}
	}

	// Restart with the process's globals back at their defaults (they
	// are shared by every server in the process) and a flag the file
	// overrides.
	mustExec(db, "SET GLOBAL "+defaults[0], "SET GLOBAL "+defaults[1], "SET GLOBAL "+defaults[2], "SET GLOBAL "+defaults[3])
	app.Close()
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartConfig(t, dir, func(c *server.Config) { c.MaxConnections = 50 })
	db2 := s2.DB("")
	db2.SetMaxOpenConns(1)
	if m, b, f, c := globals(db2); m != 100 || b != 512 || f != 0 || c != 10 {
		t.Fatalf("after restart: max_connections %d, batch %d, fast_reorg %d, connect_timeout %d; want 100, 512, 0, 10", m, b, f, c)
	}
	if err := db2.QueryRow("SELECT @@global.back_log").Scan(&backLog); err != nil || backLog != 100 {
		t.Errorf("after restart: back_log %d, %v; want 100 (SET PERSIST_ONLY)", backLog, err)
	}
	// RESET PERSIST forgets for the next start and keeps the values now.
	mustExec(db2, "RESET PERSIST max_connections")
	if m, _, _, _ := globals(db2); m != 100 {
		t.Errorf("RESET PERSIST changed max_connections to %d", m)
	}
	mustExec(db2, "RESET PERSIST")
	data, _ = os.ReadFile(filepath.Join(dir, "mysqld-auto.cnf"))
	file.Server = nil
	if err := json.Unmarshal(data, &file); err != nil || len(file.Server) != 0 {
		t.Errorf("after RESET PERSIST: %v, %s", err, data)
	}
	mustExec(db2, "SET GLOBAL "+defaults[0], "SET GLOBAL "+defaults[1], "SET GLOBAL "+defaults[2])
	db2.Close()
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	s3 := servertest.StartDir(t, dir)
	if m, b, f, _ := globals(s3.DB("")); m != 151 || b != 256 || f != 1 {
		t.Errorf("after RESET PERSIST and a restart: max_connections %d, batch %d, fast_reorg %d; want the defaults", m, b, f)
	}
}
