package server

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL commits the session's open transaction before an account
// statement (CREATE, ALTER, DROP and RENAME USER, CREATE and DROP ROLE,
// GRANT, REVOKE, SET PASSWORD); go-mysql-server runs them inside it, and
// the server carries some out itself (renameuser.go, roles.go), so the
// server commits first.

// commitsImplicitly reports whether a statement with these leading
// tokens (leadingTokens) is an account statement.
func commitsImplicitly(verb, object int) bool {
	switch verb {
	case sqlparser.GRANT, sqlparser.REVOKE:
		return true
	case sqlparser.CREATE, sqlparser.ALTER, sqlparser.DROP, sqlparser.RENAME:
		return object == sqlparser.USER || object == sqlparser.ROLE
	case sqlparser.SET:
		return object == sqlparser.PASSWORD
	}
	return false
}

// commitBeforeAccounts commits the open transaction of c's session if
// query is an account statement.
func (h *handler) commitBeforeAccounts(ctx context.Context, c *mysql.Conn, query string) error {
	if !commitsImplicitly(leadingTokens(query)) {
		return nil
	}
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return nil
	}
	st.waitPrev()
	if sess := st.session(); sess == nil || sessionFlags(sess)&statusInTrans == 0 {
		return nil
	}
	return unwrapAbandoned(h.run(ctx, c, "COMMIT", false, func(ctx context.Context, _ func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		return h.Handler.ComQuery(ctx, c, "COMMIT", func(*sqltypes.Result, bool) error { return nil })
	}))
}
