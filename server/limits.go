package server

import (
	"net"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// Connection limits as MySQL enforces them. Every accepted socket counts
// against max_connections from accept to close, authenticated or not, as
// in MySQL. One socket past the limit is let through the handshake:
// MySQL keeps that one for an account with SUPER or CONNECTION_ADMIN, so
// that an administrator can still get in to see what holds the others;
// anyone else is refused there with 1040. Beyond that the server answers
// 1040 in place of its greeting.
//
// The whole handshake must be done within connect_timeout seconds, so
// that sockets that never authenticate do not hold slots.

func errTooManyConnections() *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERConCount, "08004", "Too many connections")
}

// accepted counts a new socket and says whether it may even start a
// handshake.
func (s *Server) accepted(c net.Conn) bool {
	n := s.open.Add(1)
	if n > rsql.GlobalInt("max_connections", 151)+1 {
		return false
	}
	c.SetDeadline(time.Now().Add(time.Duration(rsql.GlobalInt("connect_timeout", 10)) * time.Second))
	return true
}

// OpenConnections is the number of client sockets counted against
// max_connections.
func (s *Server) OpenConnections() int64 { return s.open.Load() }

// refuse answers a socket over the limit with 1040 and closes it. The
// client reads the error where it expects the server's greeting.
func refuse(c net.Conn) {
	defer c.Close()
	e := errTooManyConnections()
	p := []byte{0xff, byte(e.Num), byte(e.Num >> 8), '#'}
	p = append(p, e.State...)
	p = append(p, e.Message...)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(packet(0, p))
}

// admitted runs once the client has authenticated as g: a connection
// over max_connections is refused unless the account may use the
// administrator's slot, and the handshake's deadline goes.
func (s *Server) admitted(c *mysql.Conn, g mysql.Getter) error {
	if s.open.Load() > rsql.GlobalInt("max_connections", 151) && !s.connectionAdmin(g) {
		return errTooManyConnections()
	}
	c.Conn.SetDeadline(time.Time{})
	if pc, ok := c.Conn.(*protoConn); ok {
		pc.loggedIn.Store(true) // from now on wait_timeout applies
	}
	return nil
}

// connectionAdmin reports whether the account g authenticated as has
// SUPER or CONNECTION_ADMIN.
func (s *Server) connectionAdmin(g mysql.Getter) bool {
	return s.hasPrivilege(g, "connection_admin")
}

// hasPrivilege reports whether the account g authenticated as has SUPER
// or the dynamic privilege dynamic, which MySQL 8 accepts in its place.
func (s *Server) hasPrivilege(g mysql.Getter, dynamic string) bool {
	u, ok := g.(gms.MysqlConnectionUser)
	if !ok {
		return false
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	user := db.GetUser(rd, u.User, u.Host, false)
	return user != nil && (user.PrivilegeSet.Has(gms.PrivilegeType_Super) || user.PrivilegeSet.HasDynamic(dynamic))
}
