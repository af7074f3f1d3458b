package sql

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// TestJobErrorCodes checks the one mapping of ddl's typed errors to
// MySQL: each error, also wrapped, gets MySQL's code, SQLSTATE and text,
// and a job's recorded error comes back as it was recorded.
func TestJobErrorCodes(t *testing.T) {
	cases := []struct {
		err   error
		code  int
		state string
		msg   string
	}{
		{ddl.ErrCancelled, 8214, "HY000", "Cancelled DDL job"},
		{ddl.ErrTableChanged, 1412, "HY000", "Table definition has changed, please retry transaction"},
		{ddl.ErrDropAllColumns, 1090, "42000", "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"},
		{&ddl.DuplicateKeyError{Table: "t", Index: ddl.HiddenIndexPrefix + "k", Key: "7-x"}, 1062, "23000", "Duplicate entry '7-x' for key 't.k'"},
		{&ddl.DuplicateIndexError{Index: "k"}, 1061, "42000", "Duplicate key name 'k'"},
		{&ddl.DuplicateColumnError{Column: "c"}, 1060, "42S21", "Duplicate column name 'c'"},
		{&ddl.UnknownColumnError{Column: "c", Table: "t"}, 1054, "42S22", "Unknown column 'c' in 't'"},
		{&ddl.NoSuchTableError{DB: "d", Table: "t"}, 1146, "42S02", "Table 'd.t' doesn't exist"},
		{&ddl.CantDropError{Name: "c"}, 1091, "42000", "Can't DROP 'c'; check that column/key exists"},
		{&ddl.UnsupportedError{Feature: "X"}, 1235, "42000", "This version of ReorgDB doesn't yet support 'X'"},
		{&ddl.CorruptIndexError{Index: "k", Handle: 3}, 1712, "HY000", "Index k is corrupted: an entry has no matching row (handle 3)"},
		{&ddl.TruncatedError{Column: "c"}, 1265, "01000", "Data truncated for column 'c' at row 1"},
		{&ddl.RecordedError{Code: 1264, Msg: "Out of range value for column 'k' at row 9"}, 1264, "22003", "Out of range value for column 'k' at row 9"},
		{&ddl.BadValueError{Err: mysql.NewSQLError(1366, "HY000", "Incorrect integer value")}, 1366, "HY000", "Incorrect integer value"},
		{&kv.DiskFullError{Path: "/d"}, 1021, "HY000", DiskFullError("/d").Message},
		{fmt.Errorf("write run: %w", syscall.ENOSPC), 1878, "HY000", "Temporary file write failure (write run: no space left on device)"},
		{errors.New("boom"), 1105, "HY000", "boom"},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("job 1: %w", c.err)} {
			var se *mysql.SQLError
			if !errors.As(jobError(err), &se) {
				t.Fatalf("%v: not a MySQL error", err)
			}
			if se.Num != c.code || se.State != c.state {
				t.Errorf("%v: got %d (%s), want %d (%s)", err, se.Num, se.State, c.code, c.state)
			}
			if err == c.err && se.Message != c.msg {
				t.Errorf("%v: got message %q, want %q", err, se.Message, c.msg)
			}
			// What a job records reads back as the same error.
			code, msg := indexer{}.Describe(err)
			if back := jobError(&ddl.RecordedError{Code: code, Msg: msg}); back.Error() != se.Error() {
				t.Errorf("%v: recorded as %q, reported as %q", err, back, se)
			}
		}
	}
}
