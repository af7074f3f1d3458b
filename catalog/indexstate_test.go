package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDMLRules prints the index-state protocol (testdata/dml_rules) for
// an index in every state and build phase, as DML sees it through
// Index.DML.
//
//	rules
//	----
//	<state> <build>: <what DML does>
func TestDMLRules(t *testing.T) {
	datadriven.RunTest(t, "testdata/dml_rules", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "rules" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var b strings.Builder
		for st := StateAbsent; st <= StatePublic; st++ {
			for _, ix := range []Index{
				{State: st},
				{State: st, ChangeLogID: 9},
				{State: st, ChangeLogID: 9, Merging: true},
			} {
				fmt.Fprintf(&b, "%s, %s: %s\n", st, ix.Build(), describe(ix.DML()))
			}
		}
		return b.String()
	})
}

func describe(r DMLRule) string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{r.Add, "add"}, {r.Remove, "remove"}, {r.Log, "log"}, {r.StaleEntries, "stale-entries"}, {r.Read, "read"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " ")
}

// TestDMLRulesAdjacentStates checks the property the schema steps rely
// on: with a build phase fixed, each state's DML does all that the state
// before it does, only a public index is read, only a change log's
// logging phase logs, and only its merge meets stale entries.
func TestDMLRulesAdjacentStates(t *testing.T) {
	for b := BuildNone; b <= BuildMerging; b++ {
		for st := StateDeleteOnly; st <= StatePublic; st++ {
			if st == StatePublic && b != BuildNone {
				continue // a public index has no change log
			}
			prev, cur := dmlRules[st-1][b], dmlRules[st][b]
			if prev.Add && !cur.Add || prev.Remove && !cur.Remove {
				t.Errorf("%s/%s does less than %s/%s: %+v then %+v", st, b, st-1, b, cur, prev)
			}
		}
	}
	for st := StateAbsent; st <= StatePublic; st++ {
		for b := BuildNone; b <= BuildMerging; b++ {
			if st == StatePublic && b != BuildNone {
				continue // unreachable: Build says none
			}
			r := dmlRules[st][b]
			if r.Read != (st == StatePublic) {
				t.Errorf("%s/%s: read %v", st, b, r.Read)
			}
			if r.Log && b != BuildLogging {
				t.Errorf("%s/%s logs without a change log being filled", st, b)
			}
			if (r.Add || r.Remove) && b == BuildLogging && !r.Log {
				t.Errorf("%s/%s writes entries while the build logs", st, b)
			}
			if r.StaleEntries != (b == BuildMerging && st != StateAbsent) {
				t.Errorf("%s/%s: stale entries %v", st, b, r.StaleEntries)
			}
		}
	}
}
