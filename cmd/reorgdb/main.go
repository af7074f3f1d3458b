// Command reorgdb runs the ReorgDB server and its tools.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reorgdb/reorgdb/internal/malloctrim"
	"github.com/reorgdb/reorgdb/server"
)

func main() {
	limitMallocArenas()
	if os.Getenv("GOGC") == "" {
		// The heap is mostly short-lived per-statement garbage: collecting
		// less often than Go's default saves CPU per transaction for some
		// resident memory (docs/benchmarks.md, "Memory").
		debug.SetGCPercent(300)
	}
	root := &cobra.Command{
		Use:           "reorgdb",
		Short:         "ReorgDB: a MySQL-compatible database with fast, safe online schema changes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd(), benchCmd(), versionCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "reorgdb:", err)
		os.Exit(1)
	}
}

func serveCmd() *cobra.Command {
	var cfg server.Config
	var users []string
	var logLevel string
	var cacheMiB, memtableMiB, rowCacheMiB, rangeCacheMiB int64
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the MySQL-protocol server",
		RunE: func(cmd *cobra.Command, args []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			cfg.CacheSize, cfg.MemTableSize = cacheMiB<<20, memtableMiB<<20
			cfg.RowCacheSize = rowCacheMiB << 20
			if rowCacheMiB == 0 {
				cfg.RowCacheSize = -1
			}
			cfg.RangeCacheSize = rangeCacheMiB << 20
			if rangeCacheMiB == 0 {
				cfg.RangeCacheSize = -1
			}
			cfg.Users = map[string]string{}
			for _, u := range users {
				name, pass, _ := strings.Cut(u, ":")
				cfg.Users[name] = pass
			}
			s, err := server.Start(cfg)
			if err != nil {
				return err
			}
			// Hand the C heap's free pages back to the OS every few seconds
			// (see malloctrim): without it the server's resident memory grew
			// to twice Pebble's cache size and stayed there.
			go malloctrim.Every(5*time.Second, nil)
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
			select {
			case got := <-sig:
				cfg.Logger.Info("shutting down", "signal", got.String())
			case err := <-s.Done():
				if err != nil {
					cfg.Logger.Error("listener stopped", "err", err)
				}
			}
			return s.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "reorgdb-data", "directory of the database files")
	f.StringVar(&cfg.TempDir, "temp-dir", "", "directory for index builds' sort files (default <data-dir>/ddl-tmp)")
	f.StringVar(&cfg.Host, "host", "127.0.0.1", "address to listen on")
	f.IntVar(&cfg.Port, "port", 4000, "MySQL protocol port")
	f.IntVar(&cfg.StatusPort, "status-port", 10080, "HTTP port of /status, /metrics and /debug/pprof (-1 disables)")
	f.StringVar(&cfg.StatusHost, "status-host", "127.0.0.1", "address the status port listens on, whatever --host is (its pages need no login)")
	f.IntVar(&cfg.MaxConnections, "max-connections", 151, "most client connections at once (max_connections); one more is kept for an account with SUPER or CONNECTION_ADMIN")
	f.BoolVar(&cfg.Testing, "testing", false, "expose fault-injection variables (reorgdb_ddl_test_stall_phase) for crash tests; never in production")
	f.BoolVar(&cfg.NoSync, "no-sync", false, "relaxed durability: a commit is written to the OS before it is acknowledged and the WAL is fsynced about once a second (survives a process crash; an OS crash or power loss may lose ~1s of commits)")
	f.BoolVar(&cfg.WALBuffering, "wal-buffering", false, "write the WAL through the OS page cache even with durable commits (by default they write it with O_DIRECT, so each commit's fsync only flushes the disk's cache; like MariaDB's innodb_log_file_buffering)")
	f.StringVar(&cfg.SSLCert, "ssl-cert", "", "PEM file of the server's TLS certificate (ssl_cert); with no --ssl-* flag, one generated into the data directory on first start")
	f.StringVar(&cfg.SSLKey, "ssl-key", "", "PEM file of the TLS certificate's private key (ssl_key)")
	f.StringVar(&cfg.SSLCA, "ssl-ca", "", "PEM file of the CA that client certificates are checked against (ssl_ca)")
	f.BoolVar(&cfg.RequireSecureTransport, "require-secure-transport", false, "refuse clients that do not use TLS (require_secure_transport)")
	f.StringArrayVar(&users, "user", nil, "account as name:password at '%' and 'localhost', created if missing on every start (repeatable)")
	f.StringVar(&cfg.InitialRootPassword, "initialize-root-password", "", "root@localhost's password when the first start creates it (without --user); empty is allowed only on a loopback --host")
	f.BoolVar(&cfg.EnablePprof, "enable-pprof", false, "serve Go's /debug/pprof on the status port")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.Int64Var(&cacheMiB, "cache-size", 128, "MiB of memory for the block cache and memtables together")
	f.Int64Var(&memtableMiB, "memtable-size", 32, "MiB per memtable (at most a third of --cache-size)")
	f.DurationVar(&cfg.GCLifetime, "gc-lifetime", 0, "keep superseded row versions at least this long (default: only while an open transaction or a schema change can read them)")
	f.DurationVar(&cfg.GCInterval, "gc-interval", time.Minute, "how often the background pass over every row version runs (superseded versions of rows in the row cache go sooner, as readers release them; negative: neither runs)")
	f.Int64Var(&rowCacheMiB, "row-cache-size", 64, "MiB for the row cache, which keeps recently read and written rows for point reads (0 turns it off)")
	f.Int64Var(&rangeCacheMiB, "range-cache-size", 16, "MiB for the range cache, which keeps the rows of key ranges short scans read recently (0 turns it off)")
	return cmd
}
