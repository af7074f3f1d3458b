package codec

import "hash/maphash"

// EntrySum summarizes a set of key/value pairs, such as the entries of an
// index, as their count and a sum of hashes: two sums are equal when the
// sets are (up to a 64-bit collision), whatever order the pairs were added
// in. Consistency checks compare the entries rows call for with the ones
// an index holds in two sequential scans this way, instead of looking each
// entry up. Sums are comparable only within one process (the hash seed is
// chosen at start).
type EntrySum struct {
	N   int
	Sum uint64
}

var entrySeed = maphash.MakeSeed()

// Add adds a pair.
func (s *EntrySum) Add(key, value []byte) {
	var h maphash.Hash
	h.SetSeed(entrySeed)
	h.Write(key)
	h.WriteByte(0)
	h.Write(value)
	s.N++
	s.Sum += h.Sum64()
}
