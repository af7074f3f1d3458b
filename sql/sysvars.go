package sql

import (
	"sync"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/reorgdb/reorgdb/ddl"
)

var registerOnce sync.Once

// registerSystemVariables adds ReorgDB's DDL knobs (TiDB's and MySQL's
// names) to the global system variables; SET GLOBAL changes a running job
// within a second because jobs read them before every batch.
func registerSystemVariables() {
	registerOnce.Do(func() {
		global := gms.GetMysqlScope(gms.SystemVariableScope_Global)
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{
			&gms.MysqlSystemVariable{Name: "tidb_ddl_reorg_worker_cnt", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("tidb_ddl_reorg_worker_cnt", 1, 256, false), Default: int64(4)},
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
			&gms.MysqlSystemVariable{Name: "reorgdb_mdl_report_after_seconds", Scope: global, Dynamic: true,
				Type: types.NewSystemIntType("reorgdb_mdl_report_after_seconds", 1, 86400, false), Default: int64(10)},
		})
	})
}

func globalInt(name string, def int64) int64 {
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
		Workers:      int(globalInt("tidb_ddl_reorg_worker_cnt", 4)),
		BatchSize:    int(globalInt("tidb_ddl_reorg_batch_size", 256)),
		BatchDelay:   time.Duration(globalInt("reorgdb_ddl_reorg_batch_delay_ms", 0)) * time.Millisecond,
		MDLWarnAfter: time.Duration(globalInt("reorgdb_mdl_report_after_seconds", 10)) * time.Second,
		FastReorg:    globalInt("tidb_ddl_enable_fast_reorg", 1) != 0,
		BufferBytes:  globalInt("innodb_ddl_buffer_size", 256<<20),
	}
}
