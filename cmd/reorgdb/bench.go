package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reorgdb/reorgdb/bench"
)

func benchCmd() *cobra.Command {
	cfg := bench.Config{}
	var sets []string
	var plans, ignored string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure online schema changes under a sysbench workload, on an embedded ReorgDB or any MySQL server",
		Long: `Loads sysbench's sbtest tables (and the wide/slim tables when asked), runs a
sysbench OLTP workload, makes a schema change while it runs (adds an index,
adds, drops or retypes a column, adds a foreign key), and prints per plan and
setting the change's duration, the workload's TPS/QPS/latency during it and
its baseline. Without --dsn it starts an embedded ReorgDB on a temporary
directory. Plans: ` + strings.Join(bench.PlanNames(), ", ") + `.`,
		Example: `  reorgdb bench
  reorgdb bench --plans plan1,plan2,plan3 --rows 2000000 --threads 4 \
    --set tidb_ddl_reorg_worker_cnt=1,4,16 --set tidb_ddl_reorg_batch_size=256,1024
  reorgdb bench --dsn 'root:@tcp(127.0.0.1:3306)/' --ddl-suffix ', ALGORITHM=INPLACE, LOCK=NONE'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range sets {
				sw, err := bench.ParseSweep(s)
				if err != nil {
					return err
				}
				cfg.Sets = append(cfg.Sets, sw)
			}
			for _, p := range strings.Split(plans, ",") {
				if p = strings.TrimSpace(p); p != "" {
					cfg.Plans = append(cfg.Plans, p)
				}
			}
			cfg.Ignored = []uint16{} // an empty --ignore-errors retries nothing
			for _, s := range strings.Split(ignored, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				n, err := strconv.ParseUint(s, 10, 16)
				if err != nil {
					return fmt.Errorf("--ignore-errors: %q is not an error number", s)
				}
				cfg.Ignored = append(cfg.Ignored, uint16(n))
			}
			if cfg.OutDir == "" {
				cfg.OutDir = filepath.Join("bench-results", time.Now().Format("20060102-150405"))
			} else if cfg.OutDir == "-" {
				cfg.OutDir = ""
			}
			cfg.Out = cmd.OutOrStdout()
			if !quiet {
				cfg.Status = os.Stderr
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			_, err := bench.Run(ctx, cfg)
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DSN, "dsn", "", "server to test, as user:password@tcp(host:port)/ (default: an embedded ReorgDB)")
	f.StringVar(&cfg.Database, "db", "sbtest", "database of the tables (created if missing)")
	f.Int64Var(&cfg.Rows, "rows", 200000, "rows per sbtest table")
	f.Int64Var(&cfg.WideRows, "wide-rows", 0, "rows of t_wide and t_slim (default: --rows)")
	f.IntVar(&cfg.Tables, "tables", 1, "sbtest tables the workload uses (indexes are added on sbtest1)")
	f.IntVar(&cfg.Threads, "threads", 4, "workload connections")
	f.IntVar(&cfg.LoadThreads, "load-threads", 4, "connections loading the tables")
	f.StringVar(&plans, "plans", "plan1", "comma-separated plans: "+strings.Join(bench.PlanNames(), ", "))
	f.StringVar(&cfg.RandType, "rand-type", "uniform", "key distribution: uniform, special, pareto")
	f.DurationVar(&cfg.Warmup, "warmup", 5*time.Second, "workload warm-up before the baseline window")
	f.DurationVar(&cfg.Baseline, "baseline", 10*time.Second, "baseline window without DDL")
	f.StringArrayVar(&sets, "set", nil, "sweep a global variable: name=v1,v2,... (repeatable; the matrix is their product)")
	f.StringVar(&cfg.DDLSuffix, "ddl-suffix", "", "appended to each measured ALTER TABLE, e.g. ', ALGORITHM=INPLACE, LOCK=NONE'")
	f.StringVar(&ignored, "ignore-errors", "1213,1205,1020,9007,8028", "error numbers after which a transaction is retried, as sysbench's --mysql-ignore-errors")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed of the data and the workload")
	f.StringVar(&cfg.OutDir, "out", "", "results directory (default bench-results/<timestamp>; - for none)")
	f.BoolVar(&quiet, "quiet", false, "no live progress on stderr")
	return cmd
}
