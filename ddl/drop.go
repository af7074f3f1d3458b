package ddl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/ddl/pace"
)

// JobDropIndex takes an index away: public -> write-only -> delete-only ->
// absent, one metadata-lock step at a time (the reverse of ADD INDEX, so
// that no two live transactions disagree by more than a step), then its
// entries are removed. It cannot be cancelled once it has started: a
// half-dropped index is no longer maintained.
const JobDropIndex = "drop index"

// SubmitDropIndex queues a DROP INDEX job for a public index.
func (m *Manager) SubmitDropIndex(dbName, tableName string, tableID int64, ix *catalog.Index, query string) (int64, error) {
	return m.submit(&Job{
		Type: JobDropIndex, DBName: dbName, TableName: tableName, TableID: tableID,
		Query: query, State: JobQueueing, SchemaState: catalog.StatePublic, Mode: "-",
		Indexes: []IndexSpec{{Name: ix.Name, Columns: ix.Columns, Unique: ix.Unique, Primary: ix.Primary, ID: ix.ID}},
	})
}

// runDropIndex drives a DROP INDEX job to its end.
func (m *Manager) runDropIndex(ctx context.Context, id int64) error {
	for {
		j, _ := m.snapshot(id)
		if j.State.Finished() {
			m.finish(id)
			return nil
		}
		err := m.stall(ctx, id, "drop-"+stateName(j.SchemaState))
		if j, _ = m.snapshot(id); j.CancelRequested && j.SchemaState == catalog.StatePublic {
			return m.endCancelled(id)
		}
		if _, ok := m.cat.Current().TableByID(j.TableID); !ok {
			// The table is gone, and its indexes with it.
			return m.end(id, func(j *Job) { j.SchemaState = catalog.StateAbsent })
		}
		m.markRunning(id, j)
		if err == nil {
			err = m.dropIndexStep(ctx, id, j)
		}
		// Until the first step nothing has changed; half-way, the only
		// way is forward.
		if err := m.retryStep(ctx, id, err, j.SchemaState == catalog.StatePublic); err != nil {
			return err
		}
	}
}

// dropIndexStep takes a DROP INDEX (or the drop of a DROP COLUMN's
// indexes) from its state to the next.
func (m *Manager) dropIndexStep(ctx context.Context, id int64, j *Job) error {
	switch {
	case j.SchemaState == catalog.StatePublic && j.Type == JobDropColumn:
		return m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
			if t == nil {
				return errNoTable(j)
			}
			if err := sameIndexes(t, j); err != nil {
				return err
			}
			return setIndexStates(t, j, catalog.StateWriteOnly)
		})
	case j.SchemaState == catalog.StatePublic:
		return m.setIndexState(ctx, id, catalog.StateWriteOnly)
	case j.SchemaState == catalog.StateWriteOnly:
		return m.setIndexState(ctx, id, catalog.StateDeleteOnly)
	case j.SchemaState == catalog.StateDeleteOnly:
		return m.removeIndexes(ctx, id)
	}
	// Absent in every live schema version, and index IDs are never
	// reused: the entries go at once, outside MVCC.
	if err := m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err != nil {
		return err
	}
	return m.end(id, nil)
}

// markRunning moves a queued job to running as it takes its first step.
func (m *Manager) markRunning(id int64, j *Job) {
	if j.State == JobQueueing {
		m.update(id, func(j *Job) { j.State, j.Start = JobRunning, time.Now() })
	}
}

// end records that a job is done, after fn's last changes to it.
func (m *Manager) end(id int64, fn func(j *Job)) error {
	m.update(id, func(j *Job) {
		j.State, j.End = JobDone, time.Now()
		if fn != nil {
			fn(j)
		}
	})
	if err := m.persist(id); err != nil {
		return err
	}
	m.finish(id)
	return nil
}

// retryStep decides what the failure of a step of a job that does not
// roll back (DROP INDEX, instant column changes) leads to. The runner
// stops (non-nil) when the server stops or a test kills the job; it looks
// at the job again after a cancel request; a job that has changed
// nothing yet (canFail) fails on anything but a write conflict; anything
// else is retried after a pause.
func (m *Manager) retryStep(ctx context.Context, id int64, err error, canFail bool) error {
	switch {
	case err == nil, errors.Is(err, errCancelRequested):
		return nil
	case ctx.Err() != nil, errors.Is(err, errKilled):
		return err
	case canFail && !isRetryable(err):
		m.fail(id, err)
		return nil
	}
	m.log.Warn("DDL job retries", "job", id, "err", err)
	return pace.Sleep(ctx, 100*time.Millisecond)
}

// endCancelled ends a job cancelled before it changed anything.
func (m *Manager) endCancelled(id int64) error {
	m.update(id, func(j *Job) {
		j.State, j.End = JobCancelled, time.Now()
		j.ErrCode, j.Error = m.indexer.Describe(ErrCancelled)
	})
	if err := m.persist(id); err != nil {
		return err
	}
	m.finish(id)
	return nil
}

// removeIndexes takes the job's indexes out of the table (a table that is
// gone took them with it), and a DROP COLUMN job's column with them.
func (m *Manager) removeIndexes(ctx context.Context, id int64) error {
	return m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
		removeIndexIDs(t, j.Indexes, func(s IndexSpec) int64 { return s.ID })
		if j.Type == JobDropColumn && t != nil {
			if c, _ := t.ColumnByName(j.Columns[0].Of); c != nil {
				if err := DropColumnFrom(t, j.Columns[0]); err != nil {
					return err
				}
			}
		}
		j.SchemaState = catalog.StateAbsent
		return nil
	})
}

func stateName(s catalog.IndexState) string {
	switch s {
	case catalog.StateAbsent:
		return "none"
	case catalog.StateDeleteOnly:
		return "delete-only"
	case catalog.StateWriteOnly:
		return "write-only"
	case catalog.StateWriteReorg:
		return "write-reorganization"
	case catalog.StatePublic:
		return "public"
	}
	return fmt.Sprint(int(s))
}
