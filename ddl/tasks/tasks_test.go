package tasks

import (
	"io"
	"log/slog"
	"testing"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

const tableID = 7

func TestPlanCoversTheHandles(t *testing.T) {
	for _, c := range []struct {
		name    string
		handles []int64
		tasks   int // -1: about planned, never more
	}{
		{"empty", nil, 0},
		{"one row", []int64{42}, 1},
		{"dense", seq(1, 1000), -1},
		{"fewer handles than tasks", seq(10, 20), 11},
		{"sparse", []int64{-5, 3, 1 << 40}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := kv.Open(kv.Options{Dir: t.TempDir(), NoSync: true, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			w := s.Begin()
			for _, h := range c.handles {
				w.Set(codec.RecordKey(tableID, h), []byte("row"))
			}
			w.Set(codec.RecordKey(tableID+1, 0), []byte("another table"))
			if _, err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			txn := s.Begin()
			defer txn.Rollback()
			ts, rows, err := Plan(s, txn, tableID)
			if err != nil {
				t.Fatal(err)
			}
			if c.tasks < 0 && len(ts) > planned/2 && len(ts) <= planned {
				c.tasks = len(ts)
			}
			if len(ts) != c.tasks || rows != int64(len(c.handles)) {
				t.Fatalf("%d tasks, %d rows; want %d, %d", len(ts), rows, c.tasks, len(c.handles))
			}
			for i, task := range ts {
				if task.Next != task.Start || task.Done || task.End < task.Start {
					t.Errorf("task %d: %+v", i, task)
				}
				if i > 0 && task.Start != ts[i-1].End+1 {
					t.Errorf("task %d starts at %d after %d", i, task.Start, ts[i-1].End)
				}
			}
			if len(ts) > 0 && (ts[0].Start != c.handles[0] || ts[len(ts)-1].End != c.handles[len(c.handles)-1]) {
				t.Errorf("tasks cover [%d, %d], rows [%d, %d]", ts[0].Start, ts[len(ts)-1].End, c.handles[0], c.handles[len(c.handles)-1])
			}
		})
	}
}

func seq(lo, hi int64) []int64 {
	var out []int64
	for h := lo; h <= hi; h++ {
		out = append(out, h)
	}
	return out
}
