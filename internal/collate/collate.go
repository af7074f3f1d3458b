// Package collate turns strings into memcomparable sort keys, so that an
// index over a string column in a non-binary collation can be an ordinary
// byte-ordered key space.
//
// Invariant, for every collation c with Indexable(c) and all valid UTF-8
// strings a, b (go-mysql-server's form of every character set):
//
//	sign(bytes.Compare(Key(nil, c, a), Key(nil, c, b))) == sign(Compare(c, a, b))
//
// where Compare is go-mysql-server's collation comparison
// (types.StringType.Compare) applied after cutting trailing spaces (U+0020)
// from both strings when c is a PAD SPACE collation. So key order is the
// collation's order and key equality is collation equality: 'a' and 'A '
// get the same key under utf8mb4_general_ci, which is what makes a unique
// index reject the second one.
//
// The weights are go-mysql-server's: one weight per code point
// (CollationID.Sorter), with no expansions or contractions, so ß and ss
// differ under utf8mb4_unicode_ci, utf8mb4_unicode_520_ci and
// utf8mb4_0900_ai_ci, unlike MySQL. Keys
// are stored in indexes: a change of those weights (a go-mysql-server
// upgrade) changes the keys, which TestWeightsPinned catches.
package collate

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// indexable is the collations whose keys ReorgDB builds besides binary and
// the *_bin collations of utf8mb4, utf8mb3, latin1 and ascii: those whose
// single weights are a fair approximation of MySQL's order. The
// multi-level (accent or case sensitive) UCA collations are left out
// because one weight per code point cannot express them, and so are the
// language-specific ones, untested.
var indexable = map[gms.CollationID]bool{
	gms.Collation_utf8mb4_0900_ai_ci: true,
	gms.Collation_utf8mb4_general_ci: true,
	gms.Collation_utf8mb4_unicode_ci: true,
	gms.Collation_utf8mb3_general_ci: true,
	gms.Collation_utf8mb3_unicode_ci: true,
	// WordPress's default since MySQL 5.6, single weights like unicode_ci.
	gms.Collation_utf8mb4_unicode_520_ci: true,
	gms.Collation_utf8mb3_unicode_520_ci: true,
	gms.Collation_latin1_swedish_ci:      true,
	gms.Collation_latin1_general_ci:      true,
	gms.Collation_ascii_general_ci:       true,
}

// Indexable reports whether Key implements collation c.
func Indexable(c gms.CollationID) bool {
	if Bytewise(c) {
		return true
	}
	if c.Sorter() == nil { // go-mysql-server has no weights for it
		return false
	}
	if indexable[c] {
		return true
	}
	switch c.CharacterSet() {
	case gms.CharacterSet_utf8mb4, gms.CharacterSet_utf8mb3, gms.CharacterSet_latin1, gms.CharacterSet_ascii:
		return strings.HasSuffix(c.Name(), "_bin")
	}
	return false
}

// PadSpace reports whether c ignores trailing spaces (MySQL's PAD SPACE):
// then 'a' and 'a ' are equal and get the same key.
func PadSpace(c gms.CollationID) bool { return c.PadAttribute() == "PAD SPACE" }

// Bytewise reports whether c's key is the string's bytes unchanged: the
// NO PAD binary collations, whose order is byte order (UTF-8 byte order is
// code point order).
func Bytewise(c gms.CollationID) bool {
	return c == gms.Collation_binary || c == gms.Collation_utf8mb4_0900_bin
}

// Key appends the sort key of s under collation c to dst. The key is not
// self-delimiting; the caller encodes it as a byte string (codec.EncodeKey).
func Key(dst []byte, c gms.CollationID, s string) []byte {
	if Bytewise(c) {
		return append(dst, s...)
	}
	if PadSpace(c) {
		s = strings.TrimRight(s, " ")
	}
	if c == gms.Collation_utf8mb4_bin {
		// Its weights are increasing in the code point, which is UTF-8
		// byte order: the trimmed bytes are the shortest key.
		return append(dst, s...)
	}
	return WeightsOf(c).appendKey(dst, s)
}

// KeyBytes is Key for a []byte.
func KeyBytes(dst []byte, c gms.CollationID, b []byte) []byte {
	if Bytewise(c) {
		return append(dst, b...)
	}
	if PadSpace(c) {
		b = bytes.TrimRight(b, " ")
	}
	if c == gms.Collation_utf8mb4_bin {
		return append(dst, b...)
	}
	// A view, not a copy: appendKey keeps nothing of it.
	return WeightsOf(c).appendKey(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// Weights is a collation's weight of each code point
// (CollationID.Sorter), with those below U+0800 (ASCII, Latin, Greek,
// Cyrillic, Hebrew, Arabic) read from a table: go-mysql-server computes
// some collations' weights with a map lookup and a chain of range tests,
// far more per character than a table read, and an index build computes
// a key for every row.
type Weights struct {
	of    gms.CollationSorter
	table [0x800]int32
	ascii [utf8.RuneSelf]encoded // appendWeight of each ASCII weight
}

// encoded is a weight's bytes from appendWeight, when it has at most two.
type encoded struct {
	b [2]byte
	n uint8 // 0: more than two, use appendWeight
}

var weights sync.Map // gms.CollationID -> *Weights

// WeightsOf returns c's weights, or nil if go-mysql-server has none.
func WeightsOf(c gms.CollationID) *Weights {
	if w, ok := weights.Load(c); ok {
		return w.(*Weights)
	}
	of := c.Sorter()
	if of == nil {
		return nil
	}
	w := &Weights{of: of}
	for r := range w.table {
		w.table[r] = of(rune(r))
	}
	for r := range w.ascii {
		if b := appendWeight(nil, w.table[r]); len(b) <= 2 {
			w.ascii[r].n = uint8(copy(w.ascii[r].b[:], b))
		}
	}
	actual, _ := weights.LoadOrStore(c, w)
	return actual.(*Weights)
}

// Of returns the weight of r.
func (w *Weights) Of(r rune) int32 {
	if uint32(r) < uint32(len(w.table)) {
		return w.table[r]
	}
	return w.of(r)
}

// appendKey appends the weights of s, each through appendWeight. ASCII
// characters are copied from their precomputed bytes into room reserved
// in advance (two bytes per input byte): always both bytes, then the
// position moves by the weight's length, which saves a branch and an
// append per character.
func (w *Weights) appendKey(dst []byte, s string) []byte {
	j := len(dst)
	dst = reserve(dst, j, 2*len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf && w.ascii[c].n > 0 {
			e := &w.ascii[c]
			dst[j], dst[j+1] = e.b[0], e.b[1]
			j += int(e.n)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		dst = appendWeight(dst[:j], w.Of(r))
		j = len(dst)
		dst = reserve(dst, j, 2*(len(s)-i))
	}
	return dst[:j]
}

// reserve returns dst[:cap] with at least n bytes of room after dst[:j].
func reserve(dst []byte, j, n int) []byte {
	dst = slices.Grow(dst[:j], n)
	return dst[:cap(dst)]
}

// appendWeight appends w (0 <= w < 2^31) in an order-preserving,
// self-delimiting variable-length form: the first byte tells the length
// and its ranges rise with the length, so the bytes of two weights compare
// like the weights, and a weight string compares like its weights
// lexicographically. Common letters take one or two bytes instead of four.
func appendWeight(dst []byte, w int32) []byte {
	u := uint32(w)
	switch {
	case u < 1<<7: // 0xxxxxxx
		return append(dst, byte(u))
	case u < 1<<14: // 10xxxxxx +1
		return append(dst, 0x80|byte(u>>8), byte(u))
	case u < 1<<21: // 110xxxxx +2
		return append(dst, 0xC0|byte(u>>16), byte(u>>8), byte(u))
	case u < 1<<28: // 1110xxxx +3
		return append(dst, 0xE0|byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	}
	return append(dst, 0xF0, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// LowerBound returns the bound to build a range scan's lower key from,
// given the range's lower bound s, inclusive whatever the range says.
//
// Under PAD SPACE the key drops trailing spaces while go-mysql-server,
// which re-checks every row a scan returns, compares the spaces: it puts
// 'a ' above 'a\tb' (a space weighs more than a tab), but the key of 'a '
// is the key of 'a', below that of 'a\tb'. A scan from Key('a\tb') would
// miss 'a '. Cutting s before its first code point that weighs no more
// than a space gives a key below every string go-mysql-server puts at or
// above s. For other collations s is returned as is and cut is false: the
// caller keeps the range's own inclusiveness then.
func LowerBound(c gms.CollationID, s string) (bound string, cut bool) {
	if !PadSpace(c) {
		return s, false
	}
	w := c.Sorter()
	space := w(' ')
	for i, r := range s {
		if w(r) <= space {
			return s[:i], true
		}
	}
	return s, true
}

// UpperIsPrefix reports whether a range's upper bound s must become "every
// key starting with Key(s)": under PAD SPACE when s ends in a space, since
// go-mysql-server puts 'a\t' below 'a ' while its key is above Key('a ').
// Otherwise Key(s) is a safe upper key, inclusive or not as the range says.
func UpperIsPrefix(c gms.CollationID, s string) bool {
	return PadSpace(c) && strings.HasSuffix(s, " ")
}

// EqualIsExact reports whether Key(s) holds exactly the strings
// go-mysql-server calls equal to s, so that an equality can read just
// that key. Under PAD SPACE it is not when s ends in a code point that
// weighs the same as a space or less: under utf8mb4_unicode_ci, U+0001
// weighs like a space, so go-mysql-server finds 'a\x01' equal to 'a ',
// whose key is that of 'a'. Such an equality must use LowerBound and
// UpperIsPrefix instead.
func EqualIsExact(c gms.CollationID, s string) bool {
	if !PadSpace(c) || s == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	w := c.Sorter()
	return w(r) > w(' ')
}
