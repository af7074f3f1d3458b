package server

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// alterIndex runs ALTER TABLE ... ALTER INDEX i [IN]VISIBLE, whose index
// name go-mysql-server's parser drops: go-mysql-server runs the statement
// as an empty ALTER TABLE (privileges, the table's existence, the
// implicit commit), then the engine changes the catalog, and only then
// is the client answered.
func (h *handler) alterIndex(ctx context.Context, c *mysql.Conn, query string, st *rsql.AlterIndexStatement, cb func(*sqltypes.Result) error) error {
	var res *sqltypes.Result
	err := h.Handler.ComQuery(ctx, c, query, func(r *sqltypes.Result, _ bool) error {
		res = r
		return nil
	})
	if err != nil {
		return err
	}
	sqlCtx, err := h.sessions().NewContextWithQuery(ctx, c, query)
	if err != nil {
		return err
	}
	if err := h.s.engine.SetIndexVisibility(sqlCtx, st); err != nil {
		return err
	}
	if res == nil {
		res = &sqltypes.Result{}
	}
	return cb(res)
}
