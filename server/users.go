package server

import (
	"os"
	"path/filepath"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// usersFile keeps the accounts and grants of CREATE USER, GRANT and the
// like (go-mysql-server's mysql database) in the data directory; without
// a persister go-mysql-server dereferences nil on CREATE USER.
const usersFile = "mysql_users.db"

type usersPersister struct{ path string }

// Persist writes the serialized accounts atomically.
func (p usersPersister) Persist(_ *gms.Context, data []byte) error {
	tmp := p.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
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

// loadUsers reads the accounts an earlier run persisted and persists
// future changes.
func (s *Server) loadUsers() error {
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	path := filepath.Join(s.cfg.DataDir, usersFile)
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(data) > 0 {
		if err := db.LoadData(gms.NewEmptyContext(), data); err != nil {
			return err
		}
	}
	db.SetPersister(usersPersister{path: path})
	return nil
}
