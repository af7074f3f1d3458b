package server_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func sysbenchPath(t *testing.T) string {
	p, err := exec.LookPath("sysbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sysbench is not installed; .ci/run installs it")
		}
		t.Skip("sysbench is not installed (apt-get install sysbench)")
	}
	return p
}

// TestSysbenchOLTPReadWrite drives the server with real sysbench: prepare,
// then oltp_read_write at 4 threads, then checks the data.
func TestSysbenchOLTPReadWrite(t *testing.T) {
	bin := sysbenchPath(t)
	s := servertest.Start(t)
	db := s.DB("sbtest")
	host, port, _ := net.SplitHostPort(s.Addr())
	args := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=root", "--mysql-db=sbtest", "--tables=1", "--table-size=10000"}
	run := func(extra ...string) string {
		cmd := exec.Command(bin, append(append([]string(nil), args...), extra...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench %v: %v\n%s", extra, err, out)
		}
		return string(out)
	}
	run("prepare")
	out := run("--threads=4", "--time=10", "--report-interval=0", "run")
	t.Log(out)
	if m := regexp.MustCompile(`FATAL|ALERT`).FindString(out); m != "" {
		t.Fatalf("sysbench reported %s", m)
	}
	tx := regexp.MustCompile(`transactions:\s+(\d+)`).FindStringSubmatch(out)
	if tx == nil {
		t.Fatalf("no transaction count in sysbench output")
	}
	n, _ := strconv.Atoi(tx[1])
	if n < 100 {
		t.Fatalf("only %d transactions in 10 s", n)
	}
	// Every statement of a transaction is prepared and of a shape the
	// fast path serves: BEGIN, 10 point selects, 4 range selects, 2
	// UPDATEs, DELETE, INSERT, COMMIT. (A transaction retried after a
	// deadlock stopped where it was chosen as the victim.)
	if hits, want := s.FastPathHits(), int64(n)*20; hits < want {
		t.Fatalf("the fast path served %d executions of %d transactions, want at least %d", hits, n, want)
	}
	var count int
	if err := db.QueryRow("SELECT count(*) FROM sbtest1").Scan(&count); err != nil {
		t.Fatal(err)
	}
	// oltp_read_write deletes and re-inserts the same ids, so the row
	// count is invariant.
	if count != 10000 {
		t.Fatalf("row count %d after the run, want 10000", count)
	}
	if err := s.Engine().CheckTable("sbtest", "sbtest1"); err != nil {
		t.Fatal(err)
	}
	// The only statements that failed are those of deadlock victims and
	// COMMITs losing a write-write conflict (1213, which sysbench
	// retries): each failed statement is one such transaction.
	resp, err := http.Get("http://" + s.StatusAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	failed := regexp.MustCompile(`reorgdb_sql_statements_total\{result="error",type="([a-z]+)"\} (\d+)`).FindAllStringSubmatch(string(body), -1)
	conflicts := regexp.MustCompile(`reorgdb_sql_transactions_conflicted_total (\d+)`).FindStringSubmatch(string(body))
	if conflicts == nil {
		t.Fatal("no conflict metric")
	}
	total := 0
	for _, f := range failed {
		// Every type's counters exist from the start, at 0.
		n, _ := strconv.Atoi(f[2])
		if f[1] == "select" && n > 0 {
			t.Fatalf("%d select statements failed during sysbench", n)
		}
		total += n
	}
	if want, _ := strconv.Atoi(conflicts[1]); total != want {
		t.Fatalf("%d statements failed (%v) but %d transactions were deadlock victims or lost a commit conflict", total, failed, want)
	}
	t.Logf("conflicts: %s", conflicts[1])
}
