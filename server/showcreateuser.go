package server

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// SHOW CREATE USER is not in go-mysql-server's grammar, and an account's
// REQUIRE is ReorgDB's (accounttls.go): the server answers it, in MySQL
// 8's format, for roles too (locked accounts, as a dump of accounts
// recreates a role that is granted to no one). Passwords never expire,
// so it says PASSWORD EXPIRE DEFAULT for every account.

var (
	reShowCreateUser = regexp.MustCompile(`(?is)^\s*show\s+create\s+user\s+(.+?)\s*;?\s*$`)
	reCurrentUser    = regexp.MustCompile(`(?i)^current_user\s*(\(\s*\))?$`)
)

// showCreateUser answers SHOW CREATE USER; ok is false for any other
// statement.
func (h *handler) showCreateUser(c *mysql.Conn, query string) (res *sqltypes.Result, ok bool, err error) {
	m := reShowCreateUser.FindStringSubmatch(query)
	if m == nil {
		return nil, false, nil
	}
	self, isUser := c.UserData.(gms.MysqlConnectionUser)
	var k accountKey
	if reCurrentUser.MatchString(m[1]) && isUser {
		k = accountKey{self.User, self.Host}
	} else {
		// The account name's grammar is DROP USER's.
		st, perr := sqlparser.Parse("DROP USER " + m[1])
		du, isDrop := st.(*sqlparser.DropUser)
		if perr != nil || !isDrop || len(du.AccountNames) != 1 {
			return nil, true, errSyntax(m[1])
		}
		k = keyOf(du.AccountNames[0])
	}
	if !isUser || k != (accountKey{self.User, self.Host}) && !h.s.canReadMySQL(self) {
		return nil, true, mysql.NewSQLError(mysql.ERDBAccessDenied, "42000",
			"Access denied for user '%s'@'%s' to database 'mysql'", self.User, self.Host)
	}
	rd := h.s.engine.SQL.Analyzer.Catalog.MySQLDb.Reader()
	u, found := rd.GetUser(mysql_db.UserPrimaryKey{User: k.User, Host: k.Host})
	rd.Close()
	if !found {
		return nil, true, mysql.NewSQLError(1396, mysql.SSUnknownSQLState,
			"Operation SHOW CREATE USER failed for '%s'@'%s'", k.User, k.Host)
	}
	return &sqltypes.Result{
		Fields: []*querypb.Field{varcharField(fmt.Sprintf("CREATE USER for %s@%s", k.User, k.Host))},
		Rows:   [][]sqltypes.Value{{sqltypes.NewVarChar(h.s.createUserText(u))}},
	}, true, nil
}

// createUserText is MySQL 8's CREATE USER statement for u.
func (s *Server) createUserText(u *mysql_db.User) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE USER %s@%s IDENTIFIED WITH '%s'", backquote(u.User), backquote(u.Host), u.Plugin)
	if u.AuthString != "" {
		b.WriteString(" AS " + authLiteral(u.AuthString))
	}
	req := s.acctTLS.get(accountKey{u.User, u.Host})
	if req == "" {
		req = "NONE"
	}
	lock := "UNLOCK"
	if u.Locked {
		lock = "LOCK"
	}
	fmt.Fprintf(&b, " REQUIRE %s PASSWORD EXPIRE DEFAULT ACCOUNT %s PASSWORD HISTORY DEFAULT"+
		" PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT", req, lock)
	if u.Attributes != nil {
		b.WriteString(" ATTRIBUTE " + quoteString(*u.Attributes))
	}
	return b.String()
}

func backquote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// authLiteral quotes a password hash, or writes it in hex if it holds
// bytes a client would mangle (caching_sha2_password's salt), as MySQL 8
// does.
func authLiteral(hash string) string {
	for i := 0; i < len(hash); i++ {
		if hash[i] < 0x20 || hash[i] > 0x7e {
			return fmt.Sprintf("0x%X", hash)
		}
	}
	return quoteString(hash)
}

// reHexAuth is an account's password hash written in hex (authLiteral),
// which go-mysql-server's grammar takes only as a string.
var reHexAuth = regexp.MustCompile(`(?i)(\bIDENTIFIED\s+WITH\s+(?:'[^']*'|"[^"]*"|\w+)\s+AS\s+)0x([0-9a-f]+)\b`)

// hexAuthAsString rewrites the hex password hashes of CREATE or ALTER
// USER query, as SHOW CREATE USER writes them, as strings, so that its
// output can be replayed.
func hexAuthAsString(query string) string {
	if !strings.Contains(query, "0x") && !strings.Contains(query, "0X") {
		return query
	}
	return reHexAuth.ReplaceAllStringFunc(query, func(m string) string {
		g := reHexAuth.FindStringSubmatch(m)
		raw, err := hex.DecodeString(g[2])
		if err != nil {
			return m
		}
		return g[1] + strings.ReplaceAll(quoteString(string(raw)), "\x00", `\0`)
	})
}

// canReadMySQL reports whether u may read the mysql schema (SELECT on it
// or on every database).
func (s *Server) canReadMySQL(u gms.MysqlConnectionUser) bool {
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	user := db.GetUser(rd, u.User, u.Host, false)
	return user != nil && (user.PrivilegeSet.Has(gms.PrivilegeType_Select) ||
		user.PrivilegeSet.Database("mysql").Has(gms.PrivilegeType_Select))
}
