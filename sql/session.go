package sql

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/mdl"
)

// Transaction is one SQL transaction: one kv snapshot-isolation
// transaction plus the schema version it started under.
type Transaction struct {
	e          *Engine
	lease      *mdl.Lease
	done       bool
	txn        *kv.Txn
	schema     *catalog.Schema
	readOnly   bool
	savepoints map[string]kv.Savepoint
	// killed: the statement using the transaction was killed (KILL, a
	// client disconnect, max_execution_time) and answered already; its
	// lease is released and it must never commit.
	killed atomic.Bool
	// stmt is the statement now running (locking.go).
	stmt txnStmt
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
	// outer are autocommit transactions go-mysql-server set aside, open,
	// to run a CALL's statements in transactions of their own; it puts
	// them back when the CALL ends (see StartTransaction).
	outer []*Transaction
	st    *stmtState
	// endAlter ends the registration of the statement's ALTER (see
	// Engine.beginAlter) when the command ends.
	endAlter []func()
	// hints is the index hints of the last statement planned (hints.go).
	hints atomic.Pointer[stmtHints]
	// allIndexes: a catalog view is being read, which lists invisible
	// indexes too (visibility.go).
	allIndexes atomic.Bool
	// precs is the result precisions of the last statement planned
	// (fields.go).
	precs atomic.Pointer[resultPrecisions]
	// killed: the running statement was abandoned (Interrupt); no
	// transaction may start or commit until EndInterrupt.
	killed atomic.Bool
	curMu  sync.Mutex // guards cur against Interrupt, which runs on another goroutine
	temps  tempTables // temptable.go
	// once holds the transaction characteristics a SET TRANSACTION
	// without GLOBAL or SESSION replaced for the next transaction only.
	once map[string]any
	// lentDB: the session has no current database, and a view's is lent
	// to it while go-mysql-server binds the view (see lendViewDB).
	lentDB bool
	// owner names the session's transactions to lock waits and the
	// transaction list, formatted once rather than per transaction.
	owner string
}

// lendViewDB makes db the current database of a session that has none,
// until the next Provider.Database call or the command's end.
// go-mysql-server binds a view's definition again when a query reads it,
// and first asks for the current database, failing with 1046 when there
// is none, although the view names its own; the next thing it does is to
// look up the view's database through the provider, which gives the
// session its empty current database back before anything else of the
// query is resolved.
func (s *Session) lendViewDB(db string) {
	if s.GetCurrentDatabase() == "" {
		s.SetCurrentDatabase(db)
		s.lentDB = true
	}
}

// returnViewDB ends lendViewDB's loan.
func (s *Session) returnViewDB() {
	if s.lentDB {
		s.lentDB = false
		s.SetCurrentDatabase("")
	}
}

// SetTransactionOnce records the session's transaction characteristics
// from before a SET TRANSACTION without a scope, which sets those of the
// next transaction only (EndTransactionOnce brings them back).
func (s *Session) SetTransactionOnce(prev map[string]any) {
	if s.once == nil {
		s.once = prev
	}
}

// EndTransactionOnce brings back the characteristics SetTransactionOnce
// recorded; the caller calls it once the next transaction has ended.
func (s *Session) EndTransactionOnce(ctx *gms.Context) {
	for k, v := range s.once {
		if err := s.SetSessionVariable(ctx, k, v); err != nil {
			s.e.log.Warn("restoring a transaction characteristic", "var", k, "err", err)
		}
	}
	s.once = nil
}

// readOnlyByDefault says whether transaction_read_only makes a
// transaction read-only that its statement does not declare READ WRITE
// (go-mysql-server starts every transaction read-write unless told
// READ ONLY).
func (s *Session) readOnlyByDefault(ctx *gms.Context) bool {
	v, err := s.GetSessionVariable(ctx, "transaction_read_only")
	if err != nil || !truthyVar(v) {
		return false
	}
	return !reReadWrite.MatchString(ctx.Query())
}

var reReadWrite = regexp.MustCompile(`(?is)^\s*START\s+TRANSACTION\b.*\bREAD\s+WRITE\b`)

func truthyVar(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int8:
		return x != 0
	case int64:
		return x != 0
	case int:
		return x != 0
	case string:
		return x == "1" || strings.EqualFold(x, "ON")
	}
	return false
}

// TransactionOncePending says whether SetTransactionOnce's values wait to
// come back.
func (s *Session) TransactionOncePending() bool { return s.once != nil }

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

func (s *Session) setCur(t *Transaction) {
	s.curMu.Lock()
	s.cur = t
	s.curMu.Unlock()
}

// Interrupt is called, from any goroutine, when the session's running
// statement is abandoned: the client has had its answer (or is gone)
// while the statement's goroutine may still be busy. The statement's
// transaction releases its metadata lock at once and can no longer
// commit, and no new one can start, until EndInterrupt; the transaction
// itself is rolled back by EndInterrupt, on the statement's goroutine.
func (s *Session) Interrupt() {
	s.killed.Store(true)
	s.curMu.Lock()
	t := s.cur
	s.curMu.Unlock()
	if t != nil {
		t.killed.Store(true)
		t.lease.Release()
	}
}

// EndInterrupt rolls back the transaction of an abandoned statement once
// that statement's goroutine is done, and lets the session start new
// transactions again.
func (s *Session) EndInterrupt() {
	if s.cur != nil && s.cur.killed.Load() {
		s.cur.rollback()
		s.setCur(nil)
		s.SetTransaction(nil)
	}
	s.killed.Store(false)
}

// CommandBegin implements sql.LifecycleAwareSession.
func (s *Session) CommandBegin() error { return nil }

// CommandEnd implements sql.LifecycleAwareSession: go-mysql-server forgets
// an autocommit transaction whose statement failed before execution
// without rolling it back; release it here so it holds no snapshot.
func (s *Session) CommandEnd() {
	s.returnViewDB()
	s.endAlters()
	s.endOuter()
	if s.cur != nil && !s.cur.done {
		if tx, ok := s.GetTransaction().(*Transaction); !ok || tx != s.cur {
			s.cur.rollback()
			s.setCur(nil)
		} else if !s.GetIgnoreAutoCommit() && s.autocommit() {
			// An autocommit statement that failed in a way that kept
			// go-mysql-server from ending its transaction (a failed
			// ALTER, for one): neither its row locks nor its metadata
			// lock may outlive it while the client is idle, or the next
			// schema change waits for this client's next statement.
			s.cur.rollback()
			s.setCur(nil)
			s.SetTransaction(nil)
		}
	}
}

// endOuter makes the transaction go-mysql-server went back to after a
// CALL the current one again, and rolls back any set aside that it did
// not go back to.
func (s *Session) endOuter() {
	if len(s.outer) == 0 {
		return
	}
	gtx, _ := s.GetTransaction().(*Transaction)
	for _, t := range s.outer {
		switch {
		case t == gtx && !t.done:
			if s.cur != nil && s.cur != t && !s.cur.done {
				s.cur.rollback()
			}
			s.setCur(t)
		case !t.done:
			t.rollback()
		}
	}
	s.outer = nil
}

func (s *Session) autocommit() bool {
	v, err := s.GetSessionVariable(nil, "autocommit")
	if err != nil {
		return true
	}
	switch x := v.(type) {
	case int8:
		return x != 0
	case int64:
		return x != 0
	case bool:
		return x
	}
	return true
}

// SessionEnd implements sql.LifecycleAwareSession: a client that
// disconnects mid-transaction has it rolled back, and its temporary
// tables are dropped.
func (s *Session) SessionEnd() {
	s.endAlters()
	for _, t := range s.outer {
		t.rollback()
	}
	s.outer = nil
	if s.cur != nil {
		s.cur.rollback()
		s.setCur(nil)
	}
	s.endTemps()
}

func (s *Session) endAlters() {
	for _, end := range s.endAlter {
		end()
	}
	s.endAlter = nil
}

// StartTransaction implements sql.TransactionSession.
func (s *Session) StartTransaction(ctx *gms.Context, tc gms.TransactionCharacteristic) (gms.Transaction, error) {
	if s.cur != nil && !s.cur.done {
		// go-mysql-server clears the session's transaction without
		// ending it only around a CALL. The statements of a procedure
		// called inside BEGIN (or with autocommit off) belong to that
		// transaction, as in MySQL; an autocommit CALL's own transaction
		// waits for the CALL to end, each statement in it autocommits.
		if s.GetIgnoreAutoCommit() || !s.autocommit() {
			return s.cur, nil
		}
		s.outer = append(s.outer, s.cur)
	}
	if s.killed.Load() {
		// The statement was killed before it began its transaction: it
		// must not take a metadata lock now.
		s.setCur(nil)
		return nil, ErrInterrupted()
	}
	s.e.metrics.txnStarted()
	t := &Transaction{e: s.e, readOnly: tc == gms.ReadOnly || s.readOnlyByDefault(ctx)}
	if s.owner == "" {
		s.owner = fmt.Sprintf("connection %d", s.ID())
	}
	s.e.track(t, s.owner)
	s.setCur(t)
	if s.killed.Load() {
		// Interrupt ran between the check and setCur.
		t.killed.Store(true)
		t.lease.Release()
	}
	return t, nil
}

// CommitTransaction implements sql.TransactionSession.
func (s *Session) CommitTransaction(ctx *gms.Context, tx gms.Transaction) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("unexpected transaction type %T", tx)
	}
	if t.killed.Load() {
		t.rollback()
		ctx.SetTransaction(nil)
		s.e.metrics.txnAborted()
		return ErrInterrupted()
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
		return storageError(err)
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

// txnFrom returns the statement's transaction. go-mysql-server starts one
// before planning every statement, so its absence is a bug.
func txnFrom(ctx *gms.Context) (*Transaction, error) {
	tx, ok := ctx.GetTransaction().(*Transaction)
	if !ok || tx == nil {
		return nil, errors.New("reorgdb: statement has no transaction")
	}
	tx.beginStmt(ctx)
	return tx, nil
}

// schemaFor returns the schema version a statement must see.
func (e *Engine) schemaFor(ctx *gms.Context) *catalog.Schema {
	if tx, ok := ctx.GetTransaction().(*Transaction); ok && tx != nil {
		return tx.schema
	}
	return e.cat.Current()
}

// stmtKey identifies the statement a context runs.
func stmtKey(ctx *gms.Context) string {
	return fmt.Sprintf("%d/%s", ctx.QueryTime().UnixNano(), ctx.Query())
}

// stmtState remembers, for the statement being executed, what earlier
// calls of go-mysql-server's per-clause DDL callbacks already did.
type stmtState struct {
	key      string
	created  map[int64]bool      // tables created by this statement
	indexes  map[int64][][]int64 // table -> column-ID lists of indexes built by this statement
	idxNames map[int64]map[string]bool
	added    map[int64][]string // table -> columns added by this statement
}

func (s *Session) stmt(ctx *gms.Context) *stmtState {
	k := stmtKey(ctx)
	if s.st == nil || s.st.key != k {
		s.st = &stmtState{key: k, created: map[int64]bool{}, indexes: map[int64][][]int64{}, idxNames: map[int64]map[string]bool{}}
	}
	return s.st
}

func (s *Session) markCreated(ctx *gms.Context, tableID int64) { s.stmt(ctx).created[tableID] = true }

func (s *Session) markAddedColumn(ctx *gms.Context, tableID int64, name string) {
	st := s.stmt(ctx)
	if st.added == nil {
		st.added = map[int64][]string{}
	}
	st.added[tableID] = append(st.added[tableID], name)
}

// addedColumns are the columns of a table this statement added.
func (s *Session) addedColumns(ctx *gms.Context, tableID int64) []string {
	return s.stmt(ctx).added[tableID]
}

func (s *Session) createdInStatement(ctx *gms.Context, tableID int64) bool {
	return s.stmt(ctx).created[tableID]
}

func (s *Session) markDone(ctx *gms.Context, tableID int64, specs []ddl.IndexSpec) {
	st := s.stmt(ctx)
	if st.idxNames[tableID] == nil {
		st.idxNames[tableID] = map[string]bool{}
	}
	for _, sp := range specs {
		st.idxNames[tableID][strings.ToLower(sp.Name)] = true
		ids := make([]int64, len(sp.Columns))
		for i, c := range sp.Columns {
			ids[i] = c.ColumnID
		}
		st.indexes[tableID] = append(st.indexes[tableID], ids)
	}
}

// stmtDone reports whether this statement's multi-index job already built
// the index go-mysql-server now asks for.
func (s *Session) stmtDone(ctx *gms.Context, tableID int64, name string) bool {
	st := s.stmt(ctx)
	if name != "" {
		return st.idxNames[tableID][strings.ToLower(name)]
	}
	return len(st.indexes[tableID]) > 0
}
