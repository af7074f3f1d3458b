package sql

import (
	"fmt"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// CREATE FUNCTION, DROP FUNCTION and SHOW CREATE FUNCTION reach
// go-mysql-server as ast.InjectedStatement nodes that routineParser makes
// of the text its grammar refuses; each runs as an ordinary statement
// (privileges, transaction, the metadata lock through Database.updateDef).

// errSyntax is MySQL's 1064 for a statement that stops making sense at near.
func errSyntax(near string) error {
	return mysql.NewSQLError(mysql.ERParseError, "42000",
		"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line 1", near)
}

type routineKind int

const (
	createFunction routineKind = iota
	dropFunction
	showCreateFunction
)

// routineNode is one of the statements on stored functions.
type routineNode struct {
	kind     routineKind
	db, name string
	ifExists bool // DROP ... IF EXISTS, CREATE ... IF NOT EXISTS
	def      *funcDef
	e        *Engine
}

var _ gms.ExecSourceRel = (*routineNode)(nil)

func (n *routineNode) WithResolvedChildren([]any) (any, error) { return n, nil }
func (n *routineNode) Resolved() bool                          { return true }
func (n *routineNode) Children() []gms.Node                    { return nil }
func (n *routineNode) IsReadOnly() bool                        { return n.kind == showCreateFunction }
func (n *routineNode) String() string {
	return [...]string{"CREATE FUNCTION ", "DROP FUNCTION ", "SHOW CREATE FUNCTION "}[n.kind] + n.name
}

func (n *routineNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *routineNode) Schema() gms.Schema {
	if n.kind != showCreateFunction {
		return types.OkResultSchema
	}
	var sch gms.Schema
	for _, c := range []string{"Function", "sql_mode", "Create Function", "character_set_client", "collation_connection", "Database Collation"} {
		sch = append(sch, &gms.Column{Name: c, Type: types.LongText, Nullable: c == "Create Function"})
	}
	return sch
}

func (n *routineNode) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	name := n.db
	if name == "" {
		name = ctx.GetCurrentDatabase()
	}
	if name == "" {
		return nil, errNoDB()
	}
	gdb, err := (&Provider{e: n.e}).Database(ctx, name)
	if err != nil {
		return nil, err
	}
	d := gdb.(*Database)
	switch n.kind {
	case createFunction:
		err = d.createFunction(ctx, n)
	case dropFunction:
		err = d.dropFunction(ctx, n)
	default:
		return d.showCreateFunction(ctx, n.name)
	}
	if err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.Row{types.NewOkResult(0)}), nil
}

func (d *Database) createFunction(ctx *gms.Context, n *routineNode) error {
	now := time.Now().UTC()
	text := n.def.text
	if n.def.definer == "" {
		// As MySQL, which keeps and shows the definer of every routine.
		c := ctx.Session.Client()
		text = text[:len("CREATE")] + fmt.Sprintf(" DEFINER=`%s`@`%s`", c.User, c.Address) + text[len("CREATE"):]
	}
	o := catalog.Object{Name: n.def.name, Create: text, SQLMode: sqlMode(ctx), Created: now, Modified: now}
	exists := errFuncExists(n.def.name)
	err := d.updateDef(ctx, func(db *catalog.Database) error { return addObject(&db.Functions, o, exists) })
	if err == exists && n.ifExists {
		ctx.Session.Warn(&gms.Warning{Level: "Note", Code: 1304, Message: fmt.Sprintf("FUNCTION %s already exists", n.def.name)})
		return nil
	}
	return err
}

func (d *Database) dropFunction(ctx *gms.Context, n *routineNode) error {
	missing := errFuncMissing(d.def.Name + "." + n.name)
	err := d.updateDef(ctx, func(db *catalog.Database) error { return dropObject(&db.Functions, n.name, missing) })
	if err == missing && n.ifExists {
		ctx.Session.Warn(&gms.Warning{Level: "Note", Code: 1305, Message: fmt.Sprintf("FUNCTION %s.%s does not exist", d.def.Name, n.name)})
		return nil
	}
	return err
}

func (d *Database) showCreateFunction(ctx *gms.Context, name string) (gms.RowIter, error) {
	db := d.current(ctx)
	i := findObject(db.Functions, name)
	if i < 0 {
		return nil, errFuncMissing(name)
	}
	o := db.Functions[i]
	cs, _ := ctx.GetSessionVariable(ctx, "character_set_client")
	cc, _ := ctx.GetSessionVariable(ctx, "collation_connection")
	coll := db.Collation
	if coll == "" {
		coll = gms.Collation_Default.String()
	}
	return gms.RowsToRowIter(gms.Row{o.Name, o.SQLMode, o.Create, fmt.Sprint(cs), fmt.Sprint(cc), coll}), nil
}

// routineStatement reads a statement on stored functions at the start of
// q: the node for it and the index of the text after it and its ';' (0
// when there is none). ok is false when q is not one.
func (e *Engine) routineStatement(q string, o ast.ParserOptions) (stmt ast.Statement, next int, ok bool, err error) {
	toks, tok := tokenizeOpts(q, o.AnsiQuotes)
	if !tok || len(toks) < 3 {
		return nil, 0, false, nil
	}
	var n *routineNode
	switch {
	case toks[0].typ == ast.CREATE:
		def, next, ok, err := parseCreateFunction(q, o)
		if !ok || err != nil {
			return nil, 0, ok, err
		}
		n = &routineNode{kind: createFunction, db: def.db, name: def.name, ifExists: def.ifNotExists, def: def, e: e}
		return ast.InjectedStatement{Statement: n, Auth: routineAuth(ast.AuthType_CREATE_ROUTINE, n.db)}, next, true, nil
	case toks[0].typ == ast.DROP && toks[1].typ == ast.FUNCTION:
		n = &routineNode{kind: dropFunction}
		toks = toks[2:]
		if len(toks) > 2 && toks[0].typ == ast.IF && toks[1].typ == ast.EXISTS {
			n.ifExists, toks = true, toks[2:]
		}
	case toks[0].typ == ast.SHOW && toks[1].typ == ast.CREATE && len(toks) > 3 && toks[2].typ == ast.FUNCTION:
		n = &routineNode{kind: showCreateFunction}
		toks = toks[3:]
	default:
		return nil, 0, false, nil
	}
	n.e = e
	if len(toks) > 2 && toks[1].typ == '.' {
		n.db, toks = toks[0].val, toks[2:]
	}
	n.name = toks[0].val
	switch {
	case len(toks) == 1:
	case toks[1].typ == ';':
		next = toks[1].end
	default:
		return nil, 0, true, errSyntax(q[toks[1].start:])
	}
	auth := routineAuth(ast.AuthType_ALTER_ROUTINE, n.db)
	if n.kind == showCreateFunction {
		auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE}
	}
	return ast.InjectedStatement{Statement: n, Auth: auth}, next, true, nil
}

// routineAuth checks the privilege t on db (the current database when
// empty).
func routineAuth(t string, db string) ast.AuthInformation {
	return ast.AuthInformation{AuthType: t, TargetType: ast.AuthTargetType_DatabaseIdentifiers, TargetNames: []string{db}}
}

// routineTable is go-mysql-server's information_schema.routines.
type routineTable interface {
	gms.CatalogTable
	AssignProcedures(p map[string][]*plan.Procedure) gms.Table
}

// routinesTable is information_schema.routines with a row for each stored
// function after go-mysql-server's rows for procedures (SHOW FUNCTION
// STATUS reads it too).
type routinesTable struct {
	routineTable
	e *Engine
}

func (t *routinesTable) wrap(in gms.Table) gms.Table {
	if rt, ok := in.(routineTable); ok {
		return &routinesTable{routineTable: rt, e: t.e}
	}
	return in
}

func (t *routinesTable) AssignCatalog(cat gms.Catalog) gms.Table {
	return t.wrap(t.routineTable.AssignCatalog(cat))
}

func (t *routinesTable) AssignProcedures(p map[string][]*plan.Procedure) gms.Table {
	return t.wrap(t.routineTable.AssignProcedures(p))
}

func (t *routinesTable) PartitionRows(ctx *gms.Context, part gms.Partition) (gms.RowIter, error) {
	it, err := t.routineTable.PartitionRows(ctx, part)
	if err != nil {
		return nil, err
	}
	rows, err := gms.RowIterToRows(ctx, it)
	if err != nil {
		return nil, err
	}
	for _, db := range t.e.schemaFor(ctx).Databases() {
		for _, o := range db.Functions {
			if row, ok := t.functionRow(ctx, db, o); ok {
				rows = append(rows, row)
			}
		}
	}
	return gms.RowsToRowIter(rows...), nil
}

func (t *routinesTable) functionRow(ctx *gms.Context, db *catalog.Database, o catalog.Object) (gms.Row, bool) {
	def, err := loadFuncDef(o.Create, o.SQLMode)
	if err != nil {
		return nil, false
	}
	sch := t.Schema()
	row := make(gms.Row, len(sch))
	set := func(col string, v any) {
		if i := sch.IndexOfColName(col); i >= 0 {
			row[i] = v
		}
	}
	cs, _ := ctx.GetSessionVariable(ctx, "character_set_client")
	cc, _ := ctx.GetSessionVariable(ctx, "collation_connection")
	coll := db.Collation
	if coll == "" {
		coll = gms.Collation_Default.String()
	}
	dtd := strings.ToLower(def.returns.String())
	dataType, _, _ := strings.Cut(dtd, "(")
	dataType, _, _ = strings.Cut(dataType, " ")
	for col, v := range map[string]any{"SPECIFIC_NAME": o.Name, "ROUTINE_CATALOG": "def", "ROUTINE_SCHEMA": db.Name,
		"ROUTINE_NAME": o.Name, "ROUTINE_TYPE": "FUNCTION", "DATA_TYPE": dataType, "DTD_IDENTIFIER": dtd,
		"ROUTINE_BODY": "SQL", "ROUTINE_DEFINITION": def.bodyText, "EXTERNAL_LANGUAGE": "SQL", "PARAMETER_STYLE": "SQL",
		"IS_DETERMINISTIC": def.deterministic, "SQL_DATA_ACCESS": def.dataAccess, "SECURITY_TYPE": def.security,
		"CREATED": o.Created.UTC(), "LAST_ALTERED": o.Modified.UTC(), "SQL_MODE": o.SQLMode, "ROUTINE_COMMENT": def.comment,
		"DEFINER": strings.ReplaceAll(def.definer, "`", ""), "CHARACTER_SET_CLIENT": fmt.Sprint(cs), "COLLATION_CONNECTION": fmt.Sprint(cc),
		"DATABASE_COLLATION": coll} {
		set(col, v)
	}
	return row, true
}
