package sql

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/reorgdb/reorgdb/catalog"
)

// SHOW CREATE TABLE prints a literal default as go-mysql-server's
// converted value: an ENUM's index ('2' for 'b'), a SET's bits, a DECIMAL
// without its scale ('1.5' for 1.50). MySQL prints the value as written
// in the column's terms, and a dump must load back: DEFAULT '2' is not a
// member of ENUM('a','b'). So the statement is built from a schema whose
// such defaults are the display strings.

// rewrittenShowCreate marks the nodes showCreateTable made, which
// go-mysql-server then builds as usual.
var rewrittenShowCreate sync.Map

func (o *execOverride) showCreateTable(ctx *gms.Context, n *plan.ShowCreateTable, r gms.Row) (gms.RowIter, error) {
	if _, ok := rewrittenShowCreate.LoadAndDelete(n); ok || n.IsView {
		return nil, nil
	}
	fixed, changed, err := fixedDefaults(ctx, n.TargetSchema())
	if err != nil {
		return nil, err
	}
	parents := otherDBParents(ctx, n)
	all, invisible := invisibleIndexes(ctx, n)
	if !changed && parents == nil && invisible == nil {
		return nil, nil
	}
	var nn gms.Node = n
	if changed {
		if nn, err = n.WithTargetSchema(fixed); err != nil {
			return nil, err
		}
	}
	if invisible != nil {
		c := *nn.(*plan.ShowCreateTable)
		c.Indexes = all
		nn = &c
	}
	rewrittenShowCreate.Store(nn, struct{}{})
	defer rewrittenShowCreate.Delete(nn)
	it, err := o.base().Build(ctx, nn, r)
	if err != nil || parents == nil && invisible == nil {
		return it, err
	}
	return &qualifyParents{RowIter: it, parents: parents, invisible: invisible}, nil
}

// invisibleIndexes returns, when the table has invisible indexes, all
// its indexes (n.Indexes lacks the invisible ones) and the invisible
// ones' names; else nil, nil.
func invisibleIndexes(ctx *gms.Context, n *plan.ShowCreateTable) ([]gms.Index, []string) {
	rt, ok := n.Child.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	t, ok := rt.UnderlyingTable().(*Table)
	if !ok {
		return nil, nil
	}
	var names []string
	for _, ix := range t.m.indexes {
		if !ix.visible() && ix.state() == catalog.StatePublic {
			names = append(names, ix.name())
		}
	}
	if names == nil {
		return nil, nil
	}
	all, err := withAllIndexes(ctx, func() ([]gms.Index, error) { return t.GetIndexes(ctx) })
	if err != nil {
		return nil, nil
	}
	var out []gms.Index
	for _, ix := range all {
		if ix.ID() != "PRIMARY" { // go-mysql-server prints the primary key from the schema
			out = append(out, ix)
		}
	}
	return out, names
}

// fixedDefaults is sch with the literal defaults MySQL prints otherwise
// as display strings; changed says whether any is.
func fixedDefaults(ctx *gms.Context, sch gms.Schema) (gms.Schema, bool, error) {
	fixed := make(gms.Schema, len(sch))
	changed := false
	for i, col := range sch {
		fixed[i] = col
		s, ok, err := displayDefault(ctx, col)
		if err != nil || !ok {
			continue
		}
		c := col.Copy()
		lit := expression.NewLiteral(s, types.LongText)
		if c.Default, err = gms.NewColumnDefaultValue(lit, types.LongText, true, false, col.Nullable); err != nil {
			return nil, false, err
		}
		fixed[i], changed = c, true
	}
	return fixed, changed, nil
}

// otherDBParents maps the names of the table's foreign keys whose parent
// is in another database to that database. go-mysql-server prints the
// parent without its database, which MySQL prints then.
func otherDBParents(ctx *gms.Context, n *plan.ShowCreateTable) map[string]string {
	rt, ok := n.Child.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	t, ok := rt.UnderlyingTable().(*Table)
	if !ok {
		return nil
	}
	var out map[string]string
	for _, fk := range t.defNow(ctx).ForeignKeys {
		if !strings.EqualFold(fk.ParentDB, t.db.def.Name) {
			if out == nil {
				out = map[string]string{}
			}
			out[fk.Name] = fk.ParentDB
		}
	}
	return out
}

// qualifyParents adds the database to the parents of the foreign keys in
// parents, in SHOW CREATE TABLE's statement.
type qualifyParents struct {
	gms.RowIter
	parents   map[string]string
	invisible []string // indexes to mark /*!80000 INVISIBLE */, as MySQL prints them
}

func (q *qualifyParents) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := q.RowIter.Next(ctx)
	if err != nil || len(row) < 2 {
		return row, err
	}
	stmt, ok := row[1].(string)
	if !ok {
		return row, nil
	}
	for name, db := range q.parents {
		at := strings.Index(stmt, "CONSTRAINT "+gms.QuoteIdentifier(name)+" FOREIGN KEY (")
		ref := -1
		if at >= 0 {
			ref = strings.Index(stmt[at:], ") REFERENCES ")
		}
		if ref < 0 {
			continue
		}
		pos := at + ref + len(") REFERENCES ")
		stmt = stmt[:pos] + gms.QuoteIdentifier(db) + "." + stmt[pos:]
	}
	stmt = markInvisible(stmt, q.invisible)
	out := slices.Clone(row)
	out[1] = stmt
	return out, nil
}

// markInvisible adds MySQL 8's INVISIBLE comment to the lines of the
// named indexes in a CREATE TABLE statement.
func markInvisible(stmt string, names []string) string {
	if names == nil {
		return stmt
	}
	lines := strings.Split(stmt, "\n")
	for i, l := range lines {
		for _, name := range names {
			key := "KEY " + gms.QuoteIdentifier(name) + " ("
			if !strings.HasPrefix(strings.TrimLeft(l, " "), key) && !strings.HasPrefix(strings.TrimLeft(l, " "), "UNIQUE "+key) {
				continue
			}
			comma := strings.HasSuffix(l, ",")
			l = strings.TrimSuffix(l, ",") + " /*!80000 INVISIBLE */"
			if comma {
				l += ","
			}
			lines[i] = l
		}
	}
	return strings.Join(lines, "\n")
}

// displayDefault is how MySQL prints col's literal default, for the types
// go-mysql-server prints otherwise.
func displayDefault(ctx *gms.Context, col *gms.Column) (string, bool, error) {
	d := col.Default
	if d == nil || !d.IsLiteral() || col.Generated != nil {
		return "", false, nil
	}
	v, err := d.Eval(ctx, nil)
	if err != nil || v == nil {
		return "", false, err
	}
	switch t := col.Type.(type) {
	case gms.EnumType:
		idx, ok := asInt(v)
		if !ok {
			return "", false, nil
		}
		s, found := t.At(idx)
		return s, found, nil
	case gms.SetType:
		bits, ok := asInt(v)
		if !ok {
			return "", false, nil
		}
		s, err := t.BitsToString(uint64(bits))
		return s, err == nil, nil
	case TimeType:
		ts, err := t.ConvertToTimespan(v)
		if err != nil {
			return "", false, nil
		}
		return string(t.appendText(nil, ts)), true, nil
	case gms.DecimalType:
		dv, ok := v.(decimal.Decimal)
		if !ok {
			return "", false, nil
		}
		return dv.StringFixed(int32(t.Scale())), true, nil
	}
	return "", false, nil
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case uint16:
		return int(x), true
	case uint64:
		return int(x), true
	case int64:
		return int(x), true
	case int:
		return x, true
	}
	var n int
	_, err := fmt.Sscan(fmt.Sprint(v), &n)
	return n, err == nil
}

// schemaFormatter writes column definitions as MySQL 8's SHOW CREATE
// TABLE does, which go-mysql-server's does not quite: a nullable column
// whose default is NULL, said or not, shows DEFAULT NULL, a TIMESTAMP
// also NULL, and a BLOB or TEXT column no default.
type schemaFormatter struct{ gms.MySqlSchemaFormatter }

func init() { gms.GlobalSchemaFormatter = &schemaFormatter{} }

func (f *schemaFormatter) GenerateCreateTableColumnDefinition(col *gms.Column, colDefault, onUpdate string, coll gms.CollationID) string {
	nullDefault := col.Default == nil || strings.EqualFold(colDefault, "NULL")
	if !col.Nullable || !nullDefault || col.Generated != nil || col.AutoIncrement {
		return f.MySqlSchemaFormatter.GenerateCreateTableColumnDefinition(col, colDefault, onUpdate, coll)
	}
	c := *col
	if types.IsTextBlob(col.Type) {
		c.Default = nil
		return f.MySqlSchemaFormatter.GenerateCreateTableColumnDefinition(&c, "", onUpdate, coll)
	}
	c.Default = &gms.ColumnDefaultValue{}
	stmt := f.MySqlSchemaFormatter.GenerateCreateTableColumnDefinition(&c, "NULL", onUpdate, coll)
	if types.IsTimestampType(col.Type) {
		stmt = strings.Replace(stmt, " DEFAULT NULL", " NULL DEFAULT NULL", 1)
	}
	return stmt
}
