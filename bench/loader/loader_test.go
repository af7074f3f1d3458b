package loader_test

import (
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/bench/loader"
	"github.com/reorgdb/reorgdb/bench/sysrand"
	"github.com/reorgdb/reorgdb/server/servertest"
)

const rows = 300

// TestSysbenchTableMatchesPrepare loads sbtest1 with the loader and with
// real `sysbench prepare` on the same server, and compares the schemas,
// the indexes and the values' formats and ranges.
func TestSysbenchTableMatchesPrepare(t *testing.T) {
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sysbench is not installed; .ci/run installs it")
		}
		t.Skip("sysbench is not installed (apt-get install sysbench)")
	}
	s := servertest.Start(t)
	ref, ours := s.DB("sb_ref"), s.DB("sb_ours")
	host, port, _ := net.SplitHostPort(s.Addr())
	out, err := exec.Command(bin, "oltp_read_write", "--db-driver=mysql", "--mysql-host="+host, "--mysql-port="+port,
		"--mysql-user=root", "--mysql-db=sb_ref", "--tables=1", "--table-size=300", "--rand-type=uniform", "prepare").CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	ld := &loader.Loader{DB: ours, Threads: 3, Seed: 1, Dist: sysrand.Uniform}
	ctx := context.Background()
	if loaded, err := ld.Load(ctx, loader.Sysbench(1), rows); err != nil || !loaded {
		t.Fatalf("load: %v %v", loaded, err)
	}

	if a, b := showCreate(t, ref), showCreate(t, ours); a != b || !strings.Contains(a, "CHAR(120)") && !strings.Contains(a, "char(120)") {
		t.Fatalf("SHOW CREATE TABLE differs:\nsysbench: %s\nloader:   %s", a, b)
	}
	if a, b := columns(t, s, "sb_ref"), columns(t, s, "sb_ours"); a != b {
		t.Fatalf("columns differ:\nsysbench: %s\nloader:   %s", a, b)
	}
	for _, db := range []*sql.DB{ref, ours} {
		idx, err := loader.IndexNames(ctx, db, "sbtest1")
		if err != nil || strings.Join(idx, ",") != "PRIMARY,k_1" {
			t.Fatalf("indexes %v %v", idx, err)
		}
		checkValues(t, db)
	}

	// Loaded already: kept. One row short: loaded again.
	if loaded, err := ld.Load(ctx, loader.Sysbench(1), rows); err != nil || loaded {
		t.Fatalf("second load: %v %v", loaded, err)
	}
	if _, err := ours.Exec("DELETE FROM sbtest1 WHERE id = 7"); err != nil {
		t.Fatal(err)
	}
	if loaded, err := ld.Load(ctx, loader.Sysbench(1), rows); err != nil || !loaded {
		t.Fatalf("reload: %v %v", loaded, err)
	}
	checkValues(t, ours)
	if _, err := ld.Load(ctx, loader.Sysbench(1), 0); err == nil {
		t.Fatal("zero rows accepted")
	}
}

func showCreate(t *testing.T, db *sql.DB) string {
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE sbtest1").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	// The AUTO_INCREMENT counter follows how ids were given.
	return regexp.MustCompile(` AUTO_INCREMENT=\d+`).ReplaceAllString(create, "")
}

func columns(t *testing.T, s *servertest.Server, db string) string {
	rows, err := s.DB("").Query(`SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COALESCE(COLUMN_DEFAULT, 'NULL'), EXTRA, COLUMN_KEY
		FROM information_schema.columns WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'sbtest1' ORDER BY ORDINAL_POSITION`, db)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var f [6]string
		if err := rows.Scan(&f[0], &f[1], &f[2], &f[3], &f[4], &f[5]); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Join(f[:], " ") + "; ")
	}
	return b.String()
}

var (
	cValue   = regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padValue = regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
)

func checkValues(t *testing.T, db *sql.DB) {
	t.Helper()
	rs, err := db.Query("SELECT id, k, c, pad FROM sbtest1 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	want, distinctK := int64(1), map[int64]bool{}
	for rs.Next() {
		var id, k int64
		var c, pad string
		if err := rs.Scan(&id, &k, &c, &pad); err != nil {
			t.Fatal(err)
		}
		if id != want || k < 1 || k > rows || !cValue.MatchString(c) || !padValue.MatchString(pad) {
			t.Fatalf("row %d: id %d k %d c %q pad %q", want, id, k, c, pad)
		}
		distinctK[k] = true
		want++
	}
	if want != rows+1 {
		t.Fatalf("%d rows", want-1)
	}
	// Uniform k over 1..300 drawn 300 times: about 190 distinct values.
	if len(distinctK) < 150 {
		t.Fatalf("only %d distinct k", len(distinctK))
	}
}

// The wide and slim tables have seed 001's column types, and c0 is unique.
func TestWideAndSlimTables(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("sb")
	ld := &loader.Loader{DB: db, Threads: 2, Seed: 1}
	for _, c := range []struct {
		table                 loader.Table
		ints, varchars, times int
		ts                    string
	}{{loader.Wide(), 66, 67, 67, "c133"}, {loader.Slim(), 3, 3, 4, "c6"}} {
		if _, err := ld.Load(context.Background(), c.table, 120); err != nil {
			t.Fatal(err)
		}
		if ts := loader.FirstTimestamp(c.table); ts != c.ts {
			t.Fatalf("%s: first timestamp %s", c.table.Name, ts)
		}
		rows, err := s.DB("").Query(`SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.columns
			WHERE TABLE_SCHEMA = 'sb' AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, c.table.Name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			got = append(got, name+" "+typ)
		}
		rows.Close()
		want := []string{"id int"}
		for i := 0; i < c.ints+c.varchars+c.times; i++ {
			typ := "int"
			if i >= c.ints+c.varchars {
				typ = "timestamp"
			} else if i >= c.ints {
				typ = "varchar"
			}
			want = append(want, "c"+strconv.Itoa(i)+" "+typ)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s columns:\n%v\nwant\n%v", c.table.Name, got, want)
		}
		var n, distinct int
		if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT c0) FROM "+c.table.Name).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n != 120 || distinct != 120 {
			t.Fatalf("%s: %d rows, %d distinct c0", c.table.Name, n, distinct)
		}
	}
}
