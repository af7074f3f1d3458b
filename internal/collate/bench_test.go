package collate

import (
	"strings"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// BenchmarkKey builds the key of a sysbench c value (CHAR(120) of digit
// groups) and of a short accented name, the per-row work of an index on
// such a column.
func BenchmarkKey(b *testing.B) {
	c := strings.Repeat("68487932199-", 10)[:119]
	for _, coll := range []gms.CollationID{gms.Collation_utf8mb4_0900_ai_ci, gms.Collation_utf8mb4_general_ci, gms.Collation_utf8mb4_unicode_ci, gms.Collation_latin1_swedish_ci} {
		for _, s := range []struct{ name, v string }{{"sysbench-c", c}, {"name", "Åsa Ørnulf-Müller"}} {
			b.Run(coll.Name()+"/"+s.name, func(b *testing.B) {
				var buf []byte
				for range b.N {
					buf = Key(buf[:0], coll, s.v)
				}
			})
		}
	}
}
