package server

import (
	"context"
	"errors"
	"hash/crc32"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// CHECKSUM TABLE, which go-mysql-server's parser does not know. Each
// table is read with a SELECT on the connection's session, so privileges,
// temporary tables and an open transaction's snapshot apply as to any
// read. Its checksum is the sum, modulo 2^32, of the CRC-32 of each row's
// values as the text protocol sends them (NULL marked apart from any
// value): equal rows give equal checksums in any order and on any ReorgDB
// server, so a dump restored elsewhere can be compared with its source.
// MySQL computes its checksum from its own storage format, so the numbers
// differ from MySQL's for the same rows; a table that does not exist gets
// NULL, as in MySQL.

func (h *handler) checksum(ctx context.Context, c *mysql.Conn, query string, tables [][2]string, cb mysql.ResultSpoolFn) error {
	h.waitPrev(c)
	cur := h.currentDB(c)
	return unwrapAbandoned(h.run(ctx, c, query, false, func(ctx context.Context, gate func(mysql.ResultSpoolFn) mysql.ResultSpoolFn) error {
		out := &sqltypes.Result{Fields: []*querypb.Field{varcharField("Table"), {Name: "Checksum", Type: querypb.Type_UINT64, Charset: 63}}}
		for _, t := range tables {
			db := t[0]
			if db == "" {
				if cur == "" {
					return mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
				}
				db = cur
			}
			sum, err := h.tableChecksum(ctx, c, db, t[1])
			v := sqltypes.NULL
			var se *mysql.SQLError
			switch {
			case err == nil:
				v = sqltypes.NewUint64(uint64(sum))
			case errors.As(err, &se) && se.Number() == mysql.ERNoSuchTable:
			default:
				return err
			}
			out.Rows = append(out.Rows, []sqltypes.Value{sqltypes.NewVarChar(db + "." + t[1]), v})
		}
		return gate(cb)(out, false)
	}))
}

// tableChecksum reads db.table through go-mysql-server and sums its rows'
// CRC-32s.
func (h *handler) tableChecksum(ctx context.Context, c *mysql.Conn, db, table string) (uint32, error) {
	var sum uint32
	q := "SELECT * FROM " + quoteIdent(db) + "." + quoteIdent(table)
	err := h.Handler.ComQuery(ctx, c, q, func(r *sqltypes.Result, _ bool) error {
		for _, row := range r.Rows {
			sum += rowCRC(row)
		}
		return nil
	})
	return sum, err
}

func rowCRC(row []sqltypes.Value) uint32 {
	crc := crc32.NewIEEE()
	var lenBuf [5]byte
	for _, v := range row {
		if v.IsNull() {
			crc.Write([]byte{0xff})
			continue
		}
		b := v.Raw()
		n := len(b)
		lenBuf = [5]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
		crc.Write(lenBuf[:])
		crc.Write(b)
	}
	return crc.Sum32()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
