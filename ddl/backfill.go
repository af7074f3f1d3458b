package ddl

// The tasks both backfills divide a table into, and the transactional
// backfill's batches (package txnfill runs them).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl/pace"
	"github.com/reorgdb/reorgdb/ddl/tasks"
	"github.com/reorgdb/reorgdb/ddl/txnfill"
	"github.com/reorgdb/reorgdb/kv"
)

// planTasks splits the table's current handle range into tasks.
func (m *Manager) planTasks(j *Job) ([]Task, int64, error) {
	txn := m.store.Begin()
	defer txn.Rollback()
	return tasks.Plan(m.store, txn, j.TableID)
}

// prepareTasks splits the table into tasks the first time, and brings a
// resumed job's tasks up to their checkpoints. It also returns the table's
// definition and the IDs of the indexes to fill.
func (m *Manager) prepareTasks(id int64) (*Job, *catalog.Table, []int64, error) {
	j, _ := m.snapshot(id)
	if j.Tasks == nil {
		tasks, total, err := m.planTasks(j)
		if err != nil {
			return nil, nil, nil, err
		}
		if tasks == nil {
			tasks = []Task{}
		}
		m.update(id, func(j *Job) { j.Tasks, j.TotalRows = tasks, total })
		if err := m.persist(id); err != nil {
			return nil, nil, nil, err
		}
		j, _ = m.snapshot(id)
	}
	txn := m.store.Begin()
	err := loadCheckpoints(txn, j)
	txn.Rollback()
	if err != nil {
		return nil, nil, nil, err
	}
	m.update(id, func(jj *Job) { jj.Tasks, jj.RowCount = j.Tasks, j.RowCount })
	t, ok := m.cat.Current().TableByID(j.TableID)
	if !ok {
		return nil, nil, nil, errNoTable(j)
	}
	ids := make([]int64, len(j.Indexes))
	for i, spec := range j.Indexes {
		ids[i] = spec.ID
	}
	return j, t, ids, nil
}

// errNoTable is a job's failure once its table is gone (dropped, or its
// database dropped, while the job was queued or running).
func errNoTable(j *Job) error {
	return &NoSuchTableError{DB: j.DBName, Table: j.TableName}
}

// backfill fills the job's indexes from every row that existed when the
// indexes became write-only everywhere (rows written later are indexed by
// DML itself), or converts a MODIFY COLUMN's values, with package
// txnfill: each batch is one transaction that writes the entries or rows
// and the task's checkpoint.
func (m *Manager) backfill(ctx context.Context, id int64) error {
	j, t, ids, err := m.prepareTasks(id)
	if err != nil {
		return err
	}
	fill := func(ctx context.Context, txn *kv.Txn, task Task, limit int) (txnfill.Batch, error) {
		return m.indexBatch(ctx, txn, j, t, ids, task, limit)
	}
	if j.isReorg() {
		conv := m.indexer.(ColumnConverter)
		fill = func(ctx context.Context, txn *kv.Txn, task Task, limit int) (txnfill.Batch, error) {
			return m.convertBatch(ctx, txn, conv, j, t, ids, task, limit)
		}
	}
	done, err := txnfill.Run(ctx, m.store, j.Tasks, fill, &txnHost{m: m, j: j, persisted: time.Now()})
	if err != nil {
		return err
	}
	m.update(id, func(j *Job) { j.Tasks = done; j.Comment = "" })
	return m.persist(id)
}

// txnHost is a job as its transactional backfill sees it.
type txnHost struct {
	m         *Manager
	j         *Job
	persisted time.Time // when the job's progress was last stored
}

func (h *txnHost) Config() txnfill.Config {
	s := h.m.settings()
	return txnfill.Config{Workers: s.Workers, BatchSize: s.BatchSize, BatchDelay: s.BatchDelay}
}

func (h *txnHost) At(ctx context.Context, point string) error { return h.m.stall(ctx, h.j.ID, point) }
func (h *txnHost) PutTask(txn *kv.Txn, i int, t Task) error   { return putTask(txn, h.j.ID, i, t) }
func (h *txnHost) Added(rows int64)                           { h.m.update(h.j.ID, func(j *Job) { j.RowCount += rows }) }
func (h *txnHost) NewPacer(workers int) *pace.Pacer           { return h.m.newPacer(workers) }

// Watch shows the run's settings and conflicts in the job, stores its
// progress now and then, and stops a conversion that a write has doomed.
func (h *txnHost) Watch(retried int64) error {
	set := h.m.settings()
	comment := fmt.Sprintf("mode=txn workers=%d batch_size=%d conflicts_retried=%d", max(1, set.Workers), set.BatchSize, retried)
	h.m.update(h.j.ID, func(j *Job) { j.Comment = comment })
	if time.Since(h.persisted) > 2*time.Second {
		h.persisted = time.Now()
		h.m.persistOrLog(h.j.ID)
	}
	if cur, _ := h.m.snapshot(h.j.ID); cur.isReorg() {
		return h.m.firstDoom(cur)
	}
	return nil
}

// indexBatch indexes up to limit rows of a task. Each row is locked as DML
// locks it, without waiting (a row a transaction holds ends the batch
// before it), and indexed from its newest version: so the batch and DML
// serialize on the row, and neither fails the other's commit.
func (m *Manager) indexBatch(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64, task Task, limit int) (txnfill.Batch, error) {
	it := txn.NewIter(codec.RecordKey(j.TableID, task.Next), codec.PrefixEnd(codec.RecordKey(j.TableID, task.End)), false)
	defer it.Close()
	b := txnfill.Batch{Last: task.Next - 1}
	for ; it.Valid() && b.Rows < int64(limit); it.Next() {
		h, ents, err := m.lockedRowEntries(ctx, txn, j, t, ids, it.Key(), b.Rows == 0)
		if errors.Is(err, txnfill.ErrRowBusy) && b.Last >= task.Next {
			break // the rows before it are done
		}
		if err == nil {
			err = putEntries(ctx, txn, j, h, ents)
		}
		if err != nil {
			return b, err
		}
		b.Last = h
		b.Rows++
	}
	b.More = it.Valid()
	return b, it.Err()
}

// lockedRowEntries locks the row at key without waiting and returns its
// handle and the entries its newest version has in the indexes ids (none
// when it is gone).
func (m *Manager) lockedRowEntries(ctx context.Context, txn *kv.Txn, j *Job, t *catalog.Table, ids []int64, key []byte, wait bool) (int64, []Entry, error) {
	_, h, err := codec.DecodeRecordKey(key)
	if err != nil {
		return 0, nil, err
	}
	v, found, err := txnfill.LockLatest(ctx, txn, key, wait)
	if err != nil || !found {
		return h, nil, err
	}
	ents, err := m.indexer.Entries(j.DBName, t, ids, h, v)
	return h, ents, err
}
