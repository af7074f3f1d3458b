package server

import (
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
// lock for both (createUserTLS, alterAccountLock).

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
