package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// An index build as a change runs the statements the index plans always
// ran.
func TestIndexChangeStatements(t *testing.T) {
	c := Index{Name: "uniq_c0", Cols: "c0", Unique: true}.Change()
	if got := c.SQL("t_wide", ", ALGORITHM=INPLACE"); got != "ALTER TABLE t_wide ADD UNIQUE INDEX uniq_c0 (c0), ALGORITHM=INPLACE" {
		t.Fatalf("apply: %q", got)
	}
	if got := c.UndoSQL("t_wide"); got != "ALTER TABLE t_wide DROP INDEX uniq_c0" {
		t.Fatalf("undo: %q", got)
	}
	if c.Kind() != "" || c.Index != "uniq_c0" {
		t.Fatalf("kind %q, index %q", c.Kind(), c.Index)
	}
	if got := columnChanges()["dropcol"].UndoSQL("sbtest1"); got != "" {
		t.Fatalf("dropcol undo %q", got)
	}
}

// Every change of every plan can be checked and leaves the next setting
// the table it found: an undo, or a setup that restores what it removes,
// or an expected failure.
func TestPlansAreRepeatable(t *testing.T) {
	for _, p := range plans() {
		if len(p.Changes) == 0 {
			t.Fatalf("%s has no changes", p.Name)
		}
		for _, c := range p.Changes {
			if c.Name == "" || c.Apply == "" || c.Applied == nil {
				t.Fatalf("%s: incomplete change %+v", p.Name, c)
			}
			if (c.Undo == "" && c.ExpectErr == 0 && len(c.Setup) == 0) || (c.Undo != "" && c.ExpectErr != 0) {
				t.Fatalf("%s: %s has undo %q, expected error %d, %d setup steps", p.Name, c.Name, c.Undo, c.ExpectErr, len(c.Setup))
			}
		}
	}
}

func TestChangeOutcome(t *testing.T) {
	truncated := fmt.Errorf("ALTER TABLE: %w", &mysql.MySQLError{Number: 1265, Message: "Data truncated for column 'pad' at row 1"})
	plain, failing := Change{Name: "plain"}, Change{Name: "failing", ExpectErr: 1265}
	other := errors.New("connection refused")
	for _, c := range []struct {
		c          Change
		err        error
		wantFailed string
		wantErr    string
	}{
		{plain, nil, "", ""},
		{plain, truncated, "", "1265"},
		{failing, truncated, "error 1265", ""},
		{failing, nil, "", "failing succeeded; want error 1265"},
		{failing, &mysql.MySQLError{Number: 1264}, "", "want error 1265"},
		{failing, other, "", "connection refused"},
	} {
		failed, err := c.c.outcome(c.err)
		if failed != c.wantFailed || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s, %v: failed %q, err %v; want %q, %q", c.c.Name, c.err, failed, err, c.wantFailed, c.wantErr)
		}
	}
}

// The parent table keeps its size across runs until k nears its end.
func TestParentRows(t *testing.T) {
	for _, c := range []struct{ rows, maxK, want int64 }{
		{20000, 20000, 31000},
		{20000, 25499, 31000},
		{20000, 30000, 41000},
		{1, 1, 1001},
	} {
		if got := parentRows(c.rows, c.maxK); got != c.want || got <= c.maxK {
			t.Errorf("parentRows(%d, %d) = %d, want %d", c.rows, c.maxK, got, c.want)
		}
	}
}

// The probes read the table's state from information_schema, and the
// shape leaves the AUTO_INCREMENT counter out.
func TestProbesOnReorgDB(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	tg, err := connect(ctx, "root:@tcp("+s.Addr()+")/", &Config{Database: "sb", Threads: 1, LoadThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.db.Close()
	for _, q := range []string{
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))",
		"INSERT INTO p VALUES (1), (2)",
		"INSERT INTO t (k) VALUES (1), (2)",
	} {
		if _, err := tg.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	probe := func(p probe) bool {
		t.Helper()
		ok, err := p(ctx, tg, "t")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	before, err := tg.shape(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !probe(hasColumn("pad")) || probe(hasColumn("x")) || !probe(not(hasColumn("x"))) ||
		!probe(columnIs("pad", "char", 60)) || probe(columnIs("pad", "char", 59)) || !probe(columnIs("k", "int", 0)) ||
		probe(hasForeignKey("fk_k")) || !probe(hasIndex("k_1")) || probe(hasIndex("c_idx")) {
		t.Fatal("probes of the new table")
	}
	for _, q := range []string{
		"ALTER TABLE t ADD CONSTRAINT fk_k FOREIGN KEY (k) REFERENCES p (id)",
		"ALTER TABLE t MODIFY COLUMN pad VARCHAR(200) NOT NULL DEFAULT ''",
	} {
		if _, err := tg.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if !probe(columnIs("pad", "varchar", 200)) || !probe(hasForeignKey("fk_k")) {
		t.Fatal("probes after the changes")
	}
	for _, q := range []string{"ALTER TABLE t DROP FOREIGN KEY fk_k", "ALTER TABLE t MODIFY COLUMN pad CHAR(60) NOT NULL DEFAULT ''",
		"INSERT INTO t (k) VALUES (2)", "DELETE FROM t WHERE id = 3"} {
		if _, err := tg.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	after, err := tg.shape(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if after != before || strings.Contains(after, "AUTO_INCREMENT=") {
		t.Fatalf("shape after the undo:\n%s\nbefore:\n%s", after, before)
	}
}
