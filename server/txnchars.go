package server

import (
	"regexp"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// SET TRANSACTION without GLOBAL or SESSION sets the isolation level and
// access mode of the next transaction only, and may not run inside one
// (MySQL's 1568); go-mysql-server sets the session's values for good.

var reSetTxnOnce = regexp.MustCompile(`(?is)^\s*SET\s+TRANSACTION\b`)

// txnCharVars are the variables SET TRANSACTION sets.
var txnCharVars = []string{"transaction_isolation", "transaction_read_only"}

// txnOnceBefore checks a SET TRANSACTION without a scope before it runs,
// and returns what to call once it succeeded (nil for another statement).
func (h *handler) txnOnceBefore(c *mysql.Conn, query string) (after func(), err error) {
	if !reSetTxnOnce.MatchString(query) {
		return nil, nil
	}
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return nil, nil
	}
	sess, ok := st.session().(*rsql.Session)
	if !ok {
		return nil, nil
	}
	if sessionFlags(sess)&statusInTrans != 0 {
		return nil, mysql.NewSQLError(1568, "25001", "Transaction characteristics can't be changed while a transaction is in progress")
	}
	prev := map[string]any{}
	for _, v := range txnCharVars {
		val, err := sess.GetSessionVariable(gms.NewEmptyContext(), v)
		if err != nil {
			return nil, nil
		}
		prev[v] = val
	}
	return func() { sess.SetTransactionOnce(prev) }, nil
}

// afterStatement ends the characteristics a SET TRANSACTION set for the
// next transaction once a statement other than that SET left the session
// outside a transaction: the statement was (or ended) that transaction.
// BEGIN leaves the session inside one, so the characteristics hold until
// its COMMIT or ROLLBACK.
func (h *handler) afterStatement(c *mysql.Conn, query string) {
	st := h.s.connState(c.ConnectionID)
	if st == nil {
		return
	}
	sess, ok := st.session().(*rsql.Session)
	if !ok || !sess.TransactionOncePending() || reSetTxnOnce.MatchString(query) {
		return
	}
	if sessionFlags(sess)&statusInTrans == 0 {
		sess.EndTransactionOnce(gms.NewEmptyContext())
	}
}
