package sql

import (
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// infoSchema adds information_schema.ddl_jobs to go-mysql-server's
// information_schema, which has no public way to take new tables.
type infoSchema struct {
	gms.Database
	e *Engine
}

func (d *infoSchema) GetTableInsensitive(ctx *gms.Context, name string) (gms.Table, bool, error) {
	if strings.EqualFold(name, "ddl_jobs") {
		return &ddlJobsTable{e: d.e}, true, nil
	}
	return d.Database.GetTableInsensitive(ctx, name)
}

func (d *infoSchema) GetTableNames(ctx *gms.Context) ([]string, error) {
	names, err := d.Database.GetTableNames(ctx)
	return append(names, "ddl_jobs"), err
}

// ddlJobsTable is every DDL job this server knows, as ADMIN SHOW DDL JOBS
// shows them, plus the query text.
type ddlJobsTable struct{ e *Engine }

var ddlJobsSchema = func() gms.Schema {
	text := types.LongText
	col := func(name string, t gms.Type) *gms.Column {
		return &gms.Column{Name: name, Type: t, Source: "ddl_jobs", DatabaseSource: "information_schema", Nullable: true}
	}
	return gms.Schema{
		col("JOB_ID", types.Int64), col("DB_NAME", text), col("TABLE_NAME", text), col("JOB_TYPE", text),
		col("SCHEMA_STATE", text), col("TABLE_ID", types.Int64), col("ROW_COUNT", types.Int64),
		col("TOTAL_ROWS", types.Int64), col("CREATE_TIME", types.Datetime), col("START_TIME", types.Datetime),
		col("END_TIME", types.Datetime), col("STATE", text), col("COMMENTS", text), col("ERROR", text),
		col("QUERY", text), col("RESUMED_ROWS", types.Int64),
		col("SORTED_BYTES", types.Int64), col("SPILLED_BYTES", types.Int64), col("INGESTED_BYTES", types.Int64),
		col("PEAK_TEMP_BYTES", types.Int64),
	}
}()

func (t *ddlJobsTable) Name() string               { return "ddl_jobs" }
func (t *ddlJobsTable) String() string             { return "ddl_jobs" }
func (t *ddlJobsTable) Schema() gms.Schema         { return ddlJobsSchema }
func (t *ddlJobsTable) Collation() gms.CollationID { return gms.Collation_Default }
func (t *ddlJobsTable) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return &singlePartitionIter{}, nil
}

func (t *ddlJobsTable) PartitionRows(*gms.Context, gms.Partition) (gms.RowIter, error) {
	var rows []gms.Row
	tm := func(x time.Time) any {
		if x.IsZero() {
			return nil
		}
		return x.UTC()
	}
	for _, j := range t.e.DDL.Jobs(0) {
		comment := j.Comment
		if comment == "" {
			comment = "mode=" + j.Mode
		}
		rows = append(rows, gms.Row{j.ID, j.DBName, j.TableName, j.Type, j.SchemaState.String(), j.TableID,
			j.RowCount, j.TotalRows, tm(j.Created), tm(j.Start), tm(j.End), string(j.State), comment, j.Error, j.Query, j.ResumedRows,
			j.SortedBytes, j.SpilledBytes, j.IngestedBytes, j.PeakTempBytes})
	}
	return gms.RowsToRowIter(rows...), nil
}
