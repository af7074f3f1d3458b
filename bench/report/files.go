package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reorgdb/reorgdb/bench/workload"
)

// WriteDir writes the results directory: results.md, results.json (all
// of it, samples included), summary.csv, samples.csv and the charts.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	if err := Markdown(&md, r); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"results.md": []byte(md.String()), "results.json": js}
	files["summary.csv"], files["samples.csv"] = csvBytes(summaryRows(r)), csvBytes(sampleRows(r))
	for name, c := range charts(r) {
		var b strings.Builder
		if err := c.WriteSVG(&b); err != nil {
			return err
		}
		files[name] = []byte(b.String())
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func csvBytes(rows [][]string) []byte {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.WriteAll(rows) // a strings.Builder does not fail
	return []byte(b.String())
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func summaryRows(r *Report) [][]string {
	rows := [][]string{{"plan", "workload", "table", "index", "setting", "add_index_duration_s",
		"tps", "qps", "p50_ms", "p95_ms", "p99_ms", "errors",
		"baseline_tps", "baseline_qps", "baseline_p50_ms", "baseline_p95_ms", "baseline_p99_ms", "baseline_errors",
		"tps_kept_pct", "check", "ddl"}}
	for _, res := range r.Results {
		row := []string{res.Plan, res.Workload, res.Table, res.Index, res.Setting.String(), f(res.DurationS)}
		row = append(row, summaryCells(res.During)...)
		row = append(row, summaryCells(res.Baseline)...)
		row = append(row, f(res.KeptPct), res.Check, res.DDL)
		rows = append(rows, row)
	}
	return rows
}

func summaryCells(s workload.Summary) []string {
	return []string{f(s.TPS), f(s.QPS), f(s.P50), f(s.P95), f(s.P99), fmt.Sprint(s.Errors)}
}

func sampleRows(r *Report) [][]string {
	rows := [][]string{{"plan", "index", "setting", "start_s", "seconds", "phase", "transactions", "queries", "errors",
		"tps", "qps", "p50_ms", "p95_ms", "p99_ms"}}
	for _, res := range r.Results {
		for _, s := range res.Samples {
			rows = append(rows, []string{res.Plan, res.Index, res.Setting.String(), f(s.Start), f(s.Seconds), s.Phase,
				fmt.Sprint(s.Tx), fmt.Sprint(s.Queries), fmt.Sprint(s.Errors), f(s.TPS), f(s.QPS), f(s.P50), f(s.P95), f(s.P99)})
		}
	}
	return rows
}
