package sql

import (
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// read_only and super_read_only as MySQL 8 enforces them: while either
// is on, a statement that changes data, schema or accounts fails with
// 1290; read_only spares accounts with SUPER or CONNECTION_ADMIN,
// super_read_only spares nobody. What does not write (SELECT, SET of any
// variable, transaction control, SHOW, KILL, EXPLAIN) still runs, and so
// do CREATE TEMPORARY TABLE and writes to temporary tables, which MySQL
// allows.
//
// go-mysql-server keeps the variables but does not enforce them, and its
// own read-only mode (Engine.ReadOnly) spares nobody and answers with a
// text of its own.

const ruleReadOnly analyzer.RuleId = 10001

var (
	readOnly, superReadOnly atomic.Bool
	// The two variables move together in MySQL: super_read_only = ON
	// turns read_only on, read_only = OFF turns super_read_only off.
	// go-mysql-server calls NotifyChanged under its variables' lock, so
	// the other variable is set afterwards, by the next statement.
	pendingReadOnly, pendingSuperOff atomic.Bool
	readOnlyOnce                     sync.Once
)

func registerReadOnly() {
	readOnlyOnce.Do(func() {
		watch := func(name string, set func(bool)) {
			v, _, ok := gms.SystemVariables.GetGlobal(name)
			if !ok {
				return
			}
			mv, ok := v.(*gms.MysqlSystemVariable)
			if !ok {
				return
			}
			c := *mv
			c.NotifyChanged = func(_ *gms.Context, scope gms.SystemVariableScope, v gms.SystemVarValue) error {
				if scope.IsGlobalOnly() {
					set(isOn(v.Val))
				}
				return nil
			}
			gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{&c})
		}
		watch("read_only", func(on bool) {
			readOnly.Store(on)
			if !on && superReadOnly.Load() {
				superReadOnly.Store(false)
				pendingSuperOff.Store(true)
			}
		})
		watch("super_read_only", func(on bool) {
			superReadOnly.Store(on)
			if on && !readOnly.Load() {
				readOnly.Store(true)
				pendingReadOnly.Store(true)
			}
		})
	})
}

func isOn(v any) bool {
	switch x := v.(type) {
	case int8:
		return x != 0
	case int64:
		return x != 0
	case int:
		return x != 0
	case bool:
		return x
	}
	return false
}

// syncReadOnly shows in the variables what the last SET implied for the
// other one.
func syncReadOnly() {
	// Loads first: every statement passes here, and a Swap would write.
	if pendingReadOnly.Load() && pendingReadOnly.Swap(false) {
		gms.SystemVariables.AssignValues(map[string]any{"read_only": int8(1)})
	}
	if pendingSuperOff.Load() && pendingSuperOff.Swap(false) {
		gms.SystemVariables.AssignValues(map[string]any{"super_read_only": int8(0)})
	}
}

// ErrReadOnly is MySQL's answer to a write while read_only or
// super_read_only is on.
func ErrReadOnly(super bool) error {
	opt := "--read-only"
	if super {
		opt = "--super-read-only"
	}
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
		"The MySQL server is running with the %s option so it cannot execute this statement", opt)
}

// enforceReadOnly is the analyzer rule that refuses writes.
func enforceReadOnly(ctx *gms.Context, a *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	syncReadOnly()
	if plan.IsReadOnly(n) || isExplain(ctx.Query()) {
		// go-mysql-server analyses EXPLAIN's statement on its own, but
		// EXPLAIN runs nothing.
		return n, transform.SameTree, nil
	}
	if plan.IsDDLNode(n) && !createsTemporary(n) && !writesOnlyTemporary(n) && readOnlySession(ctx) {
		return nil, transform.SameTree, gms.ErrReadOnlyTransaction.New()
	}
	if !readOnly.Load() || createsTemporary(n) || writesOnlyTemporary(n) {
		// MySQL lets temporary tables be made and written under read_only.
		return n, transform.SameTree, nil
	}
	if superReadOnly.Load() {
		return nil, transform.SameTree, ErrReadOnly(true)
	}
	if db := a.Catalog.MySQLDb; db == nil || !db.Enabled() {
		// No accounts: everyone is an administrator.
		return n, transform.SameTree, nil
	} else if ps := db.UserActivePrivilegeSet(ctx); ps.Has(gms.PrivilegeType_Super) || ps.HasDynamic("connection_admin") {
		return n, transform.SameTree, nil
	}
	return nil, transform.SameTree, ErrReadOnly(false)
}

// readOnlySession says whether transaction_read_only is on (SET SESSION
// TRANSACTION READ ONLY). A DDL statement then fails with 1792 as in
// MySQL: its implicit commit starts a transaction of the session's access
// mode. go-mysql-server checks the current transaction only, and lets DDL
// through because of that implicit commit.
func readOnlySession(ctx *gms.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "transaction_read_only")
	return err == nil && truthyVar(v)
}

// ReadOnlyRefuses is the error read_only or super_read_only gives a write
// outside go-mysql-server's plans (OPTIMIZE TABLE) from a client that has
// SUPER or CONNECTION_ADMIN (admin) or not; nil when it may write.
func ReadOnlyRefuses(admin bool) error {
	syncReadOnly()
	switch {
	case superReadOnly.Load():
		return ErrReadOnly(true)
	case readOnly.Load() && !admin:
		return ErrReadOnly(false)
	}
	return nil
}

// createsTemporary reports whether n is CREATE TEMPORARY TABLE, also with
// a SELECT.
func createsTemporary(n gms.Node) bool {
	if tc, ok := n.(*plan.TableCopier); ok {
		n = tc.Destination
	}
	ct, ok := n.(*plan.CreateTable)
	return ok && ct.Temporary()
}

// writesOnlyTemporary reports whether n is an INSERT, UPDATE, DELETE,
// TRUNCATE or DROP TABLE whose targets are all temporary tables. Every
// table an UPDATE or DELETE reads counts as a target, which refuses some
// statements MySQL would run rather than let one through.
func writesOnlyTemporary(n gms.Node) bool {
	seen, only := false, true
	targets := func(node gms.Node) {
		transform.Inspect(node, func(c gms.Node) bool {
			if tn, ok := c.(gms.TableNode); ok {
				seen = true
				only = only && isTemporaryTable(tn.UnderlyingTable())
			}
			return true
		})
	}
	transform.Inspect(n, func(c gms.Node) bool {
		switch c := c.(type) {
		case *plan.InsertInto:
			targets(c.Destination)
			return false
		case *plan.Update, *plan.DeleteFrom, *plan.Truncate, *plan.DropTable:
			targets(c)
			return false
		}
		return true
	})
	return seen && only
}

func isTemporaryTable(t gms.Table) bool {
	for {
		switch x := t.(type) {
		case gms.TemporaryTable:
			return x.IsTemporary()
		case gms.TableWrapper:
			t = x.Underlying()
		default:
			return false
		}
	}
}
