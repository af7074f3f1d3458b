package sql

import (
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
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
	t, ok, err := d.Database.GetTableInsensitive(ctx, name)
	if ok && err == nil && strings.EqualFold(name, "statistics") {
		if ct, isCat := t.(gms.CatalogTable); isCat {
			return &statisticsTable{CatalogTable: ct, e: d.e}, true, nil
		}
	}
	if ok && err == nil && strings.EqualFold(name, "views") {
		if ist, isIS := t.(*information_schema.InformationSchemaTable); isIS {
			cp := *ist
			cp.Reader = viewsByDatabase(d.e, ist.Reader)
			return &cp, true, nil
		}
	}
	if ok && err == nil && strings.EqualFold(name, "routines") {
		if rt, isRoutines := t.(routineTable); isRoutines {
			return &routinesTable{routineTable: rt, e: d.e}, true, nil
		}
	}
	if ok && err == nil && strings.EqualFold(name, "tables") {
		if ct, isCat := t.(gms.CatalogTable); isCat {
			return &tablesTable{CatalogTable: ct, e: d.e}, true, nil
		}
	}
	return t, ok, err
}

// tablesTable is go-mysql-server's information_schema.tables with
// ReorgDB's estimates of TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH and
// INDEX_LENGTH (see tableEstimate), where go-mysql-server says 0. They
// are not given through sql.StatisticsTable because go-mysql-server's
// planner would then read them for every statement.
type tablesTable struct {
	gms.CatalogTable
	e *Engine
}

func (t *tablesTable) AssignCatalog(cat gms.Catalog) gms.Table {
	if ct, ok := t.CatalogTable.AssignCatalog(cat).(gms.CatalogTable); ok {
		return &tablesTable{CatalogTable: ct, e: t.e}
	}
	return t.CatalogTable.AssignCatalog(cat)
}

func (t *tablesTable) PartitionRows(ctx *gms.Context, p gms.Partition) (gms.RowIter, error) {
	it, err := t.CatalogTable.PartitionRows(ctx, p)
	if err != nil {
		return nil, err
	}
	col := t.Schema().IndexOfColName
	ti := &tablesIter{RowIter: it, e: t.e, schema: col("TABLE_SCHEMA"), table: col("TABLE_NAME"), rows: col("TABLE_ROWS"),
		avg: col("AVG_ROW_LENGTH"), data: col("DATA_LENGTH"), index: col("INDEX_LENGTH")}
	if ti.schema < 0 || ti.table < 0 || ti.rows < 0 || ti.avg < 0 || ti.data < 0 || ti.index < 0 {
		return it, nil
	}
	return ti, nil
}

type tablesIter struct {
	gms.RowIter
	e                                     *Engine
	schema, table, rows, avg, data, index int
}

func (ti *tablesIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := ti.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	db, _ := row[ti.schema].(string)
	tbl, _ := row[ti.table].(string)
	if strings.EqualFold(db, "information_schema") {
		return row, nil
	}
	d, err := (&Provider{e: ti.e}).Database(ctx, db)
	if err != nil {
		return row, nil
	}
	gt, found, err := d.GetTableInsensitive(ctx, tbl)
	if err != nil || !found {
		return row, nil
	}
	t, ok := gt.(*Table)
	if !ok {
		return row, nil
	}
	rows, dataLen, indexLen, ok := tableEstimate(ctx, t)
	if !ok {
		return row, nil
	}
	row = append(gms.Row(nil), row...)
	row[ti.rows], row[ti.data], row[ti.index] = rows, dataLen, indexLen
	row[ti.avg] = uint64(0)
	if rows > 0 {
		row[ti.avg] = dataLen / rows
	}
	return row, nil
}

// statisticsTable is go-mysql-server's information_schema.statistics with
// ReorgDB's CARDINALITY (see cardinality) and SUB_PART NULL for a key
// part that is not a prefix (go-mysql-server says 0), as SHOW INDEX.
type statisticsTable struct {
	gms.CatalogTable
	e *Engine
}

func (t *statisticsTable) AssignCatalog(cat gms.Catalog) gms.Table {
	if ct, ok := t.CatalogTable.AssignCatalog(cat).(gms.CatalogTable); ok {
		return &statisticsTable{CatalogTable: ct, e: t.e}
	}
	return t.CatalogTable.AssignCatalog(cat)
}

func (t *statisticsTable) PartitionRows(ctx *gms.Context, p gms.Partition) (gms.RowIter, error) {
	// go-mysql-server makes the rows here, from GetIndexes.
	it, err := withAllIndexes(ctx, func() (gms.RowIter, error) { return t.CatalogTable.PartitionRows(ctx, p) })
	if err != nil {
		return nil, err
	}
	col := t.Schema().IndexOfColName
	s := &statisticsIter{RowIter: it, e: t.e, schema: col("TABLE_SCHEMA"), table: col("TABLE_NAME"), index: col("INDEX_NAME"),
		seq: col("SEQ_IN_INDEX"), card: col("CARDINALITY"), sub: col("SUB_PART"), vis: col("IS_VISIBLE"), cache: map[string][]int64{}}
	if s.schema < 0 || s.table < 0 || s.index < 0 || s.seq < 0 || s.card < 0 || s.sub < 0 || s.vis < 0 {
		return it, nil
	}
	return s, nil
}

type statisticsIter struct {
	gms.RowIter
	e                                         *Engine
	schema, table, index, seq, card, sub, vis int
	cache                                     map[string][]int64
}

func (s *statisticsIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := s.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	db, _ := row[s.schema].(string)
	tbl, _ := row[s.table].(string)
	ixName, _ := row[s.index].(string)
	seq, ok := toInt64(row[s.seq])
	if !ok || seq < 1 {
		return row, nil
	}
	d, err := (&Provider{e: s.e}).Database(ctx, db)
	if err != nil {
		return row, nil
	}
	gt, found, err := d.GetTableInsensitive(ctx, tbl)
	if err != nil || !found {
		return row, nil
	}
	t, ok := gt.(*Table)
	if !ok {
		return row, nil
	}
	for _, ix := range t.m.indexes {
		if !strings.EqualFold(ix.name(), ixName) || int(seq) > len(ix.pos) {
			continue
		}
		row = append(gms.Row(nil), row...)
		if ix.prefix[seq-1] == 0 {
			row[s.sub] = nil
		}
		if !ix.visible() {
			row[s.vis] = "NO"
		}
		key := strings.ToLower(db + "." + tbl + "." + ixName)
		card, ok := s.cache[key]
		if !ok {
			card = cardinality(ctx, t, ix)
			s.cache[key] = card
		}
		if card != nil {
			row[s.card] = card[seq-1]
		} else {
			row[s.card] = nil
		}
		break
	}
	return row, nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
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

// columnsTable is go-mysql-server's information_schema.columns with the
// DATETIME_PRECISION of a TIME column, which it leaves NULL for
// ReorgDB's TimeType. It is put in by the rule fixColumnsTable, after
// go-mysql-server's rules that want its own table type.
type columnsTable struct{ gms.Table }

const ruleColumnsTable analyzer.RuleId = 10010

func fixColumnsTable(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gms.Node) (gms.Node, transform.TreeIdentity, error) {
		rt, ok := n.(*plan.ResolvedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		// The table is wrapped already for the process list.
		pt, ok := rt.Table.(*plan.ProcessTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		ct, ok := pt.Table.(*information_schema.ColumnsTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		npt := *pt
		npt.Table = &columnsTable{Table: ct}
		nt, err := rt.WithTable(&npt)
		return nt, transform.NewTree, err
	})
}

func (t *columnsTable) PartitionRows(ctx *gms.Context, p gms.Partition) (gms.RowIter, error) {
	it, err := t.Table.PartitionRows(ctx, p)
	if err != nil {
		return nil, err
	}
	col := t.Schema().IndexOfColName
	ci := &columnsIter{RowIter: it, typ: col("COLUMN_TYPE"), prec: col("DATETIME_PRECISION"), def: col("COLUMN_DEFAULT")}
	if ci.typ < 0 || ci.prec < 0 || ci.def < 0 {
		return it, nil
	}
	return ci, nil
}

type columnsIter struct {
	gms.RowIter
	typ, prec, def int
}

func (ci *columnsIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := ci.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	s, _ := row[ci.typ].(string)
	if tt, ok, err := timeTypeOf(s); ok && err == nil {
		row = append(gms.Row(nil), row...)
		row[ci.prec] = uint32(tt.Precision)
		if d, isStr := row[ci.def].(string); isStr {
			if ts, err := tt.ConvertToTimespan(d); err == nil {
				row[ci.def] = string(tt.appendText(nil, ts))
			}
		}
	}
	return row, nil
}

// viewsByDatabase reads information_schema.views with read, go-mysql-server's
// reader, once per database that has views, with that database current:
// read binds each view's definition in the current database, and leaves
// out (or misreads) a view whose tables it does not find there.
func viewsByDatabase(e *Engine, read func(*gms.Context, gms.Catalog) (gms.RowIter, error)) func(*gms.Context, gms.Catalog) (gms.RowIter, error) {
	return func(ctx *gms.Context, cat gms.Catalog) (gms.RowIter, error) {
		sess := ctx.Session
		prev := sess.GetCurrentDatabase()
		defer sess.SetCurrentDatabase(prev)
		var out []gms.Row
		for _, db := range e.schemaFor(ctx).Databases() {
			if len(db.Views) == 0 {
				continue
			}
			sess.SetCurrentDatabase(db.Name)
			it, err := read(ctx, cat)
			if err != nil {
				return nil, err
			}
			rows, err := gms.RowIterToRows(ctx, it)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if s, ok := r[1].(string); ok && strings.EqualFold(s, db.Name) {
					out = append(out, r)
				}
			}
		}
		return gms.RowsToRowIter(out...), nil
	}
}
