package sql

import (
	"errors"
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
)

// Transaction is one SQL transaction: one kv snapshot-isolation
// transaction plus the schema version it started under.
type Transaction struct {
	e          *Engine
	done       bool
	txn        *kv.Txn
	schema     *catalog.Schema
	readOnly   bool
	savepoints map[string]kv.Savepoint
}

var _ gms.Transaction = (*Transaction)(nil)

func (t *Transaction) String() string   { return fmt.Sprintf("txn@%d", t.txn.StartTS()) }
func (t *Transaction) IsReadOnly() bool { return t.readOnly }

// KV returns the underlying kv transaction.
func (t *Transaction) KV() *kv.Txn { return t.txn }

// Session is a client connection's state.
type Session struct {
	*gms.BaseSession
	e   *Engine
	cur *Transaction // the open transaction, which go-mysql-server may drop without a rollback
}

var (
	_ gms.TransactionSession    = (*Session)(nil)
	_ gms.LifecycleAwareSession = (*Session)(nil)
)

// finish ends the transaction's registration; the kv transaction must be
// finished already.
func (t *Transaction) finish() {
	if !t.done {
		t.done = true
		t.e.untrack(t)
	}
}

func (t *Transaction) rollback() {
	if !t.done {
		t.txn.Rollback()
		t.finish()
	}
}

// CommandBegin implements sql.LifecycleAwareSession.
func (s *Session) CommandBegin() error { return nil }

// CommandEnd implements sql.LifecycleAwareSession: go-mysql-server forgets
// an autocommit transaction whose statement failed before execution
// without rolling it back; release it here so it holds no snapshot.
func (s *Session) CommandEnd() {
	if s.cur != nil && !s.cur.done {
		if tx, ok := s.GetTransaction().(*Transaction); !ok || tx != s.cur {
			s.cur.rollback()
			s.cur = nil
		}
	}
}

// SessionEnd implements sql.LifecycleAwareSession: a client that
// disconnects mid-transaction has it rolled back.
func (s *Session) SessionEnd() {
	if s.cur != nil {
		s.cur.rollback()
		s.cur = nil
	}
}

// StartTransaction implements sql.TransactionSession.
func (s *Session) StartTransaction(ctx *gms.Context, tc gms.TransactionCharacteristic) (gms.Transaction, error) {
	if s.cur != nil {
		s.cur.rollback()
	}
	s.e.metrics.txnStarted()
	t := &Transaction{e: s.e, readOnly: tc == gms.ReadOnly}
	s.e.track(t)
	s.cur = t
	return t, nil
}

// CommitTransaction implements sql.TransactionSession.
func (s *Session) CommitTransaction(ctx *gms.Context, tx gms.Transaction) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("unexpected transaction type %T", tx)
	}
	_, err := t.txn.Commit()
	t.finish()
	if err != nil {
		// The kv transaction is finished either way; make sure the next
		// statement starts a fresh one, as sysbench's retry expects.
		ctx.SetTransaction(nil)
		if errors.Is(err, kv.ErrWriteConflict) {
			s.e.log.Debug("write conflict", "err", err)
			s.e.metrics.txnConflicted()
			return errDeadlock()
		}
		s.e.metrics.txnAborted()
		return err
	}
	s.e.metrics.txnCommitted()
	return nil
}

// Rollback implements sql.TransactionSession.
func (s *Session) Rollback(ctx *gms.Context, tx gms.Transaction) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("unexpected transaction type %T", tx)
	}
	t.rollback()
	s.e.metrics.txnAborted()
	return nil
}

// CreateSavepoint implements sql.TransactionSession.
func (s *Session) CreateSavepoint(ctx *gms.Context, tx gms.Transaction, name string) error {
	t := tx.(*Transaction)
	if t.savepoints == nil {
		t.savepoints = map[string]kv.Savepoint{}
	}
	t.savepoints[name] = t.txn.Savepoint()
	return nil
}

// RollbackToSavepoint implements sql.TransactionSession.
func (s *Session) RollbackToSavepoint(ctx *gms.Context, tx gms.Transaction, name string) error {
	t := tx.(*Transaction)
	sp, ok := t.savepoints[name]
	if !ok {
		return gms.ErrSavepointDoesNotExist.New(name)
	}
	t.txn.RollbackTo(sp)
	return nil
}

// ReleaseSavepoint implements sql.TransactionSession.
func (s *Session) ReleaseSavepoint(ctx *gms.Context, tx gms.Transaction, name string) error {
	t := tx.(*Transaction)
	if _, ok := t.savepoints[name]; !ok {
		return gms.ErrSavepointDoesNotExist.New(name)
	}
	delete(t.savepoints, name)
	return nil
}

func errDeadlock() error {
	return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
		"Deadlock found when trying to get lock; try restarting transaction")
}

// txnFrom returns the statement's transaction. go-mysql-server starts one
// before planning every statement, so its absence is a bug.
func txnFrom(ctx *gms.Context) (*Transaction, error) {
	tx, ok := ctx.GetTransaction().(*Transaction)
	if !ok || tx == nil {
		return nil, errors.New("reorgdb: statement has no transaction")
	}
	return tx, nil
}

// schemaFor returns the schema version a statement must see.
func (e *Engine) schemaFor(ctx *gms.Context) *catalog.Schema {
	if tx, ok := ctx.GetTransaction().(*Transaction); ok && tx != nil {
		return tx.schema
	}
	return e.cat.Current()
}
