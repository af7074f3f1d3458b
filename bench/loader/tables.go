// Package loader creates and fills the benchmark's tables: sysbench's
// sbtest1..N as oltp_common.lua prepares them, and seed 001's wide and slim
// tables. Loads are bulk multi-row INSERTs on parallel connections and
// skip a table that already holds the right rows.
package loader

import (
	"fmt"
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/bench/sysrand"
)

// Table describes how to create and fill one table.
type Table struct {
	Name    string
	Create  string   // CREATE TABLE statement
	Columns string   // the INSERT's column list
	After   []string // statements run once the rows are in (sysbench's k_1)
	Indexes []string // secondary indexes a loaded table has
	Batch   int      // rows per INSERT
	// row appends the VALUES tuple of row id of a table of n rows.
	row func(b *strings.Builder, r *sysrand.Rand, id, n int64)
}

// Sysbench is sbtest<num> exactly as sysbench's oltp_common.lua creates it
// (MySQL driver, auto_inc on), with the k_<num> index built after the load.
func Sysbench(num int) Table {
	return Table{
		Name: fmt.Sprintf("sbtest%d", num),
		Create: fmt.Sprintf(`CREATE TABLE sbtest%d(
  id INTEGER NOT NULL AUTO_INCREMENT,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  PRIMARY KEY (id)
) /*! ENGINE = innodb */ `, num),
		// sysbench leaves id to AUTO_INCREMENT; parallel chunks give it
		// explicitly, the same values 1..n.
		Columns: "id, k, c, pad",
		After:   []string{fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", num, num)},
		Indexes: []string{fmt.Sprintf("k_%d", num)},
		Batch:   1000,
		row: func(b *strings.Builder, r *sysrand.Rand, id, n int64) {
			// k is sb_rand(1, table_size): the --rand-type distribution.
			fmt.Fprintf(b, "(%d, %d, '%s', '%s')", id, r.Default(1, uint32(n)),
				r.String(sysrand.CTemplate), r.String(sysrand.PadTemplate))
		},
	}
}

// Parent is a table of ids only, 1..n once loaded, that a foreign key on
// sbtest's k can reference.
func Parent(name string) Table {
	return Table{
		Name:    name,
		Create:  fmt.Sprintf("CREATE TABLE %s (id INTEGER NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */", name),
		Columns: "id",
		Batch:   1000,
		row: func(b *strings.Builder, _ *sysrand.Rand, id, _ int64) {
			fmt.Fprintf(b, "(%d)", id)
		},
	}
}

// Seed 001's tables: c0.. INT, then VARCHAR(200), then TIMESTAMP columns.
type shape struct {
	name                string
	ints, varchars, tss int
	batch               int
}

var (
	wide = shape{"t_wide", 66, 67, 67, 50}
	slim = shape{"t_slim", 3, 3, 4, 500}
)

// Wide is seed 001's t_wide: 200 columns, c0..c65 INT, c66..c132
// VARCHAR(200), c133..c199 TIMESTAMP, plus an id primary key.
func Wide() Table { return wide.table() }

// Slim is seed 001's t_slim: 10 columns, c0..c2 INT, c3..c5 VARCHAR(200),
// c6..c9 TIMESTAMP, plus an id primary key.
func Slim() Table { return slim.table() }

// FirstTimestamp is the first TIMESTAMP column of a wide or slim table
// (for the seed's composite index on an INT and a TIMESTAMP).
func FirstTimestamp(t Table) string {
	for _, s := range []shape{wide, slim} {
		if s.name == t.Name {
			return fmt.Sprintf("c%d", s.ints+s.varchars)
		}
	}
	return ""
}

// Values of c0 are unique (a unique index can be built on it): id times a
// multiplier modulo the prime 2^31-1, a permutation of 1..2^31-2 that
// scatters neighbouring ids across the index.
const (
	uniqPrime = 2147483647
	uniqMult  = 48271
)

// tsBase is where the TIMESTAMP values start; they span ten years.
var tsBase = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)

func (s shape) table() Table {
	var cols, names []string
	for i := 0; i < s.ints+s.varchars+s.tss; i++ {
		typ := "INT"
		switch {
		case i >= s.ints+s.varchars:
			typ = "TIMESTAMP NULL DEFAULT NULL"
		case i >= s.ints:
			typ = "VARCHAR(200)"
		}
		cols = append(cols, fmt.Sprintf("  c%d %s", i, typ))
		names = append(names, fmt.Sprintf("c%d", i))
	}
	return Table{
		Name:    s.name,
		Create:  fmt.Sprintf("CREATE TABLE %s (\n  id INT NOT NULL,\n%s,\n  PRIMARY KEY (id)\n)", s.name, strings.Join(cols, ",\n")),
		Columns: "id, " + strings.Join(names, ", "),
		Batch:   s.batch,
		row:     s.row,
	}
}

func (s shape) row(b *strings.Builder, r *sysrand.Rand, id, n int64) {
	fmt.Fprintf(b, "(%d, %d", id, id*uniqMult%uniqPrime)
	for i := 1; i < s.ints; i++ {
		// c1 has few distinct values, as the leading column of the
		// composite index; the others spread over the table's size.
		hi := uint32(n)
		if i == 1 {
			hi = 1000
		}
		fmt.Fprintf(b, ", %d", r.Uniform(1, hi))
	}
	for i := 0; i < s.varchars; i++ {
		letters := strings.Repeat("@", int(r.Uniform(16, 48)))
		fmt.Fprintf(b, ", '%s'", r.String(letters))
	}
	for i := 0; i < s.tss; i++ {
		ts := tsBase.Add(time.Duration(r.Uniform(0, 10*365*86400)) * time.Second)
		fmt.Fprintf(b, ", '%s'", ts.Format(time.DateTime))
	}
	b.WriteByte(')')
}
