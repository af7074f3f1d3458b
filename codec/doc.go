// Package codec owns ReorgDB's on-disk byte formats below the SQL layer:
//
//   - the memcomparable encoding of single SQL values and value tuples
//     (EncodeKey, DecodeKey, EncodeKeyTuple), which lets the storage engine
//     order index entries with a plain bytes.Compare;
//   - the layout of record keys and index keys inside a table's key space
//     (RecordKey, IndexKey, TablePrefix, ...);
//   - the row value format (EncodeRow, RowDecoder), in which every stored
//     column is tagged with its column ID so that schema changes that add or
//     drop columns never have to rewrite existing rows.
//
// The package knows nothing about SQL types, collations or schemas. Callers
// convert values to one of the canonical Go kinds first:
//
//	nil                 SQL NULL
//	int64               signed integers of every width; TIME as microseconds
//	uint64              unsigned integers
//	float64             FLOAT / DOUBLE
//	decimal.Decimal     DECIMAL (github.com/shopspring/decimal)
//	[]byte or string    character and binary strings (decoders return []byte)
//	time.Time           DATE / DATETIME / TIMESTAMP, kept to the microsecond in UTC
//
// For convenience the encoders also accept the narrower Go integer types
// (int, int8..int32, uint, uint8..uint32) and widen them; decoders always
// return the canonical kind. Any other Go type is rejected with
// ErrUnsupportedType.
//
// Key encodings only promise to order values of the same kind: a column has a
// single type, so cross-kind comparisons never reach the storage layer. The
// one exception is NULL, which sorts before every non-NULL value, as in MySQL
// indexes.
package codec
