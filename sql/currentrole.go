package sql

import (
	"sort"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// CURRENT_ROLE() is MySQL 8's list of the session's active roles, which
// go-mysql-server lacks. go-mysql-server applies every role granted to an
// account in its sessions, so those are the active roles.
type currentRole struct {
	function.NoArgFunc
	db *mysql_db.MySQLDb
}

var _ gms.FunctionExpression = currentRole{}

func newCurrentRole(db *mysql_db.MySQLDb) gms.Function {
	return gms.Function0{Name: "current_role", Fn: func() gms.Expression {
		return currentRole{NoArgFunc: function.NoArgFunc{Name: "current_role", SQLType: types.LongText}, db: db}
	}}
}

// Eval is the roles as MySQL 8 writes them (`r`@`%`,`s`@`%`), or NONE.
func (c currentRole) Eval(ctx *gms.Context, _ gms.Row) (any, error) {
	client := ctx.Session.Client()
	rd := c.db.Reader()
	defer rd.Close()
	u := c.db.GetUser(rd, client.User, client.Address, false)
	if u == nil {
		return "NONE", nil
	}
	var roles []string
	for _, e := range rd.GetToUserRoleEdges(mysql_db.RoleEdgesToKey{ToHost: u.Host, ToUser: u.User}) {
		roles = append(roles, "`"+e.FromUser+"`@`"+e.FromHost+"`")
	}
	if len(roles) == 0 {
		return "NONE", nil
	}
	sort.Strings(roles)
	return strings.Join(roles, ","), nil
}

func (c currentRole) Description() string { return "returns the active roles of the session." }

func (c currentRole) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	return function.NoArgFuncWithChildren(c, children)
}
