// Package ingest is the sort-based index build (TiDB's "fast reorg",
// MySQL's sorted build): it adds the entries of a table's rows as they
// were at one snapshot S to new indexes without transactions, by scanning,
// sorting and ingesting sstables.
//
// A run goes in rounds. Workers claim the job's tasks (handle ranges of
// the table) and scan them at S, encoding only the indexed columns into
// sort buffers until the memory budget is used; the round's buffers are
// sorted, then either spilled to the job's directory as sorted runs, one
// per key range, or (the last round) merged from memory together with the
// runs into non-overlapping sstables whose versions are stamped S, which
// are ingested together.
//
// Invariants:
//   - Tasks are checkpointed (Host.Checkpoint) only after everything
//     scanned up to them is ingested: a resumed run scans on from the
//     checkpoints and loses nothing. Ingesting a range twice writes the
//     same versions at S, so redoing work is harmless.
//   - A key found twice while merging is a duplicate in a unique index
//     (Host.Duplicate gives the error); non-unique keys contain the handle
//     and cannot repeat. Only keys merged into one ingest meet, so a
//     build that ingests more than once (a disk quota too small for all
//     the runs, more than maxRuns runs) can leave a duplicate for the
//     caller's validation to find.
//   - The runs and sstables stay within Config.DiskQuota: a round is
//     ingested early when spilling it could pass half the quota, since the
//     sstables merged from the runs share the directory.
//   - Every sort buffer is freed and the directory removed when the run
//     ends, whatever the path out; buffers are reused from round to round.
//
// What makes entries at S the right ones (the change log that DML writes
// meanwhile, and its merge) is package ddl's business.
package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reorgdb/reorgdb/ddl/extsort"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/ddl/tasks"
	"github.com/reorgdb/reorgdb/kv"
)

// Task is a range of a table's handles a worker scans, with its
// checkpoint.
type Task = tasks.Task

// Encoder turns stored rows into index entries without allocating per
// row; one per goroutine.
type Encoder interface {
	// Encode calls emit with each entry of the row; ix is the entry's
	// index as a position in the run's index IDs, and key and value are
	// valid only during the call.
	Encode(handle int64, row []byte, emit func(ix int, key, value []byte) error) error
}

// Config are the knobs a run reads as it goes.
type Config struct {
	Workers     int           // scanning goroutines
	Threads     int           // sorting and merging goroutines (0: Workers)
	BatchSize   int           // rows between progress reports and pauses
	BatchDelay  time.Duration // pause after each batch
	BufferBytes int64         // sort buffers of all workers (0: 256 MiB)
	DiskQuota   int64         // most bytes of runs and sstables (0: 100 GiB)
	Compress    bool          // compress the sstables' blocks
}

// Stats are counters a run adds to as it goes.
type Stats struct {
	Rows, Sorted, Spilled, Ingested int64
}

// Host is the job a run builds for.
type Host interface {
	// At is called at the named points of a run ("scan", "sort",
	// "spill", "ingest", "ingested"), where tests stop or fail a job.
	At(ctx context.Context, point string) error
	// Phase says what the run does now ("scan", "sort", "spill",
	// "ingest").
	Phase(name string)
	// Add adds to the job's counters, and notes peak temp-dir bytes.
	Add(s Stats, peakTemp int64)
	// Checkpoint stores the tasks durably; rows is their total.
	Checkpoint(tasks []Task, rows int64) error
	// Duplicate is the error for a unique key found twice; value is one
	// of the two entries' values.
	Duplicate(key, value []byte) error
	// NewPacer paces one of workers goroutines.
	NewPacer(workers int) *pace.Pacer
}

// Spec is what a run builds.
type Spec struct {
	Store    *kv.Store
	Snapshot uint64  // S: the scan's snapshot and the entries' timestamp
	Dir      string  // the run's runs and sstables; removed at the end
	TableID  int64   // the table scanned
	IndexIDs []int64 // the indexes built, in the encoder's order
	// Filters gives the sstables bloom filters: some index built is read
	// by whole key (a unique one), not only scanned by prefix.
	Filters    bool
	Tasks      []Task // from their checkpoints
	NewEncoder func() (Encoder, error)
	Config     func() Config
}

// Budget is the memory a round's buffers fill under c: runs may take half
// the disk quota, since the sstables merged from them share the directory.
func Budget(c Config) int64 {
	budget := c.BufferBytes
	if budget <= 0 {
		budget = 256 << 20
	}
	return min(budget, max(quota(c)/2, 1<<16))
}

func quota(c Config) int64 {
	if c.DiskQuota <= 0 {
		return 100 << 30
	}
	return c.DiskQuota
}

// maxRuns bounds the runs merged at once.
const maxRuns = 256

// Build runs the rounds until every task is ingested and checkpointed.
func Build(ctx context.Context, spec Spec, host Host) error {
	c := spec.Config()
	r := &run{
		Spec: spec, ctx: ctx, host: host,
		quota:  quota(c),
		budget: Budget(c),
		tasks:  spec.Tasks,
		prog:   slices.Clone(spec.Tasks),
		pool:   map[int][]*extsort.Buffer{},
	}
	defer r.close()
	return r.rounds()
}

// run is one run of Build.
type run struct {
	Spec
	ctx    context.Context
	host   Host
	quota  int64
	budget int64

	// tasks is what is checkpointed (ingested); prog is how far the scan
	// got, which runs ahead while entries wait in memory or in runs.
	tasks, prog []Task
	runs        []*extsort.Run // spilled and not yet ingested
	runSeq      int
	spilled     int64                     // bytes in runs
	pool        map[int][]*extsort.Buffer // each worker's buffers, kept from round to round
}

// close frees the sort buffers and removes the directory. Every goroutine
// that reads the buffers has been joined by then, whatever the path out.
func (r *run) close() {
	for _, bufs := range r.pool {
		for _, b := range bufs {
			b.Free()
		}
	}
	os.RemoveAll(r.Dir)
}

func (r *run) rounds() error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	for {
		round := r.pending()
		if len(round) == 0 {
			break
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if r.spilled > 0 && (r.spilled+r.budget > r.quota/2 || len(r.runs) >= maxRuns) {
			// The next spill could pass the disk quota, or the runs are
			// too many to merge at once (each is an open file per merge
			// goroutine): ingest what is sorted so far first.
			if err := r.ingest(nil); err != nil {
				return err
			}
		}
		bufs, roundBytes, err := r.scanRound(round)
		if err != nil {
			return err
		}
		if len(r.pending()) == 0 && 2*r.spilled+roundBytes <= r.quota {
			// The last round: merge it from memory together with the runs
			// spilled before, straight into the sstables.
			err = r.ingest(bufs)
		} else {
			err = r.spill(bufs)
		}
		if err != nil {
			return err
		}
	}
	if len(r.runs) > 0 {
		return r.ingest(nil)
	}
	return nil
}

// pending returns the tasks the scan has not finished.
func (r *run) pending() []int {
	var round []int
	for i := range r.prog {
		if !r.prog[i].Done {
			round = append(round, i)
		}
	}
	return round
}

// threads is how many goroutines sort and merge.
func (r *run) threads() int {
	c := r.Config()
	if c.Threads > 0 {
		return c.Threads
	}
	return max(1, c.Workers)
}

// spill writes a round's buffers as sorted runs, one per key range;
// merging the workers' buffers also finds duplicates within the round.
func (r *run) spill(bufs []extsort.Source) error {
	r.host.Phase("spill")
	parts := r.threads()
	ws := make([]*extsort.RunWriter, 0, parts)
	for range parts {
		r.runSeq++
		w, err := extsort.CreateRun(filepath.Join(r.Dir, fmt.Sprintf("run-%d.bin", r.runSeq)))
		if err != nil {
			for _, w := range ws {
				w.Close()
			}
			return err
		}
		ws = append(ws, w)
		r.runs = append(r.runs, w.Run())
	}
	err := r.host.At(r.ctx, "spill")
	if err == nil {
		err = extsort.MergeParallel(bufs, parts, r.pacedSinks(parts, func(p int) func(k, v []byte) error { return ws[p].Add }), r.host.Duplicate)
	}
	var written int64
	for _, w := range ws {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		written += w.Run().Bytes
	}
	if err != nil {
		return err
	}
	r.spilled += written
	r.host.Add(Stats{Spilled: written}, r.spilled)
	return nil
}

// ingest merges the runs and mem into non-overlapping sstables, one
// writer per key range, ingests them together, and checkpoints the scan's
// progress: every entry scanned so far was in them.
func (r *run) ingest(mem []extsort.Source) error {
	r.host.Phase("ingest")
	srcs := mem
	for _, run := range r.runs {
		srcs = append(srcs, run)
	}
	parts := r.threads()
	extsort.SetReadBufs(r.runs, parts)
	ins, err := r.ingesters(parts)
	if err != nil {
		return err
	}
	err = extsort.MergeParallel(srcs, parts, r.pacedSinks(parts, func(p int) func(k, v []byte) error { return ins[p].Add }), r.host.Duplicate)
	var written int64
	for _, in := range ins {
		written += in.Bytes
	}
	if err == nil {
		r.host.Add(Stats{}, r.spilled+written)
		if err = r.host.At(r.ctx, "ingest"); err == nil {
			err = r.Store.IngestAll(r.ctx, ins...)
		}
	}
	if err != nil {
		for _, in := range ins {
			in.Abort()
		}
		return err
	}
	r.host.Add(Stats{Ingested: written}, 0)
	if err := r.host.At(r.ctx, "ingested"); err != nil {
		return err
	}
	if err := r.checkpoint(); err != nil {
		return err
	}
	for _, run := range r.runs {
		os.Remove(run.Path())
	}
	r.runs, r.spilled = nil, 0
	return nil
}

// ingesters opens one sstable writer per key range, all stamped S.
func (r *run) ingesters(parts int) ([]*kv.Ingester, error) {
	ins := make([]*kv.Ingester, 0, parts)
	for range parts {
		in, err := r.Store.NewIngester(r.Snapshot, r.Dir, kv.IngestOptions{Filters: r.Filters, Compress: r.Config().Compress})
		if err != nil {
			for _, in := range ins {
				in.Abort()
			}
			return nil, err
		}
		ins = append(ins, in)
	}
	return ins, nil
}

// checkpoint stores the scan's progress as the tasks' checkpoints, once
// everything scanned is ingested: a resumed run scans on from there.
func (r *run) checkpoint() error {
	var rows int64
	for i := range r.prog {
		rows += r.prog[i].Rows
	}
	if err := r.host.Checkpoint(slices.Clone(r.prog), rows); err != nil {
		return err
	}
	copy(r.tasks, r.prog)
	return nil
}

// pacedSinks wraps the sinks of a parallel merge so that each paces
// itself every few thousand entries.
func (r *run) pacedSinks(parts int, sink func(p int) func(k, v []byte) error) func(p int) func(k, v []byte) error {
	return func(p int) func(k, v []byte) error {
		add, pc, n := sink(p), r.host.NewPacer(parts), 0
		return func(k, v []byte) error {
			if n++; n%2048 == 0 {
				if err := pc.Pace(r.ctx); err != nil {
					return err
				}
			}
			return add(k, v)
		}
	}
}
