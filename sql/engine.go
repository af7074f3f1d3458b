// Package sql adapts ReorgDB's catalog and kv transactions to
// github.com/dolthub/go-mysql-server, which parses, plans and executes SQL
// and speaks the MySQL protocol. It owns the mapping of SQL tables, rows,
// indexes, sessions and transactions onto kv keys, and the metadata lock
// that keeps DML consistent with schema changes.
package sql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// Engine ties a kv store and its catalog to a go-mysql-server engine.
type Engine struct {
	store   *kv.Store
	cat     *catalog.Catalog
	SQL     *sqle.Engine
	log     *slog.Logger
	metrics *Metrics

	mdl   *ddl.MDL
	DDL   *ddl.Manager
	ddlMu sync.Mutex // serializes the short synchronous schema changes (DROP INDEX)
}

// Options configure an Engine.
type Options struct {
	Logger *slog.Logger
	// TempDir holds index builds' temporary files.
	TempDir string
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
	e := &Engine{store: store, cat: cat, log: opts.Logger, metrics: newMetrics(), mdl: ddl.NewMDL()}
	e.DDL = ddl.NewManager(store, cat, e.mdl, indexer{e}, func() ddl.Settings { return ddlSettings() }, opts.TempDir, opts.Logger)
	e.DDL.SetForeground(e.metrics.started.Load)
	pro := &Provider{e: e}
	e.SQL = sqle.NewDefault(pro)
	e.SQL.Analyzer.Catalog.InfoSchema = &infoSchema{Database: e.SQL.Analyzer.Catalog.InfoSchema, e: e}
	if err := e.DDL.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// Close stops background schema-change work; unfinished jobs resume when
// the store is opened again.
func (e *Engine) Close() { e.DDL.Close() }

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
		t.schema = e.cat.Current()
		return t.schema.Version
	}, owner)
}

func (e *Engine) untrack(t *Transaction) { t.lease.Release() }

// ActiveTransactions is the number of open SQL transactions.
func (e *Engine) ActiveTransactions() int { return e.mdl.Count() }

// waitSchema is the metadata lock wait: it returns once no transaction
// that started under a schema version older than v is still open.
func (e *Engine) waitSchema(ctx context.Context, v int64, self *Transaction) error {
	var except *ddl.Lease
	if self != nil {
		except = self.lease
	}
	return e.mdl.Wait(ctx, v, except, 10*time.Second, func(l *ddl.Lease) {
		e.log.Warn("schema change waits for an old transaction", "schema_version", v, "txn", l.Owner)
	})
}

// implicitCommit commits the session's open transaction before a schema
// change, as MySQL does: writes made under the old schema must not commit
// after the change (they would miss a new index's entries, or land in a
// dropped table). The session goes on with a fresh transaction, which
// go-mysql-server commits when the statement ends.
func (e *Engine) implicitCommit(ctx *gms.Context) error {
	tx, ok := ctx.GetTransaction().(*Transaction)
	if !ok || tx == nil || tx.done || tx.txn.IsReadOnly() {
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
		return err
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
