package bench_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/bench"
	"github.com/reorgdb/reorgdb/bench/loader"
	"github.com/reorgdb/reorgdb/server/servertest"
)

func shortConfig(t *testing.T, plans ...string) bench.Config {
	return bench.Config{Rows: 2000, WideRows: 500, Tables: 1, Threads: 2, LoadThreads: 2, Plans: plans,
		Warmup: 300 * time.Millisecond, Baseline: time.Second, Seed: 1, OutDir: t.TempDir()}
}

// indexPlans are the plans that build indexes.
var indexPlans = []string{"plan1", "plan2", "plan3", "idle", "wide", "slim"}

// changePlans are the plans of other schema changes.
var changePlans = []string{"addcol", "dropcol", "dropidx", "widenk", "cvarchar", "padnarrow", "padfail", "fk"}

// TestEveryPlanEmbedded runs each index plan briefly on the default
// embedded ReorgDB: every build passes ADMIN CHECK INDEX and the row count check,
// the workload plans measured a baseline and the build, and the results
// directory has the tables, data and charts.
func TestEveryPlanEmbedded(t *testing.T) {
	cfg := shortConfig(t, indexPlans...)
	var out, status bytes.Buffer
	cfg.Out, cfg.Status = &out, &status
	cfg.Sets = []bench.Sweep{{Name: "tidb_ddl_enable_fast_reorg", Values: []string{"ON", "OFF"}}}
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, status.String())
	}
	// 4 sbtest plans with one index, wide and slim with three; two settings.
	if len(rep.Results) != 2*(4+3+3) {
		t.Fatalf("%d results", len(rep.Results))
	}
	md := out.String()
	t.Log(md)
	for _, res := range rep.Results {
		if res.Check != "ok" || res.DurationS <= 0 {
			t.Fatalf("%s %s %s: check %q, %.3f s", res.Plan, res.Setting, res.Index, res.Check, res.DurationS)
		}
		if res.Workload == "" {
			continue
		}
		if res.Baseline.Tx == 0 || res.Baseline.TPS <= 0 || res.Baseline.P95 <= 0 || res.Baseline.Seconds < 0.9 {
			t.Fatalf("%s: baseline %+v", res.Plan, res.Baseline)
		}
		if res.DDLEnd <= res.DDLStart || res.DDLStart < 1.2 || len(res.Samples) < 2 {
			t.Fatalf("%s: DDL window %.2f..%.2f, %d samples", res.Plan, res.DDLStart, res.DDLEnd, len(res.Samples))
		}
		// The plan's statement mix: 20 queries per read-write transaction,
		// 16 per read-only one (errors add a few partial ones).
		perTx := map[string]float64{"oltp_read_write": 20, "oltp_read_only": 16}[res.Workload]
		if q := float64(res.Baseline.Queries) / float64(res.Baseline.Tx); q < perTx || q > perTx+1 {
			t.Fatalf("%s: %.2f queries per transaction", res.Plan, q)
		}
	}
	for _, p := range indexPlans {
		if !strings.Contains(md, "### "+p+":") {
			t.Fatalf("no table for %s", p)
		}
	}
	if n := strings.Count(md, "| ok |"); n != len(rep.Results) {
		t.Fatalf("%d table rows passed the check, want %d", n, len(rep.Results))
	}
	if !strings.Contains(md, "| tidb_ddl_enable_fast_reorg | index | add_index_duration(s) |") ||
		!strings.Contains(md, "| tidb_ddl_enable_fast_reorg | add_index_duration(s) | TPS | QPS | p95 ms | p99 ms |") {
		t.Fatalf("table headers:\n%s", md)
	}
	for _, f := range []string{"results.md", "results.json", "summary.csv", "samples.csv", "plan1-duration.svg",
		"plan1-tps-vs-baseline.svg", "plan1-01-tps.svg", "plan2-02-tps.svg", "wide-duration.svg", "slim-duration.svg"} {
		data, err := os.ReadFile(filepath.Join(cfg.OutDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".svg") && !bytes.Contains(data, []byte("</svg>")) {
			t.Fatalf("%s is not an SVG", f)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(cfg.OutDir, "summary.csv"))
	if n := bytes.Count(summary, []byte("\n")); n != len(rep.Results)+1 {
		t.Fatalf("summary.csv has %d lines", n)
	}
	if !strings.Contains(status.String(), "plan3 pad_idx tidb_ddl_enable_fast_reorg=OFF") {
		t.Fatalf("status:\n%s", status.String())
	}
}

// TestChangePlans runs each column and foreign key plan once under
// oltp_read_write on ReorgDB: each change is checked, padfail fails with
// 1265 and leaves the table as it was, the tables and charts name the
// change, and afterwards sbtest1 is back to sysbench's table.
func TestChangePlans(t *testing.T) {
	if !slices.Equal(bench.PlanNames(), append(slices.Clone(indexPlans), changePlans...)) {
		t.Fatalf("plans %v", bench.PlanNames())
	}
	s := servertest.Start(t)
	dsn := "root:@tcp(" + s.Addr() + ")/"
	db := waitServer(t, dsn)
	cfg := shortConfig(t, changePlans...)
	cfg.DSN = dsn
	var out, status bytes.Buffer
	cfg.Out, cfg.Status = &out, &status
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, status.String())
	}
	md := out.String()
	t.Log(md)
	if len(rep.Results) != len(changePlans) {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, res := range rep.Results {
		want := "ok"
		if res.Plan == "padfail" {
			want = "error 1265 as expected, table unchanged"
		}
		if res.Check != want || res.Kind != "alter" || res.DurationS <= 0 || res.During.Tx == 0 || res.Baseline.TPS <= 0 {
			t.Fatalf("%s: check %q, kind %q, %.3f s, during %+v", res.Plan, res.Check, res.Kind, res.DurationS, res.During)
		}
		// The workload's writes of values the new type cannot hold fail
		// the job, not the writes.
		if res.Plan == "padfail" && len(res.ServerErrors) > 0 {
			t.Errorf("padfail: the workload got %+v", res.ServerErrors)
		}
	}
	if !strings.Contains(md, "| setting | ddl_duration(s) | TPS | QPS |") || !strings.Contains(md, "| error 1265 as expected, table unchanged |") {
		t.Fatalf("tables:\n%s", md)
	}
	chart, err := os.ReadFile(filepath.Join(cfg.OutDir, "widenk-01-tps.svg"))
	if err != nil || !bytes.Contains(chart, []byte("MODIFY k BIGINT")) {
		t.Fatalf("widenk chart: %v", err)
	}
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE sbtest.sbtest1").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"`x`", "dropme", "dropix", "bigint", "varchar", "CONSTRAINT"} {
		if strings.Contains(create, gone) {
			t.Fatalf("sbtest1 after the plans:\n%s", create)
		}
	}
	var parent int64
	if err := db.QueryRow("SELECT COUNT(*) FROM sbtest.sbparent").Scan(&parent); err != nil || parent != 2000+1000+1000 {
		t.Fatalf("sbparent: %d rows, %v", parent, err)
	}
}

// TestDSNOnExternalServer runs plan 1 with a sweep against a ReorgDB
// server process: unsupported variables are left out, the swept ones are
// restored afterwards, the index is dropped, and a second run keeps the
// loaded table.
func TestDSNOnExternalServer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "reorgdb")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reorgdb/reorgdb/cmd/reorgdb").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port, status := freePort(t), freePort(t)
	srv := exec.Command(bin, "serve", "--data-dir", filepath.Join(dir, "data"), "--port", fmt.Sprint(port),
		"--status-port", fmt.Sprint(status), "--no-sync", "--log-level", "warn")
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	dsn := fmt.Sprintf("root:@tcp(127.0.0.1:%d)/", port)
	db := waitServer(t, dsn)

	cfg := shortConfig(t, "plan1")
	cfg.DSN, cfg.Database = dsn, "bench"
	cfg.Sets = []bench.Sweep{{Name: "tidb_ddl_reorg_worker_cnt", Values: []string{"1", "3"}},
		{Name: "tidb_ddl_reorg_priority", Values: []string{"PRIORITY_HIGH"}}}
	var log bytes.Buffer
	cfg.Status = &log
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.HasPrefix(rep.Target, "ReorgDB at 127.0.0.1:") || !slices.Equal(rep.Unsupported, []string{"tidb_ddl_reorg_priority"}) ||
		!slices.Equal(rep.Swept, []string{"tidb_ddl_reorg_worker_cnt"}) {
		t.Fatalf("target %q, unsupported %v, swept %v", rep.Target, rep.Unsupported, rep.Swept)
	}
	if len(rep.Results) != 2 || rep.Results[1].Setting.Get("tidb_ddl_reorg_worker_cnt") != "3" || rep.Results[1].Check != "ok" {
		t.Fatalf("results %+v", rep.Results)
	}
	var workers string
	if err := db.QueryRow("SELECT @@GLOBAL.tidb_ddl_reorg_worker_cnt").Scan(&workers); err != nil || workers != "4" {
		t.Fatalf("worker count after the run: %q %v", workers, err)
	}
	idx, err := loader.IndexNames(context.Background(), db, "bench.sbtest1")
	if err != nil || !slices.Equal(idx, []string{"PRIMARY", "k_1"}) {
		t.Fatalf("indexes after the run: %v %v", idx, err)
	}

	// Again, with the index left behind as by an interrupted run.
	if _, err := db.Exec("ALTER TABLE bench.sbtest1 ADD INDEX c_idx (c)"); err != nil {
		t.Fatal(err)
	}
	cfg.Sets, cfg.OutDir = nil, ""
	log.Reset()
	if _, err := bench.Run(context.Background(), cfg); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "sbtest1: already holds 2000 rows, kept") {
		t.Fatalf("second run reloaded:\n%s", log.String())
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		mutate func(*bench.Config)
		want   string
	}{
		{func(c *bench.Config) { c.Rows = 0 }, "--rows"},
		{func(c *bench.Config) { c.Plans = []string{"plan9"} }, `unknown plan "plan9"`},
		{func(c *bench.Config) { c.Plans = nil }, "no plans"},
		{func(c *bench.Config) { c.Threads = 0 }, "--threads"},
		{func(c *bench.Config) { c.RandType = "zipf" }, "--rand-type"},
		{func(c *bench.Config) { c.Database = "x; DROP" }, "--db"},
		{func(c *bench.Config) { c.DSN = "nonsense" }, "--dsn"},
		{func(c *bench.Config) {
			c.Sets = []bench.Sweep{{Name: "a", Values: []string{"1"}}, {Name: "a", Values: []string{"2"}}}
		}, "given twice"},
	} {
		cfg := shortConfig(t, "idle")
		c.mutate(&cfg)
		if _, err := bench.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error about %s, got %v", c.want, err)
		}
	}
	for _, s := range []string{"novalue", "=1", "a=", "a=1,,2", "a b=1", "a=1'"} {
		if _, err := bench.ParseSweep(s); err == nil {
			t.Errorf("--set %q accepted", s)
		}
	}
	sw, err := bench.ParseSweep("TiDB_DDL_Reorg_Batch_Size=32, 256")
	if err != nil || sw.Name != "tidb_ddl_reorg_batch_size" || !slices.Equal(sw.Values, []string{"32", "256"}) {
		t.Fatalf("%+v %v", sw, err)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitServer(t *testing.T, dsn string) *sql.DB {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for i := 0; ; i++ {
		if err = db.Ping(); err == nil {
			return db
		}
		if i == 100 {
			t.Fatalf("server did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
