package bench

import (
	"fmt"
	"strings"

	"github.com/reorgdb/reorgdb/bench/loader"
)

// Index is one index a plan builds.
type Index struct {
	Name   string
	Cols   string
	Unique bool
}

// AddSQL is the statement that builds the index on table.
func (ix Index) AddSQL(table, suffix string) string {
	unique := ""
	if ix.Unique {
		unique = "UNIQUE "
	}
	return fmt.Sprintf("ALTER TABLE %s ADD %sINDEX %s (%s)%s", table, unique, ix.Name, ix.Cols, suffix)
}

// Plan is one of the seeds' experiments: a workload (none for idle builds)
// running while each of the plan's indexes is built on its table.
type Plan struct {
	Name     string
	Title    string
	Workload string // sysbench script; "" for an idle build
	Table    loader.Table
	Indexes  []Index
}

// The seed 001 builds: a secondary index, a unique index and a composite
// index of an INT and a TIMESTAMP.
func seed001Indexes(t loader.Table) []Index {
	return []Index{
		{Name: "idx_c0", Cols: "c0"},
		{Name: "uniq_c0", Cols: "c0", Unique: true},
		{Name: "idx_c1_ts", Cols: "c1, " + loader.FirstTimestamp(t)},
	}
}

var cIdx = Index{Name: "c_idx", Cols: "c"}

func plans() []Plan {
	sb := loader.Sysbench(1)
	wide, slim := loader.Wide(), loader.Slim()
	return []Plan{
		{"plan1", "oltp_read_write while adding an index on a column it writes (c)", "oltp_read_write", sb, []Index{cIdx}},
		{"plan2", "oltp_read_only while adding an index on c", "oltp_read_only", sb, []Index{cIdx}},
		{"plan3", "oltp_read_write while adding an index on a column it never touches (pad)", "oltp_read_write", sb,
			[]Index{{Name: "pad_idx", Cols: "pad"}}},
		{"idle", "index on c with no workload", "", sb, []Index{cIdx}},
		{"wide", "idle builds on the 200-column t_wide", "", wide, seed001Indexes(wide)},
		{"slim", "idle builds on the 10-column t_slim", "", slim, seed001Indexes(slim)},
	}
}

// PlanNames lists the plans in their order.
func PlanNames() []string {
	var n []string
	for _, p := range plans() {
		n = append(n, p.Name)
	}
	return n
}

// LookupPlan finds a plan by name.
func LookupPlan(name string) (Plan, error) {
	for _, p := range plans() {
		if p.Name == name {
			return p, nil
		}
	}
	return Plan{}, fmt.Errorf("unknown plan %q (want some of %s)", name, strings.Join(PlanNames(), ", "))
}
