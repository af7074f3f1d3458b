package sql

import (
	"context"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Stored functions (CREATE FUNCTION ... RETURNS type body), which
// go-mysql-server's grammar lacks. A function's header is read here; its
// parameters, characteristics and body are the grammar's own, parsed as
// those of a procedure with the same text (CREATE PROCEDURE takes the
// same parameter list and the same body, RETURN included). The catalog
// keeps the CREATE FUNCTION text with the database (catalog.Database's
// Functions), and a call runs the body in go-mysql-server's procedure
// interpreter (storedcall.go).

// funcDef is a parsed CREATE FUNCTION statement.
type funcDef struct {
	db, name    string // db is empty when the statement does not name one
	ifNotExists bool
	text        string // the statement, as given
	procText    string // the same as CREATE PROCEDURE, for the grammar
	params      []ast.ProcedureParam
	paramTypes  []gms.Type
	returns     gms.Type
	returnsText string
	deterministic,
	dataAccess string // information_schema.routines' IS_DETERMINISTIC and SQL_DATA_ACCESS
	security, comment string
	definer           string // as the statement gives it, or empty
	bodyText          string
}

// errNoDB is MySQL's 1046.
func errNoDB() error { return mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected") }

func errFuncExists(name string) error {
	return mysql.NewSQLError(1304, "42000", "FUNCTION %s already exists", name)
}

func errFuncMissing(qualified string) error {
	return mysql.NewSQLError(1305, "42000", "FUNCTION %s does not exist", qualified)
}

// routineHead is where a CREATE FUNCTION statement's parts are among its
// tokens.
type routineHead struct {
	fn, name, open, close, typeEnd int
	db                             string
	ifNotExists                    bool
}

// parseCreateFunction reads a CREATE FUNCTION statement at the start of
// q; next is the index of the text after it and its ';' (0 when there is
// none). ok is false when q is not one.
func parseCreateFunction(q string, o ast.ParserOptions) (def *funcDef, next int, ok bool, err error) {
	toks, tok := tokenizeOpts(q, o.AnsiQuotes)
	if !tok {
		return nil, 0, false, nil
	}
	h, ok := createFunctionHead(toks)
	if !ok {
		return nil, 0, false, nil
	}
	head := "CREATE " + q[toks[1].start:toks[h.fn].start] + "PROCEDURE " + q[toks[h.name].start:toks[h.open].start] +
		withoutCharsets(q, toks[h.open:h.close+1]) + " "
	rest := toks[h.typeEnd].start
	procText := head + q[rest:]
	stmt, ri, perr := ast.ParseOneWithOptions(context.Background(), procText, o)
	if perr != nil {
		return nil, 0, true, perr
	}
	ddl, isDDL := stmt.(*ast.DDL)
	if !isDDL || ddl.ProcedureSpec == nil {
		return nil, 0, true, errSyntax(q[toks[h.typeEnd].start:])
	}
	delta := len(head) - rest
	end := len(q)
	if ri > 0 && ri-delta <= len(q) {
		next, end = ri-delta, ri-delta
	}
	def = &funcDef{db: h.db, name: ddl.ProcedureSpec.ProcName.Name.String(), ifNotExists: h.ifNotExists,
		text: strings.TrimRight(strings.TrimSpace(q[:end]), "; \t\r\n"), procText: procText[:max(0, end+delta)],
		params: ddl.ProcedureSpec.Params, definer: ddl.ProcedureSpec.Definer, returnsText: strings.TrimSpace(q[toks[h.close+1].end:toks[h.typeEnd].start])}
	def.bodyText = bodyText(ddl, procText)
	if err := def.resolve(ddl); err != nil {
		return nil, 0, true, err
	}
	return def, next, true, nil
}

// bodyText is the text of the body of ddl, a CREATE PROCEDURE parsed from
// procText.
func bodyText(ddl *ast.DDL, procText string) string {
	start, end := ddl.SubStatementPositionStart, ddl.SubStatementPositionEnd
	if end <= start || end > len(procText) {
		return ""
	}
	// The grammar's body position of a labelled block is past the
	// label's first character.
	if b, ok := ddl.ProcedureSpec.Body.(*ast.BeginEndBlock); ok && b.Label != "" {
		if i := strings.LastIndex(strings.ToLower(procText[:min(end, start+len(b.Label))]), strings.ToLower(b.Label)); i >= 0 {
			start = i
		}
	}
	return procText[start:end]
}

// createFunctionHead finds the parts of CREATE [DEFINER = user] FUNCTION
// [IF NOT EXISTS] [db.]name (params) RETURNS type.
func createFunctionHead(toks []token) (routineHead, bool) {
	var h routineHead
	if len(toks) < 6 || toks[0].typ != ast.CREATE {
		return h, false
	}
	h.fn = -1
	for i := 1; i < len(toks) && i < 12; i++ {
		if toks[i].typ == ast.FUNCTION {
			h.fn = i
			break
		}
		if i == 1 && toks[i].typ != ast.DEFINER {
			return h, false
		}
	}
	if h.fn < 0 {
		return h, false
	}
	i := h.fn + 1
	if i+2 < len(toks) && toks[i].typ == ast.IF && toks[i+1].typ == ast.NOT && toks[i+2].typ == ast.EXISTS {
		h.ifNotExists, i = true, i+3
	}
	if i+1 < len(toks) && toks[i+1].typ == '.' {
		h.db, i = toks[i].val, i+2
	}
	h.name, h.open = i, i+1
	if h.open >= len(toks) || toks[h.open].typ != '(' {
		return h, false
	}
	if h.close = matchParen(toks, h.open); h.close < 0 || h.close+2 >= len(toks) || !strings.EqualFold(toks[h.close+1].val, "returns") {
		return h, false
	}
	h.typeEnd = h.close + 2
	for h.typeEnd < len(toks) && !startsRoutineBody(toks, h.typeEnd) {
		h.typeEnd++
	}
	return h, h.typeEnd > h.close+2 && h.typeEnd < len(toks)
}

// withoutCharsets is the text of toks without their CHARACTER SET,
// CHARSET and COLLATE clauses, which a procedure's parameters cannot
// have in vitess's grammar (the function's text keeps them).
func withoutCharsets(q string, toks []token) string {
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		skip := 0
		switch v := strings.ToLower(toks[i].val); {
		case v == "character" && i+2 < len(toks) && strings.EqualFold(toks[i+1].val, "set"):
			skip = 3
		case v == "charset" || v == "collate":
			skip = 2
		}
		if skip > 0 && i+skip <= len(toks) {
			i += skip - 1
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q[toks[i].start:toks[i].end])
	}
	return b.String()
}

// startsRoutineBody says the token at i begins the characteristics or the
// body of a routine, so ends its RETURNS type.
func startsRoutineBody(toks []token, i int) bool {
	switch strings.ToLower(toks[i].val) {
	case "comment", "language", "not", "deterministic", "contains", "no", "reads", "modifies", "sql", "return", "begin":
		return true
	}
	return i+1 < len(toks) && toks[i+1].typ == ':'
}

// resolve fills in the types and characteristics of a parsed function.
func (def *funcDef) resolve(ddl *ast.DDL) error {
	for _, p := range def.params {
		t, err := types.ColumnTypeToType(&p.Type)
		if err != nil {
			return err
		}
		def.paramTypes = append(def.paramTypes, t)
	}
	rt, err := returnType(def.returnsText)
	if err != nil {
		return err
	}
	def.returns = rt
	def.deterministic, def.dataAccess, def.security = "NO", "CONTAINS SQL", "DEFINER"
	for _, c := range ddl.ProcedureSpec.Characteristics {
		switch c.Type {
		case ast.CharacteristicValue_Deterministic:
			def.deterministic = "YES"
		case ast.CharacteristicValue_NotDeterministic:
			def.deterministic = "NO"
		case ast.CharacteristicValue_Comment:
			def.comment = c.Comment
		case ast.CharacteristicValue_NoSql:
			def.dataAccess = "NO SQL"
		case ast.CharacteristicValue_ReadsSqlData:
			def.dataAccess = "READS SQL DATA"
		case ast.CharacteristicValue_ModifiesSqlData:
			def.dataAccess = "MODIFIES SQL DATA"
		case ast.CharacteristicValue_SqlSecurityInvoker:
			def.security = "INVOKER"
		}
	}
	return checkFuncBody(def, ddl.ProcedureSpec.Body)
}

// returnType is the type a RETURNS clause names, read as a column's.
func returnType(text string) (gms.Type, error) {
	stmt, err := ast.Parse("CREATE TABLE t (c " + text + ")")
	if err != nil {
		return nil, errSyntax(text)
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.TableSpec == nil || len(ddl.TableSpec.Columns) != 1 {
		return nil, errSyntax(text)
	}
	return types.ColumnTypeToType(&ddl.TableSpec.Columns[0].Type)
}

// checkFuncBody refuses, as MySQL does, a body without RETURN (1320) or
// with a statement that returns a result set (1415).
func checkFuncBody(def *funcDef, body ast.Statement) error {
	returns, resultSet := false, false
	walkStatements(body, func(s ast.Statement) {
		switch s := s.(type) {
		case *ast.Return:
			returns = true
		case *ast.Select:
			resultSet = resultSet || s.Into == nil
		case *ast.SetOp, *ast.Show, *ast.Explain, *ast.Call:
			resultSet = true
		}
	})
	if resultSet {
		return mysql.NewSQLError(1415, "0A000", "Not allowed to return a result set from a function")
	}
	if !returns {
		return mysql.NewSQLError(1320, "42000", "No RETURN found in FUNCTION %s", def.name)
	}
	return nil
}

// walkStatements calls fn on s and on every statement inside it.
func walkStatements(s ast.Statement, fn func(ast.Statement)) {
	fn(s)
	each := func(list ast.Statements) {
		for _, c := range list {
			walkStatements(c, fn)
		}
	}
	switch s := s.(type) {
	case *ast.BeginEndBlock:
		each(s.Statements)
	case *ast.IfStatement:
		for _, c := range s.Conditions {
			each(c.Statements)
		}
		each(s.Else)
	case *ast.CaseStatement:
		for _, c := range s.Cases {
			each(c.Statements)
		}
		each(s.Else)
	case *ast.While:
		each(s.Statements)
	case *ast.Repeat:
		each(s.Statements)
	case *ast.Loop:
		each(s.Statements)
	}
}

// funcDefs caches parsed definitions by their text: a call parses its
// function's body afresh (the interpreter changes it), not the header.
var funcDefs sync.Map

// loadFuncDef parses a stored function's CREATE text.
func loadFuncDef(text, sqlMode string) (*funcDef, error) {
	key := sqlMode + "\x00" + text
	if d, ok := funcDefs.Load(key); ok {
		return d.(*funcDef), nil
	}
	def, _, ok, err := parseCreateFunction(text, gms.NewSqlModeFromString(sqlMode).ParserOptions())
	if err == nil && !ok {
		err = errSyntax(text)
	}
	if err != nil {
		return nil, err
	}
	funcDefs.Store(key, def)
	return def, nil
}
