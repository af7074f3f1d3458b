// Package report owns the benchmark's results and their formats: the
// seeds' per-plan tables in Markdown, CSV and JSON of every summary and
// per-second sample, and which SVG charts a results directory gets.
package report

import (
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/bench/workload"
)

// Var is a global variable's value in a setting.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Setting is one combination of the settings matrix.
type Setting []Var

func (s Setting) String() string {
	if len(s) == 0 {
		return "defaults"
	}
	var parts []string
	for _, v := range s {
		parts = append(parts, v.Name+"="+v.Value)
	}
	return strings.Join(parts, ", ")
}

// Get is the value of name in the setting, "" if absent.
func (s Setting) Get(name string) string {
	for _, v := range s {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// Result is one schema change of a plan under one setting.
type Result struct {
	Plan      string           `json:"plan"`
	Title     string           `json:"title"`
	Workload  string           `json:"workload,omitempty"` // "" for an idle build
	Table     string           `json:"table"`
	Index     string           `json:"index"`          // the index, or what the change is called
	Kind      string           `json:"kind,omitempty"` // "" for an index build, "alter" for other changes
	DDL       string           `json:"ddl"`
	Setting   Setting          `json:"setting"`
	DurationS float64          `json:"add_index_duration_s"`
	Baseline  workload.Summary `json:"baseline"`
	During    workload.Summary `json:"during_ddl"`
	KeptPct   float64          `json:"tps_kept_pct"`
	Check     string           `json:"check"`
	// The DDL window on the samples' clock (seconds since the warm-up began).
	DDLStart float64           `json:"ddl_start_s"`
	DDLEnd   float64           `json:"ddl_end_s"`
	Samples  []workload.Sample `json:"samples,omitempty"`
	// The server errors the workload counted and went on after, a change
	// other than an index build running (over the whole run).
	ServerErrors []workload.ErrorCount `json:"server_errors,omitempty"`
}

// Report is a whole invocation.
type Report struct {
	Target      string    `json:"target"`
	Started     time.Time `json:"started"`
	Rows        int64     `json:"rows"`
	Threads     int       `json:"threads"`
	RandType    string    `json:"rand_type"`
	Swept       []string  `json:"swept"`       // variables of the matrix
	Unsupported []string  `json:"unsupported"` // --set variables the target lacks
	Results     []Result  `json:"results"`
}

// plans groups results by plan, in order of first appearance.
func (r *Report) plans() [][]Result {
	var out [][]Result
	at := map[string]int{}
	for _, res := range r.Results {
		i, ok := at[res.Plan]
		if !ok {
			i = len(out)
			at[res.Plan] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], res)
	}
	return out
}
