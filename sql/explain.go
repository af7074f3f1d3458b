package sql

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/reorgdb/reorgdb/catalog"
)

// execOverride builds the nodes whose go-mysql-server executors are
// wrong for ReorgDB; every other node is left to go-mysql-server (a nil
// iterator). Set as the analyzer's ExecBuilder through
// rowexec.NewOverrideBuilder.
type execOverride struct {
	e    *Engine
	base func() gms.NodeExecBuilder // the whole builder, to run EXPLAIN ANALYZE's query
}

func (o *execOverride) Build(ctx *gms.Context, n gms.Node, r gms.Row) (gms.RowIter, error) {
	switch n := n.(type) {
	case *plan.DescribeQuery:
		return o.explain(ctx, n, r)
	case *plan.ShowIndexes:
		return showIndexRows(ctx, n)
	case *plan.AddColumn:
		return o.addColumn(ctx, n)
	case *plan.ShowCreateTable:
		return o.showCreateTable(ctx, n, r)
	case *plan.AlterDefaultSet:
		return alterDefaultSet(o, ctx, n)
	case *plan.AlterDefaultDrop:
		return alterDefaultDrop(o, ctx, n)
	case *plan.ShowTableStatus:
		return showTableStatus(ctx, n, r)
	case *plan.AnalyzeTable:
		return analyzeTable(ctx, n, r)
	case *plan.CreateCheck:
		return createCheck(ctx, n)
	case *plan.CreateForeignKey:
		return createForeignKey(ctx, n)
	case *plan.LoadData:
		return loadData(ctx, n)
	}
	return nil, nil
}

// explain answers EXPLAIN. go-mysql-server's plain EXPLAIN is a
// placeholder row (with "NULL" strings in numeric columns, which clients
// fail to read), and its plan printer (EXPLAIN FORMAT=TREE, EXPLAIN PLAN)
// cuts lines longer than 4 KiB into pieces, mid-character (sql.TreePrinter
// reads children with bufio.Reader.ReadLine and ignores isPrefix), which
// the protocol layer rejects as invalid UTF-8: a long IN list did that.
// And it returns one row per line, which fails when the query is known to
// return at most one row (COUNT(*) without GROUP BY, a primary-key point):
// the handler then reads a single row (QFlagMax1Row).
//
// So the plan is printed here without that limit, as MySQL does: one row
// holding the whole tree. Plain EXPLAIN gets MySQL's table, one row per
// table read, with the index chosen (see explainRows).
func (o *execOverride) explain(ctx *gms.Context, n *plan.DescribeQuery, r gms.Row) (gms.RowIter, error) {
	if n.Format.Analyze {
		if !n.IsReadOnly() {
			return nil, fmt.Errorf("cannot analyze statement that could have side effects")
		}
		it, err := o.base().Build(ctx, n.Child, r)
		if err != nil {
			return nil, err
		}
		for {
			if _, err := it.Next(ctx); err == io.EOF {
				break
			} else if err != nil {
				it.Close(ctx)
				return nil, err
			}
		}
		if err := it.Close(ctx); err != nil {
			return nil, err
		}
	}
	if n.Format.Plan {
		return gms.RowsToRowIter(gms.NewRow(planTree(n.Child, n.Format))), nil
	}
	return gms.RowsToRowIter(explainRows(ctx, n.Child)...), nil
}

// planTree is go-mysql-server's plan description (sql.Describe) of n,
// printed node by node so that no line is cut.
func planTree(n gms.Node, opts gms.DescribeOptions) string {
	lines := treeLines(n, opts)
	for i, l := range lines {
		lines[i] = strings.ToValidUTF8(l, "?")
	}
	return strings.Join(lines, "\n")
}

// treeLines describes n: its own lines from go-mysql-server, with each
// child in its place described by treeLines again. The nodes that print
// long lines of their own (a filter's IN list, an index lookup's ranges)
// are printed here.
func treeLines(n gms.Node, opts gms.DescribeOptions) []string {
	switch x := n.(type) {
	case *plan.Filter:
		expr := x.Expression.String()
		if opts.Debug {
			expr = gms.DebugString(x.Expression)
		}
		return tree("Filter", []string{expr}, []gms.Node{x.Child}, opts)
	case *plan.IndexedTableAccess:
		return tree("IndexedTableAccess("+x.TableNode.Name()+")", itaItems(x), nil, opts)
	}
	children := n.Children()
	if len(children) == 0 {
		return splitLines(gms.Describe(n, opts))
	}
	stubs := make([]gms.Node, len(children))
	for i, c := range children {
		stubs[i] = &stubNode{k: i, orig: c}
	}
	s, ok := describeWith(n, stubs, opts)
	if !ok {
		return splitLines(gms.Describe(n, opts))
	}
	var out []string
	for _, line := range splitLines(s) {
		k, at := stubIn(line)
		if k < 0 || k >= len(children) {
			out = append(out, line)
			continue
		}
		prefix := line[:at]
		for j, cl := range treeLines(children[k], opts) {
			if j == 0 {
				out = append(out, prefix+cl)
			} else {
				out = append(out, continuation(prefix)+cl)
			}
		}
	}
	return out
}

// describeWith describes n with its children replaced, or reports false
// when n does not take them.
func describeWith(n gms.Node, children []gms.Node, opts gms.DescribeOptions) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	nn, err := n.WithChildren(children...)
	if err != nil {
		return "", false
	}
	return gms.Describe(nn, opts), true
}

// tree prints a node with item lines and child nodes under it, as
// sql.TreePrinter does.
func tree(header string, items []string, children []gms.Node, opts gms.DescribeOptions) []string {
	out := []string{header}
	total := len(items) + len(children)
	k := 0
	add := func(lines []string) {
		k++
		first, rest := " ├─ ", " │  "
		if k == total {
			first, rest = " └─ ", "    "
		}
		for j, l := range lines {
			if j == 0 {
				out = append(out, first+l)
			} else {
				out = append(out, rest+l)
			}
		}
	}
	for _, it := range items {
		add(splitLines(it))
	}
	for _, c := range children {
		add(treeLines(c, opts))
	}
	return out
}

// itaItems are IndexedTableAccess's lines (its String method's).
func itaItems(x *plan.IndexedTableAccess) []string {
	idx := x.Index()
	items := []string{"index: [" + strings.Join(idx.Expressions(), ",") + "]"}
	lk, static := itaLookup(x)
	if static && lk.Ranges != nil && lk.Ranges.Len() > 0 {
		items = append(items, "filters: "+lk.Ranges.DebugString())
	}
	if pt, ok := x.Table.(gms.ProjectedTable); ok && pt.Projections() != nil {
		cols := make([]string, len(pt.Projections()))
		for i, c := range pt.Projections() {
			cols[i] = strings.ToLower(c)
		}
		items = append(items, fmt.Sprintf("columns: %v", cols))
	}
	if !static {
		keys := make([]string, 0, len(x.Expressions()))
		for _, e := range x.Expressions() {
			keys = append(keys, e.String())
		}
		if len(keys) > 0 {
			items = append(items, "keys: "+strings.Join(keys, ", "))
		}
	}
	if static && lk.IsReverse {
		items = append(items, "reverse: true")
	}
	return items
}

// itaLookup returns a static index access's lookup.
func itaLookup(x *plan.IndexedTableAccess) (gms.IndexLookup, bool) {
	if !x.IsStatic() {
		return gms.IndexLookup{}, false
	}
	if t, ok := x.Table.(*Table); ok && t.lookup != nil {
		return *t.lookup, true
	}
	lk, err := x.GetLookup(gms.NewEmptyContext(), nil)
	return lk, err == nil
}

const stubMark = "\x1bchild#"

// stubNode stands for child k while its parent describes itself.
type stubNode struct {
	k    int
	orig gms.Node
}

func (s *stubNode) Resolved() bool                             { return true }
func (s *stubNode) IsReadOnly() bool                           { return true }
func (s *stubNode) String() string                             { return stubMark + strconv.Itoa(s.k) + "\x1b" }
func (s *stubNode) Schema() gms.Schema                         { return s.orig.Schema() }
func (s *stubNode) Children() []gms.Node                       { return nil }
func (s *stubNode) WithChildren(...gms.Node) (gms.Node, error) { return s, nil }

func stubIn(line string) (k, at int) {
	at = strings.Index(line, stubMark)
	if at < 0 {
		return -1, 0
	}
	rest := line[at+len(stubMark):]
	end := strings.IndexByte(rest, '\x1b')
	if end < 0 || at+len(stubMark)+end+1 != len(line) {
		return -1, 0
	}
	k, err := strconv.Atoi(rest[:end])
	if err != nil {
		return -1, 0
	}
	return k, at
}

// continuation is the prefix of a child's further lines, given the
// prefix of its first: the branch marks become vertical lines or blanks.
func continuation(prefix string) string {
	prefix = strings.ReplaceAll(prefix, "├─", "│ ")
	return strings.ReplaceAll(prefix, "└─", "  ")
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// explainRows is MySQL's EXPLAIN table for a plan: one row per table
// read, in plan order, with the access type and the index chosen.
//
//   - type: ALL (table scan), index (whole index, for its order), range,
//     ref (equality on leading index columns), const (equality on a whole
//     unique key), eq_ref / ref (lookup join, on a whole unique key or
//     not).
//   - possible_keys is the key chosen: go-mysql-server does not report the
//     candidates it weighed. key_len, rows and filtered are NULL: ReorgDB
//     keeps no statistics to estimate them.
//   - Extra: "Using where" (a filter over the rows read), "Using
//     filesort" (a sort above), "No tables used".
func explainRows(ctx *gms.Context, n gms.Node) []gms.Row {
	w := &explainer{ctx: ctx, nextID: 1}
	w.walk(n, "", 1, "SIMPLE", false)
	if w.nextID > 1 {
		for _, r := range w.rows {
			if r[0] == uint64(1) && r[1] == "SIMPLE" {
				r[1] = "PRIMARY"
			}
		}
	}
	if len(w.rows) == 0 {
		return []gms.Row{{uint64(1), "SIMPLE", nil, nil, nil, nil, nil, nil, nil, nil, nil, "No tables used"}}
	}
	// By id, as MySQL lists them: a subquery's rows come after the
	// statement's even when its expression is met first.
	sort.SliceStable(w.rows, func(a, b int) bool { return w.rows[a][0].(uint64) < w.rows[b][0].(uint64) })
	return w.rows
}

type explainer struct {
	ctx    *gms.Context
	rows   []gms.Row
	nextID int
	sort   bool // a sort above, not yet shown
}

func (w *explainer) newID() int { w.nextID++; return w.nextID }

func (w *explainer) walk(n gms.Node, alias string, id int, selType string, filtered bool) {
	w.subqueries(n)
	switch x := n.(type) {
	case *plan.TableAlias:
		w.walk(x.Child, x.Name(), id, selType, filtered)
		return
	case *plan.Filter:
		w.walk(x.Child, alias, id, selType, true)
		return
	case *plan.Sort, *plan.TopN:
		w.sort = true
	case *plan.SetOp:
		w.walk(x.Left(), "", id, selType, false)
		w.walk(x.Right(), "", w.newID(), "UNION", false)
		return
	case *plan.SubqueryAlias:
		sub := w.newID()
		w.add(id, selType, fmt.Sprintf("<derived%d>", sub), "ALL", nil, nil, filtered)
		w.walk(x.Child, "", sub, "DERIVED", false)
		return
	case *plan.InsertInto:
		name := ""
		if nm, ok := x.Destination.(gms.Nameable); ok {
			name = nm.Name()
		}
		w.add(id, "INSERT", name, "ALL", nil, nil, false)
		if x.Source != nil {
			w.walk(x.Source, "", id, selType, false)
		}
		return
	case *plan.ResolvedTable:
		if plan.IsDualTable(x.Table) {
			return // SELECT without FROM
		}
		w.add(id, selType, nameOr(alias, x.Name()), "ALL", nil, nil, filtered)
		return
	case *plan.IndexedTableAccess:
		typ, ref := accessType(x)
		w.add(id, selType, nameOr(alias, x.Name()), typ, x.Index().ID(), ref, filtered)
		return
	}
	for _, c := range n.Children() {
		w.walk(c, "", id, selType, false)
	}
}

// subqueries walks the subqueries in n's expressions.
func (w *explainer) subqueries(n gms.Node) {
	ex, ok := n.(gms.Expressioner)
	if !ok {
		return
	}
	for _, e := range ex.Expressions() {
		transform.InspectExpr(e, func(e gms.Expression) bool {
			if sq, ok := e.(*plan.Subquery); ok && sq.Query != nil {
				typ := "SUBQUERY"
				if !sq.Correlated().Empty() {
					typ = "DEPENDENT SUBQUERY"
				}
				w.walk(sq.Query, "", w.newID(), typ, false)
			}
			return false
		})
	}
}

func (w *explainer) add(id int, selType, table, typ string, key, ref any, filtered bool) {
	var extra []string
	if filtered {
		extra = append(extra, "Using where")
	}
	if w.sort {
		extra = append(extra, "Using filesort")
		w.sort = false
	}
	w.rows = append(w.rows, gms.Row{uint64(id), selType, table, nil, typ, key, key, nil, ref, nil, nil, strings.Join(extra, "; ")})
}

func nameOr(alias, name string) string {
	if alias != "" {
		return alias
	}
	return name
}

// accessType is EXPLAIN's type and ref of an index access.
func accessType(x *plan.IndexedTableAccess) (string, any) {
	idx := x.Index()
	ncols := len(idx.Expressions())
	lk, static := itaLookup(x)
	if !static {
		keys := make([]string, 0, len(x.Expressions()))
		for _, e := range x.Expressions() {
			keys = append(keys, e.String())
		}
		if idx.IsUnique() && len(keys) >= ncols {
			return "eq_ref", strings.Join(keys, ",")
		}
		return "ref", strings.Join(keys, ",")
	}
	ranges, ok := lk.Ranges.(gms.MySQLRangeCollection)
	if !ok || len(ranges) == 0 {
		return "range", nil
	}
	all := true
	for _, r := range ranges {
		for _, c := range r {
			if !unbounded(c) {
				all = false
			}
		}
	}
	if all {
		return "index", nil
	}
	if len(ranges) == 1 {
		pts := 0
		for pts < len(ranges[0]) && isPoint(ranges[0][pts]) {
			pts++
		}
		rest := true
		for _, c := range ranges[0][pts:] {
			rest = rest && unbounded(c)
		}
		if pts > 0 && rest {
			ref := strings.TrimSuffix(strings.Repeat("const,", pts), ",")
			if idx.IsUnique() && pts >= ncols {
				return "const", ref
			}
			return "ref", ref
		}
	}
	return "range", nil
}

func unbounded(c gms.MySQLRangeColumnExpr) bool {
	_, lo := c.LowerBound.(gms.BelowNull)
	_, hi := c.UpperBound.(gms.AboveAll)
	return lo && hi
}

func isPoint(c gms.MySQLRangeColumnExpr) bool {
	lb, ok := c.LowerBound.(gms.Below)
	if !ok {
		return false
	}
	ub, ok := c.UpperBound.(gms.Above)
	if !ok {
		return false
	}
	cmp, err := c.Typ.Compare(gms.NewEmptyContext(), lb.Key, ub.Key)
	return err == nil && cmp == 0
}

// showIndexRows answers SHOW INDEX like go-mysql-server, plus what it
// leaves out: Sub_part, the length of a prefix key part (in characters
// for a non-binary string, as the index definition says), Collation "A"
// (the keys are ascending) and Cardinality (cardinality).
func showIndexRows(ctx *gms.Context, n *plan.ShowIndexes) (gms.RowIter, error) {
	rt, ok := n.Child.(*plan.ResolvedTable)
	if !ok {
		return nil, nil
	}
	t, ok := rt.UnderlyingTable().(*Table)
	if !ok {
		return nil, nil
	}
	for _, gi := range n.IndexesToShow {
		if _, ok := gi.(*Index); !ok {
			return nil, nil // not ours: go-mysql-server's rows
		}
	}
	var rows []gms.Row
	// From the table, not n.IndexesToShow, which lacks invisible indexes.
	for _, ix := range t.m.indexes {
		if ix.state() != catalog.StatePublic {
			continue
		}
		idx := ix.gmsIndex
		visible := "YES"
		if !ix.visible() {
			visible = "NO"
		}
		card := cardinality(ctx, t, idx.ix)
		for k, p := range idx.ix.pos {
			col := t.m.schema[p]
			var subPart any
			if idx.ix.prefix[k] > 0 {
				subPart = idx.ix.prefix[k]
			}
			null := ""
			if col.Nullable {
				null = "YES"
			}
			nonUnique := int32(1)
			if idx.IsUnique() {
				nonUnique = 0
			}
			var c any
			if card != nil {
				c = card[k]
			}
			rows = append(rows, gms.Row{t.m.def.Name, nonUnique, idx.ID(), uint32(k + 1), col.Name, "A", c, subPart,
				nil, null, idx.IndexType(), idx.Comment(), "", visible, nil})
		}
	}
	return gms.RowsToRowIter(rows...), nil
}
