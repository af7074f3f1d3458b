package sql

import (
	"strings"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func TestScanAlterOptions(t *testing.T) {
	for _, c := range []struct {
		q       string
		commas  string // the text with a '|' where a comma goes
		comment string // "-" for none
	}{
		{"ALTER TABLE t ENGINE=InnoDB DEFAULT CHARACTER SET=utf8mb4", "ALTER TABLE t ENGINE=InnoDB |DEFAULT CHARACTER SET=utf8mb4", "-"},
		{"ALTER TABLE t COMMENT 'a b' ENGINE InnoDB", "ALTER TABLE t COMMENT 'a b' |ENGINE InnoDB", "a b"},
		{"ALTER TABLE d.t ENGINE=InnoDB, COMMENT='x''y'", "ALTER TABLE d.t ENGINE=InnoDB, COMMENT='x''y'", "x'y"},
		// CHARACTER SET x COLLATE y is one clause of the grammar.
		{"ALTER TABLE t CHARACTER SET latin1 COLLATE latin1_bin ROW_FORMAT=DYNAMIC", "ALTER TABLE t CHARACTER SET latin1 COLLATE latin1_bin |ROW_FORMAT=DYNAMIC", "-"},
		// Options of a column are not the table's.
		{"ALTER TABLE t MODIFY a VARCHAR(5) CHARACTER SET latin1 COLLATE latin1_bin COMMENT 'c'", "ALTER TABLE t MODIFY a VARCHAR(5) CHARACTER SET latin1 COLLATE latin1_bin COMMENT 'c'", "-"},
		{"ALTER TABLE t ADD COLUMN c INT COMMENT 'c', COMMENT 't'", "ALTER TABLE t ADD COLUMN c INT COMMENT 'c', COMMENT 't'", "t"},
		{"ALTER TABLE t ADD INDEX i (a, b) COMMENT 'i'", "ALTER TABLE t ADD INDEX i (a, b) COMMENT 'i'", "-"},
	} {
		ao, ok := scanAlterOptions(c.q, false)
		if !ok {
			t.Fatalf("%q: not read as ALTER TABLE", c.q)
		}
		var b strings.Builder
		last := 0
		for _, at := range ao.commaAt {
			b.WriteString(c.q[last:at] + "|")
			last = at
		}
		b.WriteString(c.q[last:])
		if b.String() != c.commas {
			t.Errorf("%q: commas at %q, want %q", c.q, b.String(), c.commas)
		}
		if got := map[bool]string{false: "-", true: ao.comment}[ao.hasComment]; got != c.comment {
			t.Errorf("%q: comment %q, want %q", c.q, got, c.comment)
		}
	}
	if _, ok := scanAlterOptions("SELECT 1", false); ok {
		t.Error("SELECT read as ALTER TABLE")
	}
	// The statement with commas parses, and what follows it is where it was.
	stmt, next, ok, err := tableTextFixes("ALTER TABLE t ENGINE=InnoDB ROW_FORMAT=DYNAMIC; SELECT 1", ast.ParserOptions{})
	if !ok || err != nil || next != len("ALTER TABLE t ENGINE=InnoDB ROW_FORMAT=DYNAMIC;") {
		t.Fatalf("tableTextFixes: %v %d %v %v", stmt, next, ok, err)
	}
}
