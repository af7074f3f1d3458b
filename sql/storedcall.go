package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A call of a stored function runs its body in go-mysql-server's
// procedure interpreter (package procedures), which has no RETURN: each
// RETURN e becomes SELECT e AS reorgdb_return followed by a LEAVE of a
// block around the whole body, whose first statements DECLARE the
// parameters with the arguments' values. A body cannot return a result
// set otherwise (checkFuncBody), so the interpreter's last result set is
// the function's value. The body's statements run in the calling
// statement's transaction and see the function's database as the
// current one, as in MySQL.

const (
	returnColumn = "reorgdb_return"
	funcLabel    = "reorgdb_function"
)

var builtinNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, f := range function.BuiltIns {
		m[strings.ToLower(f.FunctionName())] = true
	}
	return m
})

// storedFunction is the stored function called name in the statement's
// current database. A built-in function of the same name wins, as in
// MySQL for an unqualified call.
func (e *Engine) storedFunction(ctx *gms.Context, name string) (gms.Function, bool) {
	if ctx == nil || ctx.Session == nil {
		return nil, false
	}
	dbName, fname, qualified := strings.Cut(name, qualifiedSep)
	if !qualified {
		if builtinNames()[name] {
			return nil, false
		}
		dbName, fname = ctx.GetCurrentDatabase(), name
	}
	db, ok := e.schemaFor(ctx).Database(dbName)
	i := -1
	if ok {
		i = findObject(db.Functions, fname)
	}
	if i < 0 {
		if qualified {
			return missingFunction(name, dbName+"."+fname), true
		}
		return nil, false
	}
	o := db.Functions[i]
	def, err := loadFuncDef(o.Create, o.SQLMode)
	if err != nil {
		e.log.Warn("stored function does not parse", "db", db.Name, "function", o.Name, "err", err)
		return nil, false
	}
	return gms.FunctionN{Name: name, Fn: func(args ...gms.Expression) (gms.Expression, error) {
		if len(args) != len(def.params) {
			return nil, mysql.NewSQLError(1318, "42000", "Incorrect number of arguments for FUNCTION %s.%s; expected %d, got %d",
				db.Name, def.name, len(def.params), len(args))
		}
		return &storedCall{def: def, db: db.Name, sqlMode: o.SQLMode, args: args, e: e, fast: &fastCache{}}, nil
	}}, true
}

// missingFunction is a function whose calls fail as a call of a
// function that does not exist does.
func missingFunction(name, qualified string) gms.Function {
	return gms.FunctionN{Name: name, Fn: func(...gms.Expression) (gms.Expression, error) {
		return nil, errFuncMissing(qualified)
	}}
}

// storedCall is a call of a stored function.
type storedCall struct {
	def     *funcDef
	db      string
	sqlMode string
	args    []gms.Expression
	e       *Engine
	fast    *fastCache // shared by the copies WithChildren makes
}

// fastCache holds a call's fastBody, bound on its first evaluation.
type fastCache struct {
	once sync.Once
	expr gms.Expression
}

var (
	_ gms.FunctionExpression         = (*storedCall)(nil)
	_ gms.NonDeterministicExpression = (*storedCall)(nil)
)

func (c *storedCall) Type() gms.Type             { return c.def.returns }
func (c *storedCall) IsNullable() bool           { return true }
func (c *storedCall) Children() []gms.Expression { return c.args }
func (c *storedCall) FunctionName() string       { return c.def.name }
func (c *storedCall) Description() string        { return "stored function " + c.def.name }
func (c *storedCall) IsNonDeterministic() bool   { return true }
func (c *storedCall) Resolved() bool {
	for _, a := range c.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (c *storedCall) String() string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", c.def.name, strings.Join(args, ","))
}

func (c *storedCall) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != len(c.args) {
		return nil, gms.ErrInvalidChildrenNumber.New(c, len(children), len(c.args))
	}
	n := *c
	n.args = children
	return &n, nil
}

// callChain is the functions being run on a context, outermost first.
type callChain struct{}

func (c *storedCall) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	me := strings.ToLower(c.db + "." + c.def.name)
	chain, _ := ctx.Context.Value(callChain{}).([]string)
	if slices.Contains(chain, me) {
		return nil, mysql.NewSQLError(1424, "HY000", "Recursive stored functions and triggers are not allowed.")
	}
	args := make(gms.Row, len(c.args))
	for i, a := range c.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if args[i], _, err = c.def.paramTypes[i].Convert(ctx, v); err != nil {
			return nil, err
		}
	}
	sess := ctx.Session
	prevIgnore, prevDB := sess.GetIgnoreAutoCommit(), sess.GetCurrentDatabase()
	sess.SetIgnoreAutoCommit(true)
	sess.SetCurrentDatabase(c.db)
	defer func() {
		sess.SetIgnoreAutoCommit(prevIgnore)
		sess.SetCurrentDatabase(prevDB)
	}()
	ctx = ctx.WithContext(context.WithValue(ctx.Context, callChain{}, append(slices.Clone(chain), me)))
	if expr := c.fastBody(ctx); expr != nil {
		v, err := expr.Eval(ctx, args)
		if err != nil {
			return nil, err
		}
		v, _, err = c.def.returns.Convert(ctx, v)
		return v, err
	}
	decls := make(ast.Statements, len(args))
	for i, v := range args {
		var err error
		if decls[i], err = c.declare(ctx, i, v); err != nil {
			return nil, err
		}
	}
	ops, err := c.ops(ctx, decls)
	if err != nil {
		return nil, err
	}
	return c.run(ctx, ops)
}

// fastBody is, for a body that is RETURN e where e has no subquery, e
// bound once with the parameters read from the row of arguments: such a
// call needs neither the interpreter nor a statement of its own. nil for
// other bodies.
func (c *storedCall) fastBody(ctx *gms.Context) gms.Expression {
	c.fast.once.Do(func() { c.fast.expr = c.bindReturn(ctx) })
	return c.fast.expr
}

func (c *storedCall) bindReturn(ctx *gms.Context) (expr gms.Expression) {
	stmt, _, err := ast.ParseOneWithOptions(ctx, c.def.procText, gms.NewSqlModeFromString(c.sqlMode).ParserOptions())
	if err != nil {
		return nil
	}
	ddl, _ := stmt.(*ast.DDL)
	if ddl == nil || ddl.ProcedureSpec == nil {
		return nil
	}
	ret, ok := ddl.ProcedureSpec.Body.(*ast.Return)
	if !ok {
		return nil
	}
	qualifyCalls(c.def.procText, ret)
	bindings := map[string]gms.Expression{}
	subquery := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			subquery = true
		case *ast.ColName:
			if i := c.def.param(n); i >= 0 && n.Qualifier.IsEmpty() {
				name := fmt.Sprintf("reorgdb_p%d", i)
				n.StoredProcVal = ast.NewValArg([]byte(":" + name))
				bindings[name] = argRef{i: i, typ: c.def.paramTypes[i], name: c.def.params[i].Name}
			}
		}
		return !subquery, nil
	}, ret.Expr)
	if subquery {
		return nil
	}
	b := planbuilder.New(ctx, c.e.SQL.Analyzer.Catalog, c.e.SQL.EventScheduler, c.e.SQL.Parser)
	b.SetBindingsWithExpr(bindings)
	node, _, err := b.BindOnly(&ast.Select{SelectExprs: ast.SelectExprs{&ast.AliasedExpr{Expr: ret.Expr}}}, "", nil)
	if err != nil {
		return nil
	}
	p, ok := node.(*plan.Project)
	if !ok || len(p.Projections) != 1 {
		return nil
	}
	expr = p.Projections[0]
	if a, ok := expr.(*expression.Alias); ok {
		expr = a.Child
	}
	return expr
}

// param is the index of the parameter n names, or -1.
func (def *funcDef) param(n *ast.ColName) int {
	for i, p := range def.params {
		if strings.EqualFold(p.Name, n.Name.String()) {
			return i
		}
	}
	return -1
}

// argRef is parameter i of a stored function in fastBody's expression:
// the row it is evaluated on holds the arguments.
type argRef struct {
	i    int
	typ  gms.Type
	name string
}

func (a argRef) Resolved() bool                                { return true }
func (a argRef) String() string                                { return a.name }
func (a argRef) Type() gms.Type                                { return a.typ }
func (a argRef) IsNullable() bool                              { return true }
func (a argRef) Children() []gms.Expression                    { return nil }
func (a argRef) Eval(_ *gms.Context, row gms.Row) (any, error) { return row[a.i], nil }

func (a argRef) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(a, len(children), 0)
	}
	return a, nil
}

// run interprets the body and converts its RETURN value to the
// function's type.
func (c *storedCall) run(ctx *gms.Context, ops []*procedures.InterpreterOperation) (any, error) {
	n := &funcInterp{ops: ops, runner: c.e.SQL}
	it, _, err := procedures.Call(ctx, n)
	if err != nil {
		return nil, err
	}
	defer it.Close(ctx)
	if len(n.sch) != 1 || n.sch[0].Name != returnColumn {
		return nil, mysql.NewSQLError(1321, "2F005", "FUNCTION %s ended without RETURN", c.def.name)
	}
	r, err := it.Next(ctx)
	if err != nil {
		return nil, err
	}
	v, _, err := c.def.returns.Convert(ctx, r[0])
	return v, err
}

// declare is the DECLARE of parameter i with the value v, of its type.
func (c *storedCall) declare(ctx *gms.Context, i int, v any) (ast.Statement, error) {
	p, t := c.def.params[i], c.def.paramTypes[i]
	vt := p.Type
	var err error
	if vt.Default, err = literal(ctx, t, v); err != nil {
		return nil, err
	}
	return &ast.Declare{Variables: &ast.DeclareVariables{Names: []ast.ColIdent{ast.NewColIdent(p.Name)}, VarType: vt}}, nil
}

// literal is v, of type t, as a literal of the grammar; nil for NULL
// (a variable DECLAREd without a default is NULL).
func literal(ctx *gms.Context, t gms.Type, v any) (ast.Expr, error) {
	if v == nil {
		return nil, nil
	}
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	switch {
	case sv.IsNull():
		return nil, nil
	case sv.IsIntegral():
		return ast.NewIntVal(sv.Raw()), nil
	case sv.IsFloat() || sv.Type() == sqltypes.Decimal:
		return ast.NewFloatVal(sv.Raw()), nil
	}
	return ast.NewStrVal(sv.Raw()), nil
}

// ops are the interpreter's operations for the body, with decls first.
func (c *storedCall) ops(ctx *gms.Context, decls ast.Statements) ([]*procedures.InterpreterOperation, error) {
	stmt, _, err := ast.ParseOneWithOptions(ctx, c.def.procText, gms.NewSqlModeFromString(c.sqlMode).ParserOptions())
	if err != nil {
		return nil, err
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil {
		return nil, errSyntax(c.def.procText)
	}
	qualifyCalls(c.def.procText, ddl.ProcedureSpec.Body)
	body := prepareList(append(decls, ddl.ProcedureSpec.Body))
	return procedures.Parse(&ast.BeginEndBlock{Label: funcLabel, Statements: body})
}

// prepareBody replaces each RETURN e in s by SELECT e AS
// reorgdb_return and a LEAVE of the function's block, and makes the
// variables DECLAREd without DEFAULT NULL, as in MySQL (the interpreter
// gives them their type's zero value).
func prepareBody(s ast.Statement) ast.Statement {
	switch s := s.(type) {
	case *ast.Return:
		sel := &ast.Select{SelectExprs: ast.SelectExprs{&ast.AliasedExpr{Expr: s.Expr, As: ast.NewColIdent(returnColumn)}}}
		return &ast.BeginEndBlock{Statements: ast.Statements{sel, &ast.Leave{Label: funcLabel}}}
	case *ast.BeginEndBlock:
		s.Statements = prepareList(s.Statements)
	case *ast.IfStatement:
		for i := range s.Conditions {
			s.Conditions[i].Statements = prepareList(s.Conditions[i].Statements)
		}
		s.Else = prepareList(s.Else)
	case *ast.CaseStatement:
		for i := range s.Cases {
			s.Cases[i].Statements = prepareList(s.Cases[i].Statements)
		}
		s.Else = prepareList(s.Else)
	case *ast.While:
		s.Statements = prepareList(s.Statements)
	case *ast.Repeat:
		s.Statements = prepareList(s.Statements)
	case *ast.Loop:
		s.Statements = prepareList(s.Statements)
	}
	return s
}

func prepareList(l ast.Statements) ast.Statements {
	out := make(ast.Statements, 0, len(l))
	for _, s := range l {
		out = append(out, prepareBody(s))
		if d, ok := s.(*ast.Declare); ok && d.Variables != nil && d.Variables.VarType.Default == nil {
			for _, n := range d.Variables.Names {
				out = append(out, &ast.Set{Exprs: ast.SetVarExprs{&ast.SetVarExpr{Name: &ast.ColName{Name: n}, Expr: &ast.NullVal{}}}})
			}
		}
	}
	return out
}

// funcInterp is a function body for procedures.Call.
type funcInterp struct {
	ops    []*procedures.InterpreterOperation
	runner gms.StatementRunner
	sch    gms.Schema
}

var _ procedures.InterpreterNode = (*funcInterp)(nil)

func (n *funcInterp) GetAsOf() gms.Expression                                       { return nil }
func (n *funcInterp) GetRunner() gms.StatementRunner                                { return n.runner }
func (n *funcInterp) GetStatements() []*procedures.InterpreterOperation             { return n.ops }
func (n *funcInterp) SetStatementRunner(*gms.Context, gms.StatementRunner) gms.Node { return nil }
func (n *funcInterp) SetSchema(sch gms.Schema)                                      { n.sch = sch }

// qualifiedSep joins a database and a function name in the name a
// qualified call (db.f()) is looked up by: go-mysql-server looks
// functions up by name alone, in the current database.
const qualifiedSep = "\x00"

// qualifyCalls renames each db.f(...) call in stmt to carry db, for
// storedFunction. q is stmt's text: most texts have no such call, and are
// not walked.
func qualifyCalls(q string, stmt ast.SQLNode) {
	if stmt == nil || !mayHaveQualifiedCall(q) {
		return
	}
	visit := func(n ast.SQLNode) (bool, error) {
		if f, ok := n.(*ast.FuncExpr); ok && !f.Qualifier.IsEmpty() {
			f.Name = ast.NewColIdent(f.Qualifier.String() + qualifiedSep + f.Name.String())
			f.Qualifier = ast.TableIdent{}
		}
		return true, nil
	}
	_ = ast.Walk(visit, stmt)
	if ddl, ok := stmt.(*ast.DDL); ok {
		if ddl.TriggerSpec != nil {
			walkRoutine(ddl.TriggerSpec.Body, visit)
		}
		if ddl.ProcedureSpec != nil {
			walkRoutine(ddl.ProcedureSpec.Body, visit)
		}
	} else if s, ok := stmt.(ast.Statement); ok {
		walkRoutine(s, visit)
	}
}

// walkRoutine walks the statements of a routine body and the expressions
// of its compound statements, which ast.Walk leaves out (RETURN's, IF's
// and WHILE's conditions, CASE's values).
func walkRoutine(body ast.Statement, visit ast.Visit) {
	if body == nil {
		return
	}
	walkStatements(body, func(s ast.Statement) {
		_ = ast.Walk(visit, s)
		var exprs []ast.SQLNode
		switch s := s.(type) {
		case *ast.Return:
			exprs = append(exprs, s.Expr)
		case *ast.IfStatement:
			for _, c := range s.Conditions {
				exprs = append(exprs, c.Expr)
			}
		case *ast.While:
			exprs = append(exprs, s.Condition)
		case *ast.Repeat:
			exprs = append(exprs, s.Condition)
		case *ast.CaseStatement:
			exprs = append(exprs, s.Expr)
			for _, c := range s.Cases {
				exprs = append(exprs, c.Case)
			}
		}
		for _, e := range exprs {
			if e != nil {
				_ = ast.Walk(visit, e)
			}
		}
	})
}

// mayHaveQualifiedCall says whether some '.' is followed by a name and
// '(' in q.
func mayHaveQualifiedCall(q string) bool {
	for i := strings.IndexByte(q, '.'); i >= 0 && i+1 < len(q); {
		j := i + 1
		if q[j] == '`' {
			if k := strings.IndexByte(q[j+1:], '`'); k >= 0 {
				j += k + 2
			}
		} else {
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
		}
		for j < len(q) && (q[j] == ' ' || q[j] == '\t' || q[j] == '\n' || q[j] == '\r') {
			j++
		}
		if j > i+1 && j < len(q) && q[j] == '(' {
			return true
		}
		next := strings.IndexByte(q[i+1:], '.')
		if next < 0 {
			return false
		}
		i += next + 1
	}
	return false
}
