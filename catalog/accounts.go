package catalog

import (
	"errors"

	"github.com/reorgdb/reorgdb/kv"
)

// Accounts (users, roles, grants) are kept as one opaque blob, serialized
// by the SQL layer, beside the schema in kv: they are backed up, restored
// and made durable with the data they protect. keyAccounts is outside
// the schema's versioning; a change to it is one kv transaction.
var keyAccounts = []byte("m/accounts")

// Accounts returns the stored accounts blob; nil if none was ever stored.
func (c *Catalog) Accounts() ([]byte, error) {
	txn := c.store.Begin()
	defer txn.Rollback()
	v, _, err := txn.Get(keyAccounts)
	return v, err
}

// SetAccounts stores the accounts blob durably. Writers are serialized
// by the catalog's lock, so a conflict can only come from a concurrent
// schema change's snapshot and is retried.
func (c *Catalog) SetAccounts(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		txn := c.store.Begin()
		err := txn.Set(keyAccounts, data)
		if err == nil {
			_, err = txn.Commit()
		} else {
			txn.Rollback()
		}
		if errors.Is(err, kv.ErrWriteConflict) && attempt < 10 {
			continue
		}
		return err
	}
}
