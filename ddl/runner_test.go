package ddl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/mdl"
)

// TestRunner drives ADD INDEX jobs through every schema state and ingest
// phase with a fake index builder (testIndexer) on a real store, and at
// each point makes the job fail, cancels it, or kills it (stops it where
// it stands, as a crash would, then starts a new manager on the same
// store). After each trial it prints the job's end state and what is left
// in kv; testdata/runner holds what must come out.
func TestRunner(t *testing.T) {
	datadriven.RunTest(t, "testdata/runner", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "matrix":
			var mode string
			d.ScanArgs(t, "mode", &mode)
			unique := d.HasArg("unique")
			actions := []string{"fail", "cancel", "kill"}
			if d.HasArg("pause") {
				actions = []string{"pause"}
			}
			var out strings.Builder
			for _, point := range strings.Fields(d.Input) {
				fmt.Fprintf(&out, "%-21s", point)
				for _, action := range actions {
					fmt.Fprintf(&out, " %-9s", action+":")
					fmt.Fprintf(&out, " %-28s", runTrial(t, mode, unique, point, action))
				}
				out.WriteString("\n")
			}
			return out.String()
		case "drop-matrix":
			column := d.HasArg("column")
			var out strings.Builder
			for _, point := range strings.Fields(d.Input) {
				fmt.Fprintf(&out, "%-21s", point)
				for _, action := range []string{"fail", "cancel", "kill"} {
					fmt.Fprintf(&out, " %-9s", action+":")
					fmt.Fprintf(&out, " %-28s", runDropTrial(t, point, action, column))
				}
				out.WriteString("\n")
			}
			return out.String()
		case "stale-entry":
			return staleEntryTrial(t)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// runnerEnv is a store with one table t (handle, v) and a manager on it.
type runnerEnv struct {
	t       *testing.T
	dir     string
	store   *kv.Store
	cat     *catalog.Catalog
	m       *Manager
	set     Settings
	tableID int64
	paused  atomic.Bool // a paused trial's job stopped as paused
}

const runnerRows = 600

func newRunnerEnv(t *testing.T, mode string) *runnerEnv {
	e := &runnerEnv{t: t, dir: t.TempDir()}
	e.set = Settings{Workers: 2, BatchSize: 8, FastReorg: mode == "ingest", BufferBytes: 4096, DiskQuota: 1 << 20, MDLWarnAfter: time.Minute}
	e.open()
	_, err := e.cat.Update(func(ch *catalog.Change, _ *kv.Txn) error {
		db, err := ch.CreateDatabase("app", "")
		if err != nil {
			return err
		}
		e.tableID = ch.NewID()
		ch.PutTable(&catalog.Table{ID: e.tableID, DBID: db.ID, Name: "t", NextColumnID: 3, NextIndexID: 1,
			Columns: []catalog.Column{{ID: 1, Name: "h", Type: "bigint"}, {ID: 2, Name: "v", Type: "varchar(20)", Nullable: true}}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	txn := e.store.Begin()
	for h := int64(1); h <= runnerRows; h++ {
		v := fmt.Sprintf("v%04d", h)
		if h%50 == 0 {
			v = "" // NULL
		}
		if err := txn.Set(codec.RecordKey(e.tableID, h), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *runnerEnv) open() {
	if e.store == nil {
		s, err := kv.Open(kv.Options{Dir: e.dir, NoSync: true, GCInterval: -1, Logger: quietLog()})
		if err != nil {
			e.t.Fatal(err)
		}
		e.store = s
	}
	cat, err := catalog.Open(e.store)
	if err != nil {
		e.t.Fatal(err)
	}
	e.cat = cat
	e.m = NewManager(e.store, cat, mdl.New(), testIndexer{}, func() Settings { return e.set }, e.dir+"/tmp", quietLog())
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// close also deletes the store's directory: every store keeps a disk-full
// reserve of several memtables, and a test that runs many trials would
// otherwise hold all of them until it ends.
func (e *runnerEnv) close() {
	e.m.Close()
	e.store.Close()
	if err := os.RemoveAll(e.dir); err != nil {
		e.t.Error(err)
	}
}

// runDropTrial builds an index, then drops it, or with column its column
// v (which takes the index with it), acting at the first time the drop
// reaches point.
func runDropTrial(t *testing.T, point, action string, column bool) string {
	e := newRunnerEnv(t, "txn")
	defer func() { e.close() }()
	if err := e.m.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := e.m.SubmitAddIndex("app", "t", e.tableID, "ALTER TABLE t ADD INDEX", []IndexSpec{{Name: "iv", Columns: []catalog.IndexColumn{{ColumnID: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.Wait(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	tbl, _ := e.cat.Current().TableByID(e.tableID)
	ix := tbl.IndexByName("iv")
	reached := e.inject(point, action)
	if column {
		var ixs []IndexSpec
		if ixs, _, err = DropColumnIndexes(tbl, "v"); err == nil {
			id, err = e.m.SubmitDropColumn("app", "t", e.tableID, "ALTER TABLE t DROP COLUMN v", ColumnSpec{Of: "v"}, ixs, false)
		}
	} else {
		id, err = e.m.SubmitDropIndex("app", "t", e.tableID, ix, "DROP INDEX iv ON t")
	}
	if err != nil {
		t.Fatal(err)
	}
	return e.finishTrial(id, action, reached)
}

// inject makes the manager's hook act at the first time a job reaches
// point; the returned flag says whether it did.
func (e *runnerEnv) inject(point, action string) *bool {
	var once sync.Once
	reached := new(bool)
	e.m.hook = func(id int64, p string) error {
		if p != point {
			return nil
		}
		var err error
		once.Do(func() {
			*reached = true
			switch action {
			case "fail":
				err = errors.New("injected failure")
			case "cancel":
				e.m.Cancel(id)
			case "kill":
				err = errKilled
			case "pause":
				if e.m.Pause(id) == nil {
					go e.resumeOncePaused(id)
				}
			}
		})
		return err
	}
	return reached
}

// resumeOncePaused resumes the job once it has stopped as paused, and
// notes that it did.
func (e *runnerEnv) resumeOncePaused(id int64) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if j, _ := e.m.snapshot(id); j.State == JobPaused {
			e.paused.Store(true)
			e.m.Resume(id)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// finishTrial waits for the job, restarting the manager first after a
// kill, and describes the outcome.
func (e *runnerEnv) finishTrial(id int64, action string, reached *bool) string {
	t := e.t
	if action == "kill" {
		// Wait until the job stopped where the hook killed it, then start
		// over on the same store, without the hook.
		deadline := time.Now().Add(20 * time.Second)
		for !killedOrDone(e.m, id, reached) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		e.m.Close()
		e.open()
		if err := e.m.Start(); err != nil {
			t.Fatal(err)
		}
	}
	e.m.mu.Lock()
	ch := e.m.done[id]
	e.m.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("job %d did not finish: %+v", id, e.m.Jobs(0))
	}
	if !*reached {
		return "(point not reached)"
	}
	if e.paused.Load() {
		return "paused " + e.describe(id)
	}
	return e.describe(id)
}

// runTrial builds an index once, acting at the first time the job reaches
// point, and describes the outcome.
func runTrial(t *testing.T, mode string, unique bool, point, action string) string {
	e := newRunnerEnv(t, mode)
	defer func() { e.close() }()
	reached := e.inject(point, action)
	if err := e.m.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := e.m.SubmitAddIndex("app", "t", e.tableID, "ALTER TABLE t ADD INDEX", []IndexSpec{{Name: "iv", Columns: []catalog.IndexColumn{{ColumnID: 2}}, Unique: unique}})
	if err != nil {
		t.Fatal(err)
	}
	return e.finishTrial(id, action, reached)
}

// killedOrDone says whether a killed job's goroutine has stopped.
func killedOrDone(m *Manager, id int64, reached *bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return (*reached && !m.running[id]) || m.jobs[id].State.Finished()
}

// describe prints the job's end state and whether kv matches it: a
// finished build has exactly the entries the rows call for; a rolled-back
// one left no entry, change log, checkpoint or index definition.
func (e *runnerEnv) describe(id int64) string {
	j, _ := e.m.Job(id)
	state := string(j.State)
	if j.ErrCode != 0 {
		state += fmt.Sprintf("(%d)", j.ErrCode)
	}
	var problems []string
	tbl, _ := e.cat.Current().TableByID(e.tableID)
	if n := e.m.Checkpoints(id); n != 0 {
		problems = append(problems, fmt.Sprintf("%d checkpoints", n))
	}
	for _, spec := range j.Indexes {
		if spec.ChangeLogID != 0 && e.countKeys(codec.IndexPrefix(e.tableID, spec.ChangeLogID)) != 0 {
			problems = append(problems, "change log left")
		}
		_, ix := findIndex(tbl, spec.ID)
		built := j.State == JobDone
		if j.dropsIndexes() {
			built = j.State != JobDone
		}
		switch {
		case built:
			if ix == nil || ix.State != catalog.StatePublic || ix.ChangeLogID != 0 || ix.Merging {
				problems = append(problems, "index not public")
			}
			if diff := e.compareEntries(spec); diff != "" {
				problems = append(problems, diff)
			}
		default:
			if ix != nil {
				problems = append(problems, "index definition left")
			}
			if spec.ID != 0 && e.countKeys(codec.IndexPrefix(e.tableID, spec.ID)) != 0 {
				problems = append(problems, "entries left")
			}
		}
	}
	if j.Type == JobDropColumn {
		// The column goes exactly when its indexes do.
		if c, _ := tbl.ColumnByName("v"); (c == nil) != (j.State == JobDone) {
			problems = append(problems, fmt.Sprintf("column there: %v", c != nil))
		}
	}
	if len(problems) == 0 {
		return state + " clean"
	}
	return state + " " + strings.Join(problems, ",")
}

func (e *runnerEnv) countKeys(p []byte) int {
	txn := e.store.Begin()
	defer txn.Rollback()
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}

// compareEntries compares the index's entries with those the rows call
// for; "" when they are the same.
func (e *runnerEnv) compareEntries(spec IndexSpec) string {
	txn := e.store.Begin()
	defer txn.Rollback()
	tbl, _ := e.cat.Current().TableByID(e.tableID)
	want := map[string]string{}
	err := forEachRecord(context.Background(), txn, e.tableID, func(h int64, v []byte) error {
		ents, err := testIndexer{}.Entries("app", tbl, []int64{spec.ID}, h, v)
		for _, en := range ents {
			want[string(en.Key)] = string(en.Value)
		}
		return err
	})
	if err != nil {
		return err.Error()
	}
	p := codec.IndexPrefix(e.tableID, spec.ID)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	var extra, wrong int
	for ; it.Valid(); it.Next() {
		w, ok := want[string(it.Key())]
		switch {
		case !ok:
			extra++
		case w != string(it.Value()):
			wrong++
		}
		delete(want, string(it.Key()))
	}
	if extra+wrong+len(want) == 0 {
		return ""
	}
	return fmt.Sprintf("entries: %d missing %d extra %d wrong", len(want), extra, wrong)
}

// staleEntryTrial: an ingest build whose unique index holds an entry that
// no row calls for (planted in the index's range once merging starts)
// must not go public; it fails with 1712 and rolls back.
func staleEntryTrial(t *testing.T) string {
	e := newRunnerEnv(t, "ingest")
	defer func() { e.close() }()
	e.m.hook = func(id int64, p string) error {
		if p != "merge" {
			return nil
		}
		j, _ := e.m.Job(id)
		txn := e.store.Begin()
		key, _ := codec.IndexKey(nil, e.tableID, j.Indexes[0].ID, []any{[]byte("zzz")}, nil)
		txn.Set(key, codec.EncodeHandle(nil, 5))
		_, err := txn.Commit()
		return err
	}
	if err := e.m.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := e.m.SubmitAddIndex("app", "t", e.tableID, "ALTER TABLE t ADD UNIQUE INDEX", []IndexSpec{{Name: "iv", Columns: []catalog.IndexColumn{{ColumnID: 2}}, Unique: true}})
	if err != nil {
		t.Fatal(err)
	}
	err = e.m.Wait(context.Background(), id)
	return fmt.Sprintf("%v\n%s", err, e.describe(id))
}

// testIndexer indexes column v of t, whose stored row is v's bytes (empty:
// NULL). A unique entry is keyed by v alone, with the handle as its value.
type testIndexer struct{}

func (testIndexer) NewIndex(t *catalog.Table, spec IndexSpec) (*catalog.Index, error) {
	ix := &catalog.Index{ID: t.NextIndexID, Name: spec.Name, Columns: spec.Columns, Unique: spec.Unique}
	t.NextIndexID++
	return ix, nil
}

func (x testIndexer) Entries(_ string, t *catalog.Table, ids []int64, h int64, row []byte) ([]Entry, error) {
	var out []Entry
	for _, ix := range t.Indexes {
		if !slices.Contains(ids, ix.ID) {
			continue
		}
		var e Entry
		var err error
		e.IndexID, e.Display = ix.ID, string(row)
		if ix.Unique && len(row) > 0 {
			e.Key, err = codec.IndexKey(nil, t.ID, ix.ID, []any{bytes.Clone(row)}, nil)
			e.Value, e.Unique = codec.EncodeHandle(nil, h), true
		} else {
			var v any
			if len(row) > 0 {
				v = bytes.Clone(row)
			}
			e.Key, err = codec.IndexKey(nil, t.ID, ix.ID, []any{v}, &h)
			e.Value = []byte{}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (x testIndexer) NewEncoder(db string, t *catalog.Table, ids []int64) (EntryEncoder, error) {
	return testEncoder{t: t, ids: ids}, nil
}

type testEncoder struct {
	t   *catalog.Table
	ids []int64
}

func (e testEncoder) Encode(h int64, row []byte, emit func(ix int, key, value []byte) error) error {
	ents, err := testIndexer{}.Entries("", e.t, e.ids, h, row)
	if err != nil {
		return err
	}
	for _, en := range ents {
		if err := emit(slices.Index(e.ids, en.IndexID), en.Key, en.Value); err != nil {
			return err
		}
	}
	return nil
}

// Describe gives the codes the runner's testdata shows: the SQL layer's
// for a cancellation and a corrupt index, 1105 for anything else.
func (x testIndexer) Describe(err error) (uint16, string) {
	var corrupt *CorruptIndexError
	switch {
	case errors.Is(err, ErrCancelled):
		return 8214, err.Error()
	case errors.As(err, &corrupt):
		return 1712, err.Error()
	}
	return 1105, err.Error()
}
