package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
)

// Physical layout
//
// A version of user key K written at timestamp T is stored under
//
//	escape(K) 0x00 0x01 bigEndian64(^T)
//
// where escape replaces every 0x00 byte of K by 0x00 0xFF. The escaping makes
// the 0x00 0x01 terminator sort below any continuation of K, so bytewise
// order (which the store's comparer, comparer.go, keeps) sorts versions by
// user key first, and the
// inverted timestamp then puts the newest version of a key first. Everything
// between escape(K) 0x00 0x01 and escape(K) 0x00 0x02 is a version of K and
// nothing else, which gives tight iterator bounds for point reads.
//
// The value is one flag byte (flagDelete or flagPut) followed by the user
// value.
//
// Metadata lives under the two-byte prefix 0x00 0x00. No encoded user key can
// start with it: a leading 0x00 of K is escaped to 0x00 0xFF and the empty key
// encodes as 0x00 0x01..., so the two spaces are disjoint without spending a
// prefix byte on every user key. Metadata also sorts entirely below user data,
// so user-space scans simply start at userSpaceStart.

const (
	flagDelete byte = 0
	flagPut    byte = 1

	tsLen = 8
	// versionSuffixLen is the terminator plus the timestamp.
	versionSuffixLen = 2 + tsLen
)

var (
	// userSpaceStart is the smallest possible encoded user key: the versions
	// of the empty key.
	userSpaceStart = []byte{0x00, 0x01}

	metaPrefix   = []byte{0x00, 0x00}
	hwmKey       = metaKey("tso-hwm")
	safePointKey = metaKey("gc-safe-point")

	errMalformedKey   = errors.New("kv: malformed versioned key")
	errMalformedValue = errors.New("kv: malformed versioned value")
)

func metaKey(name string) []byte {
	return append(bytes.Clone(metaPrefix), name...)
}

// appendEscaped appends escape(k): each 0x00 of k followed by 0xFF. An
// index key's big-endian table, index and row IDs hold a dozen zero bytes
// or more, in runs: dst grows once for all of them, and a run is escaped
// in one pass instead of one search per zero.
func appendEscaped(dst, k []byte) []byte {
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return append(dst, k...)
	}
	j := len(dst)
	dst = slices.Grow(dst, len(k)+1+bytes.Count(k[i+1:], zero))
	dst = dst[:cap(dst)]
	for i >= 0 {
		j += copy(dst[j:], k[:i])
		k = k[i:]
		// Zeros come in runs (the high bytes of IDs): escape the run
		// here rather than search for each of them.
		for len(k) > 0 && k[0] == 0 {
			dst[j], dst[j+1] = 0, 0xFF
			j += 2
			k = k[1:]
		}
		i = bytes.IndexByte(k, 0)
	}
	j += copy(dst[j:], k)
	return dst[:j]
}

var zero = []byte{0}

// appendPrefix appends the common prefix of all versions of k. It doubles as
// the physical form of a user-key range bound: versions of keys >= k sort at
// or after it, versions of keys < k sort before it.
func appendPrefix(dst, k []byte) []byte {
	return append(appendEscaped(dst, k), 0x00, 0x01)
}

// appendVersionKey appends the physical key of k's version at ts.
func appendVersionKey(dst, k []byte, ts uint64) []byte {
	return appendTS(appendPrefix(dst, k), ts)
}

func appendTS(dst []byte, ts uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, ^ts)
}

// appendPrefixEnd appends the exclusive upper bound of all versions of the
// key whose version prefix is p.
func appendPrefixEnd(dst, p []byte) []byte {
	dst = append(dst, p...)
	dst[len(dst)-1] = 0x02
	return dst
}

// splitVersionKey splits a physical key into its version prefix (escaped user
// key plus terminator) and timestamp. The returned prefix aliases k.
func splitVersionKey(k []byte) (prefix []byte, ts uint64, err error) {
	n := len(k) - tsLen
	if n < 2 || k[n-2] != 0x00 || k[n-1] != 0x01 {
		return nil, 0, errMalformedKey
	}
	return k[:n], ^binary.BigEndian.Uint64(k[n:]), nil
}

// appendUnescaped appends the user key of a version prefix.
func appendUnescaped(dst, prefix []byte) []byte {
	e := prefix[:len(prefix)-2]
	dst = slices.Grow(dst, len(e))
	// A byte loop: record keys hold many zero bytes (big-endian integers),
	// which makes searching for each one cost more than this.
	for i := 0; i < len(e); i++ {
		dst = append(dst, e[i])
		if e[i] == 0 {
			i++ // every 0x00 inside the escaped key is followed by 0xFF
		}
	}
	return dst
}
