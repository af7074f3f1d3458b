// Package workload runs sysbench's OLTP workloads from Go: the statement
// mix of each Lua script (oltp_read_write, oltp_read_only, ...) produced as
// a list per transaction, executed as server-side prepared statements by N
// threads, with sysbench's retry of deadlocks and lock waits, and recorded
// as per-second samples with latency percentiles.
package workload

import (
	"fmt"
	"sort"
	"strings"

	"github.com/reorgdb/reorgdb/bench/sysrand"
)

// Kind is one of sysbench's statement kinds (the keys of stmt_defs in
// oltp_common.lua, plus BEGIN and COMMIT).
type Kind int

const (
	Begin Kind = iota
	PointSelect
	SimpleRange
	SumRange
	OrderRange
	DistinctRange
	IndexUpdate
	NonIndexUpdate
	Delete
	Insert
	Commit
	numKinds
)

var kindNames = [numKinds]string{"begin", "point_selects", "simple_ranges", "sum_ranges", "order_ranges",
	"distinct_ranges", "index_updates", "non_index_updates", "deletes", "inserts", "commit"}

// sqlText is oltp_common.lua's stmt_defs; %d is the table number.
var sqlText = [numKinds]string{
	"BEGIN",
	"SELECT c FROM sbtest%d WHERE id=?",
	"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
	"SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
	"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	"SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	"UPDATE sbtest%d SET k=k+1 WHERE id=?",
	"UPDATE sbtest%d SET c=? WHERE id=?",
	"DELETE FROM sbtest%d WHERE id=?",
	"INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)",
	"COMMIT",
}

func (k Kind) String() string { return kindNames[k] }

// IsSelect says whether the statement returns rows.
func (k Kind) IsSelect() bool { return k >= PointSelect && k <= DistinctRange }

// SQL is the statement text for table number table.
func (k Kind) SQL(table int) string {
	if k == Begin || k == Commit {
		return sqlText[k]
	}
	return fmt.Sprintf(sqlText[k], table)
}

// Stmt is one statement of a transaction with its parameters.
type Stmt struct {
	Kind  Kind
	Table int
	Args  []any
}

// Options are oltp_common.lua's options that shape a transaction.
type Options struct {
	Tables    int // --tables
	TableSize int // --table-size
	RangeSize int // --range-size, 100 by default
}

// group is one execute_* function of oltp_common.lua: how many statements
// of a kind it issues (the --point-selects etc. defaults).
type group struct {
	kind  Kind
	count int
}

// Workload is one of sysbench's OLTP scripts.
type Workload struct {
	Name   string
	trx    bool // BEGIN ... COMMIT around the event (not skip_trx)
	groups []group
}

var rangeGroups = []group{{SimpleRange, 1}, {SumRange, 1}, {OrderRange, 1}, {DistinctRange, 1}}
var writeGroups = []group{{IndexUpdate, 1}, {NonIndexUpdate, 1}, {Delete, 1}}

func concat(gs ...[]group) []group {
	var out []group
	for _, g := range gs {
		out = append(out, g...)
	}
	return out
}

// The event() of each script; Delete stands for execute_delete_inserts.
var workloads = map[string]Workload{
	"oltp_read_write":   {"oltp_read_write", true, concat([]group{{PointSelect, 10}}, rangeGroups, writeGroups)},
	"oltp_read_only":    {"oltp_read_only", true, concat([]group{{PointSelect, 10}}, rangeGroups)},
	"oltp_write_only":   {"oltp_write_only", true, writeGroups},
	"oltp_point_select": {"oltp_point_select", false, []group{{PointSelect, 1}}},
	"oltp_update_index": {"oltp_update_index", false, []group{{IndexUpdate, 1}}},
}

// Names lists the workloads.
func Names() []string {
	var n []string
	for k := range workloads {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup finds a workload by its sysbench script name.
func Lookup(name string) (Workload, error) {
	w, ok := workloads[name]
	if !ok {
		return Workload{}, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return w, nil
}

// Transaction returns the statements of one event() of the script, with
// parameters drawn as oltp_common.lua draws them: a table per execute_*
// call, ids from the --rand-type distribution.
func (w Workload) Transaction(r *sysrand.Rand, o Options) []Stmt {
	var out []Stmt
	if w.trx {
		out = append(out, Stmt{Kind: Begin})
	}
	id := func() int64 { return int64(r.Default(1, uint32(o.TableSize))) }
	for _, g := range w.groups {
		table := int(r.Uniform(1, uint32(o.Tables)))
		for i := 0; i < g.count; i++ {
			switch g.kind {
			case PointSelect, IndexUpdate:
				out = append(out, Stmt{g.kind, table, []any{id()}})
			case SimpleRange, SumRange, OrderRange, DistinctRange:
				lo := id()
				out = append(out, Stmt{g.kind, table, []any{lo, lo + int64(o.RangeSize) - 1}})
			case NonIndexUpdate:
				c := r.String(sysrand.CTemplate)
				out = append(out, Stmt{g.kind, table, []any{c, id()}})
			case Delete:
				del, k := id(), id()
				out = append(out, Stmt{Delete, table, []any{del}},
					Stmt{Insert, table, []any{del, k, r.String(sysrand.CTemplate), r.String(sysrand.PadTemplate)}})
			}
		}
	}
	if w.trx {
		out = append(out, Stmt{Kind: Commit})
	}
	return out
}
