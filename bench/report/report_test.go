package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/bench/chart"
	"github.com/reorgdb/reorgdb/bench/workload"
)

func sweepReport() *Report {
	r := &Report{Target: "test", Rows: 100, Threads: 2, RandType: "uniform",
		Swept: []string{"tidb_ddl_reorg_batch_size", "tidb_ddl_reorg_worker_cnt"}}
	for _, batch := range []string{"32", "256"} {
		for i, workers := range []string{"1", "4"} {
			r.Results = append(r.Results, Result{Plan: "plan1", Title: "t", Workload: "oltp_read_write", Index: "c_idx",
				Setting:   Setting{{"tidb_ddl_reorg_batch_size", batch}, {"tidb_ddl_reorg_worker_cnt", workers}},
				DurationS: float64(10 - i), Check: "ok", KeptPct: 50,
				Baseline: workload.Summary{TPS: 100, QPS: 2000}, During: workload.Summary{TPS: 50, QPS: 1000, P95: 3.5},
				DDLStart: 2, DDLEnd: 3,
				Samples: []workload.Sample{{Phase: "baseline", Start: 0, Summary: workload.Summary{Seconds: 2, TPS: 100}},
					{Phase: "ddl", Start: 2, Summary: workload.Summary{Seconds: 1, TPS: 50}}}})
		}
	}
	return r
}

func TestMarkdownTable(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, sweepReport()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| tidb_ddl_reorg_batch_size | tidb_ddl_reorg_worker_cnt | add_index_duration(s) | TPS | QPS |",
		"| 256 | 4 | 9.00 | 50.0 | 1000 | 3.50 |",
		"| 100.0 | 2000 | 0.00 | 50% | ok |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("no %q in\n%s", want, md)
		}
	}
}

// The duration chart puts the worker count on x, one line per batch size.
func TestDurationChartAxes(t *testing.T) {
	r := sweepReport()
	lines, ok := durationChart(r.Swept, r.Results).(chart.Lines)
	if !ok || lines.XLabel != "tidb_ddl_reorg_worker_cnt" || len(lines.Series) != 2 ||
		lines.Series[1].Name != "tidb_ddl_reorg_batch_size=256 c_idx" || len(lines.Series[1].Points) != 2 ||
		lines.Series[1].Points[1] != (chart.Point{X: 4, Y: 9}) {
		t.Fatalf("%+v", lines)
	}
	// Nothing numeric swept: bars.
	if _, ok := durationChart(nil, []Result{{Plan: "idle", Index: "c_idx", DurationS: 1}}).(chart.Bars); !ok {
		t.Fatal("no bar chart without a numeric sweep")
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, sweepReport()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	// md, json, 2 csv, duration, tps-vs-baseline, 4 TPS-over-time charts.
	if len(entries) != 10 {
		t.Fatalf("%d files", len(entries))
	}
	samples, _ := os.ReadFile(filepath.Join(dir, "samples.csv"))
	if n := strings.Count(string(samples), "\n"); n != 1+4*2 {
		t.Fatalf("samples.csv has %d lines", n)
	}
}

// A plan of other schema changes says ddl_duration and ALTER TABLE where
// the index plans say ADD INDEX, and lists the server errors its workload
// went on after.
func TestAlterPlanTable(t *testing.T) {
	r := sweepReport()
	r.Swept = nil
	r.Results = r.Results[:2]
	for i := range r.Results {
		res := &r.Results[i]
		res.Plan, res.Kind, res.Setting = "padfail", "alter", nil
		res.Index = []string{"MODIFY pad CHAR(40)", "MODIFY pad CHAR(59)"}[i]
	}
	r.Results[0].Check = "error 1265 as expected, table unchanged"
	r.Results[0].ServerErrors = []workload.ErrorCount{{Number: 1406, Message: "Data too long for column 'pad' at row 1", Count: 3}}
	var b strings.Builder
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| setting | change | ddl_duration(s) | TPS |",
		"| defaults | MODIFY pad CHAR(40) | 10.00 | 50.0 |",
		"| error 1265 as expected, table unchanged |\n| defaults | MODIFY pad CHAR(59) |",
		"- defaults, MODIFY pad CHAR(40): 3 × error 1406: Data too long for column 'pad' at row 1\n",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "add_index") || strings.Contains(md, "1406 × error") {
		t.Fatalf("index wording in\n%s", md)
	}
	c := charts(r)
	bars, ok := c["padfail-tps-vs-baseline.svg"].(chart.Bars)
	tps, ok2 := c["padfail-01-tps.svg"].(chart.Lines)
	if !ok || !ok2 || bars.Title != "padfail: TPS during ALTER TABLE vs baseline" || tps.Bands[0].Label != "MODIFY pad CHAR(40)" {
		t.Fatalf("charts: %+v %+v", bars, tps.Bands)
	}
}
