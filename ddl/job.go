package ddl

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/ddl/ingest"
	"github.com/reorgdb/reorgdb/kv"
)

// JobState is where a job is in its life.
type JobState string

const (
	JobQueueing    JobState = "queueing"
	JobRunning     JobState = "running"
	JobPaused      JobState = "paused"
	JobRollingBack JobState = "rollingback"
	JobDone        JobState = "synced"
	JobRolledBack  JobState = "rollback done"
	JobCancelled   JobState = "cancelled"
)

// Finished reports whether the job reached a final state.
func (s JobState) Finished() bool {
	return s == JobDone || s == JobRolledBack || s == JobCancelled
}

// IndexSpec is one index an ADD INDEX job creates.
type IndexSpec struct {
	Name    string                `json:"name"`
	Columns []catalog.IndexColumn `json:"columns"`
	Unique  bool                  `json:"unique,omitempty"`
	Comment string                `json:"comment,omitempty"`
	// Primary: ADD PRIMARY KEY on a table keyed by a hidden handle; the
	// index becomes the table's (non-clustered) primary key when public.
	Primary   bool  `json:"primary,omitempty"`
	Invisible bool  `json:"invisible,omitempty"` // ADD INDEX ... INVISIBLE
	ID        int64 `json:"id,omitempty"`        // assigned when the index enters delete-only
	// ChangeLogID is the index's change log in an ingest build (see
	// catalog.Index.ChangeLogID), kept here to be cleared in the end.
	ChangeLogID int64 `json:"change_log_id,omitempty"`
	// Replaces, for a MODIFY COLUMN job's replacement index, is the ID of
	// the index it takes the place of.
	Replaces int64 `json:"replaces,omitempty"`
}

// Task is a slice of the table's handle space that one backfill worker
// processes at a time; Next is its checkpoint. Both backfills use it.
type Task = ingest.Task

// Job is one schema change, stored in kv so that it survives restarts.
type Job struct {
	ID          int64              `json:"id"`
	Type        string             `json:"type"`
	DBName      string             `json:"db"`
	TableName   string             `json:"table"`
	TableID     int64              `json:"table_id"`
	Query       string             `json:"query"`
	State       JobState           `json:"state"`
	SchemaState catalog.IndexState `json:"schema_state"`
	Indexes     []IndexSpec        `json:"indexes"`
	// Columns is the column a column job adds, changes or drops.
	Columns   []ColumnSpec `json:"columns,omitempty"`
	Mode      string       `json:"mode"`
	RowCount  int64        `json:"row_count"`
	TotalRows int64        `json:"total_rows"`
	Tasks     []Task       `json:"tasks,omitempty"`
	Created   time.Time    `json:"created"`
	Start     time.Time    `json:"start,omitempty"`
	End       time.Time    `json:"end,omitempty"`
	Error     string       `json:"error,omitempty"`
	ErrCode   uint16       `json:"err_code,omitempty"`
	// FirstVersion is the schema version in which the job's indexes first
	// appeared: transactions on older versions never saw them.
	FirstVersion int64 `json:"first_version,omitempty"`
	// Requests from ADMIN statements, acted on by the running job.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	PauseRequested  bool `json:"pause_requested,omitempty"`
	// Comment shows live details (workers, batch size, what it waits for).
	Comment string `json:"comment,omitempty"`
	// Ingest mode: the snapshot timestamp every scan reads and every
	// ingested version carries, and progress in bytes.
	IngestTS uint64 `json:"ingest_ts,omitempty"`
	// ResumedRows is how many rows were already backfilled (checkpointed)
	// when this process resumed the job after a restart.
	ResumedRows   int64 `json:"resumed_rows,omitempty"`
	SortedBytes   int64 `json:"sorted_bytes,omitempty"`
	SpilledBytes  int64 `json:"spilled_bytes,omitempty"`
	IngestedBytes int64 `json:"ingested_bytes,omitempty"`
	PeakTempBytes int64 `json:"peak_temp_bytes,omitempty"`
}

const (
	JobAddIndex = "add index"
)

var (
	prefixJob    = []byte("m/ddl/job/")
	prefixReorg  = []byte("m/ddl/reorg/")
	keyNextJobID = []byte("m/ddl/next_job_id")
)

func jobKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixJob...), uint64(id))
}

// taskKey holds one backfill task's checkpoint; each task has its own key
// so that workers never conflict with one another over progress.
func taskKey(jobID int64, task int) []byte {
	k := binary.BigEndian.AppendUint64(append([]byte(nil), prefixReorg...), uint64(jobID))
	return binary.BigEndian.AppendUint32(k, uint32(task))
}

func putJob(txn *kv.Txn, j *Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return txn.Set(jobKey(j.ID), b)
}

func getJob(txn *kv.Txn, id int64) (*Job, error) {
	b, ok, err := txn.Get(jobKey(id))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("ddl job %d not found", id)
	}
	var j Job
	return &j, json.Unmarshal(b, &j)
}

func putTask(txn *kv.Txn, jobID int64, i int, t Task) error {
	b, _ := json.Marshal(t)
	return txn.Set(taskKey(jobID, i), b)
}

func getTask(txn *kv.Txn, jobID int64, i int) (Task, bool, error) {
	b, ok, err := txn.Get(taskKey(jobID, i))
	if err != nil || !ok {
		return Task{}, ok, err
	}
	var t Task
	return t, true, json.Unmarshal(b, &t)
}

// loadCheckpoints refreshes a job's tasks and row count from the per-task
// checkpoint keys, which are newer than the job record.
func loadCheckpoints(txn *kv.Txn, j *Job) error {
	var rows int64
	for i := range j.Tasks {
		t, ok, err := getTask(txn, j.ID, i)
		if err != nil {
			return err
		}
		if ok {
			j.Tasks[i] = t
		}
		rows += j.Tasks[i].Rows
	}
	j.RowCount = rows
	return nil
}
