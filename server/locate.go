package server

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// tableLookup finds a table by database and name as a session sees it.
type tableLookup func(db, name string) (*catalog.Table, bool)

// stmtInfo returns what mapError may ask about the statement query that
// connection c ran: the column and row where it gave a value.
func (h *handler) stmtInfo(c *mysql.Conn, query string) *stmtInfo {
	curDB := func() string {
		if st := h.s.connState(c.ConnectionID); st != nil {
			if sess := st.session(); sess != nil {
				return sess.GetCurrentDatabase()
			}
		}
		return ""
	}
	tableOf := func(db, name string) (*catalog.Table, bool) {
		return h.s.engine.TableFor(h.session(c), db, name)
	}
	return &stmtInfo{
		query: query,
		locate: func(value, col string, typeOK func(string) bool) (string, string, int, bool) {
			return locateValue(tableOf, curDB(), query, value, col, typeOK)
		},
		clause: func(col string) string { return clauseOf(query, col) },
		mismatchedRow: func() int {
			return mismatchedRow(tableOf, curDB(), query)
		},
		currentDB: curDB,
		foreignKey: func(table, name string) (string, bool) {
			return h.s.engine.ForeignKeyText(curDB(), table, name, query)
		},
		fkChild: func(parent, name string) string {
			return h.s.engine.ForeignKeyChild(curDB(), parent, name)
		},
		stmtForeignKey: func() (catalog.ForeignKey, bool) {
			return h.s.engine.StatementForeignKey(curDB(), query)
		},
		columnForeignKey: func(col string) (catalog.ForeignKey, bool) {
			return h.s.engine.ForeignKeyOfColumn(curDB(), query, col)
		},
		qualify: func(name string) string {
			if stmt, err := sqlparser.Parse(query); err == nil {
				db := ""
				_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
					if tn, ok := n.(sqlparser.TableName); ok && strings.EqualFold(tn.Name.String(), name) && !tn.DbQualifier.IsEmpty() {
						db = tn.DbQualifier.String()
						return false, nil
					}
					return true, nil
				}, stmt)
				if db != "" {
					return db
				}
			}
			return curDB()
		},
	}
}

// locateValue finds, in an INSERT ... VALUES or UPDATE ... SET of
// literals, the column and the 1-based row where value was given to
// column col ("" for any column whose declared type typeOK accepts). A
// statement without such a literal (a placeholder, an expression) names
// the table's one column typeOK accepts, if only one does, at row 1.
func locateValue(tableOf tableLookup, curDB, query, value, col string, typeOK func(string) bool) (string, string, int, bool) {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return "", "", 0, false
	}
	var table sqlparser.TableName
	var cols []string
	var rows [][]sqlparser.Expr
	switch s := stmt.(type) {
	case *sqlparser.Insert:
		table = s.Table
		for _, c := range s.Columns {
			cols = append(cols, c.String())
		}
		if v, ok := s.Rows.(*sqlparser.AliasedValues); ok {
			for _, t := range v.Values {
				rows = append(rows, t)
			}
		}
	case *sqlparser.Update:
		if len(s.TableExprs) != 1 {
			return "", "", 0, false
		}
		at, ok := s.TableExprs[0].(*sqlparser.AliasedTableExpr)
		if !ok {
			return "", "", 0, false
		}
		if table, ok = at.Expr.(sqlparser.TableName); !ok {
			return "", "", 0, false
		}
		var row []sqlparser.Expr
		for _, e := range s.Exprs {
			cols = append(cols, e.Name.Name.String())
			row = append(row, e.Expr)
		}
		rows = append(rows, row)
	default:
		return "", "", 0, false
	}
	types := map[string]string{}
	var tableCols []string
	dbName := table.DbQualifier.String()
	if dbName == "" {
		dbName = curDB
	}
	if tableOf != nil {
		if t, ok := tableOf(dbName, table.Name.String()); ok {
			for _, c := range t.Columns {
				types[strings.ToLower(c.Name)] = c.Type
				tableCols = append(tableCols, c.Name)
			}
		}
	}
	if len(cols) == 0 {
		cols = tableCols
	}
	fits := func(name string) bool {
		if col != "" {
			return strings.EqualFold(name, col)
		}
		return typeOK == nil || typeOK(types[strings.ToLower(name)])
	}
	for r, row := range rows {
		for i, e := range row {
			if value != "" && i < len(cols) && fits(cols[i]) && literal(e) == value {
				return cols[i], types[strings.ToLower(cols[i])], r + 1, true
			}
		}
	}
	found := ""
	for _, c := range cols {
		if fits(c) {
			if found != "" {
				return "", "", 0, false
			}
			found = c
		}
	}
	if found == "" {
		return "", "", 0, false
	}
	return found, types[strings.ToLower(found)], 1, true
}

// literal is the text of a literal value, as go-mysql-server prints it in
// its errors; "" for anything else.
func literal(e sqlparser.Expr) string {
	switch v := e.(type) {
	case *sqlparser.SQLVal:
		if v.Type == sqlparser.ValArg {
			return ""
		}
		return string(v.Val)
	case *sqlparser.UnaryExpr:
		if s := literal(v.Expr); s != "" && v.Operator == "-" {
			return "-" + s
		}
	}
	return ""
}

// clauseOf names, as MySQL's 1054 and 1052 do, the clause of statement
// query where column col appears first: "field list", "where clause",
// "on clause", "group statement", "having clause" or "order clause".
func clauseOf(query, col string) string {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return "field list"
	}
	name := col
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	uses := func(nodes ...sqlparser.SQLNode) bool {
		found := false
		for _, n := range nodes {
			if n == nil {
				continue
			}
			_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
				if c, ok := n.(*sqlparser.ColName); ok && strings.EqualFold(c.Name.String(), name) {
					found = true
					return false, nil
				}
				return !found, nil
			}, n)
		}
		return found
	}
	onClause := func(from sqlparser.TableExprs) bool {
		found := false
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if j, ok := n.(*sqlparser.JoinTableExpr); ok && j.Condition.On != nil && uses(j.Condition.On) {
				found = true
			}
			return !found, nil
		}, from)
		return found
	}
	switch s := stmt.(type) {
	case *sqlparser.Select:
		switch {
		case uses(s.SelectExprs):
			return "field list"
		case s.Where != nil && uses(s.Where):
			return "where clause"
		case onClause(s.From):
			return "on clause"
		case uses(s.GroupBy):
			return "group statement"
		case s.Having != nil && uses(s.Having):
			return "having clause"
		case uses(s.OrderBy):
			return "order clause"
		}
	case *sqlparser.Update:
		switch {
		case uses(s.Exprs):
			return "field list"
		case s.Where != nil && uses(s.Where):
			return "where clause"
		case uses(s.OrderBy):
			return "order clause"
		}
	case *sqlparser.Delete:
		switch {
		case s.Where != nil && uses(s.Where):
			return "where clause"
		case uses(s.OrderBy):
			return "order clause"
		}
	}
	return "field list"
}

// mismatchedRow is the 1-based row of an INSERT ... VALUES whose value
// count differs from its column count (1 when not found).
func mismatchedRow(tableOf tableLookup, curDB, query string) int {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return 1
	}
	ins, ok := stmt.(*sqlparser.Insert)
	if !ok {
		return 1
	}
	v, ok := ins.Rows.(*sqlparser.AliasedValues)
	if !ok {
		return 1
	}
	n := len(ins.Columns)
	if n == 0 && tableOf != nil {
		db := ins.Table.DbQualifier.String()
		if db == "" {
			db = curDB
		}
		if t, ok := tableOf(db, ins.Table.Name.String()); ok {
			n = len(t.Columns)
		}
	}
	for i, row := range v.Values {
		if len(row) != n {
			return i + 1
		}
	}
	return 1
}

// columnWithLength names the column a CREATE or ALTER TABLE declares with
// length n.
func columnWithLength(query, n string) string {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return ""
	}
	var ddls []*sqlparser.DDL
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		ddls = []*sqlparser.DDL{s}
	case *sqlparser.AlterTable:
		ddls = s.Statements
	}
	for _, d := range ddls {
		if d.TableSpec == nil {
			continue
		}
		for _, cd := range d.TableSpec.Columns {
			if cd.Type.Length != nil && string(cd.Type.Length.Val) == n {
				return cd.Name.String()
			}
		}
	}
	return ""
}

// setVariable names the variable of a SET statement of one variable.
func setVariable(query string) string {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return ""
	}
	s, ok := stmt.(*sqlparser.Set)
	if !ok || len(s.Exprs) != 1 {
		return ""
	}
	return strings.TrimPrefix(s.Exprs[0].Name.Name.String(), "@@")
}

// selectPosition is the 1-based position in a SELECT's list of the first
// expression that uses column col ("t.c" or "c"); 1 when not found.
func selectPosition(query, col string) int {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return 1
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok {
		return 1
	}
	name := col
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	for i, e := range sel.SelectExprs {
		found := false
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if c, ok := n.(*sqlparser.ColName); ok && strings.EqualFold(c.Name.String(), name) {
				found = true
			}
			return !found, nil
		}, e)
		if found {
			return i + 1
		}
	}
	return 1
}
