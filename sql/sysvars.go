package sql

import (
	"sync"
	"sync/atomic"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/reorgdb/reorgdb/ddl"
)

var registerOnce sync.Once

// reorgWorkers is the backfill worker count, settable under TiDB's name
// and MySQL's (innodb_parallel_read_threads): the last one set wins.
var reorgWorkers atomic.Int64

func setWorkers(_ *gms.Context, _ gms.SystemVariableScope, v gms.SystemVarValue) error {
	switch x := v.Val.(type) {
	case int64:
		reorgWorkers.Store(x)
	case int:
		reorgWorkers.Store(int64(x))
	}
	return nil
}

// registerSystemVariables adds ReorgDB's DDL knobs (TiDB's and MySQL's
// names) to the global system variables; SET GLOBAL changes a running job
// within a second because jobs read them before every batch.
func registerSystemVariables() {
	registerOnce.Do(func() {
		reorgWorkers.Store(4)
		global := gms.GetMysqlScope(gms.SystemVariableScope_Global)
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{
			// go-mysql-server pins this to 1 s; InnoDB's range and default.
			&gms.MysqlSystemVariable{Name: "innodb_lock_wait_timeout", Scope: gms.GetMysqlScope(gms.SystemVariableScope_Both), Dynamic: true,
				Type: types.NewSystemIntType("innodb_lock_wait_timeout", 1, 1073741824, false), Default: int64(50)},
			&gms.MysqlSystemVariable{Name: "tidb_ddl_reorg_worker_cnt", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("tidb_ddl_reorg_worker_cnt", 1, 256, false), Default: int64(4), NotifyChanged: setWorkers},
			&gms.MysqlSystemVariable{Name: "innodb_parallel_read_threads", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("innodb_parallel_read_threads", 1, 256, false), Default: int64(4), NotifyChanged: setWorkers},
			&gms.MysqlSystemVariable{Name: "tidb_ddl_reorg_batch_size", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("tidb_ddl_reorg_batch_size", 32, 10240, false), Default: int64(256)},
			// A pause after every backfill batch of each worker: a crude
			// write-speed limit for a DDL that must stay out of the way.
			&gms.MysqlSystemVariable{Name: "reorgdb_ddl_reorg_batch_delay_ms", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("reorgdb_ddl_reorg_batch_delay_ms", 0, 10000, false), Default: int64(0)},
			&gms.MysqlSystemVariable{Name: "tidb_ddl_enable_fast_reorg", Scope: global, Dynamic: true,
				Type: types.NewSystemBoolType("tidb_ddl_enable_fast_reorg"), Default: int8(1)},
			&gms.MysqlSystemVariable{Name: "innodb_ddl_buffer_size", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("innodb_ddl_buffer_size", 65536, 1<<40, false), Default: int64(256 << 20)},
			// MySQL's range, but 0 (the default) follows the worker count.
			&gms.MysqlSystemVariable{Name: "innodb_ddl_threads", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("innodb_ddl_threads", 0, 64, false), Default: int64(0)},
			&gms.MysqlSystemVariable{Name: "reorgdb_ddl_cpu_share", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("reorgdb_ddl_cpu_share", 1, 100, false), Default: int64(defaultCPUShare)},
			&gms.MysqlSystemVariable{Name: "tidb_ddl_disk_quota", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("tidb_ddl_disk_quota", 1<<16, 1<<50, false), Default: int64(100 << 30)},
			// Off by default: compressing the new index's sstables is a
			// large part of an ingest build's CPU, and compactions that
			// later rewrite them compress them anyway.
			&gms.MysqlSystemVariable{Name: "reorgdb_ddl_ingest_compression", Scope: global, Dynamic: true,
				Type: types.NewSystemBoolType("reorgdb_ddl_ingest_compression"), Default: int8(0)},
			&gms.MysqlSystemVariable{Name: "reorgdb_mdl_report_after_seconds", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("reorgdb_mdl_report_after_seconds", 1, 86400, false), Default: int64(10)},
		})
		// MySQL 8's default collation instead of go-mysql-server's
		// utf8mb4_0900_bin, keeping go-mysql-server's definitions.
		for _, name := range []string{"collation_server", "collation_database"} {
			if v, _, ok := gms.SystemVariables.GetGlobal(name); ok {
				if mv, ok := v.(*gms.MysqlSystemVariable); ok {
					c := *mv
					c.Default = defaultCollation.Name()
					gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{&c})
				}
			}
		}
	})
}

var registerTestingOnce sync.Once

// registerTestingVariables adds the fault-injection variables that
// black-box crash tests use, only for a server started for testing
// (reorgdb serve --testing): a normal server does not have them.
func registerTestingVariables() {
	registerTestingOnce.Do(func() {
		global := gms.GetMysqlScope(gms.SystemVariableScope_Global)
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{
			// An ingest build stops at this phase (scan, sort, spill,
			// ingest, ingested, merge) until the variable changes.
			&gms.MysqlSystemVariable{Name: "reorgdb_ddl_test_stall_phase", Scope: global, Dynamic: true,
				Type: types.NewSystemStringType("reorgdb_ddl_test_stall_phase"), Default: ""},
		})
	})
}

// defaultCPUShare is the percent of the CPUs an index build may take while
// user transactions run (reorgdb_ddl_cpu_share). A lower share keeps more
// of the workload's throughput at the price of a longer build; the default
// keeps at least the share of its workload that MariaDB keeps during its
// own build, with the shortest build that does (the measured trade is in
// docs/benchmarks.md).
const defaultCPUShare = 30

func globalString(name string) string {
	_, v, ok := gms.SystemVariables.GetGlobal(name)
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return s
}

// GlobalInt is a global system variable's integer value, or def.
func GlobalInt(name string, def int64) int64 {
	_, v, ok := gms.SystemVariables.GetGlobal(name)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return def
}

func ddlSettings() ddl.Settings {
	return ddl.Settings{
		Workers:        int(reorgWorkers.Load()),
		BatchSize:      int(GlobalInt("tidb_ddl_reorg_batch_size", 256)),
		BatchDelay:     time.Duration(GlobalInt("reorgdb_ddl_reorg_batch_delay_ms", 0)) * time.Millisecond,
		MDLWarnAfter:   time.Duration(GlobalInt("reorgdb_mdl_report_after_seconds", 10)) * time.Second,
		FastReorg:      GlobalInt("tidb_ddl_enable_fast_reorg", 1) != 0,
		BufferBytes:    GlobalInt("innodb_ddl_buffer_size", 256<<20),
		Threads:        int(GlobalInt("innodb_ddl_threads", 0)),
		CPUShare:       int(GlobalInt("reorgdb_ddl_cpu_share", defaultCPUShare)),
		StallPhase:     globalString("reorgdb_ddl_test_stall_phase"),
		DiskQuota:      GlobalInt("tidb_ddl_disk_quota", 100<<30),
		CompressIngest: GlobalInt("reorgdb_ddl_ingest_compression", 0) != 0,
	}
}

// DDLSettings returns the schema-change knobs in force.
func (e *Engine) DDLSettings() ddl.Settings { return ddlSettings() }
