package server

import (
	"regexp"
	"sort"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server applies every role granted to an account in all its
// sessions (as MySQL 8 with activate_all_roles_on_login) and has no
// grammar for the statements that choose roles: SET ROLE, ALTER USER ...
// DEFAULT ROLE, SET DEFAULT ROLE and a GRANT to CURRENT_USER(), all of
// which a dump of
// accounts (mariadb-dump --system=users) writes. The server takes them
// as MySQL 8 does, checking their accounts and roles; since every granted
// role stays active, SET ROLE and DEFAULT ROLE change nothing.

var (
	reSetRole       = regexp.MustCompile(`(?is)^SET\s+ROLE\s+(.+?)\s*;?\s*$`)
	reAllExcept     = regexp.MustCompile(`(?is)^ALL\s+EXCEPT\s+(.+)$`)
	reSetDefault    = regexp.MustCompile(`(?is)^SET\s+DEFAULT\s+ROLE\s+(.+?)\s+TO\s+(.+?)\s*;?\s*$`)
	reAlterDefault  = regexp.MustCompile(`(?is)^ALTER\s+USER\s+(IF\s+EXISTS\s+)?(.+?)\s+DEFAULT\s+ROLE\s+(.+?)\s*;?\s*$`)
	reToCurrentUser = regexp.MustCompile(`(?i)(\bTO\s+|,\s*)CURRENT_USER(?:\s*\(\s*\))?`)
	reVersionedStmt = regexp.MustCompile(`(?s)^\s*/\*!(?:(\d{5})\s)?(.*?)\*/\s*;?\s*$`)
)

// executableText is q's text as MySQL executes it: the body of a
// statement wholly in a /*!80001 ... */ comment, trimmed.
func executableText(q string) string {
	if m := reVersionedStmt.FindStringSubmatch(q); m != nil && !strings.Contains(m[2], "*/") {
		if v := m[1]; v == "" || v <= "80033" { // the 8.0.33 the server reports
			return strings.TrimSpace(m[2])
		}
	}
	return strings.TrimSpace(q)
}

// setRole checks SET ROLE query for the client of c: each role it names
// (but in ALL EXCEPT) must be granted to the client's account. ok is
// false if query is not a SET ROLE the server reads.
func (h *handler) setRole(c *mysql.Conn, query string) (ok bool, err error) {
	m := reSetRole.FindStringSubmatch(executableText(query))
	if m == nil {
		return false, nil
	}
	switch body := m[1]; {
	case strings.EqualFold(body, "NONE"), strings.EqualFold(body, "DEFAULT"), strings.EqualFold(body, "ALL"):
		return true, nil
	case reAllExcept.MatchString(body):
		_, ok := roleList(reAllExcept.FindStringSubmatch(body)[1])
		return ok, nil
	default:
		roles, ok := roleList(body)
		if !ok {
			return false, nil
		}
		self, _ := h.s.currentAccount(c.UserData)
		return true, h.s.checkGranted(roles, self)
	}
}

// alterDefaultRole checks ALTER USER ... DEFAULT ROLE query as MySQL 8
// does (privilege, account, roles granted to it). ok is false if query is
// not one.
func (h *handler) alterDefaultRole(c *mysql.Conn, query string) (ok bool, err error) {
	m := reAlterDefault.FindStringSubmatch(executableText(query))
	if m == nil {
		return false, nil
	}
	st, perr := sqlparser.Parse("DROP USER " + m[2])
	du, isDrop := st.(*sqlparser.DropUser)
	if perr != nil || !isDrop || len(du.AccountNames) != 1 {
		return false, nil
	}
	k := keyOf(du.AccountNames[0])
	var roles []accountKey
	if body := m[3]; !strings.EqualFold(body, "NONE") && !strings.EqualFold(body, "ALL") {
		if roles, ok = roleList(body); !ok {
			return false, nil
		}
	}
	exists := h.s.accountExists(k)
	if err := h.s.checkAlterUser(c, k, exists, m[1] != ""); err != nil || !exists {
		return true, err
	}
	return true, h.s.checkGranted(roles, k)
}

// setDefaultRole checks SET DEFAULT ROLE query as MySQL 8 does: every
// account it names exists, and has been granted every role it names; an
// account other than the client's own needs the privilege ALTER USER
// needs. ok is false if query is not one.
func (h *handler) setDefaultRole(c *mysql.Conn, query string) (ok bool, err error) {
	m := reSetDefault.FindStringSubmatch(executableText(query))
	if m == nil {
		return false, nil
	}
	var roles []accountKey
	if body := m[1]; !strings.EqualFold(body, "NONE") && !strings.EqualFold(body, "ALL") {
		if roles, ok = roleList(body); !ok {
			return false, nil
		}
	}
	st, perr := sqlparser.Parse("DROP USER " + m[2])
	du, isDrop := st.(*sqlparser.DropUser)
	if perr != nil || !isDrop {
		return false, nil
	}
	self, _ := h.s.currentAccount(c.UserData)
	for _, an := range du.AccountNames {
		k := keyOf(an)
		exists := h.s.accountExists(k)
		if k != self || !exists {
			if err := h.s.checkAccountAdmin(c); err != nil {
				return true, err
			}
		}
		if !exists {
			return true, errAccountOp("SET DEFAULT ROLE", []accountKey{k})
		}
		if err := h.s.checkGranted(roles, k); err != nil {
			return true, err
		}
	}
	return true, nil
}

// roleList reads a list of role names.
func roleList(text string) ([]accountKey, bool) {
	st, err := sqlparser.Parse("DROP ROLE " + text)
	dr, ok := st.(*sqlparser.DropRole)
	if err != nil || !ok {
		return nil, false
	}
	keys := make([]accountKey, len(dr.Roles))
	for i, r := range dr.Roles {
		keys[i] = keyOf(r)
	}
	return keys, true
}

// checkGranted returns MySQL 8's 3530 for the first of roles that is not
// granted to account k.
func (s *Server) checkGranted(roles []accountKey, k accountKey) error {
	granted := map[accountKey]bool{}
	for _, r := range s.grantedRoles(k) {
		granted[r] = true
	}
	for _, r := range roles {
		if !granted[r] {
			return errRoleNotGranted(r, k)
		}
	}
	return nil
}

func (s *Server) grantedRoles(k accountKey) []accountKey {
	rd := s.engine.SQL.Analyzer.Catalog.MySQLDb.Reader()
	defer rd.Close()
	var roles []accountKey
	for _, e := range rd.GetToUserRoleEdges(mysql_db.RoleEdgesToKey{ToHost: k.Host, ToUser: k.User}) {
		roles = append(roles, accountKey{e.FromUser, e.FromHost})
	}
	sort.Slice(roles, func(i, j int) bool { return roles[i].User+"@"+roles[i].Host < roles[j].User+"@"+roles[j].Host })
	return roles
}

func errRoleNotGranted(role, k accountKey) error {
	return mysql.NewSQLError(3530, mysql.SSUnknownSQLState, "%s@%s is not granted to %s@%s",
		backquote(role.User), backquote(role.Host), backquote(k.User), backquote(k.Host))
}

// currentAccount is the account the client of g logged in as.
func (s *Server) currentAccount(g mysql.Getter) (accountKey, bool) {
	u, ok := g.(gms.MysqlConnectionUser)
	if !ok {
		return accountKey{}, false
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	user := db.GetUser(rd, u.User, u.Host, false)
	if user == nil {
		return accountKey{}, false
	}
	return accountKey{user.User, user.Host}, true
}

// grantToCurrentUser names the client's account in place of
// CURRENT_USER() among the grantees of GRANT query.
func (s *Server) grantToCurrentUser(g mysql.Getter, query string) string {
	if !reToCurrentUser.MatchString(query) {
		return query
	}
	self, ok := s.currentAccount(g)
	if !ok {
		return query
	}
	return reToCurrentUser.ReplaceAllStringFunc(query, func(m string) string {
		lead := reToCurrentUser.FindStringSubmatch(m)[1]
		return lead + backquote(self.User) + "@" + backquote(self.Host)
	})
}
