package server

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/reorgdb/reorgdb/ddl"
)

// ADMIN statements (TiDB's job-control syntax) are not in
// go-mysql-server's grammar, so they are recognised before parsing.
var (
	reAdmin          = regexp.MustCompile(`(?is)^\s*admin\s+(.*?)\s*;?\s*$`)
	reShowJobs       = regexp.MustCompile(`(?i)^show\s+ddl\s+jobs(?:\s+(\d+))?$`)
	reShowJobQueries = regexp.MustCompile(`(?i)^show\s+ddl\s+job\s+queries\s+([\d\s,]+)$`)
	reJobControl     = regexp.MustCompile(`(?i)^(cancel|pause|resume)\s+ddl\s+jobs\s+([\d\s,]+)$`)
	reCheckTable     = regexp.MustCompile(`(?i)^check\s+table\s+(.+)$`)
	reCheckIndex     = regexp.MustCompile("(?i)^check\\s+index\\s+([`\\w.]+)\\s+`?(\\w+)`?$")
)

// isAdmin reports whether a statement is an ADMIN statement.
func isAdmin(q string) bool {
	t := strings.TrimLeft(q, " \t\r\n")
	return len(t) > 6 && strings.EqualFold(t[:6], "admin ")
}

func varcharField(name string) *querypb.Field {
	return &querypb.Field{Name: name, Type: querypb.Type_VARCHAR, Charset: 33}
}

func intField(name string) *querypb.Field {
	return &querypb.Field{Name: name, Type: querypb.Type_INT64, Charset: 63}
}

func timeString(t time.Time) sqltypes.Value {
	if t.IsZero() {
		return sqltypes.NULL
	}
	return sqltypes.NewVarChar(t.Format("2006-01-02 15:04:05"))
}

func parseIDs(s string) ([]int64, error) {
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax: bad job id %q", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// admin runs an ADMIN statement.
func (h *handler) admin(c *mysql.Conn, query string) (*sqltypes.Result, error) {
	m := reAdmin.FindStringSubmatch(query)
	if m == nil {
		return nil, mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax near '%s'", query)
	}
	body := strings.Join(strings.Fields(m[1]), " ")
	mgr := h.s.engine.DDL
	switch {
	case reShowJobs.MatchString(body):
		n := 10
		if g := reShowJobs.FindStringSubmatch(body)[1]; g != "" {
			n, _ = strconv.Atoi(g)
		}
		res := &sqltypes.Result{Fields: []*querypb.Field{
			intField("JOB_ID"), varcharField("DB_NAME"), varcharField("TABLE_NAME"), varcharField("JOB_TYPE"),
			varcharField("SCHEMA_STATE"), intField("TABLE_ID"), intField("ROW_COUNT"), intField("TOTAL_ROWS"),
			varcharField("CREATE_TIME"), varcharField("START_TIME"), varcharField("END_TIME"), varcharField("STATE"),
			varcharField("COMMENTS"), varcharField("ERROR"),
		}}
		for _, j := range mgr.Jobs(n) {
			res.Rows = append(res.Rows, []sqltypes.Value{
				sqltypes.NewInt64(j.ID), sqltypes.NewVarChar(j.DBName), sqltypes.NewVarChar(j.TableName),
				sqltypes.NewVarChar(j.Type), sqltypes.NewVarChar(j.SchemaState.String()), sqltypes.NewInt64(j.TableID),
				sqltypes.NewInt64(j.RowCount), sqltypes.NewInt64(j.TotalRows),
				timeString(j.Created), timeString(j.Start), timeString(j.End), sqltypes.NewVarChar(string(j.State)),
				sqltypes.NewVarChar(jobComment(j)), sqltypes.NewVarChar(j.Error),
			})
		}
		return res, nil
	case reShowJobQueries.MatchString(body):
		ids, err := parseIDs(reShowJobQueries.FindStringSubmatch(body)[1])
		if err != nil {
			return nil, err
		}
		res := &sqltypes.Result{Fields: []*querypb.Field{varcharField("QUERY")}}
		for _, id := range ids {
			if j, ok := mgr.Job(id); ok {
				res.Rows = append(res.Rows, []sqltypes.Value{sqltypes.NewVarChar(j.Query)})
			}
		}
		return res, nil
	case reJobControl.MatchString(body):
		g := reJobControl.FindStringSubmatch(body)
		ids, err := parseIDs(g[2])
		if err != nil {
			return nil, err
		}
		res := &sqltypes.Result{Fields: []*querypb.Field{intField("JOB_ID"), varcharField("RESULT")}}
		for _, id := range ids {
			var err error
			switch strings.ToLower(g[1]) {
			case "cancel":
				err = mgr.Cancel(id)
			case "pause":
				err = mgr.Pause(id)
			case "resume":
				err = mgr.Resume(id)
			}
			result := "successful"
			if err != nil {
				result = err.Error()
			}
			res.Rows = append(res.Rows, []sqltypes.Value{sqltypes.NewInt64(id), sqltypes.NewVarChar(result)})
		}
		return res, nil
	case reCheckIndex.MatchString(body):
		g := reCheckIndex.FindStringSubmatch(body)
		db, table := h.qualify(c, g[1])
		if err := h.s.engine.CheckIndexIn(h.session(c), db, table, g[2]); err != nil {
			return nil, checkError(err)
		}
		return &sqltypes.Result{}, nil
	case reCheckTable.MatchString(body):
		for _, name := range strings.Split(reCheckTable.FindStringSubmatch(body)[1], ",") {
			db, table := h.qualify(c, strings.TrimSpace(name))
			if err := h.s.engine.CheckIndexIn(h.session(c), db, table, ""); err != nil {
				return nil, checkError(err)
			}
		}
		return &sqltypes.Result{}, nil
	}
	return nil, mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; unknown ADMIN statement '%s'", body)
}

func jobComment(j *ddl.Job) string {
	c := j.Comment
	if c == "" {
		c = "mode=" + j.Mode
	}
	return c
}

// qualify splits db.table, defaulting to the connection's database.
func (h *handler) qualify(c *mysql.Conn, name string) (string, string) {
	name = strings.ReplaceAll(name, "`", "")
	if db, t, ok := strings.Cut(name, "."); ok {
		return db, t
	}
	return h.s.mysql.SessionManager().GetCurrentDB(c), name
}

// checkError is TiDB's ErrAdminCheckTable (8003) for an inconsistency,
// or the lookup error (unknown table) as is.
func checkError(err error) error {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	if fe := fixError(err); fe != err {
		return fe
	}
	msg := err.Error()
	if strings.Contains(msg, "table not found") {
		return fixError(mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "%s", msg))
	}
	if strings.Contains(msg, "database not found") {
		return fixError(mysql.NewSQLError(mysql.ERBadDb, "42000", "%s", msg))
	}
	if strings.Contains(msg, "index not found") {
		return mysql.NewSQLError(mysql.ERKeyDoesNotExist, "42000", "%s", msg)
	}
	return mysql.NewSQLError(8003, "HY000", "%s", fmt.Sprintf("ADMIN CHECK found an inconsistency: %s", msg))
}
