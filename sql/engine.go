// Package sql adapts ReorgDB's catalog and kv transactions to
// github.com/dolthub/go-mysql-server, which parses, plans and executes SQL
// and speaks the MySQL protocol. It owns the mapping of SQL tables, rows,
// indexes, sessions and transactions onto kv keys, the metadata lock
// that keeps DML consistent with schema changes, and the foreign keys and
// checks go-mysql-server enforces through the tables. It also owns what
// MySQL has and go-mysql-server lacks at the SQL level: stored functions,
// the syntax its grammar refuses (parsefallback.go, quantified.go) and
// MySQL's results where its planner or executors differ.
package sql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/mdl"
)

// Engine ties a kv store and its catalog to a go-mysql-server engine.
type Engine struct {
	store   *kv.Store
	cat     *catalog.Catalog
	SQL     *sqle.Engine
	log     *slog.Logger
	metrics *Metrics

	mdl   *mdl.Lock
	DDL   *ddl.Manager
	ddlMu sync.Mutex // serializes the short synchronous schema changes (RENAME INDEX)
	// altering counts, per table ID, the statements now adding indexes to
	// it: RENAME TABLE waits for them to end, not just for their jobs.
	alteringMu sync.Mutex
	altering   map[int64]int
	persist    *persistedVars // SET PERSIST's file; nil without a data directory
	// cleanups are removals of temporary tables' keys under way, which
	// Close waits for; once closed, none starts (the next start clears).
	cleanupMu sync.Mutex
	closed    bool
	cleanups  sync.WaitGroup
	// laxNotes gathers the warnings of conversions without strict mode.
	laxNotes laxNotes
}

// Options configure an Engine.
type Options struct {
	Logger *slog.Logger
	// TempDir holds index builds' temporary files.
	TempDir string
	// Testing adds the fault-injection system variables of crash tests.
	Testing bool
	// DataDir holds the persisted variables (PersistFile); empty: SET
	// PERSIST is refused.
	DataDir string
}

// NewEngine opens the catalog on store and builds the SQL engine.
func NewEngine(store *kv.Store, opts Options) (*Engine, error) {
	cat, err := catalog.Open(store)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	registerSystemVariables()
	if opts.Testing {
		registerTestingVariables()
	}
	e := &Engine{store: store, cat: cat, log: opts.Logger, metrics: newMetrics(), mdl: mdl.New()}
	e.DDL = ddl.NewManager(store, cat, e.mdl, indexer{e}, func() ddl.Settings { return ddlSettings() }, opts.TempDir, opts.Logger)
	e.DDL.SetForeground(e.metrics.started.Load)
	// Before clearTemporary or anything else writes: a purge must not pass
	// the snapshot of a build that resumes below.
	if err := e.DDL.Load(); err != nil {
		return nil, err
	}
	pro := &Provider{e: e}
	installTempAuth()
	e.SQL = sqle.NewDefault(pro)
	e.SQL.ProcessList = newProcessList()
	setGlobalParser()
	e.SQL.Parser = fallbackParser{timeParser{gms.NewMysqlParser()}, e}
	ov := &execOverride{e: e}
	ov.base = func() gms.NodeExecBuilder { return e.SQL.Analyzer.ExecBuilder }
	e.SQL.Analyzer.ExecBuilder = rowexec.NewOverrideBuilder(ov)
	addRules(e.SQL.Analyzer)
	e.SQL.Analyzer.Catalog.StatsProvider = statsProvider{e.SQL.Analyzer.Catalog.StatsProvider}
	if opts.DataDir != "" {
		e.persist = &persistedVars{path: filepath.Join(opts.DataDir, PersistFile)}
	}
	// After every variable is registered (a registration resets its
	// value) and before the DDL manager reads its settings.
	if err := e.loadPersisted(); err != nil {
		return nil, err
	}
	e.clearTemporary()
	e.SQL.Analyzer.Catalog.InfoSchema = &infoSchema{Database: e.SQL.Analyzer.Catalog.InfoSchema, e: e}
	if err := e.DDL.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// Close stops background schema-change work; unfinished jobs resume when
// the store is opened again.
func (e *Engine) Close() {
	e.cleanupMu.Lock()
	e.closed = true
	e.cleanupMu.Unlock()
	e.cleanups.Wait()
	e.DDL.Close()
}

// Catalog returns the engine's catalog.
func (e *Engine) Catalog() *catalog.Catalog { return e.cat }

// Store returns the engine's kv store.
func (e *Engine) Store() *kv.Store { return e.store }

// Metrics returns the engine's metrics.
func (e *Engine) Metrics() *Metrics { return e.metrics }

// NewSession makes the session of a new connection.
func (e *Engine) NewSession(base *gms.BaseSession) *Session {
	return &Session{BaseSession: base, e: e}
}

func (e *Engine) track(t *Transaction, owner string) {
	t.lease = e.mdl.Acquire(func() int64 {
		// Under the MDL lock: the snapshot and the schema are taken
		// together, so a schema change either sees this lease or the
		// transaction sees the change.
		t.txn = e.store.Begin()
		t.txn.SetOwner(owner)
		t.schema = e.cat.Current()
		return t.schema.Version
	}, owner)
}

func (e *Engine) untrack(t *Transaction) { t.lease.Release() }

// ActiveTransactions is the number of open SQL transactions.
func (e *Engine) ActiveTransactions() int { return e.mdl.Count() }

// implicitCommit commits the session's open transaction before a schema
// change, as MySQL does: writes made under the old schema must not commit
// after the change (they would miss a new index's entries, or land in a
// dropped table). The session goes on with a fresh transaction, which
// go-mysql-server commits when the statement ends.
func (e *Engine) implicitCommit(ctx *gms.Context) error {
	tx, ok := ctx.GetTransaction().(*Transaction)
	if !ok || tx == nil || tx.done {
		return nil
	}
	if tx.killed.Load() {
		return ErrInterrupted()
	}
	if tx.txn.IsReadOnly() {
		return nil
	}
	_, err := tx.txn.Commit()
	tx.lease.Release()
	e.track(tx, tx.lease.Owner)
	if err != nil {
		if errors.Is(err, kv.ErrWriteConflict) {
			e.metrics.txnConflicted()
			return errDeadlock()
		}
		return storageError(err)
	}
	e.metrics.txnCommitted()
	return nil
}

// ddl applies a catalog change and makes the issuing session see it (DDL
// commits implicitly in MySQL).
func (e *Engine) ddl(ctx *gms.Context, fn func(ch *catalog.Change, txn *kv.Txn) error) error {
	if err := e.implicitCommit(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ErrInterrupted()
	}
	s, err := e.cat.Update(fn)
	if err != nil {
		return err
	}
	if tx, ok := ctx.GetTransaction().(*Transaction); ok && tx != nil {
		tx.schema = s
		tx.lease.Renew(s.Version)
	}
	return nil
}

// endJobs ends the unfinished schema-change jobs on tables that a
// statement is about to drop or empty: each job is cancelled and rolled
// back, or finished if it is past cancelling, before the statement goes
// on (ddl.Manager.EndTableJobs), so that no job writes into a table that
// is gone and no index data, change log or checkpoint of it is left.
func (e *Engine) endJobs(ctx *gms.Context, tableIDs ...int64) error {
	return e.outsideMDL(ctx, func() error { return e.DDL.EndTableJobs(ctx, tableIDs...) })
}

// waitJobs waits, as MySQL's metadata lock makes RENAME TABLE wait for an
// ALTER, until the tables' unfinished schema-change jobs have finished;
// for at most lock_wait_timeout seconds (then 1205), or until KILL.
func (e *Engine) waitJobs(ctx *gms.Context, tableIDs ...int64) error {
	timeout := 31536000 * time.Second // MySQL's default lock_wait_timeout
	if v, err := ctx.GetSessionVariable(ctx, "lock_wait_timeout"); err == nil {
		if n, ok := v.(int64); ok && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := e.outsideMDL(ctx, func() error {
		if err := e.DDL.WaitTableJobs(wctx, tableIDs...); err != nil {
			return err
		}
		for e.isAltering(tableIDs) {
			select {
			case <-wctx.Done():
				return wctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
		return nil
	})
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, mysql.SSLockDeadlock, "Lock wait timeout exceeded; try restarting transaction")
	}
	return err
}

// beginAlter registers a statement adding indexes to a table until the
// returned function is called.
func (e *Engine) beginAlter(tableID int64) (end func()) {
	e.alteringMu.Lock()
	if e.altering == nil {
		e.altering = map[int64]int{}
	}
	e.altering[tableID]++
	e.alteringMu.Unlock()
	return func() {
		e.alteringMu.Lock()
		if e.altering[tableID]--; e.altering[tableID] <= 0 {
			delete(e.altering, tableID)
		}
		e.alteringMu.Unlock()
	}
}

func (e *Engine) isAltering(tableIDs []int64) bool {
	e.alteringMu.Lock()
	defer e.alteringMu.Unlock()
	for _, id := range tableIDs {
		if e.altering[id] > 0 {
			return true
		}
	}
	return false
}

// outsideMDL runs fn, which waits for schema-change jobs, with the
// session's transaction committed (MySQL's implicit commit before DDL)
// and its metadata lock out of the jobs' way; afterwards the session's
// transaction starts afresh, with the newest schema and a snapshot taken
// with it. The old snapshot predates what the jobs wrote (a MODIFY
// COLUMN's converted values, under new column IDs), and go-mysql-server
// keeps the transaction of a failed statement for the next one.
func (e *Engine) outsideMDL(ctx *gms.Context, fn func() error) error {
	if err := e.implicitCommit(ctx); err != nil {
		return err
	}
	if tx, _ := ctx.GetTransaction().(*Transaction); tx != nil && !tx.done {
		tx.lease.Renew(1 << 62)
		defer func() {
			if tx.killed.Load() {
				return // answered already; its lease is gone
			}
			tx.txn.Rollback() // committed already, or read-only
			tx.lease.Release()
			tx.savepoints = nil
			e.track(tx, tx.lease.Owner)
		}()
	}
	return fn()
}

// deleteTableData removes every key of a dropped table. The table is gone
// from the catalog already, so no statement can reach these keys.
func (e *Engine) deleteTableData(tableID int64) {
	prefix := codec.TablePrefix(tableID)
	if err := e.deleteRange(prefix, codec.PrefixEnd(prefix)); err != nil {
		e.log.Error("delete table data", "table_id", tableID, "err", err)
	}
}

// deleteRange deletes all keys in [lo, hi) in batches of transactions.
func (e *Engine) deleteRange(lo, hi []byte) error {
	return ddl.DeleteRange(e.store, lo, hi)
}

var typeCache sync.Map // string -> gms.Type

func parseType(s string) (gms.Type, error) {
	if t, ok := typeCache.Load(s); ok {
		return t.(gms.Type), nil
	}
	if tt, ok, err := timeTypeOf(s); ok || err != nil {
		if err != nil {
			return nil, err
		}
		typeCache.Store(s, tt)
		return tt, nil
	}
	t, err := planbuilder.ParseColumnTypeString(s)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	// A type's text leaves out the default collation, and parsing it back
	// leaves the collation unspecified, which breaks LIKE and comparisons.
	if ct, ok := t.(gms.TypeWithCollation); ok && ct.Collation() == gms.Collation_Unspecified {
		if t, err = ct.WithNewCollation(gms.Collation_Default); err != nil {
			return nil, err
		}
	}
	typeCache.Store(s, t)
	return t, nil
}
