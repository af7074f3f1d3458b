package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reorgdb/reorgdb/bench/chart"
)

// svgChart is a chart.Lines or a chart.Bars.
type svgChart interface{ WriteSVG(io.Writer) error }

// charts are the results directory's charts by file name: per plan the
// duration against the worker count (one line per other setting), TPS
// during the build against the baseline, and per build under load its
// TPS over time with the DDL window shaded.
func charts(r *Report) map[string]svgChart {
	out := map[string]svgChart{}
	for _, results := range r.plans() {
		plan := results[0].Plan
		out[plan+"-duration.svg"] = durationChart(r.Swept, results)
		if results[0].Workload == "" {
			continue
		}
		verb := results[0].verb()
		bars := chart.Bars{Title: plan + ": TPS during " + verb + " vs baseline", YLabel: "TPS",
			Series: []chart.Series{{Name: "baseline"}, {Name: "during " + verb}}}
		for i, res := range results {
			bars.Groups = append(bars.Groups, runLabel(res))
			bars.Series[0].Values = append(bars.Series[0].Values, res.Baseline.TPS)
			bars.Series[1].Values = append(bars.Series[1].Values, res.During.TPS)
			tps := chart.Series{Name: "TPS"}
			for _, s := range res.Samples {
				tps.Points = append(tps.Points, chart.Point{X: s.Start + s.Seconds, Y: s.TPS})
			}
			out[fmt.Sprintf("%s-%02d-tps.svg", plan, i+1)] = chart.Lines{
				Title:  fmt.Sprintf("%s: TPS over time, %s", plan, runLabel(res)),
				XLabel: "seconds", YLabel: "TPS", Series: []chart.Series{tps},
				Bands: []chart.Band{{From: res.DDLStart, To: res.DDLEnd, Label: res.ddlLabel()}},
			}
		}
		out[plan+"-tps-vs-baseline.svg"] = bars
	}
	return out
}

// verb is what the charts call the DDL of a result's plan.
func (res Result) verb() string {
	if res.Kind == "" {
		return "ADD INDEX"
	}
	return "ALTER TABLE"
}

// ddlLabel names the DDL window of a TPS chart.
func (res Result) ddlLabel() string {
	if res.Kind == "" {
		return "ADD INDEX " + res.Index
	}
	return res.Index
}

func runLabel(res Result) string {
	if len(res.Setting) == 0 {
		return res.Index
	}
	return res.Setting.String() + " " + res.Index
}

// workerVar picks the x axis of the duration chart: the swept worker or
// thread count if there is one with numeric values, else the first
// numeric swept variable; "" if none.
func workerVar(swept []string, results []Result) string {
	numeric := func(name string) bool {
		for _, res := range results {
			if _, err := strconv.ParseFloat(res.Setting.Get(name), 64); err != nil {
				return false
			}
		}
		return true
	}
	for _, want := range []string{"worker", "thread"} {
		for _, name := range swept {
			if strings.Contains(name, want) && numeric(name) {
				return name
			}
		}
	}
	for _, name := range swept {
		if numeric(name) {
			return name
		}
	}
	return ""
}

// durationChart is duration vs workers, one line per value of the other
// variables (batch size...) and index; a bar per build when nothing
// numeric is swept.
func durationChart(swept []string, results []Result) svgChart {
	plan := results[0].Plan
	x := workerVar(swept, results)
	if x == "" {
		bars := chart.Bars{Title: plan + ": " + results[0].verb() + " duration", YLabel: "seconds", Series: []chart.Series{{Name: "duration"}}}
		for _, res := range results {
			bars.Groups = append(bars.Groups, runLabel(res))
			bars.Series[0].Values = append(bars.Series[0].Values, res.DurationS)
		}
		return bars
	}
	lines := chart.Lines{Title: plan + ": " + results[0].verb() + " duration", XLabel: x, YLabel: "seconds"}
	at := map[string]int{}
	for _, res := range results {
		var key []string
		for _, v := range res.Setting {
			if v.Name != x {
				key = append(key, v.Name+"="+v.Value)
			}
		}
		name := strings.TrimSpace(strings.Join(key, ", ") + " " + res.Index)
		i, ok := at[name]
		if !ok {
			i = len(lines.Series)
			at[name] = i
			lines.Series = append(lines.Series, chart.Series{Name: name})
		}
		xv, _ := strconv.ParseFloat(res.Setting.Get(x), 64)
		lines.Series[i].Points = append(lines.Series[i].Points, chart.Point{X: xv, Y: res.DurationS})
	}
	return lines
}
