// Package kv is ReorgDB's transactional storage layer: multi-version
// snapshot-isolation transactions on top of a single Pebble instance.
//
// The package owns:
//
//   - the physical key layout of user data (see keys.go) and a small reserved
//     metadata key space next to it;
//   - the timestamp oracle, whose timestamps are wall-clock nanoseconds (so a
//     GC lifetime is a wall-clock duration) and which never goes backwards,
//     not even across restarts or crashes;
//   - read timestamps: a transaction reads at the newest timestamp below
//     which every commit is fully applied, so a snapshot never observes half
//     of a commit;
//   - write-write conflict detection (first committer wins) under striped
//     per-key latches, answered from each stripe's table of recent commits
//     (recent.go), and atomic, durable commits (one Pebble batch each);
//   - the row cache (rowcache.go): the newest version of hot keys, which
//     a point read at or above that version's timestamp may use instead of
//     Pebble; commits keep it current under the same latches;
//   - the range cache (rangecache.go): the newest version of every key in
//     ranges that short forward scans read recently, which a scan at or
//     above those versions' timestamps may read instead of Pebble; commits
//     keep it current, and scans that raced a commit do not fill it;
//   - garbage collection of versions that no reader can observe any more:
//     the purge (purge.go) of the versions commits replace, as soon as the
//     safe point passes the replacing commit, and a background pass over
//     the whole store (gc.go) for the rest;
//   - how Pebble sees the layout (comparer.go: user key and version apart,
//     for bloom filters and NextPrefix) and sizes its memory (block cache and
//     memtables together, which other holders of memory may be charged to);
//   - when a memtable is flushed besides when it is full: once writes stop
//     filling it (quietflush.go), so reads do not go on stepping over its
//     versions;
//   - the files under Pebble: a full disk noticed and survived
//     (diskfull.go), WAL files zeroed ahead of their appends and, where
//     commits are durable, appended with direct I/O (walzero.go), and the
//     WAL's deferred fsyncs of relaxed durability (walsync.go).
//
// Everything above this package (catalog, SQL) sees only ordered byte keys and
// values through Txn and Iterator; it never sees timestamps in keys.
package kv
