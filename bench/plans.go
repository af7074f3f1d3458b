package bench

import (
	"fmt"
	"strings"

	"github.com/reorgdb/reorgdb/bench/loader"
)

// Plan is one experiment: a workload (none for idle builds) running while
// each of the plan's schema changes is made on its table.
type Plan struct {
	Name     string
	Title    string
	Workload string // sysbench script; "" for an idle build
	Table    loader.Table
	Changes  []Change
}

// The seed 001 builds: a secondary index, a unique index and a composite
// index of an INT and a TIMESTAMP.
func seed001Indexes(t loader.Table) []Change {
	return []Change{
		Index{Name: "idx_c0", Cols: "c0"}.Change(),
		Index{Name: "uniq_c0", Cols: "c0", Unique: true}.Change(),
		Index{Name: "idx_c1_ts", Cols: "c1, " + loader.FirstTimestamp(t)}.Change(),
	}
}

var cIdx = Index{Name: "c_idx", Cols: "c"}.Change()

// The sysbench column definitions the column plans restore.
const (
	kDef   = "INT NOT NULL DEFAULT 0"
	cDef   = "CHAR(120) NOT NULL DEFAULT ''"
	padDef = "CHAR(60) NOT NULL DEFAULT ''"
)

// modify is a MODIFY COLUMN of col to def, undone back to orig; applied
// tells that def is in effect.
func modify(name, col, def, orig string, applied probe) Change {
	return Change{Name: name, Apply: "MODIFY COLUMN " + col + " " + def, Undo: "MODIFY COLUMN " + col + " " + orig,
		Applied: applied}
}

// columnChanges are issue 15's changes, one per plan.
func columnChanges() map[string]Change {
	return map[string]Change{
		"addcol": {Name: "ADD COLUMN x", Apply: "ADD COLUMN x INT NOT NULL DEFAULT 0", Undo: "DROP COLUMN x",
			Applied: hasColumn("x")},
		"dropcol": {Name: "DROP COLUMN dropme", Apply: "DROP COLUMN dropme",
			Setup: []step{addColumn("dropme", "INT NOT NULL DEFAULT 0")}, Applied: not(hasColumn("dropme"))},
		"dropidx": {Name: "DROP COLUMN dropix", Apply: "DROP COLUMN dropix", Undo: "DROP INDEX dropix_k",
			Setup:   []step{addColumn("dropix", "INT NOT NULL DEFAULT 0"), addIndex("dropix_k", "(dropix, k)")},
			Applied: both(not(hasColumn("dropix")), hasIndex("dropix_k"))},
		"widenk":    modify("MODIFY k BIGINT", "k", "BIGINT NOT NULL DEFAULT 0", kDef, columnIs("k", "bigint", 0)),
		"cvarchar":  modify("MODIFY c VARCHAR(200)", "c", "VARCHAR(200) NOT NULL DEFAULT ''", cDef, columnIs("c", "varchar", 200)),
		"padnarrow": modify("MODIFY pad CHAR(59)", "pad", "CHAR(59) NOT NULL DEFAULT ''", padDef, columnIs("pad", "char", 59)),
		"padfail": {Name: "MODIFY pad CHAR(40)", Apply: "MODIFY COLUMN pad CHAR(40) NOT NULL DEFAULT ''",
			ExpectErr: 1265, Applied: columnIs("pad", "char", 40)},
		"fk": {Name: "ADD FOREIGN KEY fk_k", Apply: "ADD CONSTRAINT fk_k FOREIGN KEY (k) REFERENCES " + parentTable + " (id)",
			Undo: "DROP FOREIGN KEY fk_k", Setup: []step{loadParent}, Applied: hasForeignKey("fk_k")},
	}
}

func plans() []Plan {
	sb := loader.Sysbench(1)
	wide, slim := loader.Wide(), loader.Slim()
	cc := columnChanges()
	rw := func(name, title string) Plan {
		return Plan{name, "oltp_read_write during " + title, "oltp_read_write", sb, []Change{cc[name]}}
	}
	return []Plan{
		{"plan1", "oltp_read_write while adding an index on a column it writes (c)", "oltp_read_write", sb, []Change{cIdx}},
		{"plan2", "oltp_read_only while adding an index on c", "oltp_read_only", sb, []Change{cIdx}},
		{"plan3", "oltp_read_write while adding an index on a column it never touches (pad)", "oltp_read_write", sb,
			[]Change{Index{Name: "pad_idx", Cols: "pad"}.Change()}},
		{"idle", "index on c with no workload", "", sb, []Change{cIdx}},
		{"wide", "idle builds on the 200-column t_wide", "", wide, seed001Indexes(wide)},
		{"slim", "idle builds on the 10-column t_slim", "", slim, seed001Indexes(slim)},
		rw("addcol", "ADD COLUMN x INT NOT NULL DEFAULT 0"),
		rw("dropcol", "DROP COLUMN of a column added before the workload starts"),
		rw("dropidx", "DROP COLUMN of a column in a two-column index (dropix, k), which is rebuilt as (k)"),
		rw("widenk", "MODIFY COLUMN k BIGINT (widening an indexed column it writes)"),
		rw("cvarchar", "MODIFY COLUMN c CHAR(120) to VARCHAR(200)"),
		rw("padnarrow", "MODIFY COLUMN pad CHAR(59) (narrowing; every value fits)"),
		rw("padfail", "MODIFY COLUMN pad CHAR(40), which must fail with 1265 and leave the table as it was"),
		rw("fk", "ADD CONSTRAINT FOREIGN KEY (k) REFERENCES "+parentTable+" (id)"),
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
