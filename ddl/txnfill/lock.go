package txnfill

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reorgdb/reorgdb/kv"
)

// ErrRowBusy ends a batch at a row a user transaction holds the lock of;
// it is a write conflict, so a batch that could not take even its first
// row is retried like one.
var ErrRowBusy = fmt.Errorf("%w: row locked by a transaction", kv.ErrWriteConflict)

// LockLatest takes the lock on key as DML takes it and reads its newest
// committed version: a background batch that writes what it read so
// serializes with DML on the key, and the transaction that locked first
// commits without conflict. A batch waits (wait) only for its first row,
// while it holds no other lock, so it is never part of a deadlock and
// still advances past rows that DML keeps locked; for any other key a
// transaction holds it gets ErrRowBusy at once.
func LockLatest(ctx context.Context, txn *kv.Txn, key []byte, wait bool) ([]byte, bool, error) {
	if wait {
		if _, err := txn.Lock(ctx, key, rowLockWait); err != nil {
			if errors.Is(err, kv.ErrLockWaitTimeout) {
				err = ErrRowBusy
			}
			return nil, false, err
		}
	} else if ok, err := txn.TryLock(key); err != nil || !ok {
		if err == nil {
			err = ErrRowBusy
		}
		return nil, false, err
	}
	return txn.GetLatest(key)
}

// rowLockWait bounds a batch's wait for its first row; the batch is then
// retried, checking for cancellation.
const rowLockWait = time.Second
