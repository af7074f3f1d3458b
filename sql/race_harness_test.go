package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestRaceHarness races online index builds against writers that swap
// unique values, delete and re-insert rows and set NULLs, with sysbench
// oltp_read_write on another table of the same server, and acts on the
// build: nothing, a SIGKILL of the server at a random point of the job
// (every schema state, transactional batch and ingest phase), a pause and
// resume, or a cancel. Each trial then checks, over SQL, every index
// against its table (ADMIN CHECK TABLE), every acknowledged write, and
// that no writer failed because of the build.
//
// REORGDB_RACE_TRIALS sets the number of trials (default 3, what CI runs;
// scripts/race-harness.sh runs 200) and REORGDB_RACE_SEED the first seed.
func TestRaceHarness(t *testing.T) {
	n, first := 3, int64(1)
	if v, err := strconv.Atoi(os.Getenv("REORGDB_RACE_TRIALS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.ParseInt(os.Getenv("REORGDB_RACE_SEED"), 10, 64); err == nil {
		first = v
	}
	for i := 0; i < n; i++ {
		seed := first + int64(i)
		tr := newRaceTrial(seed)
		t.Run(fmt.Sprintf("%d-%s", seed, tr), func(t *testing.T) { tr.run(t) })
	}
}

// raceTrial is one randomized trial, fully determined by its seed (the
// timing of the threads aside).
type raceTrial struct {
	seed    int64
	rnd     *rand.Rand
	mode    string   // txn or ingest
	clauses []string // the ALTER's ADD INDEX clauses
	names   []string // their index names
	action  string   // none, kill, pause or cancel
	point   string   // where a kill happens
}

var raceIndexes = []struct{ name, clause string }{
	{"a_idx", "ADD INDEX a_idx (a)"},
	{"c_u", "ADD UNIQUE INDEX c_u (c)"},
	{"ac_idx", "ADD INDEX ac_idx (a, c)"},
	{"ca_u", "ADD UNIQUE INDEX ca_u (c, a)"},
}

var racePoints = map[string][]string{
	"txn":    {"delete-only", "write-only", "write-reorganization", "backfill", "public"},
	"ingest": {"delete-only", "write-only", "write-reorganization", "scan", "sort", "spill", "ingest", "ingested", "merge", "public"},
}

func newRaceTrial(seed int64) *raceTrial {
	tr := &raceTrial{seed: seed, rnd: rand.New(rand.NewSource(seed))}
	tr.mode = []string{"txn", "ingest"}[tr.rnd.Intn(2)]
	for _, i := range tr.rnd.Perm(len(raceIndexes))[:1+tr.rnd.Intn(3)] {
		tr.clauses = append(tr.clauses, raceIndexes[i].clause)
		tr.names = append(tr.names, raceIndexes[i].name)
	}
	tr.action = []string{"none", "kill", "kill", "kill", "pause", "cancel"}[tr.rnd.Intn(6)]
	if tr.action == "kill" {
		pts := racePoints[tr.mode]
		tr.point = pts[tr.rnd.Intn(len(pts))]
	}
	return tr
}

func (tr *raceTrial) String() string {
	s := tr.mode + "-" + strings.Join(tr.names, "+") + "-" + tr.action
	if tr.point != "" {
		s += "@" + tr.point
	}
	return s
}

func (tr *raceTrial) run(t *testing.T) {
	dir := t.TempDir()
	child, dsn := startChild(t, dir, "nullable")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	setMode(t, db, tr.mode)
	stopSysbench := startSysbench(t, db, dsn)
	defer stopSysbench()

	ws := newRowWriters(db, 4, tr.seed)
	ws.start(t)
	alter := "ALTER TABLE t " + strings.Join(tr.clauses, ", ")
	if tr.point != "" {
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = '"+tr.point+"'")
	}
	done := make(chan error, 1)
	go func() { _, err := db.Exec(alter); done <- err }()
	time.Sleep(time.Duration(tr.rnd.Intn(500)) * time.Millisecond)

	want := "synced"
	switch tr.action {
	case "none":
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", alter, err)
		}
	case "pause":
		j := waitJob(t, db, func(x jobRow) bool { return x.table == "t" }, "exists")
		if _, err := db.Exec(fmt.Sprintf("ADMIN PAUSE DDL JOBS %d", j.id)); err == nil {
			time.Sleep(time.Duration(100+tr.rnd.Intn(500)) * time.Millisecond)
			mustExec(t, db, fmt.Sprintf("ADMIN RESUME DDL JOBS %d", j.id))
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", alter, err)
		}
	case "cancel":
		j := waitJob(t, db, func(x jobRow) bool { return x.table == "t" }, "exists")
		_, cerr := db.Exec(fmt.Sprintf("ADMIN CANCEL DDL JOBS %d", j.id))
		err := <-done
		if cerr == nil && err != nil {
			expectErr(t, err, 8214, "Cancelled DDL job")
			want = "cancelled"
		} else if err != nil {
			t.Fatalf("%s: %v", alter, err)
		}
	case "kill":
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			j := waitJob(t, db, func(x jobRow) bool { return x.table == "t" }, "exists")
			if strings.Contains(j.comment, "stalled="+tr.point) || j.state == "synced" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mustExec(t, db, "SET GLOBAL reorgdb_ddl_test_stall_phase = ''")
		time.Sleep(time.Duration(tr.rnd.Intn(200)) * time.Millisecond)
		if err := child.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		child.Wait()
	}
	ws.stop()
	stopSysbench()

	db2 := db
	if tr.action == "kill" {
		s := servertest.StartDir(t, dir)
		db2 = s.DB("app")
	}
	j := waitJob(t, db2, func(x jobRow) bool {
		return x.table == "t" && (x.state == "synced" || x.state == "cancelled" || x.state == "rollback done")
	}, "finished")
	if j.state != want {
		t.Fatalf("job ended %q (%s), want %s", j.state, j.errText, want)
	}
	if want == "synced" {
		expectIndexes(t, db2, "t", append([]string{"PRIMARY"}, tr.names...)...)
	} else {
		expectIndexes(t, db2, "t", "PRIMARY")
	}
	for _, table := range []string{"t", "sbtest.sbtest1"} {
		if _, err := db2.Exec("ADMIN CHECK TABLE " + table); err != nil {
			t.Fatalf("ADMIN CHECK TABLE %s: %v", table, err)
		}
	}
	ws.verify(t, db2)
	t.Logf("seed %d: %s, %d acknowledged writes", tr.seed, tr, ws.acked())
}

// startSysbench prepares sbtest.sbtest1 and runs oltp_read_write against
// the server until the returned function is called (or the server dies).
// Without sysbench it creates the table only, outside CI.
func startSysbench(t *testing.T, db *sql.DB, dsn string) (stop func()) {
	mustExec(t, db, "CREATE DATABASE IF NOT EXISTS sbtest")
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sysbench is not installed; .ci/run installs it")
		}
		mustExec(t, db, "CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY)")
		return func() {}
	}
	addr := dsn[strings.Index(dsn, "(")+1 : strings.Index(dsn, ")")]
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=root", "--mysql-db=sbtest", "--tables=1", "--table-size=5000"}
	if out, err := exec.Command(bin, append(args, "prepare")...).CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append(args, "--threads=2", "--time=600", "--report-interval=0", "run")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once bool
	return func() {
		if !once {
			once = true
			cancel()
			cmd.Wait()
		}
	}
}
