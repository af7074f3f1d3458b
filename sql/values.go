package sql

import (
	"context"
	"fmt"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/reorgdb/reorgdb/internal/collate"
)

// valueKind is how a column's values travel between go-mysql-server's Go
// representation and the codec's canonical one.
type valueKind uint8

const (
	kindOther valueKind = iota // through the type's Convert
	kindInt8
	kindInt16
	kindInt32
	kindInt64
	kindUint8
	kindUint16
	kindUint32
	kindUint64
	kindFloat32
	kindFloat64
	kindDecimal
	kindString
	kindBytes
	kindTime
	kindTimespan
	kindYear
	kindEnum
	kindSet
	kindBit
	kindJSON
)

func kindOf(t gms.Type) valueKind {
	switch t.Type() {
	case sqltypes.Int8:
		return kindInt8
	case sqltypes.Int16:
		return kindInt16
	case sqltypes.Int24, sqltypes.Int32:
		return kindInt32
	case sqltypes.Int64:
		return kindInt64
	case sqltypes.Uint8:
		return kindUint8
	case sqltypes.Uint16:
		return kindUint16
	case sqltypes.Uint24, sqltypes.Uint32:
		return kindUint32
	case sqltypes.Uint64:
		return kindUint64
	case sqltypes.Float32:
		return kindFloat32
	case sqltypes.Float64:
		return kindFloat64
	case sqltypes.Decimal:
		return kindDecimal
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
		return kindString
	case sqltypes.Binary, sqltypes.VarBinary, sqltypes.Blob:
		return kindBytes
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
		return kindTime
	case sqltypes.Time:
		return kindTimespan
	case sqltypes.Year:
		return kindYear
	case sqltypes.Enum:
		return kindEnum
	case sqltypes.Set:
		return kindSet
	case sqltypes.Bit:
		return kindBit
	case sqltypes.TypeJSON:
		return kindJSON
	}
	return kindOther
}

// toCanonical turns a go-mysql-server value into what package codec stores.
func toCanonical(k valueKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	case uint64:
		return x, nil
	case uint:
		return uint64(x), nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case decimal.Decimal:
		return x, nil
	case decimal.NullDecimal:
		if !x.Valid {
			return nil, nil
		}
		return x.Decimal, nil
	case string:
		return x, nil
	case []byte:
		return x, nil
	case time.Time:
		return x.UTC(), nil
	case types.Timespan:
		return int64(x), nil
	case gms.JSONWrapper:
		s, err := types.JsonToMySqlString(x)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// fromCanonical turns a decoded codec value back into the Go type
// go-mysql-server expects for the column.
func fromCanonical(k valueKind, t gms.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindInt8:
		return int8(v.(int64)), nil
	case kindInt16:
		return int16(v.(int64)), nil
	case kindInt32:
		return int32(v.(int64)), nil
	case kindInt64:
		return v.(int64), nil
	case kindUint8:
		return uint8(v.(uint64)), nil
	case kindUint16:
		return uint16(v.(uint64)), nil
	case kindUint32:
		return uint32(v.(uint64)), nil
	case kindUint64, kindBit, kindSet:
		return v.(uint64), nil
	case kindEnum:
		return uint16(v.(uint64)), nil
	case kindYear:
		return int16(v.(int64)), nil
	case kindFloat32:
		return float32(v.(float64)), nil
	case kindFloat64:
		return v.(float64), nil
	case kindDecimal:
		return v.(decimal.Decimal), nil
	case kindString:
		return string(v.([]byte)), nil
	case kindBytes:
		return v.([]byte), nil
	case kindTime:
		return v.(time.Time), nil
	case kindTimespan:
		return types.Timespan(v.(int64)), nil
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	out, _, err := t.Convert(context.Background(), v)
	return out, err
}

// keyValue returns a column's value as an index key part: the canonical
// value, cut to a prefix length when the index has one, and for a string
// in a non-bytewise collation the collation's sort key of that (package
// collate), so that key order and equality are the collation's. coll is 0
// for columns that are not strings. A sort key is appended to *sk when sk
// is not nil (the caller's scratch, reused from row to row), else to a new
// slice.
func keyValue(k valueKind, coll gms.CollationID, v any, prefix int64, sk *[]byte) (any, error) {
	c, err := toCanonical(k, v)
	if err != nil || c == nil {
		return c, err
	}
	if prefix > 0 {
		switch x := c.(type) {
		case string:
			if k == kindBytes {
				if int64(len(x)) > prefix {
					x = x[:prefix]
				}
				c = x
			} else {
				c = truncateRunes(x, prefix)
			}
		case []byte:
			if k == kindBytes {
				if int64(len(x)) > prefix {
					x = x[:prefix]
				}
				c = x
			} else {
				c = truncateRunes(string(x), prefix)
			}
		}
	}
	if k != kindString || coll == 0 || collate.Bytewise(coll) {
		return c, nil
	}
	var buf []byte
	if sk != nil {
		buf = *sk
	}
	start := len(buf)
	switch x := c.(type) {
	case string:
		buf = collate.Key(buf, coll, x)
	case []byte:
		buf = collate.KeyBytes(buf, coll, x)
	default:
		return c, nil
	}
	if sk != nil {
		*sk = buf
	}
	return buf[start:len(buf):len(buf)], nil
}

// stringCollation is the collation of a string column's sort keys, 0 for
// any other column.
func stringCollation(t gms.Type) gms.CollationID {
	if kindOf(t) != kindString {
		return 0
	}
	if ct, ok := t.(gms.TypeWithCollation); ok {
		return ct.Collation()
	}
	return 0
}

func truncateRunes(s string, n int64) string {
	var i int64
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// collationIndexable reports whether package collate builds sort keys for
// the column's collation, which is what a memcomparable index needs.
func collationIndexable(t gms.Type) (bool, string) {
	ct, ok := t.(gms.TypeWithCollation)
	if !ok {
		return true, ""
	}
	c := ct.Collation()
	return collate.Indexable(c), c.Name()
}
