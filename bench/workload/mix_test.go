package workload

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/bench/sysrand"
)

// Statement kinds per event() of each sysbench script, from the scripts and
// oltp_common.lua's defaults (point_selects=10, the range and write
// groups 1 each, oltp_point_select's point_selects=1).
var sysbenchMix = map[string]map[Kind]int{
	"oltp_read_write": {Begin: 1, PointSelect: 10, SimpleRange: 1, SumRange: 1, OrderRange: 1, DistinctRange: 1,
		IndexUpdate: 1, NonIndexUpdate: 1, Delete: 1, Insert: 1, Commit: 1},
	"oltp_read_only":    {Begin: 1, PointSelect: 10, SimpleRange: 1, SumRange: 1, OrderRange: 1, DistinctRange: 1, Commit: 1},
	"oltp_write_only":   {Begin: 1, IndexUpdate: 1, NonIndexUpdate: 1, Delete: 1, Insert: 1, Commit: 1},
	"oltp_point_select": {PointSelect: 1},
	"oltp_update_index": {IndexUpdate: 1},
}

var (
	cValue   = regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padValue = regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
)

func TestTransactionMixEqualsSysbench(t *testing.T) {
	if !slices.Equal(Names(), []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_update_index", "oltp_write_only"}) {
		t.Fatalf("workloads %v", Names())
	}
	o := Options{Tables: 3, TableSize: 1000, RangeSize: 100}
	for name, want := range sysbenchMix {
		w, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		r := sysrand.New(7, sysrand.Special)
		tables := map[int]bool{}
		for range 500 {
			txn := w.Transaction(r, o)
			got := map[Kind]int{}
			for i, s := range txn {
				got[s.Kind]++
				checkStmt(t, name, s, o)
				if s.Kind == Begin && i != 0 || s.Kind == Commit && i != len(txn)-1 {
					t.Fatalf("%s: %s at position %d of %d", name, s.Kind, i, len(txn))
				}
				if s.Kind == Delete && (txn[i+1].Kind != Insert || txn[i+1].Args[0] != s.Args[0] || txn[i+1].Table != s.Table) {
					t.Fatalf("%s: DELETE of id %v not followed by the INSERT of the same id: %+v", name, s.Args[0], txn[i+1])
				}
				tables[s.Table] = true
			}
			if !mapsEqual(got, want) {
				t.Fatalf("%s: statement kinds %v, sysbench's %v", name, got, want)
			}
		}
		if len(tables) < 3 && name != "oltp_point_select" && name != "oltp_update_index" {
			t.Fatalf("%s used tables %v of 3", name, tables)
		}
	}
	if _, err := Lookup("oltp_nothing"); err == nil || !strings.Contains(err.Error(), "oltp_read_write") {
		t.Fatalf("unknown workload: %v", err)
	}
}

// The groups each script's event() calls are the ones sysbench's Lua
// scripts call, when they are installed.
func TestMixFollowsInstalledScripts(t *testing.T) {
	calls := regexp.MustCompile(`execute_([a-z_]+)\(`)
	group := map[string]Kind{"point_selects": PointSelect, "simple_ranges": SimpleRange, "sum_ranges": SumRange,
		"order_ranges": OrderRange, "distinct_ranges": DistinctRange, "index_updates": IndexUpdate,
		"non_index_updates": NonIndexUpdate, "delete_inserts": Delete}
	found := 0
	for name, want := range sysbenchMix {
		src, err := os.ReadFile("/usr/share/sysbench/" + name + ".lua")
		if err != nil {
			continue
		}
		found++
		_, event, _ := strings.Cut(string(src), "function event()")
		var got []Kind
		for _, m := range calls.FindAllStringSubmatch(event, -1) {
			got = append(got, group[m[1]])
		}
		for k := range want {
			if k == Begin || k == Commit || k == Insert {
				continue
			}
			if !slices.Contains(got, k) {
				t.Errorf("%s: sysbench's event() does not call the %s group", name, k)
			}
		}
		if len(got) != len(want)-countOf(want, Begin, Commit, Insert) {
			t.Errorf("%s: sysbench's event() calls %d groups, ours has %v", name, len(got), want)
		}
	}
	if found == 0 && os.Getenv("CI") != "" {
		t.Fatal("sysbench's scripts are not installed; .ci/run installs sysbench")
	}
}

func countOf(m map[Kind]int, kinds ...Kind) int {
	n := 0
	for _, k := range kinds {
		if m[k] > 0 {
			n++
		}
	}
	return n
}

func mapsEqual(a, b map[Kind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func checkStmt(t *testing.T, name string, s Stmt, o Options) {
	t.Helper()
	id := func(v any) int64 {
		n := v.(int64)
		if n < 1 || n > int64(o.TableSize) {
			t.Fatalf("%s: %s id %d outside 1..%d", name, s.Kind, n, o.TableSize)
		}
		return n
	}
	if s.Kind != Begin && s.Kind != Commit && (s.Table < 1 || s.Table > o.Tables) {
		t.Fatalf("%s: table %d", name, s.Table)
	}
	if strings.Count(s.Kind.SQL(s.Table), "?") != len(s.Args) {
		t.Fatalf("%s: %s has %d arguments", name, s.Kind.SQL(s.Table), len(s.Args))
	}
	switch s.Kind {
	case PointSelect, IndexUpdate, Delete:
		id(s.Args[0])
	case SimpleRange, SumRange, OrderRange, DistinctRange:
		if lo := id(s.Args[0]); s.Args[1].(int64) != lo+int64(o.RangeSize)-1 {
			t.Fatalf("%s: range %v", name, s.Args)
		}
	case NonIndexUpdate:
		if !cValue.MatchString(s.Args[0].(string)) {
			t.Fatalf("c value %q", s.Args[0])
		}
		id(s.Args[1])
	case Insert:
		id(s.Args[0])
		id(s.Args[1])
		if !cValue.MatchString(s.Args[2].(string)) || !padValue.MatchString(s.Args[3].(string)) {
			t.Fatalf("insert values %q %q", s.Args[2], s.Args[3])
		}
	}
}
