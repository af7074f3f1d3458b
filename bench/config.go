package bench

import (
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reorgdb/reorgdb/bench/sysrand"
	"github.com/reorgdb/reorgdb/bench/workload"
)

// Config is one invocation of the benchmark.
type Config struct {
	DSN         string // go-sql-driver DSN of a running server; "" starts an embedded ReorgDB
	Database    string // database of the tables, created if missing
	Rows        int64  // rows per sbtest table (and wide/slim tables unless WideRows)
	WideRows    int64  // rows of t_wide and t_slim; 0 means Rows
	Tables      int    // sbtest tables the workload spreads over
	Threads     int    // workload connections
	LoadThreads int    // loader connections
	Plans       []string
	RandType    string
	Warmup      time.Duration
	Baseline    time.Duration
	Sets        []Sweep // the settings matrix
	DDLSuffix   string  // appended to every measured ALTER TABLE
	Ignored     []uint16
	Seed        uint64
	OutDir      string    // results directory; "" writes no files
	Out         io.Writer // the Markdown tables
	Status      io.Writer // live progress and notes (stderr); nil for none
	Logger      *slog.Logger
}

// Sweep is one --set: a global variable and the values to try.
type Sweep struct {
	Name   string
	Values []string
}

var (
	varName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	varValue = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
)

// ParseSweep parses "name=v1,v2,...".
func ParseSweep(s string) (Sweep, error) {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Sweep{}, fmt.Errorf("--set %q: want name=value[,value...]", s)
	}
	if !varName.MatchString(name) {
		return Sweep{}, fmt.Errorf("--set %q: %q is not a variable name", s, name)
	}
	sw := Sweep{Name: strings.ToLower(name)}
	for _, v := range strings.Split(vals, ",") {
		v = strings.TrimSpace(v)
		if !varValue.MatchString(v) {
			return Sweep{}, fmt.Errorf("--set %q: value %q must be a number or a word (letters, digits, _ . + -)", s, v)
		}
		sw.Values = append(sw.Values, v)
	}
	return sw, nil
}

// Defaults for what the command line leaves out.
func (c *Config) defaults() {
	if c.Database == "" {
		c.Database = "sbtest"
	}
	if c.WideRows == 0 {
		c.WideRows = c.Rows
	}
	if c.RandType == "" {
		c.RandType = "uniform"
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.LoadThreads == 0 {
		c.LoadThreads = 4
	}
}

func (c *Config) validate() error {
	switch {
	case c.Rows < 1:
		return fmt.Errorf("--rows must be at least 1, got %d", c.Rows)
	case c.WideRows < 1:
		return fmt.Errorf("--wide-rows must be at least 1, got %d", c.WideRows)
	case c.Rows > 1<<31-2 || c.WideRows > 1<<31-2:
		return fmt.Errorf("--rows and --wide-rows must fit an INT id (at most %d)", 1<<31-2)
	case c.Tables < 1:
		return fmt.Errorf("--tables must be at least 1, got %d", c.Tables)
	case c.Threads < 1:
		return fmt.Errorf("--threads must be at least 1, got %d", c.Threads)
	case c.LoadThreads < 1:
		return fmt.Errorf("--load-threads must be at least 1, got %d", c.LoadThreads)
	case c.Warmup < 0 || c.Baseline < 0:
		return fmt.Errorf("--warmup and --baseline must not be negative")
	case len(c.Plans) == 0:
		return fmt.Errorf("no plans given (want some of %s)", strings.Join(PlanNames(), ", "))
	case !varName.MatchString(c.Database):
		return fmt.Errorf("--db %q is not a plain database name", c.Database)
	}
	if _, err := sysrand.ParseDist(c.RandType); err != nil {
		return err
	}
	for _, p := range c.Plans {
		if _, err := LookupPlan(p); err != nil {
			return err
		}
	}
	var seen []string
	for _, s := range c.Sets {
		if slices.Contains(seen, s.Name) {
			return fmt.Errorf("--set %s given twice", s.Name)
		}
		seen = append(seen, s.Name)
	}
	if c.Ignored == nil {
		c.Ignored = workload.DefaultIgnored
	}
	return nil
}
