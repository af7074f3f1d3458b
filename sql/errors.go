package sql

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// The layers below report failures as typed errors (kv.ErrDeadlock,
// kv.DiskFullError, ddl.DuplicateKeyError, ...) and know nothing of
// MySQL's error numbers; this file gives them their codes, SQLSTATEs and
// texts, once.

// ErrInterrupted is MySQL's 1317, for a statement that was killed.
func ErrInterrupted() error {
	return mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
}

// DiskFullError is MySQL's ER_DISK_FULL for a write refused because the
// data directory's file system is full (kv.ErrDiskFull). MySQL waits for
// space with this message; ReorgDB fails the write at once instead, and
// accepts writes again once space is freed.
func DiskFullError(path string) *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERDiskFull, mysql.SSUnknownSQLState,
		"Disk full (%s); waiting for someone to free some space... (errno: 28 - No space left on device)", path)
}

// storageError gives storage errors that clients should tell apart their
// MySQL error codes.
func storageError(err error) error {
	var full *kv.DiskFullError
	if errors.As(err, &full) {
		return DiskFullError(full.Path)
	}
	return err
}

func errDeadlock() error {
	return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
		"Deadlock found when trying to get lock; try restarting transaction")
}

func errLockWaitTimeout() error {
	return mysql.NewSQLError(mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState,
		"Lock wait timeout exceeded; try restarting transaction")
}

// jobError is a schema change's error (from submitting its job or from
// the job itself) as MySQL reports it.
func jobError(err error) error {
	if err == nil {
		return nil
	}
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	code, msg := describeJobError(err)
	return mysql.NewSQLError(int(code), sqlState(code), "%s", msg)
}

// describeJobError is the code and text a job records for err
// (ddl.Indexer.Describe).
func describeJobError(err error) (uint16, string) {
	var (
		rec  *ddl.RecordedError
		se   *mysql.SQLError
		full *kv.DiskFullError
	)
	switch {
	case errors.As(err, &rec):
		return rec.Code, rec.Msg
	case errors.As(err, &se):
		return uint16(se.Num), se.Message
	case errors.As(err, &full):
		return uint16(mysql.ERDiskFull), DiskFullError(full.Path).Message
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		// The sort runs and sstables of an ingest build go to the temp dir.
		return 1878, fmt.Sprintf("Temporary file write failure (%v)", err)
	}
	for _, c := range ddlCodes {
		if c.is(err) {
			return c.code, err.Error()
		}
	}
	return mysql.ERUnknownError, err.Error()
}

// ddlCodes are MySQL's codes for package ddl's errors.
var ddlCodes = []struct {
	is   func(error) bool
	code uint16
}{
	{isErr(ddl.ErrCancelled), 8214},    // TiDB's ErrCancelledDDLJob
	{isErr(ddl.ErrTableChanged), 1412}, // ER_TABLE_DEF_CHANGED
	{isErr(ddl.ErrDropAllColumns), mysql.ERCantRemoveAllFields},
	{asErr[*ddl.DuplicateKeyError], mysql.ERDupEntry},
	{asErr[*ddl.DuplicateIndexError], mysql.ERDupKeyName},
	{asErr[*ddl.DuplicateColumnError], mysql.ERDupFieldName},
	{asErr[*ddl.UnknownColumnError], mysql.ERBadFieldError},
	{asErr[*ddl.NoSuchTableError], mysql.ERNoSuchTable},
	{asErr[*ddl.CantDropError], mysql.ERCantDropFieldOrKey},
	{asErr[*ddl.UnsupportedError], mysql.ERNotSupportedYet},
	{asErr[*ddl.CorruptIndexError], 1712}, // ER_INDEX_CORRUPT
	{asErr[*ddl.TruncatedError], mysql.ERWarnDataTruncated},
}

func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func asErr[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// sqlState is the SQLSTATE MySQL sends with code.
func sqlState(code uint16) string {
	switch code {
	case mysql.ERDupEntry:
		return mysql.SSDupKey
	case mysql.ERDupKeyName, mysql.ERCantDropFieldOrKey, mysql.ERNotSupportedYet, mysql.ERCantRemoveAllFields:
		return "42000"
	case mysql.ERDupFieldName:
		return "42S21"
	case mysql.ERBadFieldError:
		return "42S22"
	case mysql.ERNoSuchTable:
		return "42S02"
	case mysql.ERWarnDataOutOfRange:
		return "22003"
	case mysql.ERWarnDataTruncated:
		return "01000"
	case mysql.ERInvalidUseOfNull:
		return "22004"
	case mysql.ERTruncatedWrongValue:
		return "22007"
	case 3140: // ER_INVALID_JSON_TEXT
		return "22032"
	case mysql.ERDataTooLong:
		return "22001"
	}
	return mysql.SSUnknownSQLState
}

// Describe implements ddl.Indexer.
func (x indexer) Describe(err error) (uint16, string) { return describeJobError(err) }
