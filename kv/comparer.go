package kv

import (
	"bytes"
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"
)

// comparer tells Pebble where a physical key's user key ends and its
// version begins (see the layout in keys.go). Knowing that lets Pebble
//   - keep a bloom filter per sstable keyed on user keys, so a point read
//     (SeekPrefixGE) skips every file that has no version of its key;
//   - skip the rest of a key's versions with NextPrefix, which moves only
//     the level that holds them instead of seeking every level of the LSM;
//     this is what keeps range scans cheap over rows with long histories.
//
// The order is the bytewise order of physical keys, as before: the escaping
// guarantees that no version prefix is a proper prefix of another key's
// prefix, so comparing prefixes and then suffixes (Pebble's definition,
// implemented literally by compareKeys for the keys Pebble synthesizes
// itself, such as a prefix's immediate successor) agrees with bytes.Compare
// on every stored key.
var comparer = &pebble.Comparer{
	Name:    "reorgdb.mvcc.v1",
	Split:   splitKey,
	Compare: compareKeys,
	// Equal prefixes and equal suffixes make equal keys and back, so the
	// split need not be looked at.
	Equal:                bytes.Equal,
	ComparePointSuffixes: bytes.Compare,
	CompareRangeSuffixes: bytes.Compare,
	AbbreviatedKey: func(k []byte) uint64 {
		// Of the prefix only, so that it orders keys as compareKeys does.
		p := k[:splitKey(k)]
		if len(p) >= 8 {
			return binary.BigEndian.Uint64(p)
		}
		var v uint64
		for _, b := range p {
			v = v<<8 | uint64(b)
		}
		return v << uint(8*(8-len(p)))
	},
	// Index separators and successors are the keys themselves: always
	// valid, and shortening them bytewise could cut a key inside its
	// timestamp, which would not order by prefix first.
	Separator: func(dst, a, _ []byte) []byte { return append(dst, a...) },
	Successor: func(dst, a []byte) []byte { return append(dst, a...) },
	ImmediateSuccessor: func(dst, a []byte) []byte {
		return append(append(dst, a...), 0x00)
	},
	FormatKey: pebble.DefaultComparer.FormatKey,
}

// splitKey returns the length of k's version prefix when k is a version
// key (escape(K) 0x00 0x01 ts), and len(k) for anything else: metadata
// keys, iterator bounds and range-deletion bounds. A version key is
// recognized by its terminator ten bytes from the end; escaped user keys
// never contain 0x00 0x01, so no other key has those bytes there.
func splitKey(k []byte) int {
	n := len(k)
	if n >= versionSuffixLen && k[n-versionSuffixLen] == 0x00 && k[n-versionSuffixLen+1] == 0x01 &&
		!bytes.HasPrefix(k, metaPrefix) {
		return n - tsLen
	}
	return n
}

// compareKeys orders keys by prefix, then by suffix.
func compareKeys(a, b []byte) int {
	pa, pb := splitKey(a), splitKey(b)
	if c := bytes.Compare(a[:pa], b[:pb]); c != 0 {
		return c
	}
	return bytes.Compare(a[pa:], b[pb:])
}
