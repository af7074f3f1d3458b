package sql

import (
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL checks no privilege on a temporary table once it exists: making
// one takes CREATE TEMPORARY TABLES, and then its session may read, write,
// alter and drop it. go-mysql-server checks the table privileges of every
// table a statement names, so its authorization handler is wrapped to let
// the session's temporary tables through.

var tempAuthOnce sync.Once

// installTempAuth wraps go-mysql-server's authorization handlers; it must
// run before the first engine is built, whose catalog takes its handler
// from the factory.
func installTempAuth() {
	tempAuthOnce.Do(func() {
		gms.SetAuthorizationHandlerFactory(tempAuthFactory{gms.GetAuthorizationHandlerFactory()})
	})
}

type tempAuthFactory struct {
	base gms.AuthorizationHandlerFactory
}

func (f tempAuthFactory) CreateHandler(cat gms.Catalog) gms.AuthorizationHandler {
	return tempAuth{f.base.CreateHandler(cat)}
}

type tempAuth struct{ gms.AuthorizationHandler }

// tableAuthTypes are the checks of privileges on a table that MySQL skips
// for a temporary one.
var tableAuthTypes = map[string]bool{
	ast.AuthType_SELECT: true, ast.AuthType_INSERT: true, ast.AuthType_UPDATE: true,
	ast.AuthType_DELETE: true, ast.AuthType_REPLACE: true, ast.AuthType_DROP: true,
	ast.AuthType_ALTER: true, ast.AuthType_INDEX: true, ast.AuthType_LOCK: true,
}

func (h tempAuth) HandleAuth(ctx *gms.Context, state gms.AuthorizationQueryState, auth ast.AuthInformation) error {
	if tableAuthTypes[auth.AuthType] {
		auth = withoutTempTables(ctx, auth)
		if auth.TargetType == ast.AuthTargetType_Ignore {
			return nil
		}
	}
	return h.AuthorizationHandler.HandleAuth(ctx, state, auth)
}

func (h tempAuth) CheckTable(ctx *gms.Context, state gms.AuthorizationQueryState, dbName, schemaName, tableName string) error {
	if isSessionTemp(ctx, dbName, tableName) {
		return nil
	}
	return h.AuthorizationHandler.CheckTable(ctx, state, dbName, schemaName, tableName)
}

// withoutTempTables is auth without the session's temporary tables among
// its targets; with TargetType Ignore when none is left.
func withoutTempTables(ctx *gms.Context, auth ast.AuthInformation) ast.AuthInformation {
	n := auth.TargetNames
	switch auth.TargetType {
	case ast.AuthTargetType_SingleTableIdentifier, ast.AuthTargetType_TableColumn:
		if len(n) >= 2 && isSessionTemp(ctx, n[0], n[1]) {
			auth.TargetType = ast.AuthTargetType_Ignore
		}
	case ast.AuthTargetType_MultipleTableIdentifiers:
		var kept []string
		for i := 0; i+1 < len(n); i += 2 {
			if !isSessionTemp(ctx, n[i], n[i+1]) {
				kept = append(kept, n[i], n[i+1])
			}
		}
		if len(kept) == 0 {
			auth.TargetType = ast.AuthTargetType_Ignore
		}
		auth.TargetNames = kept
	}
	return auth
}

// isSessionTemp reports whether db.table (db "" for the current database)
// is one of the session's temporary tables.
func isSessionTemp(ctx *gms.Context, db, table string) bool {
	sess, ok := ctx.Session.(*Session)
	if !ok || sess.temps.n.Load() == 0 {
		return false
	}
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	d, ok := sess.e.schemaFor(ctx).Database(strings.TrimSpace(db))
	if !ok {
		return false
	}
	_, ok = sess.tempTable(d.ID, table)
	return ok
}
