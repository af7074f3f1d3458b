package ddl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
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
			m.update(id, func(j *Job) { j.State, j.End, j.SchemaState = JobDone, time.Now(), catalog.StateAbsent })
			if err := m.persist(id); err != nil {
				return err
			}
			m.finish(id)
			return nil
		}
		if j.State == JobQueueing {
			m.update(id, func(j *Job) { j.State, j.Start = JobRunning, time.Now() })
		}
		switch {
		case err != nil:
		case j.SchemaState == catalog.StatePublic && j.Type == JobDropColumn:
			err = m.step(ctx, id, func(ch *catalog.Change, t *catalog.Table, j *Job) error {
				if t == nil {
					return errNoTable(j)
				}
				if err := sameIndexes(t, j); err != nil {
					return err
				}
				return setIndexStates(t, j, catalog.StateWriteOnly)
			})
		case j.SchemaState == catalog.StatePublic:
			err = m.setIndexState(ctx, id, catalog.StateWriteOnly)
		case j.SchemaState == catalog.StateWriteOnly:
			err = m.setIndexState(ctx, id, catalog.StateDeleteOnly)
		case j.SchemaState == catalog.StateDeleteOnly:
			err = m.removeIndexes(ctx, id)
		default:
			// Absent in every live schema version, and index IDs are
			// never reused: the entries go at once, outside MVCC.
			if err = m.clearIndexRanges(j, func(s IndexSpec) int64 { return s.ID }); err == nil {
				m.update(id, func(j *Job) { j.State, j.End = JobDone, time.Now() })
				if err = m.persist(id); err == nil {
					m.finish(id)
				}
			}
		}
		if err == nil || errors.Is(err, errCancelRequested) {
			continue
		}
		if ctx.Err() != nil || errors.Is(err, errKilled) {
			return err
		}
		if j.SchemaState == catalog.StatePublic && !isRetryable(err) {
			m.fail(id, err) // nothing changed yet
			continue
		}
		// Half-way, the only way is forward.
		m.log.Warn("DDL job retries", "job", id, "err", err)
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// endCancelled ends a job cancelled before it changed anything.
func (m *Manager) endCancelled(id int64) error {
	m.update(id, func(j *Job) {
		j.State, j.End = JobCancelled, time.Now()
		j.Error, j.ErrCode = ErrCancelled.Msg, ErrCancelled.Code
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
