package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server"
)

// kind is what a target is, for what it can report and check.
type kind int

const (
	otherServer kind = iota
	reorgDB          // information_schema.ddl_jobs, ADMIN CHECK INDEX
	mariaDB          // PROCESSLIST.PROGRESS
)

// target is the server under test with a pool on the bench database.
type target struct {
	db      *sql.DB
	name    string // what the reports call it
	kind    kind
	cleanup func()
}

// openTarget connects to cfg.DSN, or starts an embedded ReorgDB on a
// temporary directory that Close removes.
func openTarget(ctx context.Context, cfg *Config) (*target, error) {
	dsn, embedded, cleanup := cfg.DSN, cfg.DSN == "", func() {}
	if embedded {
		dir, err := os.MkdirTemp("", "reorgdb-bench-")
		if err != nil {
			return nil, err
		}
		// The log would tear the status line; errors only.
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		s, err := server.Start(server.Config{DataDir: filepath.Join(dir, "data"), TempDir: filepath.Join(dir, "tmp"),
			Port: 0, StatusPort: -1, NoSync: true, Logger: logger})
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("start embedded ReorgDB: %w", err)
		}
		cleanup = func() { s.Close(); os.RemoveAll(dir) }
		dsn = "root:@tcp(" + s.Addr() + ")/"
	}
	t, err := connect(ctx, dsn, cfg)
	if err != nil {
		cleanup()
		return nil, err
	}
	t.cleanup = cleanup
	if embedded {
		t.name = "ReorgDB " + server.Version + " (embedded)"
	}
	return t, nil
}

func connect(ctx context.Context, dsn string, cfg *Config) (*target, error) {
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %w (want user:password@tcp(host:port)/)", err)
	}
	// Server-side prepared statements, as sysbench uses them.
	mc.InterpolateParams = false
	mc.DBName = ""
	root, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var version string
	if err := root.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", mc.Addr, err)
	}
	if _, err := root.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+cfg.Database); err != nil {
		return nil, fmt.Errorf("CREATE DATABASE %s: %w", cfg.Database, err)
	}
	mc.DBName = cfg.Database
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return nil, err
	}
	// Keep every workload, loader and monitor connection open between uses.
	db.SetMaxIdleConns(cfg.Threads + cfg.LoadThreads + 8)
	t := &target{db: db, name: version + " at " + mc.Addr}
	// ReorgDB answers VERSION() as go-mysql-server does; its own
	// variables tell it apart.
	if _, ok, err := t.variable(ctx, "reorgdb_ddl_reorg_batch_delay_ms"); err != nil {
		db.Close()
		return nil, err
	} else if ok {
		t.kind, t.name = reorgDB, "ReorgDB at "+mc.Addr
	} else if strings.Contains(strings.ToLower(version), "mariadb") {
		t.kind, t.name = mariaDB, "MariaDB "+version+" at "+mc.Addr
	}
	return t, nil
}

// Close disconnects and stops an embedded server.
func (t *target) Close() {
	t.db.Close()
	t.cleanup()
}

// variable reads a global variable; ok is false if the server has none of
// that name.
func (t *target) variable(ctx context.Context, name string) (value string, ok bool, err error) {
	rows, err := t.db.QueryContext(ctx, "SHOW GLOBAL VARIABLES LIKE '"+name+"'")
	if err != nil {
		return "", false, fmt.Errorf("SHOW GLOBAL VARIABLES: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, v sql.NullString
		if err := rows.Scan(&n, &v); err != nil {
			return "", false, err
		}
		// LIKE's _ matches any character: keep only the exact name.
		if strings.EqualFold(n.String, name) {
			value, ok = v.String, true
		}
	}
	return value, ok, rows.Err()
}

var plainValue = regexp.MustCompile(`^([0-9.+-]+|(?i:on|off|true|false))$`)

// setVariable runs SET GLOBAL name = value, quoting words other than
// numbers and ON/OFF.
func (t *target) setVariable(ctx context.Context, name, value string) error {
	v := value
	if !plainValue.MatchString(value) {
		v = "'" + strings.ReplaceAll(value, "'", "''") + "'"
	}
	if _, err := t.db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL %s = %s", name, v)); err != nil {
		return fmt.Errorf("SET GLOBAL %s = %s: %w", name, v, err)
	}
	return nil
}

// checkIndex verifies a new index: ADMIN CHECK INDEX on ReorgDB, CHECK
// TABLE elsewhere, and on every server the same row count through the
// index as through the table.
func (t *target) checkIndex(ctx context.Context, table, index string) error {
	if t.kind == reorgDB {
		if _, err := t.db.ExecContext(ctx, fmt.Sprintf("ADMIN CHECK INDEX %s %s", table, index)); err != nil {
			return fmt.Errorf("ADMIN CHECK INDEX %s %s: %w", table, index, err)
		}
	} else if err := t.checkTable(ctx, table); err != nil {
		return err
	}
	var all, viaIndex int64
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&all); err != nil {
		return fmt.Errorf("count %s: %w", table, err)
	}
	q := fmt.Sprintf("SELECT COUNT(*) FROM %s FORCE INDEX (%s)", table, index)
	if err := t.db.QueryRowContext(ctx, q).Scan(&viaIndex); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	if all != viaIndex {
		return fmt.Errorf("index %s of %s has %d rows, the table %d", index, table, viaIndex, all)
	}
	return nil
}

// checkWhole verifies a table after a change other than an index build:
// ADMIN CHECK TABLE (every index against the rows) on ReorgDB, CHECK
// TABLE elsewhere.
func (t *target) checkWhole(ctx context.Context, table string) error {
	if t.kind != reorgDB {
		return t.checkTable(ctx, table)
	}
	if _, err := t.db.ExecContext(ctx, "ADMIN CHECK TABLE "+table); err != nil {
		return fmt.Errorf("ADMIN CHECK TABLE %s: %w", table, err)
	}
	return nil
}

// checkTable runs CHECK TABLE and fails on any row that is not fine
// (Msg_type error, or status not OK).
func (t *target) checkTable(ctx context.Context, table string) error {
	rows, err := t.db.QueryContext(ctx, "CHECK TABLE "+table)
	if err != nil {
		return fmt.Errorf("CHECK TABLE %s: %w", table, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var tbl, op, typ, msg sql.NullString
		if err := rows.Scan(&tbl, &op, &typ, &msg); err != nil {
			return fmt.Errorf("CHECK TABLE %s: %w", table, err)
		}
		if strings.EqualFold(typ.String, "error") || (strings.EqualFold(typ.String, "status") && !strings.EqualFold(msg.String, "OK")) {
			problems = append(problems, typ.String+": "+msg.String)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New("CHECK TABLE " + table + ": " + strings.Join(problems, "; "))
	}
	return nil
}
