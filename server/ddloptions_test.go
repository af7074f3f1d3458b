package server

import "testing"

// TestDDLOptions: index changes accept only the online algorithm and lock;
// an ALTER TABLE that only adds columns is instant and accepts them all.
func TestDDLOptions(t *testing.T) {
	for _, c := range []struct {
		q  string
		ok bool
	}{
		{"ALTER TABLE t ADD INDEX i (a), ALGORITHM=INPLACE, LOCK=NONE", true},
		{"ALTER TABLE t ADD INDEX i (a), ALGORITHM=INSTANT", false},
		{"ALTER TABLE t ADD INDEX i (a), LOCK=SHARED", false},
		{"CREATE INDEX i ON t (a) ALGORITHM=COPY", false},
		{"ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INSTANT", true},
		{"ALTER TABLE t ADD c INT DEFAULT 1 AFTER a, ADD COLUMN d INT, ALGORITHM=COPY, LOCK=EXCLUSIVE", true},
		{"ALTER TABLE t ADD COLUMN c INT, LOCK=SHARED, ALGORITHM=INPLACE", true},
		{"ALTER TABLE t ADD COLUMN c INT, ALGORITHM=BOGUS", false},
		{"ALTER TABLE t ADD COLUMN c INT, ADD INDEX i (c), ALGORITHM=INSTANT", false},
		{"ALTER TABLE t DROP COLUMN c, ALGORITHM=INSTANT", false},
		{"ALTER TABLE t ADD COLUMN c INT UNIQUE, ALGORITHM=INSTANT", false},
		{"ALTER TABLE t ADD COLUMN c INT UNIQUE, ALGORITHM=INPLACE", true},
	} {
		_, err := checkDDLOptions(c.q)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok=%v", c.q, err, c.ok)
		}
	}
}
