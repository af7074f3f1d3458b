package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// The table options of ALTER TABLE (ENGINE=..., COMMENT=..., DEFAULT
// CHARACTER SET ...) reach go-mysql-server in two ways it does not fully
// take: MySQL separates them by spaces as well as commas, which vitess's
// grammar refuses (1064), and vitess parses COMMENT but drops its value, so
// go-mysql-server's plan alone would change nothing. spacedTableOptions and
// tableCommentRule make up for both.

// maxTableComment is MySQL's limit on a table comment, in characters.
const maxTableComment = 2048

// alterOptions is what a walk over the clauses of an ALTER TABLE finds:
// the token positions where a table option follows another without a
// comma, and the value of the last COMMENT option.
type alterOptions struct {
	commaAt    []int // byte offsets in the text
	comment    string
	hasComment bool
}

// scanAlterOptions walks the clauses of the ALTER TABLE statement q. ok is
// false when q is not one.
func scanAlterOptions(q string, ansiQuotes bool) (ao alterOptions, ok bool) {
	toks, ok := tokenizeOpts(q, ansiQuotes)
	if !ok {
		return ao, false
	}
	i, ok := alterClausesStart(toks)
	if !ok {
		return ao, false
	}
	afterOption := false
	for i < len(toks) && toks[i].typ != ';' {
		if end, isOpt := tableOption(toks, i); isOpt {
			collateOfCharset := toks[i].typ == ast.COLLATE && i > 0 && isCharsetValueEnd(toks, i)
			if afterOption && !collateOfCharset {
				ao.commaAt = append(ao.commaAt, toks[i].start)
			}
			if toks[i].typ == ast.COMMENT_KEYWORD && end-1 > i && toks[end-1].typ == ast.STRING {
				ao.comment, ao.hasComment = toks[end-1].val, true
			}
			i, afterOption = end, true
			continue
		}
		// Any other clause: skip it, up to the comma that ends it.
		afterOption = false
		for depth := 0; i < len(toks) && toks[i].typ != ';'; i++ {
			switch toks[i].typ {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 && toks[i].typ == ',' {
				i++
				break
			}
		}
	}
	return ao, true
}

// alterClausesStart is the index of the first token after ALTER [IGNORE]
// TABLE name.
func alterClausesStart(toks []token) (int, bool) {
	i := 0
	if i < len(toks) && toks[i].typ == ast.ALTER {
		i++
	} else {
		return 0, false
	}
	if i < len(toks) && toks[i].typ == ast.IGNORE {
		i++
	}
	if i >= len(toks) || toks[i].typ != ast.TABLE {
		return 0, false
	}
	i += 2 // TABLE and the name
	if i+1 < len(toks) && toks[i].typ == '.' {
		i += 2
	}
	return i, i <= len(toks)
}

// tableOptionKeywords are the table options that take one value:
// KEYWORD [=] value.
var tableOptionKeywords = map[int]bool{
	ast.ENGINE: true, ast.AUTO_INCREMENT: true, ast.COMMENT_KEYWORD: true, ast.ROW_FORMAT: true,
	ast.KEY_BLOCK_SIZE: true, ast.CHECKSUM: true, ast.STATS_PERSISTENT: true, ast.STATS_AUTO_RECALC: true,
	ast.STATS_SAMPLE_PAGES: true, ast.PACK_KEYS: true, ast.MAX_ROWS: true, ast.MIN_ROWS: true,
	ast.AVG_ROW_LENGTH: true, ast.COMPRESSION: true, ast.ENCRYPTION: true, ast.DELAY_KEY_WRITE: true,
	ast.CHARSET: true, ast.COLLATE: true,
}

// tableOption reports whether a table option starts at toks[i] and, if
// so, the index of the token after its value.
func tableOption(toks []token, i int) (end int, ok bool) {
	if toks[i].typ == ast.DEFAULT {
		i++ // DEFAULT CHARACTER SET / CHARSET / COLLATE
		if i >= len(toks) || toks[i].typ != ast.CHARACTER && toks[i].typ != ast.CHARSET && toks[i].typ != ast.COLLATE {
			return 0, false
		}
	}
	switch {
	case toks[i].typ == ast.CHARACTER:
		if i+1 >= len(toks) || toks[i+1].typ != ast.SET {
			return 0, false
		}
		i += 2
	case tableOptionKeywords[toks[i].typ]:
		i++
	default:
		return 0, false
	}
	if i < len(toks) && toks[i].typ == '=' {
		i++
	}
	if i >= len(toks) || toks[i].typ == ',' || toks[i].typ == ';' || toks[i].typ == 0 {
		return 0, false
	}
	return i + 1, true
}

// isCharsetValueEnd reports whether toks[i-1] is the value of a CHARACTER
// SET / CHARSET option: the grammar takes CHARACTER SET x COLLATE y as one
// clause, so no comma goes between them.
func isCharsetValueEnd(toks []token, i int) bool {
	j := i - 2 // the keyword or '=' before the value
	if j >= 0 && toks[j].typ == '=' {
		j--
	}
	return j >= 0 && (toks[j].typ == ast.CHARSET || toks[j].typ == ast.SET && j > 0 && toks[j-1].typ == ast.CHARACTER)
}

// spacedTableOptions returns ALTER TABLE q with commas between its table
// options where only spaces separate them, as MySQL allows, and how many
// bytes that added (before the statement's end).
func spacedTableOptions(q string, ansiQuotes bool) (string, int) {
	ao, ok := scanAlterOptions(q, ansiQuotes)
	if !ok || len(ao.commaAt) == 0 {
		return q, 0
	}
	var b strings.Builder
	last := 0
	for _, at := range ao.commaAt {
		b.WriteString(q[last:at])
		b.WriteString(", ")
		last = at
	}
	b.WriteString(q[last:])
	return b.String(), 2 * len(ao.commaAt)
}

// ruleTableComment is the id of tableCommentRule.
const ruleTableComment analyzer.RuleId = 10040

// tableCommentRule adds to the plan of an ALTER TABLE with a COMMENT
// option the step that sets it, which go-mysql-server's plan lacks.
func tableCommentRule(ctx *gms.Context, a *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	q := ctx.Query()
	if firstKeyword(q) != "alter" || !ContainsFold(q, "COMMENT") {
		return n, transform.SameTree, nil
	}
	ansi := gms.LoadSqlMode(ctx).AnsiQuotes()
	ao, ok := scanAlterOptions(q, ansi)
	if !ok || !ao.hasComment {
		return n, transform.SameTree, nil
	}
	stmt, _, err := ast.ParseOneWithOptions(ctx, q, gms.LoadSqlMode(ctx).ParserOptions())
	if err != nil {
		stmt, _, _, err = tableTextFixes(q, gms.LoadSqlMode(ctx).ParserOptions())
	}
	alter, isAlter := stmt.(*ast.AlterTable)
	if err != nil || !isAlter {
		return n, transform.SameTree, nil
	}
	set := &tableCommentNode{db: alter.Table.DbQualifier.String(), table: alter.Table.Name.String(), comment: ao.comment, p: a.Catalog}
	if b, ok := n.(*plan.Block); ok {
		return plan.NewBlock(append(b.Children()[:len(b.Children()):len(b.Children())], set)), transform.NewTree, nil
	}
	return plan.NewBlock([]gms.Node{n, set}), transform.NewTree, nil
}

// tableCommentNode sets a table's comment.
type tableCommentNode struct {
	db, table, comment string
	p                  gms.Catalog
}

var _ gms.ExecSourceRel = (*tableCommentNode)(nil)

func (n *tableCommentNode) Resolved() bool       { return true }
func (n *tableCommentNode) Children() []gms.Node { return nil }
func (n *tableCommentNode) IsReadOnly() bool     { return false }
func (n *tableCommentNode) Schema() gms.Schema   { return types.OkResultSchema }
func (n *tableCommentNode) String() string       { return fmt.Sprintf("COMMENT %q", n.comment) }
func (n *tableCommentNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *tableCommentNode) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	db := n.db
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" {
		return nil, errNoDB()
	}
	gt, _, err := n.p.Table(ctx, db, n.table)
	if err != nil {
		return nil, err
	}
	t, ok := gt.(*Table)
	if !ok {
		return nil, gms.ErrTableNotFound.New(n.table)
	}
	comment, err := checkTableComment(ctx, n.table, n.comment)
	if err != nil {
		return nil, err
	}
	if err := t.alterDef(ctx, func(def *catalog.Table) { def.Comment = comment }); err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.Row{types.NewOkResult(0)}), nil
}

// checkTableComment refuses, in strict sql_mode, a comment longer than
// MySQL's limit (1628), and otherwise cuts it there, as MySQL does.
func checkTableComment(ctx *gms.Context, table, comment string) (string, error) {
	if utf8.RuneCountInString(comment) <= maxTableComment {
		return comment, nil
	}
	if strictMode(ctx) {
		return "", mysql.NewSQLError(1628, "HY000", "Comment for table '%s' is too long (max = %d)", table, maxTableComment)
	}
	return string([]rune(comment)[:maxTableComment]), nil
}
