package codec

import (
	"encoding/binary"
	"fmt"
)

// Key space layout:
//
//	't' tableID '_r' handle                     -> row value
//	't' tableID '_i' indexID values... [handle] -> index value
//
// IDs and handles are fixed-width sign-flipped big-endian int64s: fixed width
// means no ID's prefix can be a prefix of another's, so one table's (or one
// index's) keys form a single contiguous range that no other table or index
// interleaves with, and the sign flip keeps negative IDs ordered too.
const (
	tablePrefixLen  = 1 + 8
	recordPrefixLen = tablePrefixLen + 2
	recordKeyLen    = recordPrefixLen + 8
	indexPrefixLen  = tablePrefixLen + 2 + 8
	handleLen       = 8
)

const (
	tablePrefixByte = 't'
	recordSep0      = '_'
	recordSep1      = 'r'
	indexSep1       = 'i'
)

// EncodeHandle appends h as a sign-flipped big-endian int64 (8 bytes, no kind
// tag). Used for record-key handles, the handle suffix of index keys and the
// value stored under a unique index key.
func EncodeHandle(dst []byte, h int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(h)^signBit)
}

// DecodeHandle decodes an EncodeHandle encoding; b must be exactly 8 bytes.
func DecodeHandle(b []byte) (int64, error) {
	if len(b) != handleLen {
		return 0, corrupt("handle must be 8 bytes")
	}
	return int64(binary.BigEndian.Uint64(b) ^ signBit), nil
}

func appendTablePrefix(dst []byte, tableID int64) []byte {
	return EncodeHandle(append(dst, tablePrefixByte), tableID)
}

// TablePrefix returns the prefix shared by the records and all indexes of a
// table; [TablePrefix, PrefixEnd(TablePrefix)) covers the whole table.
func TablePrefix(tableID int64) []byte {
	return appendTablePrefix(make([]byte, 0, tablePrefixLen), tableID)
}

// RecordPrefix returns the prefix of all record keys of a table.
func RecordPrefix(tableID int64) []byte {
	b := appendTablePrefix(make([]byte, 0, recordKeyLen), tableID)
	return append(b, recordSep0, recordSep1)
}

// RecordKey returns the key of the row with the given handle.
func RecordKey(tableID, handle int64) []byte {
	b := appendTablePrefix(make([]byte, 0, recordKeyLen), tableID)
	return EncodeHandle(append(b, recordSep0, recordSep1), handle)
}

// DecodeRecordKey splits a key produced by RecordKey.
func DecodeRecordKey(key []byte) (tableID, handle int64, err error) {
	if len(key) != recordKeyLen || key[0] != tablePrefixByte ||
		key[tablePrefixLen] != recordSep0 || key[tablePrefixLen+1] != recordSep1 {
		return 0, 0, corrupt("not a record key")
	}
	tableID = int64(binary.BigEndian.Uint64(key[1:]) ^ signBit)
	handle = int64(binary.BigEndian.Uint64(key[recordPrefixLen:]) ^ signBit)
	return tableID, handle, nil
}

// IndexPrefix returns the prefix of all keys of one index.
func IndexPrefix(tableID, indexID int64) []byte {
	return appendIndexPrefix(make([]byte, 0, indexPrefixLen), tableID, indexID)
}

func appendIndexPrefix(dst []byte, tableID, indexID int64) []byte {
	dst = appendTablePrefix(dst, tableID)
	return EncodeHandle(append(dst, recordSep0, indexSep1), indexID)
}

// IndexKey appends an index key to dst. The handle is appended when non-nil:
// always for non-unique indexes, and for unique indexes when a column is
// NULL (NULLs do not collide in a MySQL unique index, so the handle keeps such
// entries distinct). On error dst is returned unchanged.
func IndexKey(dst []byte, tableID, indexID int64, vals []any, handle *int64) ([]byte, error) {
	start := len(dst)
	dst = appendIndexPrefix(dst, tableID, indexID)
	for _, v := range vals {
		var err error
		if dst, err = EncodeKey(dst, v); err != nil {
			return dst[:start], err
		}
	}
	if handle != nil {
		dst = EncodeHandle(dst, *handle)
	}
	return dst, nil
}

// DecodeIndexPrefix splits the table and index IDs off an index key and
// returns the encoded column values (and handle, if any) that follow.
func DecodeIndexPrefix(key []byte) (tableID, indexID int64, rest []byte, err error) {
	if len(key) < indexPrefixLen || key[0] != tablePrefixByte ||
		key[tablePrefixLen] != recordSep0 || key[tablePrefixLen+1] != indexSep1 {
		return 0, 0, nil, corrupt("not an index key")
	}
	tableID = int64(binary.BigEndian.Uint64(key[1:]) ^ signBit)
	indexID = int64(binary.BigEndian.Uint64(key[tablePrefixLen+2:]) ^ signBit)
	return tableID, indexID, key[indexPrefixLen:], nil
}

// DecodeIndexKey decodes the ncols column values of an index key and the
// trailing handle, if present. Anything after the values other than nothing
// or exactly one handle is reported as corruption.
func DecodeIndexKey(key []byte, ncols int) (vals []any, handle int64, hasHandle bool, err error) {
	_, _, rest, err := DecodeIndexPrefix(key)
	if err != nil {
		return nil, 0, false, err
	}
	if ncols < 0 || ncols > len(rest) {
		return nil, 0, false, corrupt(fmt.Sprintf("index key too short for %d columns", ncols))
	}
	vals = make([]any, ncols)
	for i := range vals {
		if vals[i], rest, err = DecodeKey(rest); err != nil {
			return nil, 0, false, err
		}
	}
	switch len(rest) {
	case 0:
		return vals, 0, false, nil
	case handleLen:
		return vals, int64(binary.BigEndian.Uint64(rest) ^ signBit), true, nil
	}
	return nil, 0, false, corrupt("trailing bytes after index columns")
}
