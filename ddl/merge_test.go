package ddl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
)

// TestMerge drives the change-log merge of an ingest build (package merge)
// one step at a time on a real store: rows as they were at the build's
// snapshot S with the entries the ingest wrote for them, then changes made
// after S (logged ones as DML makes them before the merging state, or
// maintaining the index themselves as DML does in it), then the merge and
// unique validation. testdata/merge holds the index each must leave.
func TestMerge(t *testing.T) {
	var e *mergeEnv
	datadriven.RunTest(t, "testdata/merge", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "setup":
			if e != nil {
				e.close()
			}
			e = newMergeEnv(t, d.HasArg("unique"))
			e.snapshot(parseRows(t, d.Input))
			return e.index()
		case "logged":
			e.change(parseRows(t, d.Input), true)
			return e.index()
		case "merging-dml":
			e.change(parseRows(t, d.Input), false)
			return e.index()
		case "merge":
			return e.merge()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
	if e != nil {
		e.close()
	}
}

// mergeEnv is runnerEnv's table t with index iv under an ingest build.
type mergeEnv struct {
	*runnerEnv
	job *Job
}

func newMergeEnv(t *testing.T, unique bool) *mergeEnv {
	e := &mergeEnv{runnerEnv: &runnerEnv{t: t, dir: t.TempDir()}}
	e.open()
	spec := IndexSpec{Name: "iv", Columns: []catalog.IndexColumn{{ColumnID: 2}}, Unique: unique}
	_, err := e.cat.Update(func(ch *catalog.Change, _ *kv.Txn) error {
		db, err := ch.CreateDatabase("app", "")
		if err != nil {
			return err
		}
		e.tableID = ch.NewID()
		spec.ID, spec.ChangeLogID = 1, 2
		ch.PutTable(&catalog.Table{ID: e.tableID, DBID: db.ID, Name: "t", NextColumnID: 3, NextIndexID: 3,
			Columns: []catalog.Column{{ID: 1, Name: "h", Type: "bigint"}, {ID: 2, Name: "v", Type: "varchar(20)", Nullable: true}},
			Indexes: []*catalog.Index{{ID: 1, Name: "iv", Columns: spec.Columns, Unique: unique, ChangeLogID: 2}}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.job = &Job{ID: 1, DBName: "app", TableName: "t", TableID: e.tableID, Indexes: []IndexSpec{spec}}
	e.m.jobs[e.job.ID] = e.job
	return e
}

// row is a row of t: v "" is NULL, and deleted says the row goes.
type row struct {
	h       int64
	v       string
	deleted bool
}

// parseRows reads "h=v" per line; "h=-" deletes row h, "h=" is NULL.
func parseRows(t *testing.T, in string) []row {
	var rows []row
	for _, f := range strings.Fields(in) {
		hs, v, _ := strings.Cut(f, "=")
		h, err := strconv.ParseInt(hs, 10, 64)
		if err != nil {
			t.Fatalf("bad row %q", f)
		}
		rows = append(rows, row{h: h, v: v, deleted: v == "-"})
	}
	return rows
}

// snapshot writes rows, takes S at their commit, and writes their entries
// as the ingest does.
func (e *mergeEnv) snapshot(rows []row) {
	txn := e.store.Begin()
	for _, r := range rows {
		e.must(txn.Set(codec.RecordKey(e.tableID, r.h), []byte(r.v)))
	}
	ts, err := txn.Commit()
	e.must(err)
	e.job.IngestTS = ts
	txn = e.store.Begin()
	for _, r := range rows {
		for _, en := range e.entries(r.h, []byte(r.v)) {
			e.must(txn.Set(en.Key, en.Value))
		}
	}
	_, err = txn.Commit()
	e.must(err)
}

// change applies rows after S, each in its own transaction. A logged
// change records the row in the change log and leaves the index alone; an
// unlogged one maintains the index as DML in the merging state does.
func (e *mergeEnv) change(rows []row, logged bool) {
	for _, r := range rows {
		txn := e.store.Begin()
		key := codec.RecordKey(e.tableID, r.h)
		if logged {
			lk, err := codec.IndexKey(nil, e.tableID, e.job.Indexes[0].ChangeLogID, nil, &r.h)
			e.must(err)
			e.must(txn.Set(lk, []byte{}))
		} else {
			old, found, err := txn.GetLatest(key)
			e.must(err)
			if found {
				for _, en := range e.entries(r.h, old) {
					e.must(deleteOwnEntry(txn, en, r.h))
				}
			}
			if !r.deleted {
				for _, en := range e.entries(r.h, []byte(r.v)) {
					e.must(txn.Set(en.Key, en.Value))
				}
			}
		}
		if r.deleted {
			e.must(txn.Delete(key))
		} else {
			e.must(txn.Set(key, []byte(r.v)))
		}
		_, err := txn.Commit()
		e.must(err)
	}
}

// deleteOwnEntry deletes an entry of row h as DML does: a unique one only
// while it still points at h.
func deleteOwnEntry(txn *kv.Txn, e Entry, h int64) error {
	if e.Unique {
		v, found, err := txn.GetLatest(e.Key)
		if err != nil {
			return err
		}
		if other, derr := codec.DecodeHandle(v); !found || derr != nil || other != h {
			return nil
		}
	}
	return txn.Delete(e.Key)
}

func (e *mergeEnv) entries(h int64, v []byte) []Entry {
	t, _ := e.cat.Current().TableByID(e.tableID)
	ents, err := testIndexer{}.Entries("app", t, []int64{1}, h, v)
	e.must(err)
	return ents
}

// merge runs the merge, then unique validation, and shows the index.
func (e *mergeEnv) merge() string {
	ctx := context.Background()
	err := e.m.mergeChangeLog(ctx, e.job, e.job.Indexes[0])
	if err == nil {
		err = e.m.validateUnique(ctx, e.job, []int64{1})
	}
	out := e.index()
	if err != nil {
		out += "error: " + err.Error() + "\n"
	}
	return out
}

// index lists iv's entries as value -> handle, in key order.
func (e *mergeEnv) index() string {
	txn := e.store.Begin()
	defer txn.Rollback()
	p := codec.IndexPrefix(e.tableID, 1)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	defer it.Close()
	var out strings.Builder
	for ; it.Valid(); it.Next() {
		_, _, rest, err := codec.DecodeIndexPrefix(it.Key())
		e.must(err)
		v, rest, err := codec.DecodeKey(rest)
		e.must(err)
		hb := rest
		if e.job.Indexes[0].Unique && v != nil {
			hb = it.Value()
		}
		h, err := codec.DecodeHandle(hb)
		e.must(err)
		if v == nil {
			v = "NULL"
		}
		fmt.Fprintf(&out, "%s -> %d\n", v, h)
	}
	e.must(it.Err())
	if out.Len() == 0 {
		return "(empty)\n"
	}
	return out.String()
}

func (e *mergeEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}
