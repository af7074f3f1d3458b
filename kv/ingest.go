package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/reorgdb/reorgdb/internal/directio"
)

// ReserveTS allocates a timestamp that no commit will ever use, and returns
// once every commit below it is applied: a snapshot at it is complete, and
// versions written at it (by an Ingester) can never collide with a
// transaction's own versions of the same key.
func (s *Store) ReserveTS() (uint64, error) {
	ts, err := s.beginCommit()
	if err != nil {
		return 0, err
	}
	s.endCommit(ts)
	return ts, nil
}

// ReserveHeldTS is ReserveTS with GC held at the timestamp it returns
// until release is called. The hold starts before the timestamp exists, so
// no safe point passes it between the two.
func (s *Store) ReserveHeldTS(owner string) (ts uint64, release func(), err error) {
	s.mu.Lock()
	first := s.holdLocked(s.readTSLocked(), owner)
	s.mu.Unlock()
	defer first()
	if ts, err = s.ReserveTS(); err != nil {
		return 0, nil, err
	}
	return ts, s.HoldSafePoint(ts, owner), nil
}

// BeginAt starts a read-only snapshot at ts, which must not be below the
// safe point (the caller holds it with HoldSafePoint).
func (s *Store) BeginAt(ts uint64) (*Txn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts < s.safePoint {
		return nil, fmt.Errorf("kv: snapshot at %d is below the GC safe point %d", ts, s.safePoint)
	}
	if ts > s.readTSLocked() {
		return nil, fmt.Errorf("kv: snapshot at %d is above the read timestamp %d", ts, s.readTSLocked())
	}
	s.live[ts]++
	return newTxn(s, ts), nil
}

// Ingester writes versions of keys at one timestamp into sstables, which
// are then added to the store with Pebble's ingestion: no write-ahead log,
// no memtable, no transaction. Keys must come in strictly increasing order.
//
// Versions written this way are backdated: a transaction that committed a
// newer version of a key keeps it visible (MVCC orders versions by
// timestamp, not by when they arrived). The caller is responsible for
// holding the GC safe point at or below ts until the ingestion is done, and
// for ts coming from ReserveTS.
type Ingester struct {
	s      *Store
	ts     uint64
	dir    string
	opts   IngestOptions
	w      *sstable.Writer
	paths  []string
	last   []byte
	keyBuf []byte
	valBuf []byte
	n      int
	Bytes  int64 // user bytes added
}

// IngestOptions say how an Ingester writes its sstables.
type IngestOptions struct {
	MaxSize uint64 // bytes per file (0: 128 MiB)
	// Filters gives the files bloom filters on whole keys, which only point
	// reads of one key use (a unique index's entries, rows). Keys that are
	// only ever scanned by prefix, such as a non-unique index's, gain
	// nothing from them.
	Filters bool
	// Compress compresses the blocks. Uncompressed files take more disk
	// space, but compression is a large part of the CPU of writing them.
	// Compactions that later rewrite the files compress them as usual.
	Compress bool
}

// NewIngester returns an ingester writing files into dir.
func (s *Store) NewIngester(ts uint64, dir string, opts IngestOptions) (*Ingester, error) {
	if opts.MaxSize == 0 {
		opts.MaxSize = 128 << 20
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Ingester{s: s, ts: ts, dir: dir, opts: opts}, nil
}

// Add appends the version of key at the ingester's timestamp.
func (in *Ingester) Add(key, value []byte) error {
	if in.last != nil && bytes.Compare(key, in.last) <= 0 {
		return fmt.Errorf("kv: ingest keys out of order: %x after %x", key, in.last)
	}
	in.last = append(in.last[:0], key...)
	if in.w != nil && in.w.Raw().EstimatedSize() >= in.opts.MaxSize {
		if err := in.closeFile(); err != nil {
			return err
		}
	}
	if in.w == nil {
		path := filepath.Join(in.dir, fmt.Sprintf("ingest-%d-%d.sst", in.ts, ingestSeq.Add(1)))
		f, err := directio.Create(path)
		if err != nil {
			return err
		}
		in.paths = append(in.paths, path)
		in.w = sstable.NewWriter(directWritable{f}, in.writerOptions())
	}
	in.keyBuf = appendVersionKey(in.keyBuf[:0], key, in.ts)
	in.valBuf = append(append(in.valBuf[:0], flagPut), value...)
	in.n++
	in.Bytes += int64(len(key) + len(value))
	return in.w.Set(in.keyBuf, in.valBuf)
}

// writerOptions are the store's own comparer, key schema and filter
// policy, so that the files read like the ones Pebble writes itself.
func (in *Ingester) writerOptions() sstable.WriterOptions {
	wo := in.s.popts.MakeWriterOptions(0, in.s.db.TableFormat())
	// The fastest block compression, if any: an index build is CPU-bound.
	wo.Compression = sstable.NoCompression
	if in.opts.Compress {
		wo.Compression = sstable.FastestCompression
	}
	if !in.opts.Filters {
		wo.FilterPolicy = nil
	}
	// Bigger blocks than the 4 KiB default: fewer blocks to finish,
	// compress and index per byte, for files written in one pass.
	wo.BlockSize, wo.IndexBlockSize = 32<<10, 256<<10
	return wo
}

// directWritable writes an sstable around the page cache: it is written
// once and Pebble reads little of it soon (see directio).
type directWritable struct{ w *directio.Writer }

func (d directWritable) Write(p []byte) error {
	_, err := d.w.Write(p)
	return err
}

func (d directWritable) Finish() error { return d.w.Sync() }
func (d directWritable) Abort()        { d.w.Abort() }

// ingestSeq names ingest files apart: several ingesters may write into one
// directory at once.
var ingestSeq atomic.Int64

// Close finishes the files written so far; Ingest or Abort follows.
func (in *Ingester) Close() error { return in.closeFile() }

func (in *Ingester) closeFile() error {
	if in.w == nil {
		return nil
	}
	err := in.w.Close()
	in.w = nil
	return err
}

// Ingest adds the written files to the store and removes them. With no key
// added it does nothing.
func (in *Ingester) Ingest(ctx context.Context) error { return in.s.IngestAll(ctx, in) }

// IngestAll adds the files of several ingesters in one atomic ingestion
// (their key ranges must not overlap each other) and removes them.
func (s *Store) IngestAll(ctx context.Context, ins ...*Ingester) error {
	var paths []string
	var firstErr error
	for _, in := range ins {
		defer in.Abort()
		if err := in.closeFile(); err != nil && firstErr == nil {
			firstErr = err
		}
		if in.n > 0 {
			paths = append(paths, in.paths...)
		}
	}
	if firstErr != nil || len(paths) == 0 {
		return firstErr
	}
	if s.isClosed() {
		return errClosed
	}
	if err := s.disk.Err(); err != nil {
		return err
	}
	if s.walSync != nil {
		// Ingestion makes its files durable at once (through the MANIFEST),
		// while relaxed mode may not have fsynced the last commits yet: an
		// OS crash must not keep ingested versions but lose commits
		// acknowledged before them (such as the schema change they belong
		// to), so the WAL is fsynced first.
		if err := s.walSync.syncAll(); err != nil {
			return err
		}
	}
	for _, in := range ins {
		raiseHorizon(&s.bypassHorizon, in.ts)
	}
	s.clearRanges()
	stats, err := s.db.IngestWithStats(ctx, paths)
	s.bypassed()
	if err == nil {
		s.log.Info("kv: ingested", "files", len(paths), "bytes", stats.Bytes, "l0_bytes", stats.ApproxIngestedIntoL0Bytes)
	}
	return err
}

// Abort removes the files (Pebble moves or copies the files it ingests).
func (in *Ingester) Abort() {
	if in.w != nil {
		in.w.Close()
		in.w = nil
	}
	for _, p := range in.paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			in.s.log.Warn("kv: remove ingest file", "path", p, "err", err)
		}
	}
	in.paths = nil
}

// ClearRange removes every version of every key in [lo, hi) at once, with
// a Pebble range deletion: no per-key tombstones to write, flush, compact
// and collect. It bypasses MVCC, so it is only for ranges that no
// transaction can read or write any more, such as the entries of an index
// that is absent in every live schema version (the caller's metadata lock
// guarantees it) and whose ID is never reused.
func (s *Store) ClearRange(lo, hi []byte) error {
	if len(lo) == 0 || bytes.Compare(lo, hi) >= 0 {
		return fmt.Errorf("kv: ClearRange needs a non-empty range, got [%x, %x)", lo, hi)
	}
	if s.isClosed() {
		return errClosed
	}
	if err := s.disk.Err(); err != nil {
		return err
	}
	// Escaping preserves order, and every version of a key below hi
	// sorts below escape(hi) (see the layout in keys.go).
	s.clearRanges()
	err := s.db.DeleteRange(appendEscaped(nil, lo), appendEscaped(nil, hi), s.writeOpts)
	s.bypassed()
	return err
}

// bypassed follows versions that appeared without a commit: iterators
// opened before are stale, and the caches forget what they held.
func (s *Store) bypassed() {
	s.bypasses.Add(1)
	if s.rows != nil {
		s.rows.clear()
	}
	s.clearRanges()
}

// clearRanges empties the range cache around versions that appear without
// a commit: before, so no scan answers from it while they land, and after
// (bypassed), so no fill that read before they landed is kept.
func (s *Store) clearRanges() {
	if s.ranges != nil {
		s.ranges.clear()
	}
}
