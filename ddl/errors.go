package ddl

import "fmt"

// A job fails with one of the typed errors below, or with an error the
// SQL layer returned through Indexer (a NULL in a new primary key, a value
// the new column type cannot hold). ddl does not know MySQL's error
// numbers: the SQL layer maps every error to its code and message
// (Indexer.Describe), and a job records what it said, so that the
// statement waiting on the job, SHOW DDL JOBS and a wait after a restart
// all report the same error. The Error texts are MySQL's.

// ErrCancelled is a job's error after ADMIN CANCEL DDL JOBS or KILL QUERY.
var ErrCancelled error = message("Cancelled DDL job")

// ErrTableChanged is a column change whose column a concurrent change
// removed or renamed between the statement and its job.
var ErrTableChanged error = message("Table definition has changed, please retry transaction")

// ErrDropAllColumns is a DROP COLUMN of a table's last column.
var ErrDropAllColumns error = message("You can't delete all columns with ALTER TABLE; use DROP TABLE instead")

// message is an error whose text is MySQL's message for it.
type message string

func (m message) Error() string { return string(m) }

// DuplicateKeyError is a unique index's refusal: Key shows the index's
// values as MySQL does, Index is the index's name.
type DuplicateKeyError struct{ Table, Index, Key string }

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("Duplicate entry '%s' for key '%s.%s'", e.Key, e.Table, UserIndexName(e.Index))
}

// DuplicateIndexError is an index name the table already has.
type DuplicateIndexError struct{ Index string }

func (e *DuplicateIndexError) Error() string {
	return fmt.Sprintf("Duplicate key name '%s'", e.Index)
}

// DuplicateColumnError is a column name the table already has.
type DuplicateColumnError struct{ Column string }

func (e *DuplicateColumnError) Error() string {
	return fmt.Sprintf("Duplicate column name '%s'", e.Column)
}

// UnknownColumnError names a column the table does not have.
type UnknownColumnError struct{ Column, Table string }

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("Unknown column '%s' in '%s'", e.Column, e.Table)
}

// NoSuchTableError is a job whose table is gone.
type NoSuchTableError struct{ DB, Table string }

func (e *NoSuchTableError) Error() string {
	return fmt.Sprintf("Table '%s.%s' doesn't exist", e.DB, e.Table)
}

// CantDropError is a DROP of a column or index the table does not have.
type CantDropError struct{ Name string }

func (e *CantDropError) Error() string {
	return fmt.Sprintf("Can't DROP '%s'; check that column/key exists", e.Name)
}

// UnsupportedError is a change ReorgDB does not make.
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("This version of ReorgDB doesn't yet support '%s'", e.Feature)
}

// CorruptIndexError is an index entry without its row, found by a check.
type CorruptIndexError struct {
	Index  string
	Handle int64
}

func (e *CorruptIndexError) Error() string {
	return fmt.Sprintf("Index %s is corrupted: an entry has no matching row (handle %d)", e.Index, e.Handle)
}

// SnapshotLostError is an ingest job that cannot go on because history
// at its snapshot was collected while the server was down.
type SnapshotLostError struct{ Job int64 }

func (e *SnapshotLostError) Error() string {
	return fmt.Sprintf("the snapshot of DDL job %d was garbage-collected while the server was down; the job is rolled back, run it again", e.Job)
}

// BadValueError is a row whose value the new column type cannot hold;
// Err is the SQL layer's error for it.
type BadValueError struct{ Err error }

func (e *BadValueError) Error() string { return e.Err.Error() }
func (e *BadValueError) Unwrap() error { return e.Err }

// RecordedError is a failure as a job or a doom record keeps it: the code
// and the message the SQL layer gave when it happened.
type RecordedError struct {
	Code uint16
	Msg  string
}

func (e *RecordedError) Error() string { return e.Msg }

// TruncatedError is a doom record that cannot be read: the job fails as
// if its value had been cut short.
type TruncatedError struct{ Column string }

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("Data truncated for column '%s' at row 1", e.Column)
}
