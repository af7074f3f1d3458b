package sql_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/kv"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// BenchmarkAddIndex builds c_idx(c) on one table of sysbench rows
// (REORGDB_BENCH_ROWS, default 2,000,000), side by side in one run:
//
//   - floor: the least any build on this storage must do, written as plain
//     code: one snapshot scan of the rows, the c keys encoded and sorted in
//     memory, one sstable written (not ingested);
//
//   - ingest and txn: ALTER TABLE ADD INDEX in each backfill mode, with the
//     default settings, then DROP INDEX (not timed).
//
//     REORGDB_BENCH_ROWS=2000000 go test ./sql -run '^$' -bench AddIndex -benchtime 3x -count 1
func BenchmarkAddIndex(b *testing.B) {
	rows := 2_000_000
	if v, err := strconv.Atoi(os.Getenv("REORGDB_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	s := servertest.Start(b)
	db := s.DB("sbtest")
	loadSysbenchRows(b, db, rows)
	// Settle the LSM so that the load's compactions do not run during the
	// timed builds.
	store := s.Engine().Store()
	if err := store.DB().Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true); err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		sch := s.Engine().Catalog().Current()
		d, _ := sch.Database("sbtest")
		t, _ := sch.Table(d.ID, "sbtest1")
		c, _ := t.ColumnByName("c")
		for b.Loop() {
			floorBuild(b, s, t.ID, c.ID)
		}
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds()*float64(b.N), "rows/s")
	})
	for _, mode := range []string{"ingest", "txn"} {
		b.Run(mode, func(b *testing.B) {
			mustExec(b, db, "SET GLOBAL tidb_ddl_enable_fast_reorg = "+map[string]string{"ingest": "ON", "txn": "OFF"}[mode])
			for b.Loop() {
				mustExec(b, db, "ALTER TABLE sbtest1 ADD INDEX c_idx (c)")
				b.StopTimer()
				mustExec(b, db, "ALTER TABLE sbtest1 DROP INDEX c_idx")
				b.StartTimer()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds()*float64(b.N), "rows/s")
		})
	}
}

// floorBuild scans table tid at a snapshot, encodes each row's c as an
// index key, sorts the keys and writes them into one sstable.
func floorBuild(b *testing.B, s *servertest.Server, tid, cid int64) {
	store := s.Engine().Store()
	txn := store.Begin()
	defer txn.Rollback()
	p := codec.RecordPrefix(tid)
	it := txn.NewIter(p, codec.PrefixEnd(p), false)
	dec := codec.NewRowDecoder([]int64{cid})
	vals := make([]any, 1)
	var keys [][]byte
	arena := make([]byte, 0, 64<<20)
	for ; it.Valid(); it.Next() {
		_, h, err := codec.DecodeRecordKey(it.Key())
		if err != nil {
			b.Fatal(err)
		}
		if err := dec.Decode(it.Value(), vals); err != nil {
			b.Fatal(err)
		}
		start := len(arena)
		if cap(arena)-start < 512 {
			arena, start = make([]byte, 0, 64<<20), 0
		}
		arena, err = codec.IndexKey(arena, tid, 99, vals, &h)
		if err != nil {
			b.Fatal(err)
		}
		keys = append(keys, arena[start:len(arena):len(arena)])
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	it.Close()
	slices.SortFunc(keys, bytes.Compare)
	in, err := store.NewIngester(txn.StartTS(), b.TempDir(), kv.IngestOptions{MaxSize: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer in.Abort()
	for _, k := range keys {
		if err := in.Add(k, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := in.Close(); err != nil {
		b.Fatal(err)
	}
}

// loadSysbenchRows fills sbtest1 as sysbench's oltp_common prepare does
// (k uniform in 1..rows, c and pad digit groups), in bulk INSERTs from two
// connections.
func loadSysbenchRows(b *testing.B, db *sql.DB, rows int) {
	mustExec(b, db, "CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, "+
		"c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id))")
	const chunk = 1000
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			digits := func(groups int) string {
				var sb strings.Builder
				for g := 0; g < groups; g++ {
					if g > 0 {
						sb.WriteByte('-')
					}
					fmt.Fprintf(&sb, "%011d", rng.Int63n(1e11))
				}
				return sb.String()
			}
			for lo := 1 + w*chunk; lo <= rows; lo += 2 * chunk {
				var sb strings.Builder
				sb.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
				for id := lo; id < lo+chunk && id <= rows; id++ {
					if id > lo {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, "(%d,%d,'%s','%s')", id, 1+rng.Intn(rows), digits(10), digits(5))
				}
				if _, err := db.Exec(sb.String()); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}
