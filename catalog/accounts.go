package catalog

import (
	"context"

	"github.com/reorgdb/reorgdb/kv"
)

// Accounts (users, roles, grants) are kept as one opaque blob, serialized
// by the SQL layer, beside the schema in kv: they are backed up, restored
// and made durable with the data they protect. keyAccounts is outside
// the schema's versioning; a change to it is one kv transaction.
var keyAccounts = []byte("m/accounts")

// keyAccountTLS holds the accounts' TLS requirements (REQUIRE SSL), which
// the SQL layer's accounts blob has no room for; also opaque here.
var keyAccountTLS = []byte("m/account_tls")

// Accounts returns the stored accounts blob; nil if none was ever stored.
func (c *Catalog) Accounts() ([]byte, error) { return c.getMeta(keyAccounts) }

// SetAccounts stores the accounts blob durably.
func (c *Catalog) SetAccounts(data []byte) error { return c.setMeta(keyAccounts, data) }

// AccountTLS returns the stored TLS requirements blob; nil if none.
func (c *Catalog) AccountTLS() ([]byte, error) { return c.getMeta(keyAccountTLS) }

// SetAccountTLS stores the TLS requirements blob durably.
func (c *Catalog) SetAccountTLS(data []byte) error { return c.setMeta(keyAccountTLS, data) }

func (c *Catalog) getMeta(key []byte) ([]byte, error) {
	txn := c.store.Begin()
	defer txn.Rollback()
	v, _, err := txn.Get(key)
	return v, err
}

// setMeta stores an unversioned value durably. Writers are serialized by
// the catalog's lock, so a conflict can only come from a concurrent
// schema change's snapshot and is retried.
func (c *Catalog) setMeta(key, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.store.RunTxn(context.Background(), func(txn *kv.Txn) error { return txn.Set(key, data) })
	return err
}
