package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runBench(t *testing.T, args ...string) (string, error) {
	cmd := benchCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// The command runs an idle build on the embedded server and prints its
// table; the results directory is written where --out says.
func TestBenchCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "res")
	out, err := runBench(t, "--rows", "500", "--plans", "idle", "--quiet", "--out", dir,
		"--set", "tidb_ddl_reorg_batch_size=32,64")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "| tidb_ddl_reorg_batch_size | add_index_duration(s) | check |") ||
		strings.Count(out, "| ok |") != 2 {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "idle-duration.svg")); err != nil {
		t.Fatal(err)
	}
}

func TestBenchCommandBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "novalue"}, "want name=value"},
		{[]string{"--ignore-errors", "12x"}, "--ignore-errors"},
		{[]string{"--plans", "plan1,plan7"}, `unknown plan "plan7"`},
		{[]string{"--rows", "-5"}, "--rows"},
		{[]string{"extra"}, "unknown command"},
	} {
		if _, err := runBench(t, append(c.args, "--out", "-", "--quiet")...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error about %s, got %v", c.args, c.want, err)
		}
	}
}
