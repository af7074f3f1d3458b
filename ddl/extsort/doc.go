// Package extsort is the external sort behind the ingest backfill: it
// orders more index entries than fit in memory and hands them out as
// non-overlapping sorted key ranges.
//
// A Buffer collects entries in memory outside the Go heap and sorts them;
// when the memory budget is spent, buffers are merged into Runs, sorted
// files on disk. MergeParallel merges any mix of buffers and runs, cut
// into key ranges of similar size, one goroutine per range.
//
// Invariants:
//   - Every key within one merge shares a prefix (the index's), and the
//     8 bytes after it decide most comparisons as one integer comparison.
//   - The outputs of MergeParallel's ranges are each in key order and do
//     not overlap: range p's keys are all below range p+1's, so each range
//     can become its own sstable.
//   - Every key appears once. Two equal keys are a duplicate of a unique
//     index (every other index key carries its row's handle); a duplicate
//     always falls into one range, whose merge reports it and stops.
//   - A Buffer's memory is mapped outside the heap and given back by Free;
//     a Run is a temporary file its owner removes (Path).
package extsort
