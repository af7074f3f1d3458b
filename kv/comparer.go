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
// The order is the bytewise order of physical keys, which is also
// Pebble's definition (prefixes first, then suffixes): the escaping
// guarantees that no version prefix is a proper prefix of another key's
// prefix, so the first byte where two keys differ lies in their prefixes
// unless the prefixes are equal. Compare is therefore plain bytes.Compare,
// which matters because the memtable's skiplist compares keys on every
// step of a seek. The one key Pebble synthesizes, a prefix's immediate
// successor, is built so that both definitions agree on it too.
var comparer = &pebble.Comparer{
	Name:    "reorgdb.mvcc.v1",
	Split:   splitKey,
	Compare: bytes.Compare,
	// Equal prefixes and equal suffixes make equal keys and back, so the
	// split need not be looked at.
	Equal:                bytes.Equal,
	ComparePointSuffixes: bytes.Compare,
	CompareRangeSuffixes: bytes.Compare,
	AbbreviatedKey: func(k []byte) uint64 {
		// Of the prefix only, so that it orders keys prefix first.
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
	Separator:          func(dst, a, _ []byte) []byte { return append(dst, a...) },
	Successor:          func(dst, a []byte) []byte { return append(dst, a...) },
	ImmediateSuccessor: immediateSuccessor,
	FormatKey:          pebble.DefaultComparer.FormatKey,
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

// immediateSuccessor returns the smallest key after every version of the
// prefix a: escape(K) 0x00 0x02 for a version prefix escape(K) 0x00 0x01,
// which sorts after all of K's versions and before any other user key
// whichever definition of the order is used (prefix+0x00 would sort before
// K's versions bytewise). Other keys Pebble may pass (metadata, bounds that
// are not version prefixes) get a 0x00 appended, their bytewise successor.
func immediateSuccessor(dst, a []byte) []byte {
	if n := len(a); n >= 2 && a[n-2] == 0x00 && a[n-1] == 0x01 && !bytes.HasPrefix(a, metaPrefix) {
		return appendPrefixEnd(dst, a)
	}
	return append(append(dst, a...), 0x00)
}
