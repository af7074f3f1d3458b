package sql

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/kv"
)

// MySQL's transaction semantics on snapshot-isolation storage, as InnoDB
// and TiDB's pessimistic mode give them:
//
//   - A plain SELECT is a consistent read: of the transaction's snapshot
//     under REPEATABLE READ, of the statement's start under READ COMMITTED.
//   - UPDATE, DELETE and SELECT ... FOR UPDATE lock each row they read
//     (kv.Txn.Lock, exclusive) and then read its newest committed version
//     (a current read), so WHERE and SET apply to the row as it is now;
//     SELECT ... FOR SHARE and a foreign key's check of a parent row do
//     the same under a shared lock (kv.Txn.LockShared), which other
//     sharers do not wait for; INSERT and REPLACE lock the primary and unique
//     keys they write before checking for duplicates; every write locks
//     the unique keys it adds or removes. A conflicting transaction waits
//     for the lock, so a lost update is impossible and a concurrent
//     writer is not an error. Background batches (index backfills, the
//     change log merge, column conversion) take the same locks without
//     waiting and back off from a row a transaction holds, so they never
//     fail a user's commit either.
//   - The statements that write read at a fresh snapshot (TiDB's
//     for_update_ts) so that rows they reach through the snapshot are
//     rarely out of date when locked.
//   - A lock wait ends after innodb_lock_wait_timeout seconds with 1205,
//     rolling back the statement; a wait that would deadlock fails at
//     once with 1213 and rolls back the whole transaction; KILL ends it
//     with 1317.
//
// There are no gap locks: a range read under FOR UPDATE does not stop
// another transaction inserting into the range (phantoms), as in TiDB.

// stmtKind classifies a statement by its first keyword.
type stmtKind uint8

const (
	stmtRead   stmtKind = iota // consistent read
	stmtInsert                 // INSERT, REPLACE: fresh snapshot, no row locks on reads
	stmtLock                   // UPDATE, DELETE, SELECT ... FOR UPDATE: lock what is read
)

func classify(q string) stmtKind {
	w := firstWord(q)
	switch {
	case strings.EqualFold(w, "UPDATE"), strings.EqualFold(w, "DELETE"):
		return stmtLock
	case strings.EqualFold(w, "INSERT"), strings.EqualFold(w, "REPLACE"):
		return stmtInsert
	case strings.EqualFold(w, "SELECT"), strings.EqualFold(w, "WITH"), strings.EqualFold(w, "TABLE"):
		if ContainsFold(q, "FOR UPDATE") || ContainsFold(q, "FOR SHARE") || ContainsFold(q, "LOCK IN SHARE MODE") {
			return stmtLock
		}
	}
	return stmtRead
}

// sharesRows reports whether a locking SELECT locks in share mode.
func sharesRows(q string) bool {
	return (ContainsFold(q, "FOR SHARE") || ContainsFold(q, "LOCK IN SHARE MODE")) && !ContainsFold(q, "FOR UPDATE")
}

// ContainsFold reports whether s contains the upper-case ASCII word w in
// any case, without copying s (every SELECT is classified).
func ContainsFold(s, w string) bool {
	first := w[0] | 0x20
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == first && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// firstWord is the statement's first keyword, past spaces, comments and
// opening parentheses.
func firstWord(q string) string {
	for {
		q = strings.TrimLeftFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
		switch {
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return ""
			}
			q = q[end+4:]
		case strings.HasPrefix(q, "#"), strings.HasPrefix(q, "-- "):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return ""
			}
			q = q[end+1:]
		default:
			end := strings.IndexFunc(q, func(r rune) bool { return !unicode.IsLetter(r) })
			if end < 0 {
				return q
			}
			return q[:end]
		}
	}
}

// txnStmt is what the statement a transaction now runs needs.
type txnStmt struct {
	pid      uint64
	query    string
	lockRows bool            // lock and current-read the rows read ...
	lockOf   map[string]bool // ... of these tables only (FOR UPDATE OF), if not nil
	share    bool            // ... with shared locks (FOR SHARE, LOCK IN SHARE MODE)
	skip     bool            // ... skipping the rows another transaction holds (SKIP LOCKED)
	nowait   bool            // ... failing on them instead of waiting (NOWAIT)
	writes   bool            // INSERT, REPLACE, UPDATE or DELETE
	lockWait time.Duration   // innodb_lock_wait_timeout
}

// beginStmt sets the transaction up for the statement ctx runs, the first
// time it sees that statement.
func (t *Transaction) beginStmt(ctx *gms.Context) {
	if t.done || (t.stmt.pid == ctx.Pid() && t.stmt.query == ctx.Query() && t.stmt.pid != 0) {
		return
	}
	q := ctx.Query()
	t.stmt = txnStmt{pid: ctx.Pid(), query: q, lockWait: 50 * time.Second}
	kind := classify(q)
	if t.readOnly && kind == stmtLock {
		kind = stmtRead
	}
	t.stmt.lockRows = kind == stmtLock
	t.stmt.share = kind == stmtLock && sharesRows(q)
	t.stmt.skip = kind == stmtLock && ContainsFold(q, "SKIP LOCKED")
	t.stmt.nowait = kind == stmtLock && strings.Contains(q, nowaitMark)
	if kind == stmtLock {
		t.stmt.lockOf, _ = lockedTables(q)
	}
	t.stmt.writes = kind != stmtRead
	fresh := kind != stmtRead || readCommitted(ctx)
	if fresh {
		t.txn.SetReadTS(t.e.store.ReadTS())
	} else {
		t.txn.SetReadTS(t.txn.StartTS())
	}
	if kind != stmtRead {
		if v, err := ctx.GetSessionVariable(ctx, "innodb_lock_wait_timeout"); err == nil {
			if n, ok := v.(int64); ok && n > 0 {
				t.stmt.lockWait = time.Duration(n) * time.Second
			}
		}
	}
}

// locks reports whether the statement locks the rows it reads of table.
func (s *txnStmt) locks(table string) bool {
	return s.lockRows && (s.lockOf == nil || s.lockOf[strings.ToLower(table)])
}

// lockedTables is the set of tables that a locking SELECT's OF clause
// names, each alias read as the table it stands for; nil without OF.
// unresolved is the first name that is neither a table nor an alias of
// the statement, "" if none.
func lockedTables(q string) (set map[string]bool, unresolved string) {
	names := lockOfNames(q)
	if names == nil {
		return nil, ""
	}
	stmt, err := sqlparser.Parse(q)
	if err != nil {
		return nil, ""
	}
	tables := map[string]string{} // name or alias -> table
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if a, ok := n.(*sqlparser.AliasedTableExpr); ok {
			if tn, ok := a.Expr.(sqlparser.TableName); ok {
				name := strings.ToLower(tn.Name.String())
				if a.As.IsEmpty() {
					tables[name] = name
				} else {
					tables[strings.ToLower(a.As.String())] = name
				}
			}
		}
		return true, nil
	}, stmt)
	set = make(map[string]bool, len(names))
	for _, n := range names {
		t, ok := tables[n]
		if !ok && unresolved == "" {
			unresolved = n
		}
		set[t] = true
	}
	return set, unresolved
}

// ruleLockOf is the id of checkLockOf.
const ruleLockOf analyzer.RuleId = 10041

// checkLockOf refuses, as MySQL does (3568), a locking clause whose OF
// names a table that is not in the statement.
func checkLockOf(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	q := ctx.Query()
	if !strings.Contains(q, ofMark) {
		return n, transform.SameTree, nil
	}
	if _, name := lockedTables(q); name != "" {
		clause := "FOR UPDATE"
		if sharesRows(q) {
			clause = "FOR SHARE"
		}
		return nil, transform.SameTree, mysql.NewSQLError(3568, "HY000", "Unresolved name '%s' for %s clause", name, clause)
	}
	return n, transform.SameTree, nil
}

func readCommitted(ctx *gms.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "transaction_isolation")
	if err != nil {
		return false
	}
	s, _ := v.(string)
	return strings.EqualFold(s, "READ-COMMITTED") || strings.EqualFold(s, "READ-UNCOMMITTED")
}

// lock takes the row or unique-key lock on key for the statement ctx
// runs. fresh: the transaction did not hold it before.
func (t *Transaction) lock(ctx *gms.Context, key []byte) (fresh bool, err error) {
	return t.lockMode(ctx, key, false)
}

// lockMode is lock, taking a shared lock when shared.
func (t *Transaction) lockMode(ctx *gms.Context, key []byte, shared bool) (fresh bool, err error) {
	var c context.Context = ctx
	if ctx == nil {
		c = context.Background()
	}
	if shared {
		fresh, err = t.txn.LockShared(c, key, t.stmt.lockWait)
	} else {
		fresh, err = t.txn.Lock(c, key, t.stmt.lockWait)
	}
	switch {
	case err == nil:
		return fresh, nil
	case errors.Is(err, kv.ErrDeadlock):
		t.deadlocked(ctx)
		return false, errDeadlock()
	case errors.Is(err, kv.ErrLockWaitTimeout):
		t.e.log.Warn("lock wait timeout", "waiter", t.lease.Owner, "statement", truncateQuery(t.stmt.query), "err", err)
		return false, errLockWaitTimeout()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false, ErrInterrupted()
	}
	return false, err
}

// LockedRead locks key and reads its newest committed version (or the
// transaction's own write): the current read of UPDATE, DELETE and
// locking SELECTs.
func (t *Transaction) LockedRead(ctx *gms.Context, key []byte) (val []byte, found bool, err error) {
	return t.lockedRead(ctx, key, false)
}

// lockedRead is LockedRead under a shared lock when shared: the current
// read of SELECT ... FOR SHARE and of a foreign key's parent row.
//
// Under SKIP LOCKED, a row another transaction holds reads as absent;
// under NOWAIT, it fails the statement with 3572.
func (t *Transaction) lockedRead(ctx *gms.Context, key []byte, shared bool) (val []byte, found bool, err error) {
	if t.stmt.skip || t.stmt.nowait {
		ok, err := t.txn.LockNow(key, shared)
		switch {
		case err != nil:
			return nil, false, err
		case !ok && t.stmt.nowait:
			return nil, false, errLockNowait()
		case !ok:
			return nil, false, nil
		}
	} else if _, err := t.lockMode(ctx, key, shared); err != nil {
		return nil, false, err
	}
	return t.txn.GetLatest(key)
}

func errLockNowait() error {
	return mysql.NewSQLError(3572, mysql.SSUnknownSQLState,
		"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
}

// deadlocked rolls the transaction back as the victim of a deadlock, as
// InnoDB does, so that the other transaction goes on at once; the session
// is then outside any transaction.
func (t *Transaction) deadlocked(ctx *gms.Context) {
	t.rollback()
	t.e.metrics.txnConflicted()
	if ctx == nil {
		return
	}
	if s, ok := ctx.Session.(*Session); ok && s.cur == t {
		s.setCur(nil)
	}
	ctx.SetTransaction(nil)
	ctx.Session.SetIgnoreAutoCommit(false)
}

func truncateQuery(q string) string {
	if len(q) > 200 {
		return q[:200] + "..."
	}
	return q
}
