package kv

import "context"

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

// Compact flushes what of [lo, hi) is in the memtables and compacts the
// range into the bottom level, dropping what the MVCC garbage collection
// and range deletions have left behind. It is OPTIMIZE TABLE's work.
func (s *Store) Compact(ctx context.Context, lo, hi []byte) error {
	if s.isClosed() {
		return errClosed
	}
	if err := s.disk.Err(); err != nil {
		return err
	}
	return s.db.Compact(ctx, appendEscaped(nil, lo), appendEscaped(nil, hi), true)
}
