package ingest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/extsort"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/kv"
)

// scanRound scans the tasks of round, from where each got to, until the
// memory budget is used; it advances prog and returns the round's entries
// sorted, one buffer per worker and index, and their size.
func (r *run) scanRound(round []int) ([]extsort.Source, int64, error) {
	workers := max(1, r.Config().Workers)
	r.host.Phase("scan")
	encs := make([]Encoder, workers)
	for w := range encs {
		var err error
		if encs[w], err = r.NewEncoder(); err != nil {
			return nil, 0, err
		}
	}
	var (
		mu   sync.Mutex
		next int
		used atomic.Int64
	)
	// claim hands each task of the round to one worker, so prog[ti] is
	// that worker's alone until the round ends.
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(round) || used.Load() >= r.budget {
			return 0, false
		}
		next++
		return round[next-1], true
	}
	g, gctx := errgroup.WithContext(r.ctx)
	var bufs []*extsort.Buffer
	for w, enc := range encs {
		mine := r.workerBuffers(w)
		bufs = append(bufs, mine...)
		emit := func(ix int, k, v []byte) error {
			used.Add(mine[ix].Add(k, v))
			return nil
		}
		g.Go(func() error {
			snap, err := r.Store.BeginAt(r.Snapshot)
			if err != nil {
				return err
			}
			defer snap.Rollback()
			pc := r.host.NewPacer(workers)
			for gctx.Err() == nil {
				ti, ok := claim()
				if !ok {
					return nil
				}
				if err := r.scanTask(gctx, snap, enc, emit, pc, &r.prog[ti], &used); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, 0, err
	}
	r.host.Phase("sort")
	if err := r.host.At(r.ctx, "sort"); err != nil {
		return nil, 0, err
	}
	return r.sortBuffers(bufs), sumBytes(bufs), nil
}

// workerBuffers returns worker w's buffers, one per index, emptied for a
// new round. They are kept from round to round: the budget's memory is
// mapped once per run, not once per round.
func (r *run) workerBuffers(w int) []*extsort.Buffer {
	mine := r.pool[w]
	if mine == nil {
		mine = make([]*extsort.Buffer, len(r.IndexIDs))
		for i, iid := range r.IndexIDs {
			mine[i] = extsort.NewBuffer(len(codec.IndexPrefix(r.TableID, iid)))
		}
		r.pool[w] = mine
	}
	for _, b := range mine {
		b.Reset()
	}
	return mine
}

func sumBytes(bufs []*extsort.Buffer) int64 {
	var n int64
	for _, b := range bufs {
		n += b.Bytes()
	}
	return n
}

// sortBuffers sorts the round's buffers, threads() of them at a time,
// each sort paced. A cancelled job's sorts end at full speed; the caller
// sees the context's error at its next step.
func (r *run) sortBuffers(bufs []*extsort.Buffer) []extsort.Source {
	var g errgroup.Group
	g.SetLimit(r.threads())
	srcs := make([]extsort.Source, 0, len(bufs))
	for _, b := range bufs {
		srcs = append(srcs, b)
		g.Go(func() error {
			pc := r.host.NewPacer(r.threads())
			b.Sort(func() { _ = pc.Pace(r.ctx) })
			return nil
		})
	}
	_ = g.Wait() // the sorts return no error
	r.host.Add(Stats{Sorted: sumBytes(bufs)}, 0)
	return srcs
}

// scanTask encodes the entries of a task's rows at the snapshot, from
// where the task got to, until its end or until the round's memory budget
// is used; it advances the task.
func (r *run) scanTask(ctx context.Context, snap *kv.Txn, enc Encoder, emit func(int, []byte, []byte) error, pc *pace.Pacer, task *Task, used *atomic.Int64) error {
	c := r.Config()
	batch := int64(max(1, c.BatchSize))
	start := codec.RecordKey(r.TableID, task.Next)
	end := codec.PrefixEnd(codec.RecordKey(r.TableID, task.End))
	it := snap.NewIter(start, end, false)
	defer it.Close()
	var n int64
	report := func() {
		if k := n % batch; k > 0 {
			r.host.Add(Stats{Rows: k}, 0)
		}
	}
	for ; it.Valid(); it.Next() {
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		if err := enc.Encode(h, it.Value(), emit); err != nil {
			return err
		}
		n++
		task.Rows++
		task.Next = h + 1
		if n%batch == 0 {
			if err := r.endBatch(ctx, batch, pc, c.BatchDelay); err != nil {
				return err
			}
		}
		if used.Load() >= r.budget {
			report()
			return nil // the round is full; the task goes on in the next one
		}
	}
	report()
	if err := it.Err(); err != nil {
		return err
	}
	task.Done = true
	task.Next = task.End
	return nil
}

// endBatch reports a batch of rows scanned and paces the scan: the pacer,
// the test points and the batch delay.
func (r *run) endBatch(ctx context.Context, batch int64, pc *pace.Pacer, delay time.Duration) error {
	r.host.Add(Stats{Rows: batch}, 0)
	if err := pc.Pace(ctx); err != nil {
		return err
	}
	if err := r.host.At(ctx, "scan"); err != nil {
		return err
	}
	if delay <= 0 {
		return nil
	}
	return pace.Sleep(ctx, delay)
}
