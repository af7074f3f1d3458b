package catalog

import (
	"errors"
	"sync"
	"testing"

	"github.com/reorgdb/reorgdb/kv"
)

func openStore(t *testing.T, dir string) *kv.Store {
	t.Helper()
	s, err := kv.Open(kv.Options{Dir: dir, NoSync: true, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCatalogPersistsAndVersions(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	c, err := Open(st)
	if err != nil {
		t.Fatal(err)
	}
	v0 := c.Current().Version
	var tid int64
	_, err = c.Update(func(ch *Change, _ *kv.Txn) error {
		db, err := ch.CreateDatabase("App", "utf8mb4_0900_bin")
		if err != nil {
			return err
		}
		tid = ch.NewID()
		ch.PutTable(&Table{ID: tid, DBID: db.ID, Name: "T1", Columns: []Column{{ID: 1, Name: "id", Type: "int"}},
			Indexes: []*Index{{ID: 1, Name: "ix", Columns: []IndexColumn{{ColumnID: 1}}, State: StateWriteOnly}}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	old := c.Current()
	if old.Version != v0+1 {
		t.Fatalf("version %d, want %d", old.Version, v0+1)
	}
	// A failing change publishes nothing.
	boom := errors.New("boom")
	if _, err := c.Update(func(ch *Change, _ *kv.Txn) error {
		ch.DropTable(tid)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if c.Current() != old {
		t.Fatal("a failed change was published")
	}
	if _, err := c.Update(func(ch *Change, _ *kv.Txn) error {
		_, err := ch.CreateDatabase("app", "")
		return err
	}); !errors.Is(err, ErrDatabaseExists) {
		t.Fatalf("duplicate database (case-insensitive): %v", err)
	}
	st.Close()

	st = openStore(t, dir)
	defer st.Close()
	c2, err := Open(st)
	if err != nil {
		t.Fatal(err)
	}
	s := c2.Current()
	if s.Version != old.Version {
		t.Fatalf("version after reopen %d, want %d", s.Version, old.Version)
	}
	db, ok := s.Database("app")
	if !ok {
		t.Fatal("database lost")
	}
	tbl, ok := s.Table(db.ID, "t1")
	if !ok || tbl.ID != tid || len(tbl.Indexes) != 1 || tbl.Indexes[0].State != StateWriteOnly {
		t.Fatalf("table after reopen: %+v", tbl)
	}
	// IDs keep increasing across restarts.
	_, err = c2.Update(func(ch *Change, _ *kv.Txn) error {
		if id := ch.NewID(); id <= tid {
			t.Errorf("new ID %d not above %d", id, tid)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAutoIDsUniqueAcrossRestartsAndRebase(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	c, _ := Open(st)
	seen := map[uint64]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				id, err := c.NextIDs(7, AutoIncrement, 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d handed out twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	max := uint64(0)
	for id := range seen {
		max = maxU(max, id)
	}
	if err := c.Rebase(7, AutoIncrement, max+1000); err != nil {
		t.Fatal(err)
	}
	if id, _ := c.NextIDs(7, AutoIncrement, 1); id <= max+1000 {
		t.Fatalf("after rebase to %d got %d", max+1000, id)
	}
	last, _ := c.PeekNext(7, AutoIncrement)
	st.Close()
	st = openStore(t, dir)
	defer st.Close()
	c2, _ := Open(st)
	if id, _ := c2.NextIDs(7, AutoIncrement, 1); id < last {
		t.Fatalf("after restart got %d, below %d", id, last)
	}
	// The other counter of the table is independent.
	if id, _ := c2.NextIDs(7, RowHandle, 1); id != 1 {
		t.Fatalf("row handle counter starts at %d", id)
	}
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// TestForeignKeysAndChecks: a table's foreign keys and checks are stored
// with it and read back after a reopen, ChildTables finds a key's child by
// its parent's name in any case and follows changes made within a
// Change, and Clone copies the key's column lists.
func TestForeignKeysAndChecks(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	c, err := Open(st)
	if err != nil {
		t.Fatal(err)
	}
	fk := ForeignKey{Name: "fk", Columns: []string{"pid"}, ParentDB: "d", ParentTable: "P", ParentColumns: []string{"id"}, OnDelete: "CASCADE"}
	var childID int64
	_, err = c.Update(func(ch *Change, _ *kv.Txn) error {
		db, err := ch.CreateDatabase("d", "")
		if err != nil {
			return err
		}
		ch.PutTable(&Table{ID: ch.NewID(), DBID: db.ID, Name: "p", Columns: []Column{{ID: 1, Name: "id", Type: "int"}}})
		childID = ch.NewID()
		ch.PutTable(&Table{ID: childID, DBID: db.ID, Name: "c", Columns: []Column{{ID: 1, Name: "pid", Type: "int"}}})
		if n := len(ch.Schema().ChildTables("d", "p")); n != 0 {
			t.Errorf("children before the key: %d", n)
		}
		child, _ := ch.Schema().TableByID(childID)
		nc := child.Clone()
		nc.ForeignKeys = []ForeignKey{fk}
		nc.Checks = []Check{{Name: "c_chk_1", Expr: "(pid > 0)", Enforced: true}}
		ch.PutTable(nc)
		if got := ch.Schema().ChildTables("D", "p"); len(got) != 1 || got[0].ID != childID {
			t.Errorf("children within the change: %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = openStore(t, dir)
	defer st.Close()
	if c, err = Open(st); err != nil {
		t.Fatal(err)
	}
	got := c.Current().ChildTables("d", "P")
	if len(got) != 1 || len(got[0].ForeignKeys) != 1 || got[0].ForeignKeys[0].OnDelete != "CASCADE" ||
		len(got[0].Checks) != 1 || got[0].Checks[0].Expr != "(pid > 0)" {
		t.Fatalf("after reopen: %+v", got)
	}
	cl := got[0].Clone()
	cl.ForeignKeys[0].Columns[0] = "x"
	if got[0].ForeignKeys[0].Columns[0] != "pid" {
		t.Fatal("Clone shares the key's columns")
	}
}
