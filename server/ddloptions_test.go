package server

import (
	"errors"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// TestDDLOptions: ALGORITHM= and LOCK= with MySQL 8's meaning. Every
// change is online, so COPY, INPLACE and any LOCK are met; INSTANT is
// refused for what is never instant (1845); unknown values get 1800 and
// 1801. Column changes that turn out not to be instant are refused by
// the SQL layer (sql TestAlgorithmInstant).
func TestDDLOptions(t *testing.T) {
	for _, c := range []struct {
		q    string
		code int
	}{
		{"ALTER TABLE t ADD INDEX i (a), ALGORITHM=INPLACE, LOCK=NONE", 0},
		{"ALTER TABLE t ADD INDEX i (a), ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t ADD INDEX i (a), LOCK=SHARED", 0},
		{"CREATE INDEX i ON t (a) ALGORITHM=COPY", 0},
		{"CREATE INDEX i ON t (a) ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t DROP INDEX i, ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t RENAME INDEX i TO j, ALGORITHM=INSTANT", 0},
		{"ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INSTANT", 0},
		{"ALTER TABLE t ADD c INT DEFAULT 1 AFTER a, ADD COLUMN d INT, ALGORITHM=COPY, LOCK=EXCLUSIVE", 0},
		{"ALTER TABLE t ADD COLUMN c INT, LOCK=SHARED, ALGORITHM=INPLACE", 0},
		{"ALTER TABLE t ADD COLUMN c INT, ALGORITHM=BOGUS", 1800},
		{"ALTER TABLE t ADD COLUMN c INT, LOCK=BOGUS", 1801},
		{"ALTER TABLE t ADD COLUMN c INT, ADD INDEX i (c), ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t DROP COLUMN c, ALGORITHM=INSTANT", 0},
		{"ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES p (id), ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t ADD COLUMN c INT UNIQUE, ALGORITHM=INSTANT", 1845},
		{"ALTER TABLE t ADD COLUMN c INT UNIQUE, ALGORITHM=INPLACE", 0},
	} {
		_, err := checkDDLOptions(c.q)
		var se *mysql.SQLError
		switch {
		case c.code == 0 && err != nil:
			t.Errorf("%s: %v", c.q, err)
		case c.code != 0 && (!errors.As(err, &se) || se.Num != c.code):
			t.Errorf("%s: got %v, want %d", c.q, err, c.code)
		}
	}
}
