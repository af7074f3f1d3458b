package catalog

import (
	"testing"

	"github.com/reorgdb/reorgdb/codec"
)

// TestTempIDsAboveLeftovers: the temporary-table keys an earlier run left
// are cleared at start, and a temporary ID handed out before or after the
// clearing never names a table that still has keys.
func TestTempIDsAboveLeftovers(t *testing.T) {
	st := openStore(t, t.TempDir())
	defer st.Close()
	c, err := Open(st)
	if err != nil {
		t.Fatal(err)
	}
	txn := st.Begin()
	for _, k := range [][]byte{codec.RecordKey(TempIDBase+7, 1), autoIDKey(TempIDBase+9, AutoIncrement), codec.RecordKey(5, 1)} {
		if err := txn.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if last, err := c.lastTempID(); err != nil || last != TempIDBase+9 {
		t.Fatalf("lastTempID = %d, %v; want base+9", last-TempIDBase, err)
	}
	if err := c.ClearTemporary(); err != nil {
		t.Fatal(err)
	}
	if last, err := c.lastTempID(); err != nil || last != 0 {
		t.Fatalf("after ClearTemporary: lastTempID = %d, %v; want none", last, err)
	}
	if id := c.NewTempID(); id != TempIDBase+1 {
		t.Errorf("NewTempID = base+%d, want base+1", id-TempIDBase)
	}
	r := st.Begin()
	defer r.Rollback()
	if _, ok, err := r.Get(codec.RecordKey(5, 1)); err != nil || !ok {
		t.Errorf("a table's row went with the temporary tables' keys: %v, %v", ok, err)
	}
}
