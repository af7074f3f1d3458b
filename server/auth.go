package server

import (
	"errors"
	"net"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/vitess/go/mysql"
)

// go-mysql-server's accounts (its mysql database) authenticate clients
// through vitess, which answers the way MySQL does not:
//
//   - an unknown user makes every auth method's HandleUser false, and
//     vitess then gives up with client error 2012 ("No authentication
//     methods available"), which clients report as a malformed packet;
//   - a wrong password gets 1045 without the host or whether a password
//     was given.
//
// authServer wraps the accounts so that both get MySQL's 1045 text: the
// mysql_native_password method also takes on users no method knows (they
// then fail its password check like a wrong password, so an unknown user
// and a known one are told apart by nothing), and every method's 1045
// gets MySQL's text.
type authServer struct {
	mysql.AuthServer
	methods []mysql.AuthMethod
}

func wrapAuthServer(inner mysql.AuthServer, s *Server) *authServer {
	as := &authServer{AuthServer: inner}
	for _, m := range inner.AuthMethods() {
		as.methods = append(as.methods, &authMethod{AuthMethod: m, as: as, s: s})
	}
	return as
}

func (as *authServer) AuthMethods() []mysql.AuthMethod { return as.methods }

// known reports whether some auth method knows user.
func (as *authServer) known(c *mysql.Conn, user string) bool {
	for _, m := range as.AuthServer.AuthMethods() {
		if m.HandleUser(c, user) {
			return true
		}
	}
	return false
}

type authMethod struct {
	mysql.AuthMethod
	as *authServer
	s  *Server
}

func (m *authMethod) HandleUser(c *mysql.Conn, user string) bool {
	tlsLogin(c)
	if m.AuthMethod.HandleUser(c, user) {
		return true
	}
	return m.Name() == mysql.MysqlNativePassword && !m.as.known(c, user)
}

func (m *authMethod) HandleAuthPluginData(c *mysql.Conn, user string, server, client []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, server, client, addr)
	if err == nil {
		err = secureEnough(c)
	}
	if err == nil {
		err = m.s.checkAccountTLS(c, g, addr)
	}
	if err == nil {
		err = m.s.admitted(c, g)
	}
	if err != nil {
		// vitess closes the connection after sending the error.
		if pc, ok := c.Conn.(*protoConn); ok {
			pc.release()
		}
		var se *mysql.SQLError
		if errors.As(err, &se) && se.Num == mysql.ERAccessDeniedError {
			if !c.TLSEnabled() && m.s.needsTLS(user, addr) {
				m.s.log.Warn("login refused: the account uses caching_sha2_password, which needs a TLS connection",
					"user", user, "client", addr.String())
			}
			if m.Name() == mysql.MysqlNativePassword {
				if lerr := m.s.lockedLogin(user, addr, server, client); lerr != nil {
					return nil, lerr
				}
			}
			return nil, accessDenied(user, addr, usedPassword(client))
		}
		return nil, err
	}
	return g, nil
}

// usedPassword reports whether the client sent a password: an empty one
// is sent as no data, or as a single NUL by some clients.
func usedPassword(client []byte) bool {
	return len(client) > 1 || len(client) == 1 && client[0] != 0
}

// accessDenied is MySQL's 1045, naming the client's host as MySQL does
// (loopback addresses are localhost).
func accessDenied(user string, addr net.Addr, password bool) error {
	yes := "NO"
	if password {
		yes = "YES"
	}
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
		"Access denied for user '%s'@'%s' (using password: %s)", user, clientHost(addr), yes)
}

func clientHost(addr net.Addr) string {
	if addr == nil {
		return "localhost"
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "localhost"
	}
	return host
}

// listenerFactory builds go-mysql-server's vitess listener with the
// wrapped accounts.
func (s *Server) listenerFactory(cfg gmsserver.Config, lc mysql.ListenerConfig, sel gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
	lc.AuthServer = wrapAuthServer(lc.AuthServer, s)
	return gmsserver.MySQLProtocolListenerFactory(cfg, lc, sel)
}

// needsTLS reports whether user's account from addr uses
// caching_sha2_password, which vitess offers only over TLS: such an
// account looks unknown to a plain connection.
func (s *Server) needsTLS(user string, addr net.Addr) bool {
	host := clientHost(addr)
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	u := db.GetUser(rd, user, host, false)
	return u != nil && u.Plugin == string(mysql.CachingSha2Password)
}
