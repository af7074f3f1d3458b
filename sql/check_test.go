package sql_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAdminCheckFindsInconsistencies damages an index behind the SQL
// layer's back (a missing entry, a stray entry, an entry pointing at the
// wrong row) and expects ADMIN CHECK to fail with 8003 naming the index,
// while the undamaged index still checks clean.
func TestAdminCheckFindsInconsistencies(t *testing.T) {
	for _, damage := range []string{"missing", "stray", "wrong-handle"} {
		t.Run(damage, func(t *testing.T) {
			s := servertest.Start(t)
			db := s.DB("app")
			mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, u INT NOT NULL, KEY a_idx (a), UNIQUE KEY u_idx (u))")
			mustExec(t, db, "INSERT INTO t VALUES (1, 10, 100), (2, 20, 200), (3, 30, 300)")
			mustExec(t, db, "ADMIN CHECK TABLE t")

			sch := s.Engine().Catalog().Current()
			d, _ := sch.Database("app")
			tbl, _ := sch.Table(d.ID, "t")
			a, u := tbl.IndexByName("a_idx"), tbl.IndexByName("u_idx")
			txn := s.Engine().Store().Begin()
			h := int64(2)
			var key, val []byte
			var err error
			broken := "a_idx"
			switch damage {
			case "missing":
				key, err = codec.IndexKey(nil, tbl.ID, a.ID, []any{int64(20)}, &h)
				if err == nil {
					err = txn.Delete(key)
				}
			case "stray":
				h = 9
				key, err = codec.IndexKey(nil, tbl.ID, a.ID, []any{int64(90)}, &h)
				if err == nil {
					err = txn.Set(key, []byte{})
				}
			case "wrong-handle":
				broken = "u_idx"
				key, err = codec.IndexKey(nil, tbl.ID, u.ID, []any{int64(200)}, nil)
				val = codec.EncodeHandle(nil, 3)
				if err == nil {
					err = txn.Set(key, val)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			for _, stmt := range []string{"ADMIN CHECK TABLE t", "ADMIN CHECK INDEX t " + broken} {
				_, err := db.Exec(stmt)
				if errCode(err) != 8003 || !strings.Contains(err.Error(), broken) {
					t.Fatalf("%s after a %s entry: got %v, want error 8003 naming %s", stmt, damage, err, broken)
				}
			}
			other := map[string]string{"a_idx": "u_idx", "u_idx": "a_idx"}[broken]
			mustExec(t, db, "ADMIN CHECK INDEX t "+other)
		})
	}
}
