package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestOptimizeTable: OPTIMIZE TABLE answers with MySQL's result set and
// compacts the table's data out of memory onto disk, leaving rows and
// indexes as they were; a missing table gets MySQL's two rows, an
// unqualified name without a database 1046, and read_only 1290.
func TestOptimizeTable(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	resetGlobals(t, s, "read_only = OFF")
	if _, err := db.Exec("CREATE TABLE t (id int primary key, v varchar(20), key v_idx (v))"); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for i := 0; i < 2000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'v%05d')", i, i))
	}
	if _, err := db.Exec("INSERT INTO t VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	dataLength := func() (data, index uint64) {
		t.Helper()
		if err := db.QueryRow("SELECT data_length, index_length FROM information_schema.tables WHERE table_schema = 'd' AND table_name = 't'").Scan(&data, &index); err != nil {
			t.Fatal(err)
		}
		return
	}
	if d, i := dataLength(); d != 0 || i != 0 {
		t.Fatalf("before OPTIMIZE: data_length %d, index_length %d; want 0 (all in the memtable)", d, i)
	}
	result := func(db *sql.DB, q string) ([][4]string, error) {
		rows, err := db.Query(q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		if !reflect.DeepEqual(cols, []string{"Table", "Op", "Msg_type", "Msg_text"}) {
			t.Errorf("%s: columns %v", q, cols)
		}
		var out [][4]string
		for rows.Next() {
			var r [4]string
			if err := rows.Scan(&r[0], &r[1], &r[2], &r[3]); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	ok := [4]string{"d.t", "optimize", "status", "OK"}
	for q, want := range map[string][][4]string{
		"OPTIMIZE TABLE t":                      {ok},
		"optimize no_write_to_binlog table `t`": {ok},
		"OPTIMIZE LOCAL TABLE d.t, nosuch": {ok,
			{"d.nosuch", "optimize", "Error", "Table 'd.nosuch' doesn't exist"},
			{"d.nosuch", "optimize", "status", "Operation failed"}},
	} {
		got, err := result(db, q)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v %v, want %v", q, got, err, want)
		}
	}
	if d, i := dataLength(); d == 0 || i == 0 {
		t.Errorf("after OPTIMIZE: data_length %d, index_length %d; want the data on disk", d, i)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t WHERE v >= 'v01000'").Scan(&n); err != nil || n != 1000 {
		t.Errorf("after OPTIMIZE: %d rows through v_idx, %v; want 1000", n, err)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE t"); err != nil {
		t.Errorf("ADMIN CHECK TABLE after OPTIMIZE: %v", err)
	}

	nodb, _ := sql.Open("mysql", s.DSN(""))
	defer nodb.Close()
	if _, err := result(nodb, "OPTIMIZE TABLE t"); !isMySQLError(err, 1046, "No database selected") {
		t.Errorf("OPTIMIZE TABLE t without a database: %v, want 1046", err)
	}
	if _, err := result(nodb, "OPTIMIZE TABLE t,"); !isMySQLErrorCode(err, 1064) {
		t.Errorf("OPTIMIZE TABLE t, : %v, want 1064", err)
	}
	if got, err := result(nodb, "OPTIMIZE TABLE d.t"); err != nil || !reflect.DeepEqual(got, [][4]string{ok}) {
		t.Errorf("OPTIMIZE TABLE d.t without a database: %v %v", got, err)
	}

	if _, err := db.Exec("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("GRANT ALL ON d.* TO 'app'@'%'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL read_only = ON"); err != nil {
		t.Fatal(err)
	}
	app, _ := sql.Open("mysql", "app:pw@tcp("+s.Addr()+")/d")
	defer app.Close()
	if _, err := result(app, "OPTIMIZE TABLE t"); !isMySQLError(err, 1290, "The MySQL server is running with the --read-only option so it cannot execute this statement") {
		t.Errorf("OPTIMIZE TABLE under read_only: %v, want 1290", err)
	}
	if _, err := db.Exec("SET GLOBAL read_only = OFF"); err != nil {
		t.Fatal(err)
	}
}

// TestOptimizeTableCLI: the mariadb client (mariadb-check -o sends the
// same statement) prints OPTIMIZE TABLE's result set.
func TestOptimizeTableCLI(t *testing.T) {
	client := mariadbPath(t)
	s := servertest.Start(t)
	if _, err := s.DB("d").Exec("CREATE TABLE t (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	out, err := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "-N", "-e", "OPTIMIZE TABLE t", "d").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "d.t\toptimize\tstatus\tOK" {
		t.Errorf("mariadb -e 'OPTIMIZE TABLE t': %v %q", err, out)
	}
	check := filepath.Join(filepath.Dir(client), "mariadb-check")
	out, err = exec.Command(check, "-o", "-h"+host, "-P"+port, "-uroot", "d").CombinedOutput()
	if f := strings.Fields(string(out)); err != nil || !reflect.DeepEqual(f, []string{"d.t", "OK"}) {
		t.Errorf("mariadb-check -o d: %v %q", err, out)
	}
}

func isMySQLErrorCode(err error, code uint16) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == code
}

// TestAnalyzeEmptyTable: ANALYZE TABLE of an empty table answers status
// OK (go-mysql-server's statistics used to divide by zero there), and
// names the table db.table as MySQL does.
func TestAnalyzeEmptyTable(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (id int primary key, v int, key v_idx (v))"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ANALYZE TABLE t", "INSERT INTO t VALUES (1, 1), (2, 2)", "ANALYZE TABLE t"} {
		if !strings.HasPrefix(q, "ANALYZE") {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var table, op, typ, text string
		if err := db.QueryRow(q).Scan(&table, &op, &typ, &text); err != nil || table != "d.t" || op != "analyze" || typ != "status" || text != "OK" {
			t.Errorf("%s: %s %s %s %s, %v; want status OK", q, table, op, typ, text, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t WHERE v = 2").Scan(&n); err != nil || n != 1 {
		t.Errorf("after ANALYZE: %d, %v", n, err)
	}
}
