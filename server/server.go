// Package server runs ReorgDB as a MySQL-protocol server: it opens the
// store, builds the SQL engine, accepts client connections, and serves
// /status and /metrics on the status port.
//
// Connections take turns on Go's scheduler threads (fairread.go): one whose
// client keeps it busy gives way, at least once per millisecond, to
// connections whose requests have arrived but that the scheduler has not
// yet seen.
package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"github.com/reorgdb/reorgdb/kv"
	rsql "github.com/reorgdb/reorgdb/sql"
)

// Version is the server version reported to clients.
const Version = "8.0.33-ReorgDB-0.1"

// Config configures a server.
type Config struct {
	DataDir    string
	TempDir    string // index builds' temporary files; default DataDir/ddl-tmp
	Host       string
	Port       int // 0 picks a free port
	StatusPort int // 0 picks a free port, -1 disables
	// StatusHost is where the status port listens; default 127.0.0.1
	// whatever Host is, since /debug/pprof and /metrics need no login.
	StatusHost string
	NoSync     bool
	// WALBuffering writes the WAL through the page cache even where
	// commits are durable (kv.Options.WALBuffering).
	WALBuffering bool
	// Users maps user names to passwords of accounts (at '%' and
	// 'localhost') that every start makes sure exist. Without any, the
	// first start creates root@localhost with InitialRootPassword.
	Users map[string]string
	// InitialRootPassword is root@localhost's password when the first
	// start creates it; empty is allowed only while Host is loopback.
	InitialRootPassword string
	// EnablePprof serves Go's /debug/pprof on the status port.
	EnablePprof bool
	Logger      *slog.Logger
	// GCLifetime and GCInterval override the store's MVCC garbage
	// collection defaults (history kept only while readable; a full pass
	// every minute).
	GCLifetime, GCInterval time.Duration
	// CacheSize, MemTableSize, RowCacheSize and RangeCacheSize size the
	// store's memory (kv.Options); zero keeps its defaults, a negative
	// RowCacheSize or RangeCacheSize turns that cache off.
	CacheSize, MemTableSize, RowCacheSize, RangeCacheSize int64
	// Testing exposes fault-injection system variables for crash tests.
	Testing bool
	// MaxConnections is max_connections' value at startup; 0 keeps
	// MySQL's default, 151.
	MaxConnections int
	// SSLCert, SSLKey and SSLCA are the PEM files of TLS (mysqld's
	// ssl_cert, ssl_key, ssl_ca); with none given, a CA and a server
	// certificate are generated into DataDir on first start.
	SSLCert, SSLKey, SSLCA string
	// RequireSecureTransport is require_secure_transport at startup.
	RequireSecureTransport bool
}

// Server is a running ReorgDB server.
type Server struct {
	cfg     Config
	store   *kv.Store
	engine  *rsql.Engine
	mysql   *gmsserver.Server
	status  *http.Server
	addr    string
	stAddr  string
	started time.Time
	log     *slog.Logger
	stmts   *prometheus.CounterVec
	// stmtCounts holds stmts' counters by statement type, ok then error,
	// so a statement does not hash its labels.
	stmtCounts map[string][2]prometheus.Counter
	tls        *tls.Config
	done       chan error
	conns      sync.Map  // connection id -> *connState
	fast       fastStmts // prepared statements on the fast path (fastpath.go)
	// background counts statements' goroutines (interrupt.go), which
	// may outlive their connections.
	background atomic.Int64
	// open counts client sockets, authenticated or not (limits.go).
	open atomic.Int64
	// acctTLS is the accounts' REQUIRE SSL or X509 (accounttls.go).
	acctTLS accountTLS
}

// Start opens the data directory and starts serving.
func Start(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// go-mysql-server logs through logrus, at warning level for every
	// failed statement (each retried 1213 of a benchmark); keep only its
	// errors unless debugging.
	if cfg.Logger.Enabled(context.Background(), slog.LevelDebug) {
		logrus.SetLevel(logrus.DebugLevel)
	} else {
		logrus.SetLevel(logrus.ErrorLevel)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	setVersionVariables()
	tlsConf, err := loadTLS(cfg)
	if err != nil {
		return nil, err
	}
	store, err := kv.Open(kv.Options{Dir: cfg.DataDir, NoSync: cfg.NoSync, WALBuffering: cfg.WALBuffering, Logger: cfg.Logger,
		GCLifetime: cfg.GCLifetime, GCInterval: cfg.GCInterval,
		CacheSize: cfg.CacheSize, MemTableSize: cfg.MemTableSize, RowCacheSize: cfg.RowCacheSize, RangeCacheSize: cfg.RangeCacheSize})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if cfg.TempDir == "" {
		cfg.TempDir = filepath.Join(cfg.DataDir, "ddl-tmp")
	}
	validateSystemVariables()
	// Flags first: the engine then applies the persisted variables
	// (SET PERSIST), which win over flags as in MySQL.
	if cfg.MaxConnections != 0 {
		if err := gms.SystemVariables.AssignValues(map[string]any{"max_connections": int64(cfg.MaxConnections)}); err != nil {
			store.Close()
			return nil, fmt.Errorf("--max-connections: %w", err)
		}
	}
	rst := int8(0)
	if cfg.RequireSecureTransport {
		rst = 1
	}
	if err := gms.SystemVariables.AssignValues(map[string]any{"require_secure_transport": rst}); err != nil {
		store.Close()
		return nil, fmt.Errorf("--require-secure-transport: %w", err)
	}
	eng, err := rsql.NewEngine(store, rsql.Options{Logger: cfg.Logger, TempDir: cfg.TempDir, Testing: cfg.Testing, DataDir: cfg.DataDir})
	if err != nil {
		store.Close()
		return nil, err
	}
	addStrictUpdateRule(eng.SQL.Analyzer)
	s := &Server{cfg: cfg, store: store, engine: eng, started: time.Now(), log: cfg.Logger, done: make(chan error, 1), tls: tlsConf}
	if err := s.setupUsers(); err != nil {
		store.Close()
		return nil, err
	}
	s.stmts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "reorgdb", Subsystem: "sql", Name: "statements_total",
		Help: "Statements executed, by type and outcome.",
	}, []string{"type", "result"})
	s.stmtCounts = make(map[string][2]prometheus.Counter, len(statementTypes)+1)
	for _, typ := range append(statementTypes[:], "other") {
		s.stmtCounts[typ] = [2]prometheus.Counter{s.stmts.WithLabelValues(typ, "ok"), s.stmts.WithLabelValues(typ, "error")}
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)))
	if err != nil {
		store.Close()
		return nil, err
	}
	s.addr = ln.Addr().String()
	gcfg := gmsserver.Config{Protocol: "tcp", Address: s.addr, Listener: plainListener{ln, s}, Version: Version}
	gcfg.ProtocolListenerFactory = s.listenerFactory
	sb := func(ctx context.Context, conn *mysql.Conn, addr string) (gms.Session, error) {
		host := ""
		if conn.RemoteAddr() != nil {
			host, _, _ = net.SplitHostPort(conn.RemoteAddr().String())
		}
		base := gms.NewBaseSessionWithClientServer(addr, gms.Client{Address: host, User: conn.User, Capabilities: conn.Capabilities}, conn.ConnectionID)
		sess := eng.NewSession(base)
		handshakeCollation(base, conn.CharacterSet)
		interactiveWaitTimeout(base, conn.Capabilities)
		if ts, ok := tlsSession(conn); ok {
			base.SetStatusVariable(gms.NewEmptyContext(), "Ssl_cipher", tls.CipherSuiteName(ts.CipherSuite))
			base.SetStatusVariable(gms.NewEmptyContext(), "Ssl_version", tlsVersionName(ts.Version))
		}
		if st := s.connState(conn.ConnectionID); st != nil {
			st.mu.Lock()
			if st.sess == nil {
				// go-mysql-server makes the session at the first command;
				// it keeps the autocommit the handshake announced even if
				// the global changed in between.
				want := st.handshake&statusAutocommit != 0
				if sessionFlags(sess)&statusAutocommit != 0 != want {
					v := int8(0)
					if want {
						v = 1
					}
					base.SetSessionVariable(gms.NewEmptyContext(), "autocommit", v)
				}
			}
			st.sess = sess
			st.mu.Unlock()
		}
		return sess, nil
	}
	ms, err := gmsserver.NewServerWithHandler(gcfg, eng.SQL, gms.NewContext, sb, nil, func(h mysql.Handler) (mysql.Handler, error) {
		return newHandler(h, s), nil
	})
	if err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	s.mysql = ms
	go func() { s.done <- ms.Start() }()

	if cfg.StatusPort >= 0 {
		if err := s.startStatus(); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.log.Info("ReorgDB started", "addr", s.addr, "status", s.stAddr, "data_dir", cfg.DataDir, "version", Version)
	return s, nil
}

// setupUsers loads the stored accounts and, as mysqld --initialize does,
// creates root@localhost on the first start (none stored yet), or the
// --user accounts that do not exist on any start. It refuses a server
// that listens beyond loopback while an account that can log in has no
// password.
func (s *Server) setupUsers() error {
	fresh, err := s.loadUsers()
	if err != nil {
		return fmt.Errorf("load users: %w", err)
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	ed := db.Editor()
	defer ed.Close()
	added := false
	for u, p := range s.cfg.Users {
		if u == "" {
			return errors.New("empty user name")
		}
		for _, host := range []string{"%", "localhost"} {
			if _, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: host, User: u}); !ok {
				db.AddSuperUser(ed, u, host, p)
				added = true
			}
		}
	}
	if fresh && len(s.cfg.Users) == 0 {
		db.AddSuperUser(ed, "root", "localhost", s.cfg.InitialRootPassword)
		added = true
	}
	if added {
		if err := db.Persist(gms.NewEmptyContext(), ed); err != nil {
			return fmt.Errorf("store accounts: %w", err)
		}
	}
	if isLoopback(s.cfg.Host) {
		return nil
	}
	var open []string
	ed.VisitUsers(func(u *mysql_db.User) {
		if u.AuthString == "" && !u.Locked && !u.IsRole {
			open = append(open, "'"+u.User+"'@'"+u.Host+"'")
		}
	})
	if len(open) > 0 {
		sort.Strings(open)
		return fmt.Errorf("refusing to listen on %s: account %s has no password (give root one on first start with --initialize-root-password, or with SET PASSWORD / ALTER USER while listening on 127.0.0.1)",
			s.cfg.Host, strings.Join(open, ", "))
	}
	return nil
}

// isLoopback reports whether host is a loopback address or name.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) startStatus() error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(s.stmts)
	reg.MustRegister(s.engine.Metrics().Collectors()...)
	reg.MustRegister(s.store.Collectors()...)
	reg.MustRegister(newPebbleCollector(s.store))
	reg.MustRegister(newDDLCollector(s.engine.DDL))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if s.cfg.EnablePprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"version":        Version,
			"uptime_seconds": time.Since(s.started).Seconds(),
			"schema_version": s.engine.Catalog().Current().Version,
			"connections":    s.countSessions(),
		})
	})
	host := s.cfg.StatusHost
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(s.cfg.StatusPort)))
	if err != nil {
		return err
	}
	s.stAddr = ln.Addr().String()
	s.status = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.status.Serve(ln)
	return nil
}

func (s *Server) countSessions() int {
	n := 0
	s.mysql.SessionManager().Iter(func(gms.Session) (bool, error) { n++; return false, nil })
	return n
}

// Addr is the MySQL protocol address.
func (s *Server) Addr() string { return s.addr }

// StatusAddr is the HTTP status address.
func (s *Server) StatusAddr() string { return s.stAddr }

// Engine returns the SQL engine.
func (s *Server) Engine() *rsql.Engine { return s.engine }

// Done is closed with the MySQL listener's exit error.
func (s *Server) Done() <-chan error { return s.done }

// Close stops accepting clients, closes connections and the store.
func (s *Server) Close() error {
	var errs []error
	if s.status != nil {
		errs = append(errs, s.status.Close())
	}
	if s.mysql != nil {
		if err := s.mysql.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
			errs = append(errs, err)
		}
	}
	// Let statements and transactions in flight finish (clients that
	// disconnect roll theirs back) before the store goes away.
	for deadline := time.Now().Add(3 * time.Second); s.engine.ActiveTransactions() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	// Abandoned statements whose goroutines are still busy: give them a
	// moment (go-mysql-server's analysis of some statements takes minutes
	// and cannot be stopped; they touch the store only afterwards).
	for deadline := time.Now().Add(3 * time.Second); s.background.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	s.engine.Close()
	errs = append(errs, s.store.Close())
	return errors.Join(errs...)
}
