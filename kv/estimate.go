package kv

// EstimateBytes returns Pebble's estimate of the bytes on disk that the
// versions of the keys in [lo, hi) take, compressed; what is still in the
// memtables is not counted. Callers compare two such estimates to scale a
// count, not to size anything exactly.
func (s *Store) EstimateBytes(lo, hi []byte) (uint64, error) {
	if s.isClosed() {
		return 0, errClosed
	}
	return s.db.EstimateDiskUsage(appendEscaped(nil, lo), appendEscaped(nil, hi))
}
