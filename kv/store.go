package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrWriteConflict is returned (possibly wrapped) by Txn.Commit when another
// transaction committed a write to one of the same keys after this
// transaction's snapshot was taken.
var ErrWriteConflict = errors.New("kv: write conflict")

// ErrTxnDone is returned by operations on a transaction that has already been
// committed or rolled back.
var ErrTxnDone = errors.New("kv: transaction already committed or rolled back")

// Options configures a Store.
type Options struct {
	Dir string // data directory for Pebble
	// NoSync relaxes durability: a commit returns once its WAL record is
	// written to the operating system, and the WAL is fsynced about once a
	// second (walsync.go). A crash of the process loses no acknowledged
	// commit; a crash of the machine may lose the last second's. Default
	// false: every commit is fsynced before it returns.
	NoSync bool
	// WALBuffering writes the WAL through the page cache where commits
	// are durable, as relaxed durability always does; by default durable
	// commits write it directly (walzero.go), which file systems without
	// O_DIRECT fall back from by themselves.
	WALBuffering bool
	// GCLifetime keeps history for at least this long after it is
	// superseded; zero (the default) keeps it only while a transaction or
	// a hold can read it, as InnoDB's purge does.
	GCLifetime time.Duration
	GCInterval time.Duration // how often the background pass runs; default 1*time.Minute when zero; negative disables it and the purge
	Logger     *slog.Logger  // may be nil -> slog.Default()
	// CacheSize bounds Pebble's block cache together with the memtables,
	// which Pebble charges to the cache: what is left for blocks is
	// CacheSize minus the memtables alive (up to two MemTableSize). Default
	// 128 MiB when zero.
	CacheSize int64
	// MemTableSize is the size of one memtable; default 32 MiB (at most a
	// quarter of CacheSize) when zero.
	MemTableSize int64
	// RowCacheSize bounds the row cache (rowcache.go), which keeps the
	// newest version of recently read and written keys for point reads;
	// default 64 MiB when zero, none when negative.
	RowCacheSize int64
	// RangeCacheSize bounds the range cache (rangecache.go), which keeps
	// the newest versions of the keys in ranges that short scans read
	// recently; default 16 MiB when zero, none when negative.
	RangeCacheSize int64

	// fs is the file system under the store; tests inject failures with
	// it. Default vfs.Default.
	fs vfs.FS
	// quietFlushEvery is how often a memtable that writes stopped filling
	// is looked for (quietflush.go); default quietFlushInterval when zero,
	// never when negative (tests that tick it themselves).
	quietFlushEvery time.Duration
}

const (
	defaultGCInterval = time.Minute
	defaultCacheSize  = 128 << 20
	defaultMemTable   = 32 << 20
	defaultRowCache   = 64 << 20
	defaultRangeCache = 16 << 20

	// hwmLead is how far ahead of the timestamps handed out the persisted
	// high-water mark is pushed. After a crash the oracle restarts above the
	// mark, so a larger lead only skips more of the (nanosecond) timestamp
	// space, while a smaller one means more synced metadata writes.
	hwmLead = 3 * time.Second
	// hwmRenew: once fewer than this remains before the mark, it is pushed
	// forward in the background so that commits almost never wait for it.
	hwmRenew = 2 * time.Second
)

// wallClock is the oracle's time source; tests move it to simulate clock
// jumps.
var wallClock = func() uint64 { return uint64(time.Now().UnixNano()) }

// Store is a transactional MVCC key-value store. It is safe for concurrent use.
type Store struct {
	db        *pebble.DB
	popts     *pebble.Options // for writers of ingested sstables
	cache     *pebble.Cache   // the DB holds the reference
	walSync   *walSyncFS      // NoSync only
	disk      *diskFS         // notices a full disk (diskfull.go)
	log       *slog.Logger
	writeOpts *pebble.WriteOptions
	lifetime  time.Duration
	latches   latches
	locks     lockTable
	// bypassHorizon: versions at or below it may have reached Pebble
	// without a commit (before the open, or through an Ingester), so the
	// commit check's tables do not answer for a base below it (recent.go).
	bypassHorizon atomic.Uint64
	// bypasses counts completed Ingests and ClearRanges: an iterator
	// opened before one of them misses what it changed.
	bypasses atomic.Uint64
	rows     *rowCache   // nil: no row cache
	ranges   *rangeCache // nil: no range cache
	metrics  metrics
	// singleDelMisuse counts compactions that found a purged version
	// written twice: always zero unless a bug breaks purge's premise.
	singleDelMisuse *atomic.Int64
	// quiet and memtableSize drive the flush of a memtable that writes
	// stopped filling (quietflush.go).
	quiet        *quietFlush
	memtableSize int64

	// mu guards the timestamp oracle, the in-flight commit queue and the
	// registrations that bound GC. It sits on every transaction's path
	// (Begin, commit start and end, finish), so critical sections stay a few
	// map or slice operations long; nothing under it does I/O.
	mu sync.Mutex
	// hwmCond is signalled (with mu) when a high-water mark write finishes.
	hwmCond sync.Cond
	// last is the newest timestamp handed out.
	last uint64
	// gcCleanTo is the safe point of the last completed GC pass: no version
	// at or below it is shadowed by another at or below it.
	gcCleanTo uint64
	gcPasses  atomic.Int64 // passes run, for tests
	// hwm is the persisted high-water mark; no timestamp above it is handed
	// out until a larger mark is durable.
	hwm       uint64
	extending bool
	extendErr error
	// inflight holds commits whose timestamp is allocated but whose batch
	// may not be applied yet, in timestamp order (allocation order). The head
	// is never done: finished entries are trimmed from the front.
	inflight []inflightCommit
	// live counts open transactions per start timestamp.
	live   map[uint64]int
	holds  map[uint64]safePointHold
	holdID uint64
	// safePoint is the highest safe point any GC pass used.
	safePoint uint64
	closed    bool

	// purges holds superseded versions until the safe point passes them.
	purges purgeQueue
	// spMu orders the safe point's persisted writes, so a lower one never
	// lands after a higher one.
	spMu sync.Mutex
	// gcMu serializes GC passes with each other and with Close.
	gcMu   sync.Mutex
	stopGC chan struct{}
	bg     sync.WaitGroup
}

type inflightCommit struct {
	ts   uint64
	done bool
	// wake, when set, is closed once every earlier commit is done too.
	wake chan struct{}
}

type safePointHold struct {
	ts    uint64
	owner string
}

// Open opens (creating if needed) the store in opts.Dir.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("kv: Options.Dir is required")
	}
	opts.GCLifetime = max(opts.GCLifetime, 0)
	if opts.GCInterval == 0 {
		opts.GCInterval = defaultGCInterval
	}
	if opts.quietFlushEvery == 0 {
		opts.quietFlushEvery = quietFlushInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = defaultCacheSize
	}
	if opts.RowCacheSize == 0 {
		opts.RowCacheSize = defaultRowCache
	}
	if opts.RangeCacheSize == 0 {
		opts.RangeCacheSize = defaultRangeCache
	}
	if opts.MemTableSize <= 0 {
		opts.MemTableSize = min(defaultMemTable, opts.CacheSize/4)
	}
	if opts.CacheSize < 3*opts.MemTableSize {
		// Otherwise the memtables' charge leaves no room for blocks, and
		// every read goes to the file system.
		return nil, fmt.Errorf("kv: cache size %d MiB must be at least three memtables (%d MiB)",
			opts.CacheSize>>20, 3*opts.MemTableSize>>20)
	}

	cache := pebble.NewCache(opts.CacheSize)
	defer cache.Unref()
	popts := &pebble.Options{
		Cache:              cache,
		Comparer:           comparer,
		FormatMajorVersion: pebble.FormatNewest,
		// As in Pebble's own tuned configuration (cmd/pebble), writes stall
		// only at extreme read amplification, and large memtables absorb
		// bursts. L0 waits for four default memtables' worth of flushes (smaller
		// memtables for as many bytes) before it is compacted: random
		// writes, such as a secondary index's, make every flush overlap
		// the whole base level, and each compaction rewrites that level,
		// so compacting fewer, larger batches of L0 rewrites it less often
		// (docs/benchmarks.md, "Compactions under writes").
		L0CompactionThreshold:       int(max(4, 4*defaultMemTable/opts.MemTableSize)),
		L0StopWritesThreshold:       1000,
		LBaseMaxBytes:               64 << 20,
		MemTableSize:                uint64(opts.MemTableSize),
		MemTableStopWritesThreshold: 4,
		Logger:                      pebbleLogger{opts.Logger},
	}
	// A purge's SingleDelete that meets two Sets of its version would
	// bring the older one back (purge.go); none should ever happen.
	misuse := new(atomic.Int64)
	quiet := new(quietFlush)
	popts.AddEventListener(pebble.EventListener{
		PossibleAPIMisuse: func(info pebble.PossibleAPIMisuseInfo) {
			if info.Kind == pebble.NondeterministicSingleDelete {
				misuse.Add(1)
				opts.Logger.Error("kv: a purged version was written more than once", "key", fmt.Sprintf("%x", info.UserKey))
			}
		},
		FlushBegin: func(pebble.FlushInfo) { quiet.flushed.Store(true) },
	})
	// An index build ingests its sstables into a key range that the
	// table's own sstables span without holding any key in it (an index's
	// keys sort between the table's other indexes and its rows). Without
	// splitting, such a file blocks the ingestion from the bottom level,
	// and the new index lands higher up, to be rewritten by compactions
	// after the build, with CPU the workload would otherwise have
	// (docs/benchmarks.md, "Index builds and compactions"). With it,
	// Pebble splits the spanning file into two virtual sstables, and the
	// index goes to the bottom level as it is.
	popts.Experimental.IngestSplit = func() bool { return true }
	if opts.fs == nil {
		opts.fs = vfs.Default
	}
	// The reserve holds the WAL Pebble preallocates (1.1 memtables) and
	// the flush of every memtable that may be queued when the disk fills
	// (MemTableStopWritesThreshold): a commit admitted just before may
	// wait in Pebble's write stall until they are all flushed, and Pebble
	// flushes queued memtables together. After a full disk, writes resume
	// once there is room for flushing two memtables besides it, and Pebble
	// has flushed what piled up.
	reserve := int64(popts.MemTableStopWritesThreshold)*opts.MemTableSize + opts.MemTableSize + opts.MemTableSize/10
	disk := newDiskFS(opts.fs, opts.Dir, opts.Logger, reserve, 2*opts.MemTableSize)
	popts.FS = disk
	// Direct appends open the WAL's path in the operating system's file
	// system, so only a store on it gets them: one on a test's file system
	// keeps that file system's writes.
	disk.directWAL = !opts.NoSync && !opts.WALBuffering && opts.fs == vfs.Default
	var walSync *walSyncFS
	if opts.NoSync {
		walSync = newWALSyncFS(disk, opts.Logger, walSyncInterval)
		popts.FS = walSync
	}
	closeFS := func() {
		if walSync != nil {
			walSync.Close()
		}
		disk.Close()
	}
	// Filters are keyed on user keys (comparer.Split), so a point read
	// skips every sstable without a version of its key; L0 included, where
	// a hot key's recent versions and everything else flushed meet.
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		popts.Levels[i].FilterType = pebble.TableFilter
	}
	db, err := pebble.Open(opts.Dir, popts)
	if err != nil {
		closeFS()
		if isNoSpace(err) {
			err = &DiskFullError{Path: opts.Dir, Err: err}
		}
		return nil, fmt.Errorf("kv: open pebble at %s: %w", opts.Dir, err)
	}

	s := &Store{
		db:       db,
		popts:    popts.Clone(),
		cache:    cache,
		walSync:  walSync,
		disk:     disk,
		log:      opts.Logger,
		lifetime: opts.GCLifetime,
		live:     make(map[uint64]int),
		holds:    make(map[uint64]safePointHold),
		stopGC:   make(chan struct{}),
		metrics:  newMetrics(),
		rows:     newRowCache(opts.RowCacheSize),
		ranges:   newRangeCache(opts.RangeCacheSize),
		quiet:    quiet,

		memtableSize:    opts.MemTableSize,
		singleDelMisuse: misuse,
	}
	s.popts.EnsureDefaults()
	s.hwmCond.L = &s.mu
	s.latches.init()
	s.locks.init()
	// Concurrent committers each ask for a synced commit; Pebble's commit
	// pipeline groups everything queued behind one WAL fsync, so this costs
	// one fsync per group, not per transaction. With NoSync too: the commit
	// then waits for its WAL record's write, and walSync defers the fsync.
	s.writeOpts = pebble.Sync

	hwm, err := s.readMetaUint64(hwmKey)
	if err == nil {
		s.safePoint, err = s.readMetaUint64(safePointKey)
	}
	if err == nil {
		// last starts at the old mark, so the first timestamp handed out is
		// above everything ever handed out.
		s.last, s.hwm = hwm, hwm
		// The commit check's tables know nothing of commits before the
		// open: a snapshot older than that (BeginAt) that writes is
		// checked against Pebble.
		s.bypassHorizon.Store(hwm)
		disk.backlog = func() bool { return s.db.Metrics().MemTable.Count > 1 }
		disk.start()
		if ferr := disk.Err(); ferr != nil {
			// Opened on a full disk: serve reads, and leave the write to
			// the first commit after space is freed.
			s.log.Warn("kv: opened on a full disk; writes fail until space is freed", "err", ferr)
		} else {
			// Push the mark past both the old one and the clock before the
			// first commit so that it need not wait.
			target := max(hwm, wallClock()) + uint64(hwmLead)
			err = s.db.Set(hwmKey, binary.BigEndian.AppendUint64(nil, target), pebble.Sync)
			s.hwm = target
		}
	}
	if err != nil {
		_ = db.Close()
		closeFS()
		return nil, fmt.Errorf("kv: open: %w", err)
	}

	if opts.quietFlushEvery > 0 {
		s.bg.Add(1)
		go s.every(opts.quietFlushEvery, s.quietFlushTick)
	}
	if opts.GCInterval > 0 {
		s.bg.Add(2)
		go s.every(opts.GCInterval, s.gcPassTick)
		go s.every(purgeInterval, s.purgeTick)
	}
	return s, nil
}

func (s *Store) readMetaUint64(key []byte) (uint64, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("kv: metadata key %q has %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close stops background GC and closes Pebble. All transactions and
// iterators must be finished first (Pebble reports leaked iterators as an
// error), and the Store must not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stopGC)
	s.bg.Wait()   // GC loop and any high-water mark write
	s.gcMu.Lock() // a pass started through RunGC
	defer s.gcMu.Unlock()
	// Stopped first: Pebble's Close waits for a flush in progress, which
	// may be paced by a full disk.
	s.disk.Close()
	err := s.db.Close()
	if s.walSync != nil {
		s.walSync.Close()
	}
	return err
}

// DiskFull returns a *DiskFullError while the store refuses writes because
// its file system is full, else nil.
func (s *Store) DiskFull() error { return s.disk.Err() }

// ChargeCache charges n bytes of memory held elsewhere to the block cache,
// which shrinks by as much until release is called, as Pebble does for
// its memtables: the server's memory stays bounded while, say, an index
// build holds its sort buffers.
func (s *Store) ChargeCache(n int64) (release func()) {
	return s.cache.Reserve(int(n))
}

// CacheSize is the block cache's size, memtables included.
func (s *Store) CacheSize() int64 { return s.cache.MaxSize() }

// DB exposes the underlying Pebble instance for metrics and bulk ingestion.
// Writing to it directly bypasses MVCC.
func (s *Store) DB() *pebble.DB { return s.db }

// Begin starts a snapshot-isolation transaction reading at ReadTS.
func (s *Store) Begin() *Txn {
	s.mu.Lock()
	ts := s.readTSLocked()
	// Registering under the same lock that computes safe points means GC can
	// never pick a safe point above a snapshot that is about to be used.
	s.live[ts]++
	s.mu.Unlock()
	return newTxn(s, ts)
}

// oldestLive returns the start of the oldest live transaction, or the
// read timestamp when none is live: no transaction, live or yet to
// start, can conflict with a commit at or below it.
func (s *Store) oldestLive() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	low := s.readTSLocked()
	for ts := range s.live {
		low = min(low, ts)
	}
	return low
}

// ReadTS returns the timestamp a transaction started now would read at:
// every commit at or below it is fully applied, and none above it is visible.
func (s *Store) ReadTS() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readTSLocked()
}

func (s *Store) readTSLocked() uint64 {
	if len(s.inflight) > 0 {
		return s.inflight[0].ts - 1
	}
	return s.last
}

func (s *Store) unregister(startTS uint64) {
	s.mu.Lock()
	if n := s.live[startTS] - 1; n > 0 {
		s.live[startTS] = n
	} else {
		delete(s.live, startTS)
	}
	s.mu.Unlock()
}

// beginCommit allocates a commit timestamp and marks it in flight, which
// holds ReadTS below it until endCommit.
func (s *Store) beginCommit() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, err := s.allocTSLocked()
	if err != nil {
		return 0, err
	}
	s.inflight = append(s.inflight, inflightCommit{ts: ts})
	return ts, nil
}

// endCommit marks the commit at ts as applied (or failed) and returns once
// every earlier commit is applied too. Waiting keeps a client's next
// transaction from starting below its own previous commit, which would hide
// that commit from it: ReadTS cannot pass an earlier commit that is slower
// to reach Pebble.
func (s *Store) endCommit(ts uint64) {
	s.mu.Lock()
	i, _ := slices.BinarySearchFunc(s.inflight, ts, func(c inflightCommit, ts uint64) int {
		switch {
		case c.ts < ts:
			return -1
		case c.ts > ts:
			return 1
		}
		return 0
	})
	s.inflight[i].done = true
	if i > 0 {
		wake := make(chan struct{})
		s.inflight[i].wake = wake
		s.mu.Unlock()
		<-wake
		return
	}
	n := 0
	for n < len(s.inflight) && s.inflight[n].done {
		if w := s.inflight[n].wake; w != nil {
			close(w)
		}
		n++
	}
	clear(s.inflight[:n])
	s.inflight = s.inflight[n:]
	s.mu.Unlock()
}

// allocTSLocked hands out the next timestamp: wall-clock nanoseconds, but
// strictly above the previous one, and never above the persisted mark.
func (s *Store) allocTSLocked() (uint64, error) {
	for {
		if s.closed {
			return 0, errClosed
		}
		ts := max(s.last+1, wallClock())
		if ts <= s.hwm {
			if s.hwm-ts < uint64(hwmRenew) && !s.extending {
				s.startExtendLocked(ts + uint64(hwmLead))
			}
			s.last = ts
			return ts, nil
		}
		if !s.extending {
			s.extendErr = nil
			s.startExtendLocked(ts + uint64(hwmLead))
		}
		s.hwmCond.Wait()
		if err := s.extendErr; err != nil && !s.extending {
			return 0, fmt.Errorf("kv: persist timestamp high-water mark: %w", err)
		}
	}
}

func (s *Store) startExtendLocked(target uint64) {
	s.extending = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		err := s.db.Set(hwmKey, binary.BigEndian.AppendUint64(nil, target), pebble.Sync)
		s.mu.Lock()
		s.extending = false
		s.extendErr = err
		if err == nil {
			s.hwm = max(s.hwm, target)
		} else {
			s.log.Error("kv: persisting timestamp high-water mark failed", "err", err)
		}
		s.hwmCond.Broadcast()
		s.mu.Unlock()
	}()
}

// HoldSafePoint keeps GC from removing any version readable at ts until
// release is called. Holding a timestamp below the current SafePoint cannot
// bring back versions that are already gone.
func (s *Store) HoldSafePoint(ts uint64, owner string) (release func()) {
	s.mu.Lock()
	release = s.holdLocked(ts, owner)
	sp := s.safePoint
	s.mu.Unlock()
	if ts < sp {
		s.log.Warn("kv: safe point hold below current safe point", "owner", owner, "ts", ts, "safe_point", sp)
	}
	return release
}

func (s *Store) holdLocked(ts uint64, owner string) (release func()) {
	s.holdID++
	id := s.holdID
	s.holds[id] = safePointHold{ts: ts, owner: owner}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.holds, id)
			s.mu.Unlock()
		})
	}
}

// SafePoint returns the highest safe point GC has used: reads at timestamps
// at or above it see complete data.
func (s *Store) SafePoint() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.safePoint
}

// advanceSafePoint computes the timestamp below which GC may collapse
// history: no live transaction, hold, or transaction yet to start reads
// below it, and history younger than the GC lifetime is kept. It publishes
// it in the same critical section that computes it, so that a hold
// registered after the computation is checked against it (BeginAt), and
// persists it before the caller deletes anything on its strength.
func (s *Store) advanceSafePoint() (uint64, error) {
	s.spMu.Lock()
	defer s.spMu.Unlock()
	s.mu.Lock()
	sp := s.readTSLocked()
	if now, life := wallClock(), uint64(s.lifetime); now > life {
		sp = min(sp, now-life)
	} else {
		sp = 0
	}
	for ts := range s.live {
		sp = min(sp, ts)
	}
	for _, h := range s.holds {
		sp = min(sp, h.ts)
	}
	raise := sp > s.safePoint
	if raise {
		s.safePoint = sp
	}
	s.mu.Unlock()
	if !raise {
		return sp, nil
	}
	// Unsynced: it reaches the WAL before the deletions that rely on it,
	// so a crash can only lose it together with them.
	return sp, s.db.Set(safePointKey, binary.BigEndian.AppendUint64(nil, sp), pebble.NoSync)
}

// pebbleLogger routes Pebble's log output to slog. Pebble's info messages
// are routine (WAL replay, file counts at open), hence debug level.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error("pebble: " + fmt.Sprintf(format, args...))
}

// Fatalf is only called by Pebble for unrecoverable states (e.g. a failed
// WAL fsync) where continuing could corrupt data, so it exits like Pebble's
// default logger does.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error("pebble fatal: " + fmt.Sprintf(format, args...))
	os.Exit(1)
}

// metrics are per Store and not registered anywhere; Collectors hands them
// out so the server decides the registry.
type metrics struct {
	commits   prometheus.Counter
	aborts    prometheus.Counter
	conflicts prometheus.Counter
	commitDur prometheus.Histogram
	locks     prometheus.Counter
	lockWaits prometheus.Counter
	deadlocks prometheus.Counter
	purged    prometheus.Counter
	// rangeScans counts bounded forward scans, by whether the range cache
	// answered them ("hit") or Pebble did ("miss"); scans count on the
	// two children, resolved once.
	rangeScans             *prometheus.CounterVec
	rangeHits, rangeMisses prometheus.Counter
}

func newMetrics() metrics {
	m := metrics{
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_txn_commits_total",
			Help: "Transactions committed successfully, including read-only ones.",
		}),
		aborts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_txn_aborts_total",
			Help: "Transactions with buffered writes that were rolled back or failed to commit (conflicts included).",
		}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_txn_conflicts_total",
			Help: "Commits rejected with a write-write conflict.",
		}),
		commitDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kv_commit_duration_seconds",
			Help:    "Latency of successful read-write commits, from latching to durable and visible.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		locks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_locks_acquired_total",
			Help: "Row locks taken by transactions.",
		}),
		lockWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_lock_waits_total",
			Help: "Row lock requests that had to wait for another transaction.",
		}),
		deadlocks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_deadlocks_total",
			Help: "Row lock requests refused because waiting would have deadlocked.",
		}),
		purged: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kv_purged_versions_total",
			Help: "Superseded row versions deleted as soon as no reader could see them (the background GC pass's removals are not counted).",
		}),
		rangeScans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kv_range_cache_scans_total",
			Help: "Bounded forward scans, by whether the range cache answered them (hit) or Pebble did (miss).",
		}, []string{"result"}),
	}
	m.rangeHits = m.rangeScans.WithLabelValues("hit")
	m.rangeMisses = m.rangeScans.WithLabelValues("miss")
	return m
}

// Collectors returns the store's Prometheus collectors.
func (s *Store) Collectors() []prometheus.Collector {
	m := &s.metrics
	diskFull := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kv_disk_full",
		Help: "1 while writes are refused because the data directory's file system is full, else 0.",
	}, func() float64 {
		if s.disk.Err() != nil {
			return 1
		}
		return 0
	})
	rangeBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kv_range_cache_bytes",
		Help: "Bytes the range cache holds, as counted against --range-cache-size.",
	}, func() float64 { return float64(s.ranges.size()) })
	return []prometheus.Collector{m.commits, m.aborts, m.conflicts, m.commitDur, m.locks, m.lockWaits, m.deadlocks, m.purged, m.rangeScans, rangeBytes, diskFull}
}
