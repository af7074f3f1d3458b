package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// go-mysql-server parses an account's REQUIRE SSL or X509 and drops it:
// its accounts have no ssl_type. ReorgDB keeps the requirement beside the
// accounts, in kv (catalog.SetAccountTLS), sets it once a CREATE USER or
// ALTER USER has succeeded, forgets it with DROP USER, and refuses a
// login that does not meet it. Entries of accounts that no longer exist
// (a crash between the two writes) are dropped at startup.

const (
	requireSSL  = "SSL"
	requireX509 = "X509"
)

type accountKey struct{ User, Host string }

// accountTLS is the requirement of each account that has one.
type accountTLS struct {
	mu  sync.Mutex
	cat *catalog.Catalog
	req map[accountKey]string
}

type accountTLSEntry struct {
	User    string `json:"user"`
	Host    string `json:"host"`
	Require string `json:"require"`
}

// load reads the stored requirements, keeping those of accounts db has.
func (a *accountTLS) load(cat *catalog.Catalog, db *mysql_db.MySQLDb) error {
	a.cat, a.req = cat, map[accountKey]string{}
	data, err := cat.AccountTLS()
	if err != nil || len(data) == 0 {
		return err
	}
	var entries []accountTLSEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("account TLS requirements: %w", err)
	}
	rd := db.Reader()
	defer rd.Close()
	for _, e := range entries {
		if _, ok := rd.GetUser(mysql_db.UserPrimaryKey{User: e.User, Host: e.Host}); ok {
			a.req[accountKey{e.User, e.Host}] = e.Require
		}
	}
	if len(a.req) == len(entries) {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.saveLocked()
}

func (a *accountTLS) get(k accountKey) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.req[k]
}

// set records the requirements of keys (none if req is ""), durably.
func (a *accountTLS) set(req string, keys ...accountKey) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := false
	for _, k := range keys {
		if a.req[k] != req {
			changed = true
		}
		if req == "" {
			delete(a.req, k)
		} else {
			a.req[k] = req
		}
	}
	if !changed {
		return nil
	}
	return a.saveLocked()
}

// rename moves the requirements of renamed accounts while apply renames
// the accounts themselves. The new names' requirements are stored before
// apply and the old names' dropped after it, so that a crash in between
// leaves no renamed account without its requirement (load drops entries
// of accounts that do not exist).
func (a *accountTLS) rename(renames []accountRename, apply func() error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	before, after := a.req, map[accountKey]string{}
	for k, r := range before {
		after[k] = r
	}
	for _, rn := range renames {
		if r, ok := after[rn.from]; ok {
			after[rn.to] = r
			delete(after, rn.from)
		}
	}
	both := map[accountKey]string{}
	for k, r := range after {
		both[k] = r
	}
	for k, r := range before {
		both[k] = r // a chain's old owner of a name keeps its own until apply
	}
	if a.req = both; len(both) != len(before) {
		if err := a.saveLocked(); err != nil {
			a.req = before
			return err
		}
	}
	if err := apply(); err != nil {
		a.req = before
		if !maps.Equal(both, before) {
			_ = a.saveLocked() // else load drops the new names' entries
		}
		return err
	}
	if a.req = after; maps.Equal(after, before) {
		return nil
	}
	return a.saveLocked()
}

func (a *accountTLS) saveLocked() error {
	entries := make([]accountTLSEntry, 0, len(a.req))
	for k, r := range a.req {
		entries = append(entries, accountTLSEntry{k.User, k.Host, r})
	}
	sort.Slice(entries, func(i, j int) bool {
		return entries[i].User+"@"+entries[i].Host < entries[j].User+"@"+entries[j].Host
	})
	data, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return a.cat.SetAccountTLS(data)
}

// checkAccountTLS refuses the login of account g over a connection that
// does not meet its requirement, with the 1045 a wrong password gets.
func (s *Server) checkAccountTLS(c *mysql.Conn, g mysql.Getter, addr net.Addr) error {
	u, ok := g.(gms.MysqlConnectionUser)
	if !ok {
		return nil
	}
	req := s.acctTLS.get(accountKey{u.User, u.Host})
	if req == "" {
		return nil
	}
	state, secure := tlsSession(c)
	why := ""
	switch {
	case !secure:
		why = "the account requires SSL and the connection does not use TLS"
	case req == requireX509 && len(state.VerifiedChains) == 0:
		why = "the account requires X509 and the client sent no certificate signed by the server's CA"
	default:
		return nil
	}
	s.log.Warn("login refused: "+why, "user", u.User, "host", u.Host, "client", addr.String())
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied")
}

func keyOf(an sqlparser.AccountName) accountKey {
	host := an.Host
	if an.AnyHost || host == "" {
		host = "%"
	}
	return accountKey{an.Name, host}
}

func errRequireUnsupported(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
		"This version of ReorgDB doesn't yet support '%s'", what)
}

// accountTLSBefore handles the TLS requirement of CREATE USER, ALTER USER
// and DROP USER: it returns the statement go-mysql-server is to run (ALTER
// USER without its REQUIRE clause, which go-mysql-server's grammar lacks)
// and what to record once it has succeeded; handled is true if there is
// nothing for go-mysql-server to do, as for RENAME USER (renameuser.go)
// and the statements on roles that roles.go reads.
func (h *handler) accountTLSBefore(c *mysql.Conn, query string) (_ string, after func() error, handled bool, _ error) {
	verb, object := leadingTokens(query)
	if (verb == sqlparser.CREATE || verb == sqlparser.ALTER) && object == sqlparser.USER {
		query = hexAuthAsString(query)
	}
	switch {
	case (verb == sqlparser.CREATE || verb == sqlparser.DROP) && object == sqlparser.USER:
		stmt, err := sqlparser.Parse(query)
		if err != nil {
			return query, nil, false, nil // go-mysql-server reports it
		}
		switch st := stmt.(type) {
		case *sqlparser.CreateUser:
			after, err := h.createUserTLS(st)
			return query, after, false, err
		case *sqlparser.DropUser:
			keys := make([]accountKey, len(st.AccountNames))
			for i, an := range st.AccountNames {
				keys[i] = keyOf(an)
			}
			return query, func() error { return h.s.acctTLS.set("", keys...) }, false, nil
		}
	case verb == sqlparser.ALTER && object == sqlparser.USER:
		if ok, err := h.alterDefaultRole(c, query); ok {
			return query, nil, true, err
		}
		if ok, err := h.alterAccountLock(c, query); ok {
			return query, nil, true, err
		}
		return h.alterUserTLS(c, query)
	case verb == sqlparser.SET && object == sqlparser.ROLE:
		if ok, err := h.setRole(c, query); ok {
			return query, nil, true, err
		}
	case verb == sqlparser.SET && object == sqlparser.DEFAULT:
		if ok, err := h.setDefaultRole(c, query); ok {
			return query, nil, true, err
		}
	case verb == sqlparser.RENAME && object == sqlparser.USER:
		stmt, err := sqlparser.Parse(query)
		if st, ok := stmt.(*sqlparser.RenameUser); ok && err == nil {
			return query, nil, true, h.renameUser(c, st)
		}
	case verb == sqlparser.GRANT:
		if _, _, _, found := requireClause(query); found {
			return query, nil, false, errRequireUnsupported("GRANT ... REQUIRE; use ALTER USER ... REQUIRE")
		}
		return h.s.grantToCurrentUser(c.UserData, query), nil, false, nil
	}
	return query, nil, false, nil
}

// leadingTokens returns the token types of query's first two words,
// after any comment; 0s for a statement that cannot be about accounts.
func leadingTokens(query string) (int, int) {
	t := strings.TrimLeft(query, " \t\r\n(")
	if !mayBeAccountStatement(t) {
		return 0, 0
	}
	tk := sqlparser.NewStringTokenizer(t)
	next := func() int {
		typ, _ := tk.Scan()
		for typ == sqlparser.COMMENT {
			typ, _ = tk.Scan()
		}
		return typ
	}
	first := next()
	return first, next()
}

// mayBeAccountStatement cheaply rules out the statements that cannot be
// about accounts, SELECT and REPLACE among them.
func mayBeAccountStatement(t string) bool {
	switch {
	case t == "":
		return false
	case t[0] == 's' || t[0] == 'S':
		return startsWord(t, "set")
	case t[0] == 'r' || t[0] == 'R':
		return startsWord(t, "rename") || startsWord(t, "revoke")
	case t[0] == 'd' || t[0] == 'D':
		return startsWord(t, "drop") // not DELETE, DESCRIBE, DO
	case t[0] == 'c' || t[0] == 'C':
		return startsWord(t, "create") // not COMMIT, CALL
	case t[0] == 'a' || t[0] == 'A':
		return startsWord(t, "alter")
	case t[0] == 'g' || t[0] == 'G':
		return startsWord(t, "grant")
	}
	return strings.ContainsRune("/#-", rune(t[0]))
}

// startsWord reports whether t starts with word w and a space.
func startsWord(t, w string) bool {
	return len(t) > len(w) && strings.EqualFold(t[:len(w)], w) && strings.ContainsRune(" \t\r\n", rune(t[len(w)]))
}

// createUserTLS records the requirement of the accounts CREATE USER
// creates, and locks them for ACCOUNT LOCK, which go-mysql-server
// ignores; those that exist already (IF NOT EXISTS) keep theirs.
func (h *handler) createUserTLS(st *sqlparser.CreateUser) (func() error, error) {
	req, err := tlsRequirement(st.TLSOptions)
	if err != nil {
		return nil, err
	}
	db := h.s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	var keys []accountKey
	for _, u := range st.Users {
		k := keyOf(u.AccountName)
		if _, exists := rd.GetUser(mysql_db.UserPrimaryKey{User: k.User, Host: k.Host}); !exists {
			keys = append(keys, k)
		}
	}
	return func() error {
		if st.Locked {
			if err := h.s.setLocked(keys, true); err != nil {
				return err
			}
		}
		return h.s.acctTLS.set(req, keys...)
	}, nil
}

func tlsRequirement(o *sqlparser.TLSOptions) (string, error) {
	switch {
	case o == nil:
		return "", nil
	case o.SSL:
		return requireSSL, nil
	case o.X509:
		return requireX509, nil
	}
	return "", errRequireUnsupported("REQUIRE CIPHER, ISSUER or SUBJECT")
}

// alterUserTLS takes the REQUIRE clause out of ALTER USER and records it
// for the account once the rest has succeeded. go-mysql-server would
// empty the password of an ALTER USER that names none, so such a
// statement is not passed on: it is checked, and done, here.
func (h *handler) alterUserTLS(c *mysql.Conn, query string) (string, func() error, bool, error) {
	start, end, req, found := requireClause(query)
	if req == "?" {
		return query, nil, false, errRequireUnsupported("REQUIRE CIPHER, ISSUER or SUBJECT")
	}
	rest := query
	if found {
		rest = query[:start] + " " + query[end:]
	}
	stmt, err := sqlparser.Parse(rest)
	if err != nil {
		return query, nil, false, nil // go-mysql-server reports it
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.Action != sqlparser.AlterStr || ddl.User.IsEmpty() {
		return query, nil, false, nil
	}
	k := keyOf(ddl.User)
	exists := h.s.accountExists(k)
	if a := ddl.Authentication; a == nil || *a == (sqlparser.Authentication{}) {
		if err := h.s.checkAlterUser(c, k, exists, ddl.IfExists); err != nil {
			return query, nil, false, err
		}
		if !found || !exists {
			return query, nil, true, nil
		}
		return query, func() error { return h.s.acctTLS.set(req, k) }, true, nil
	}
	if !found {
		return query, nil, false, nil
	}
	return rest, func() error {
		if !h.s.accountExists(k) { // ALTER USER IF EXISTS of no account
			return nil
		}
		return h.s.acctTLS.set(req, k)
	}, false, nil
}

func (s *Server) accountExists(k accountKey) bool {
	rd := s.engine.SQL.Analyzer.Catalog.MySQLDb.Reader()
	defer rd.Close()
	_, ok := rd.GetUser(mysql_db.UserPrimaryKey{User: k.User, Host: k.Host})
	return ok
}

// checkAlterUser answers as MySQL an ALTER USER of account k by the
// client of c: it needs CREATE USER, or UPDATE on the mysql schema, and
// an existing account unless IF EXISTS, and read_only off.
func (s *Server) checkAlterUser(c *mysql.Conn, k accountKey, exists, ifExists bool) error {
	if err := s.checkAccountAdmin(c); err != nil {
		return err
	}
	if !exists && !ifExists {
		return errAccountOp("ALTER USER", []accountKey{k})
	}
	return nil
}

func (s *Server) canAlterUsers(g mysql.Getter) bool {
	u, ok := g.(gms.MysqlConnectionUser)
	if !ok {
		return false
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	user := db.GetUser(rd, u.User, u.Host, false)
	return user != nil && (user.PrivilegeSet.Has(gms.PrivilegeType_CreateUser) ||
		user.PrivilegeSet.Database("mysql").Has(gms.PrivilegeType_Update))
}

// requireClause finds an account's REQUIRE clause in query by its tokens
// (so that a password's text is never taken for one): its byte range and
// requirement ("" for NONE, "?" for CIPHER, ISSUER or SUBJECT).
func requireClause(query string) (start, end int, req string, found bool) {
	tk := sqlparser.NewStringTokenizer(query)
	prev := 0
	for {
		// Position is one past the token's end (the tokenizer's lookahead).
		typ, val := tk.Scan()
		switch {
		case typ == 0 || typ == sqlparser.LEX_ERROR:
			return 0, 0, "", false
		case typ == sqlparser.COMMENT:
			continue
		case typ == sqlparser.REQUIRE:
			start = tk.Position - 1 - len(val)
		case prev == sqlparser.REQUIRE:
			end = tk.Position - 1
			switch typ {
			case sqlparser.NONE:
				return start, end, "", true
			case sqlparser.SSL:
				return start, end, requireSSL, true
			case sqlparser.X509:
				return start, end, requireX509, true
			case sqlparser.CIPHER, sqlparser.ISSUER, sqlparser.SUBJECT:
				return start, end, "?", true
			}
		}
		prev = typ
	}
}
