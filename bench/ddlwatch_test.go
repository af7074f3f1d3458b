package bench

import (
	"context"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// The progress query reads ReorgDB's ddl_jobs: after a build, its own job
// (newer than the mark) is all done; an older mark sees nothing newer.
func TestDDLProgressOnReorgDB(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	cfg := &Config{Database: "sb", Threads: 1, LoadThreads: 1}
	tg, err := connect(ctx, "root:@tcp("+s.Addr()+")/", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.db.Close()
	if tg.kind != reorgDB {
		t.Fatalf("target kind %v (%s)", tg.kind, tg.name)
	}
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)"} {
		if _, err := tg.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mark, err := tg.ddlMark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.db.Exec("ALTER TABLE t ADD INDEX v_idx (v)"); err != nil {
		t.Fatal(err)
	}
	p := tg.ddlProgress(ctx, "t", mark)
	if p.Fraction != 1 || p.Phase == "" {
		t.Fatalf("progress after the build: %+v", p)
	}
	after, _ := tg.ddlMark(ctx)
	if p := tg.ddlProgress(ctx, "t", after); p.Fraction != -1 || p.Phase != "" {
		t.Fatalf("progress with no newer job: %+v", p)
	}
	if err := tg.checkIndex(ctx, "t", "v_idx"); err != nil {
		t.Fatal(err)
	}
}

func TestReorgPhase(t *testing.T) {
	for _, c := range []struct{ comments, state, want string }{
		{"mode=ingest phase=scan workers=4 buffer=256MiB sorted=3MiB", "write reorganization", "ingest scan"},
		{"mode=txn", "write reorganization", "txn write reorganization"},
		{"", "public", "public"},
	} {
		if got := reorgPhase(c.comments, c.state); got != c.want {
			t.Errorf("reorgPhase(%q, %q) = %q, want %q", c.comments, c.state, got, c.want)
		}
	}
}
