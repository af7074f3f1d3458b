package sql

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// SET PERSIST, SET PERSIST_ONLY and RESET PERSIST as MySQL 8: the values
// go to mysqld-auto.cnf in the data directory, in MySQL's JSON layout,
// and are applied when the server starts, after its flags, so a persisted
// value wins. SET GLOBAL alone is lost on restart, as in MySQL.

// PersistFile is the name of the persisted variables' file.
const PersistFile = "mysqld-auto.cnf"

type persistedVars struct {
	path string
	mu   sync.Mutex
}

type persistedValue struct {
	Value    string `json:"Value"`
	Metadata struct {
		Timestamp int64  `json:"Timestamp"` // microseconds since the epoch
		User      string `json:"User"`
		Host      string `json:"Host"`
	} `json:"Metadata"`
}

// persistedContents is the file: dynamic variables under "mysql_server",
// variables only a restart can change under its
// "mysql_server_static_options", as MySQL 8.0 writes them.
type persistedContents struct {
	dynamic, static map[string]persistedValue
}

const staticKey = "mysql_server_static_options"

func (p *persistedVars) read() (persistedContents, error) {
	c := persistedContents{dynamic: map[string]persistedValue{}, static: map[string]persistedValue{}}
	data, err := os.ReadFile(p.path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	var file struct {
		Version int                        `json:"Version"`
		Server  map[string]json.RawMessage `json:"mysql_server"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return c, fmt.Errorf("%s: %w", p.path, err)
	}
	for k, raw := range file.Server {
		if k == staticKey {
			if err := json.Unmarshal(raw, &c.static); err != nil {
				return c, fmt.Errorf("%s: %s: %w", p.path, staticKey, err)
			}
			continue
		}
		var v persistedValue
		if err := json.Unmarshal(raw, &v); err != nil {
			return c, fmt.Errorf("%s: %s: %w", p.path, k, err)
		}
		c.dynamic[k] = v
	}
	return c, nil
}

func (p *persistedVars) write(c persistedContents) error {
	server := map[string]any{}
	for k, v := range c.dynamic {
		server[k] = v
	}
	if len(c.static) > 0 {
		server[staticKey] = c.static
	}
	data, err := json.MarshalIndent(map[string]any{"Version": 1, "mysql_server": server}, "", "  ")
	if err != nil {
		return err
	}
	tmp := p.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p.path)
}

// loadPersisted applies the persisted values. A variable this server
// does not know, or a value it refuses, is skipped with a warning, as
// MySQL does, so that a file from another version does not keep the
// server from starting; a file that is not JSON does.
func (e *Engine) loadPersisted() error {
	if e.persist == nil {
		return nil
	}
	c, err := e.persist.read()
	if err != nil {
		return fmt.Errorf("persisted variables: %w", err)
	}
	names := make([]string, 0, len(c.dynamic)+len(c.static))
	vals := map[string]string{}
	for _, m := range []map[string]persistedValue{c.static, c.dynamic} {
		for k, v := range m {
			names = append(names, k)
			vals[k] = v.Value
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if err := gms.SystemVariables.AssignValues(map[string]any{k: vals[k]}); err != nil {
			e.log.Warn("persisted variable not applied", "file", e.persist.path, "variable", k, "value", vals[k], "err", err)
		}
	}
	return nil
}

var _ gms.PersistableSession = (*Session)(nil)

var errNoPersistence = errors.New("this server keeps no persisted variables")

// PersistGlobal implements SET PERSIST and SET PERSIST_ONLY (for
// PERSIST, go-mysql-server sets the global value afterwards). The value
// is checked first, so that a value SET GLOBAL would refuse never reaches
// the file.
func (s *Session) PersistGlobal(ctx *gms.Context, name string, value any) error {
	p := s.e.persist
	if p == nil {
		return errNoPersistence
	}
	if err := s.e.mayPersist(ctx); err != nil {
		return err
	}
	sv, _, ok := gms.SystemVariables.GetGlobal(name)
	if !ok {
		return gms.ErrUnknownSystemVariable.New(name)
	}
	name = sv.GetName()
	mv, _ := sv.(*gms.MysqlSystemVariable)
	if mv != nil && mv.Scope.IsSessionOnly() {
		return gms.ErrSystemVariableSessionOnly.New(name)
	}
	only := persistOnly(ctx.Query(), name)
	if sv.IsReadOnly() && !only {
		return gms.ErrSystemVariableReadOnly.New(name)
	}
	conv, _, err := sv.GetType().Convert(ctx, value)
	if err != nil {
		return err
	}
	if mv != nil && mv.NotifyChanged != nil && !only {
		// The checks SET GLOBAL makes beyond the type (time_zone's
		// names); it applies the value right after anyway.
		if err := mv.NotifyChanged(ctx, gms.GetMysqlScope(gms.SystemVariableScope_Global), gms.SystemVarValue{Var: sv, Val: conv}); err != nil {
			return err
		}
	}
	var v persistedValue
	v.Value = persistedString(sv, conv)
	v.Metadata.Timestamp = time.Now().UnixMicro()
	if cl := ctx.Session.Client(); cl.User != "" {
		v.Metadata.User, v.Metadata.Host = cl.User, cl.Address
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, err := p.read()
	if err != nil {
		return err
	}
	delete(c.dynamic, name)
	delete(c.static, name)
	if mv != nil && !mv.Dynamic {
		c.static[name] = v
	} else {
		c.dynamic[name] = v
	}
	return p.write(c)
}

// persistOnly reports whether query sets name with PERSIST_ONLY.
func persistOnly(query, name string) bool {
	re, err := regexp.Compile(`(?i)(\bPERSIST_ONLY\s+|@@PERSIST_ONLY\.)` + "`?" + regexp.QuoteMeta(name) + "`?" + `\s*(=|:=)`)
	return err == nil && re.MatchString(query)
}

// persistedString is a value as the file holds it: booleans as ON/OFF,
// sets as their names, like MySQL.
func persistedString(sv gms.SystemVariable, v any) string {
	switch t := sv.GetType().(type) {
	case gms.SetType:
		if bits, ok := v.(uint64); ok {
			if s, err := t.BitsToString(bits); err == nil {
				return s
			}
		}
	}
	if _, ok := sv.GetType().(types.SystemBoolType); ok {
		if isOn(v) {
			return "ON"
		}
		return "OFF"
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// mayPersist: MySQL requires SYSTEM_VARIABLES_ADMIN or SUPER to persist
// variables or to remove them from the file.
func (e *Engine) mayPersist(ctx *gms.Context) error {
	db := e.SQL.Analyzer.Catalog.MySQLDb
	if db == nil || !db.Enabled() {
		return nil
	}
	if ps := db.UserActivePrivilegeSet(ctx); ps.Has(gms.PrivilegeType_Super) || ps.HasDynamic("system_variables_admin") {
		return nil
	}
	return errPersistDenied()
}

func errPersistDenied() error {
	return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
		"Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation")
}

// errNotPersisted is MySQL's answer to RESET PERSIST of a variable the
// file does not hold (a warning with IF EXISTS).
func errNotPersisted(name string) *mysql.SQLError {
	return mysql.NewSQLError(3615, mysql.SSUnknownSQLState, "Variable %s does not exist in persisted config file", name)
}

// RemovePersistedGlobal implements RESET PERSIST name.
func (s *Session) RemovePersistedGlobal(name string) error { return s.e.unpersist(name) }

// RemoveAllPersistedGlobals implements RESET PERSIST.
func (s *Session) RemoveAllPersistedGlobals() error { return s.e.unpersist("") }

// unpersist removes name from the file, or everything for "".
func (e *Engine) unpersist(name string) error {
	p := e.persist
	if p == nil {
		return errNoPersistence
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if name == "" {
		return p.write(persistedContents{dynamic: map[string]persistedValue{}})
	}
	c, err := p.read()
	if err != nil {
		return err
	}
	found := false
	for _, m := range []map[string]persistedValue{c.dynamic, c.static} {
		for k := range m {
			if strings.EqualFold(k, name) {
				delete(m, k)
				found = true
			}
		}
	}
	if !found {
		return errNotPersisted(name)
	}
	return p.write(c)
}

// GetPersistedValue implements gms.PersistableSession.
func (s *Session) GetPersistedValue(name string) (any, error) {
	p := s.e.persist
	if p == nil {
		return nil, errNoPersistence
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, err := p.read()
	if err != nil {
		return nil, err
	}
	for _, m := range []map[string]persistedValue{c.dynamic, c.static} {
		for k, v := range m {
			if strings.EqualFold(k, name) {
				return v.Value, nil
			}
		}
	}
	return nil, nil
}

var reResetPersist = regexp.MustCompile("(?is)^\\s*RESET\\s+PERSIST(?:\\s+(IF\\s+EXISTS\\s+)?`?([A-Za-z0-9_$.]+)`?)?\\s*;?\\s*$")

// IsResetPersist reports whether query is RESET PERSIST [[IF EXISTS]
// name], which go-mysql-server's parser does not know.
func IsResetPersist(query string) bool { return reResetPersist.MatchString(query) }

// ResetPersist runs RESET PERSIST for a client that mayPersist reports
// allowed or not. The warning is for IF EXISTS of a variable the file
// does not hold.
func (e *Engine) ResetPersist(query string, allowed bool) (warning *mysql.SQLError, err error) {
	m := reResetPersist.FindStringSubmatch(query)
	if m == nil {
		return nil, mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s'", query)
	}
	if !allowed {
		return nil, errPersistDenied()
	}
	err = e.unpersist(m[2])
	var se *mysql.SQLError
	if m[1] != "" && errors.As(err, &se) && se.Num == 3615 {
		return se, nil
	}
	return nil, err
}
