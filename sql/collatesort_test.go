package sql

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// TestSortByString: the fast path's string sort orders rows exactly as
// go-mysql-server's stable Sorter does, ties and NULLs included, in both
// directions and several collations.
func TestSortByString(t *testing.T) {
	alphabet := []rune("aAbBzZ09-_ é É e ß ss ä Ä ö 中 😀\u0301")
	rng := rand.New(rand.NewPCG(7, 11))
	str := func() any {
		if rng.IntN(10) == 0 {
			return nil
		}
		// Half share a first few runes (equal or equal in weight), so
		// that comparisons go past the sort's precomputed prefix.
		var r []rune
		if rng.IntN(2) == 0 {
			r = []rune("aAaäa")[:rng.IntN(6)]
		}
		for range rng.IntN(5) {
			r = append(r, alphabet[rng.IntN(len(alphabet))])
		}
		return string(r)
	}
	ctx := gms.NewEmptyContext()
	for _, coll := range []gms.CollationID{gms.Collation_utf8mb4_0900_ai_ci, gms.Collation_utf8mb4_general_ci,
		gms.Collation_utf8mb4_bin, gms.Collation_utf8mb4_0900_bin, gms.Collation_utf8mb4_unicode_ci} {
		typ := types.MustCreateString(sqltypes.VarChar, 20, coll)
		for round := 0; round < 50; round++ {
			rows := make([]gms.Row, 40)
			for i := range rows {
				rows[i] = gms.Row{int64(i), str()}
			}
			for _, desc := range []bool{false, true} {
				want := append([]gms.Row(nil), rows...)
				order := gms.Ascending
				if desc {
					order = gms.Descending
				}
				sorter := &expression.Sorter{
					SortFields: []gms.SortField{{Column: expression.NewGetField(1, typ, "c", true), Order: order}},
					Rows:       want, Ctx: ctx,
				}
				sort.Stable(sorter)
				if sorter.LastError != nil {
					t.Fatal(sorter.LastError)
				}
				got := append([]gms.Row(nil), rows...)
				if !sortByString(got, 1, typ, desc) {
					t.Fatalf("%s: not sorted by the fast comparison", coll)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s desc=%v:\n got %v\nwant %v", coll, desc, got, want)
				}
			}
		}
	}
	// Not a string column, or invalid text: left to go-mysql-server.
	rows := []gms.Row{{int64(1), "\xff"}, {int64(2), "a"}}
	if sortByString(rows, 1, types.MustCreateString(sqltypes.VarChar, 20, gms.Collation_utf8mb4_0900_ai_ci), false) {
		t.Error("invalid UTF-8 sorted by the fast comparison")
	}
	if sortByString(rows, 0, types.Int64, false) {
		t.Error("an integer column sorted by the string comparison")
	}
}
