package server

import (
	"os"
	"path/filepath"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/reorgdb/reorgdb/catalog"
)

// Accounts and grants of CREATE USER, GRANT and the like live in
// go-mysql-server's mysql database, which serializes them as a whole on
// every change; ReorgDB keeps that blob in kv beside the schema
// (catalog.SetAccounts), so that they are as durable as the data and go
// wherever the data directory goes. Without a persister go-mysql-server
// dereferences nil on CREATE USER.

// legacyUsersFile is where data directories of earlier versions kept the
// blob; it is moved into kv at startup.
const legacyUsersFile = "mysql_users.db"

type usersPersister struct{ cat *catalog.Catalog }

// Persist implements mysql_db.MySQLDbPersistence.
func (p usersPersister) Persist(_ *gms.Context, data []byte) error {
	return p.cat.SetAccounts(data)
}

// loadUsers loads the stored accounts and persists future changes; fresh
// reports that none were stored (a new data directory).
func (s *Server) loadUsers() (fresh bool, err error) {
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	cat := s.engine.Catalog()
	data, err := cat.Accounts()
	if err != nil {
		return false, err
	}
	legacy := filepath.Join(s.cfg.DataDir, legacyUsersFile)
	migrate := false
	if data == nil {
		if data, err = os.ReadFile(legacy); err != nil && !os.IsNotExist(err) {
			return false, err
		}
		migrate = len(data) > 0
	}
	if len(data) > 0 {
		if err := db.LoadData(gms.NewEmptyContext(), data); err != nil {
			return false, err
		}
	}
	if migrate {
		if err := cat.SetAccounts(data); err != nil {
			return false, err
		}
		if err := os.Remove(legacy); err != nil {
			return false, err
		}
	}
	db.SetPersister(usersPersister{cat: cat})
	return len(data) == 0, s.acctTLS.load(cat, db)
}
