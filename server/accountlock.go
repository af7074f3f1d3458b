package server

import (
	"bytes"
	"net"
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server refuses a login to a locked account, but creates every
// account unlocked (it ignores CREATE USER ... ACCOUNT LOCK) and has no
// grammar for ALTER USER ... ACCOUNT LOCK | UNLOCK: the server sets the
// lock for both (createUserTLS, alterAccountLock). It refuses the login
// before looking at the password, with 1045; MySQL 8 answers 3118 to a
// client that gave the right password (lockedLogin).

var reAlterLock = regexp.MustCompile(`(?is)^ALTER\s+USER\s+(IF\s+EXISTS\s+)?(.+?)\s+ACCOUNT\s+(LOCK|UNLOCK)\s*;?\s*$`)

// alterAccountLock carries out ALTER USER ... ACCOUNT LOCK | UNLOCK as
// MySQL 8 does: with CREATE USER, on existing accounts only unless IF
// EXISTS (1396 naming the others, and nothing changed). ok is false if
// query is not one.
func (h *handler) alterAccountLock(c *mysql.Conn, query string) (ok bool, err error) {
	m := reAlterLock.FindStringSubmatch(executableText(query))
	if m == nil {
		return false, nil
	}
	st, perr := sqlparser.Parse("DROP USER " + m[2])
	du, isDrop := st.(*sqlparser.DropUser)
	if perr != nil || !isDrop {
		return false, nil
	}
	if err := h.s.checkAccountAdmin(c); err != nil {
		return true, err
	}
	var keys, missing []accountKey
	for _, an := range du.AccountNames {
		if k := keyOf(an); h.s.accountExists(k) {
			keys = append(keys, k)
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 && m[1] == "" {
		return true, errAccountOp("ALTER USER", missing)
	}
	return true, h.s.setLocked(keys, strings.EqualFold(m[3], "LOCK"))
}

// setLocked locks or unlocks accounts keys, durably.
func (s *Server) setLocked(keys []accountKey, locked bool) error {
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	ed := db.Editor()
	defer ed.Close()
	for _, k := range keys {
		pk := mysql_db.UserPrimaryKey{User: k.User, Host: k.Host}
		if u, ok := ed.GetUser(pk); ok && u.Locked != locked {
			changed := *u
			changed.Locked = locked
			ed.RemoveUser(pk) // PutUser replaces only an equal entry
			ed.PutUser(&changed)
		}
	}
	return db.Persist(gms.NewEmptyContext(), ed)
}

// lockedLogin is MySQL 8's 3118 for a mysql_native_password login with
// the right password (reply to salt) to a locked account, or nil.
func (s *Server) lockedLogin(user string, addr net.Addr, salt, reply []byte) error {
	host := ""
	if addr != nil {
		host, _, _ = net.SplitHostPort(addr.String())
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	u := db.GetUser(rd, user, host, false)
	rd.Close()
	if u == nil || !u.Locked || u.Plugin != string(mysql.MysqlNativePassword) || !nativePasswordMatches(u.AuthString, salt, reply) {
		return nil
	}
	return mysql.NewSQLError(3118, mysql.SSUnknownSQLState, "Access denied for user '%s'@'%s'. Account is locked.", user, clientHost(addr))
}

func nativePasswordMatches(authString string, salt, reply []byte) bool {
	if authString == "" {
		return !usedPassword(reply)
	}
	hash, err := mysql.DecodeMysqlNativePasswordHex(authString)
	salt = bytes.TrimSuffix(salt, []byte{0}) // the handshake's NUL-terminated scramble
	return err == nil && len(reply) == len(hash) && mysql.VerifyHashedMysqlNativePassword(reply, salt, hash)
}
