package ddl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/catalog"
)

// A step's wait on the metadata lock is what keeps live transactions
// within two adjacent schema versions. A pause must not cut it short (the
// next step would be published while transactions still use the one
// before), while a cancel must, since a rollback does not wait for
// transactions older than the job.
func TestInterruptDuringMetadataLockWait(t *testing.T) {
	for _, action := range []string{"pause", "cancel"} {
		t.Run(action, func(t *testing.T) {
			e := newRunnerEnv(t, "txn")
			defer e.close()
			old := e.m.MDL.Acquire(func() int64 { return e.cat.Current().Version }, "old transaction")
			defer old.Release()
			if err := e.m.Start(); err != nil {
				t.Fatal(err)
			}
			id, err := e.m.SubmitAddIndex("app", "t", e.tableID, "ALTER TABLE t ADD INDEX", []IndexSpec{{Name: "iv", Columns: []catalog.IndexColumn{{ColumnID: 2}}}})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the job waits on the old transaction", func() bool {
				j, _ := e.m.snapshot(id)
				return strings.HasPrefix(j.Comment, "waiting for a transaction")
			})
			if action == "cancel" {
				if err := e.m.Cancel(id); err != nil {
					t.Fatal(err)
				}
				// The old transaction never saw the index: the rollback
				// does not wait for it.
				if err := e.m.Wait(context.Background(), id); err == nil || !strings.Contains(err.Error(), "Cancelled DDL job") {
					t.Fatalf("cancelled job ended with %v", err)
				}
				return
			}
			if err := e.m.Pause(id); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if j, _ := e.m.snapshot(id); j.State == JobPaused || !strings.HasPrefix(j.Comment, "waiting for a transaction") {
				t.Fatalf("the pause cut the wait short: state %s, comment %q", j.State, j.Comment)
			}
			old.Release()
			waitFor(t, "the job pauses once the wait is over", func() bool {
				j, _ := e.m.snapshot(id)
				return j.State == JobPaused
			})
			if j, _ := e.m.snapshot(id); j.SchemaState != catalog.StateDeleteOnly {
				t.Fatalf("paused in %s, want delete-only", j.SchemaState)
			}
			if err := e.m.Resume(id); err != nil {
				t.Fatal(err)
			}
			if err := e.m.Wait(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			if got := e.describe(id); got != "synced clean" {
				t.Fatalf("resumed job: %s", got)
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
