package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/reorgdb/reorgdb/kv"
)

// AutoIDKind selects one of a table's two counters.
type AutoIDKind byte

const (
	// AutoIncrement feeds the AUTO_INCREMENT column.
	AutoIncrement AutoIDKind = 'a'
	// RowHandle feeds hidden row handles of tables without an integer primary key.
	RowHandle AutoIDKind = 'h'
)

type autoKey struct {
	table int64
	kind  AutoIDKind
}

func autoIDKey(tableID int64, kind AutoIDKind) []byte {
	return append(idKey(prefixAutoI, tableID), byte(kind))
}

// allocator hands out IDs from a range reserved in kv ahead of use, so that
// an insert does not write the counter: IDs are unique and increasing but,
// like InnoDB after a restart and TiDB always, not gap-free. Reservations
// are not transactional, so a rolled-back insert never returns its ID.
type allocator struct {
	mu       sync.Mutex
	next     uint64 // next value to hand out; 0 = not loaded
	reserved uint64 // values < reserved are ours to hand out
	step     uint64
}

const (
	minStep = 1000
	maxStep = 1 << 20
)

func (c *Catalog) allocatorFor(tableID int64, kind AutoIDKind) *allocator {
	c.autoMu.Lock()
	defer c.autoMu.Unlock()
	k := autoKey{tableID, kind}
	a := c.autoID[k]
	if a == nil {
		a = &allocator{step: minStep}
		c.autoID[k] = a
	}
	return a
}

// readCounter returns the persisted reservation mark (the first value not yet reserved).
func readCounter(txn *kv.Txn, key []byte) (uint64, error) {
	v, ok, err := txn.Get(key)
	if err != nil || !ok {
		return 1, err
	}
	if len(v) != 8 {
		return 0, errors.New("catalog: corrupt auto id counter")
	}
	return binary.BigEndian.Uint64(v), nil
}

// reserve moves the persisted mark to at least upTo and returns the mark.
func (c *Catalog) reserve(key []byte, upTo uint64) (uint64, error) {
	mark := upTo
	_, err := c.store.RunTxn(context.Background(), func(txn *kv.Txn) error {
		cur, err := readCounter(txn, key)
		if err != nil || cur >= upTo {
			mark = cur
			return err
		}
		mark = upTo
		return txn.Set(key, binary.BigEndian.AppendUint64(nil, upTo))
	})
	if err != nil {
		return 0, err
	}
	return mark, nil
}

func (c *Catalog) load(a *allocator, key []byte) error {
	if a.next != 0 {
		return nil
	}
	txn := c.store.Begin()
	cur, err := readCounter(txn, key)
	txn.Rollback()
	if err != nil {
		return err
	}
	// Everything below the persisted mark may have been handed out before a
	// restart, so start above it.
	a.next, a.reserved = cur, cur
	return nil
}

// NextIDs hands out n consecutive IDs and returns the first.
func (c *Catalog) NextIDs(tableID int64, kind AutoIDKind, n uint64) (uint64, error) {
	a := c.allocatorFor(tableID, kind)
	key := autoIDKey(tableID, kind)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := c.load(a, key); err != nil {
		return 0, err
	}
	if a.next+n > a.reserved {
		// Grow the reservation with demand so that bulk loads do not pay a
		// kv commit every thousand rows.
		if a.step < maxStep {
			a.step *= 2
		}
		want := a.next + n + a.step
		mark, err := c.reserve(key, want)
		if err != nil {
			return 0, err
		}
		if mark > want {
			// Someone (Rebase) moved the mark beyond our range: skip ahead.
			a.next = mark
			if mark, err = c.reserve(key, mark+n+a.step); err != nil {
				return 0, err
			}
		}
		a.reserved = mark
	}
	first := a.next
	a.next += n
	return first, nil
}

// Rebase makes sure every ID handed out later is greater than v (an
// explicitly inserted AUTO_INCREMENT value, or ALTER ... AUTO_INCREMENT=).
func (c *Catalog) Rebase(tableID int64, kind AutoIDKind, v uint64) error {
	a := c.allocatorFor(tableID, kind)
	key := autoIDKey(tableID, kind)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := c.load(a, key); err != nil {
		return err
	}
	if v < a.next {
		return nil
	}
	a.next = v + 1
	if a.next > a.reserved {
		mark, err := c.reserve(key, a.next+a.step)
		if err != nil {
			return err
		}
		a.reserved = mark
	}
	return nil
}

// PeekNext returns the ID the next NextIDs call would return (without
// taking it), for SHOW CREATE TABLE and information_schema.
func (c *Catalog) PeekNext(tableID int64, kind AutoIDKind) (uint64, error) {
	a := c.allocatorFor(tableID, kind)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := c.load(a, autoIDKey(tableID, kind)); err != nil {
		return 0, err
	}
	return a.next, nil
}

// ResetAutoID restarts a table's counter at v (TRUNCATE).
func (c *Catalog) ResetAutoID(tableID int64, kind AutoIDKind, v uint64) error {
	a := c.allocatorFor(tableID, kind)
	key := autoIDKey(tableID, kind)
	a.mu.Lock()
	defer a.mu.Unlock()
	txn := c.store.Begin()
	if err := txn.Set(key, binary.BigEndian.AppendUint64(nil, v)); err != nil {
		txn.Rollback()
		return err
	}
	if _, err := txn.Commit(); err != nil {
		return err
	}
	a.next, a.reserved, a.step = v, v, minStep
	return nil
}
