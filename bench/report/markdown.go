package report

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes one table per plan, like the seeds' tables, with the
// latency percentiles, the baseline and the share of it kept added.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## reorgdb bench: %s\n\n", r.Target)
	fmt.Fprintf(&b, "%d rows per table, %d threads, --rand-type=%s, started %s.\n", r.Rows, r.Threads, r.RandType,
		r.Started.Format("2006-01-02 15:04:05"))
	if len(r.Unsupported) > 0 {
		fmt.Fprintf(&b, "Not supported by the target, left out of the matrix: %s.\n", strings.Join(r.Unsupported, ", "))
	}
	for _, results := range r.plans() {
		first := results[0]
		fmt.Fprintf(&b, "\n### %s: %s\n\n", first.Plan, first.Title)
		header, multiIndex := tableHeader(r.Swept, results)
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))
		for _, res := range results {
			var cells []string
			if len(r.Swept) == 0 {
				cells = append(cells, "defaults")
			}
			for _, name := range r.Swept {
				cells = append(cells, res.Setting.Get(name))
			}
			if multiIndex {
				cells = append(cells, res.Index)
			}
			cells = append(cells, fmt.Sprintf("%.2f", res.DurationS))
			if res.Workload != "" {
				d, base := res.During, res.Baseline
				cells = append(cells, fmt.Sprintf("%.1f", d.TPS), fmt.Sprintf("%.0f", d.QPS), ms(d.P95), ms(d.P99),
					fmt.Sprint(d.Errors), fmt.Sprintf("%.1f", base.TPS), fmt.Sprintf("%.0f", base.QPS), ms(base.P95),
					fmt.Sprintf("%.0f%%", res.KeptPct))
			}
			cells = append(cells, res.Check)
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
		writeServerErrors(&b, results)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tableHeader(swept []string, results []Result) (header []string, multiIndex bool) {
	header = append(header, swept...)
	if len(swept) == 0 {
		header = append(header, "setting")
	}
	for _, res := range results {
		multiIndex = multiIndex || res.Index != results[0].Index
	}
	if multiIndex {
		header = append(header, map[bool]string{true: "index", false: "change"}[results[0].Kind == ""])
	}
	header = append(header, map[bool]string{true: "add_index_duration(s)", false: "ddl_duration(s)"}[results[0].Kind == ""])
	if results[0].Workload != "" {
		header = append(header, "TPS", "QPS", "p95 ms", "p99 ms", "errors", "baseline TPS", "baseline QPS",
			"baseline p95 ms", "TPS kept")
	}
	return append(header, "check"), multiIndex
}

// writeServerErrors lists under a plan's table the errors its workload
// met, when a change let it go on after them.
func writeServerErrors(b *strings.Builder, results []Result) {
	first := true
	for _, res := range results {
		for _, e := range res.ServerErrors {
			if first {
				b.WriteString("\nServer errors the workload met (whole run, warm-up included):\n\n")
				first = false
			}
			fmt.Fprintf(b, "- %s, %s: %d × error %d: %s\n", res.Setting, res.Index, e.Count, e.Number, e.Message)
		}
	}
}

func ms(v float64) string { return fmt.Sprintf("%.2f", v) }
