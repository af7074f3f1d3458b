package server

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// go-mysql-server parses RENAME USER but does not carry it out, so the
// server does, on go-mysql-server's accounts: an account moves with its
// password, privileges at every level, role grants in both directions
// and TLS requirement. As in MySQL 8 a list is all or nothing, its pairs
// apply in order (a TO b, b TO c works) and a missing source or an
// existing target fails the whole statement with 1396.

type accountRename struct{ from, to accountKey }

// renameUser carries out RENAME USER st for the client of c.
func (h *handler) renameUser(c *mysql.Conn, st *sqlparser.RenameUser) error {
	if err := h.s.checkAccountAdmin(c); err != nil {
		return err
	}
	renames := make([]accountRename, len(st.Accounts))
	for i, a := range st.Accounts {
		renames[i] = accountRename{keyOf(a.From), keyOf(a.To)}
	}
	db := h.s.engine.SQL.Analyzer.Catalog.MySQLDb
	ed := db.Editor()
	defer ed.Close()
	if failed := unrenamable(ed, renames); len(failed) > 0 {
		return errAccountOp("RENAME USER", failed)
	}
	return h.s.acctTLS.rename(renames, func() error {
		for _, r := range renames {
			moveAccount(ed, r.from, r.to)
		}
		if err := db.Persist(gms.NewEmptyContext(), ed); err != nil {
			for i := len(renames) - 1; i >= 0; i-- {
				moveAccount(ed, renames[i].to, renames[i].from)
			}
			return err
		}
		return nil
	})
}

// unrenamable returns the sources of the renames that cannot be done, in
// order, each seeing the accounts as the earlier ones leave them.
func unrenamable(ed *mysql_db.Editor, renames []accountRename) []accountKey {
	changed := map[accountKey]bool{}
	exists := func(k accountKey) bool {
		if e, ok := changed[k]; ok {
			return e
		}
		_, ok := ed.GetUser(mysql_db.UserPrimaryKey{User: k.User, Host: k.Host})
		return ok
	}
	var failed []accountKey
	for _, r := range renames {
		if !exists(r.from) || exists(r.to) {
			failed = append(failed, r.from)
			continue
		}
		changed[r.from], changed[r.to] = false, true
	}
	return failed
}

// moveAccount renames account from, which exists, to to, which does not.
func moveAccount(ed *mysql_db.Editor, from, to accountKey) {
	u, _ := ed.GetUser(mysql_db.UserPrimaryKey{User: from.User, Host: from.Host})
	moved := *u
	moved.User, moved.Host = to.User, to.Host
	ed.RemoveUser(mysql_db.UserPrimaryKey{User: from.User, Host: from.Host})
	ed.PutUser(&moved)
	var edges []*mysql_db.RoleEdge
	ed.VisitRoleEdges(func(e *mysql_db.RoleEdge) {
		if (accountKey{e.FromUser, e.FromHost}) == from || (accountKey{e.ToUser, e.ToHost}) == from {
			edges = append(edges, e)
		}
	})
	for _, e := range edges {
		ed.RemoveRoleEdge(mysql_db.RoleEdgesPrimaryKey{FromHost: e.FromHost, FromUser: e.FromUser, ToHost: e.ToHost, ToUser: e.ToUser})
		n := *e
		if (accountKey{n.FromUser, n.FromHost}) == from {
			n.FromUser, n.FromHost = to.User, to.Host
		}
		if (accountKey{n.ToUser, n.ToHost}) == from {
			n.ToUser, n.ToHost = to.User, to.Host
		}
		ed.PutRoleEdge(&n)
	}
}

// checkAccountAdmin refuses an account statement to a client without the
// CREATE USER privilege (or UPDATE on the mysql schema), or under
// read_only, as MySQL does.
func (s *Server) checkAccountAdmin(c *mysql.Conn) error {
	if !s.canAlterUsers(c.UserData) {
		return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
			"Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
	}
	return rsql.ReadOnlyRefuses(s.hasPrivilege(c.UserData, "connection_admin"))
}

// errAccountOp is MySQL's 1396, which names every account op failed for.
func errAccountOp(op string, accounts []accountKey) error {
	names := make([]string, len(accounts))
	for i, k := range accounts {
		names[i] = "'" + k.User + "'@'" + k.Host + "'"
	}
	return mysql.NewSQLError(1396, mysql.SSUnknownSQLState, "Operation %s failed for %s", op, strings.Join(names, ","))
}
