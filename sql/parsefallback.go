package sql

import (
	"context"
	"fmt"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// fallbackStatement reads a statement that vitess's grammar refuses but
// MySQL takes: the statements on stored functions (routineStatement),
// CREATE and ALTER with YEAR(4) or table options separated by spaces
// (tableTextFixes) and window frames with a decimal RANGE offset
// (decimalFrames). next is the index of the text after the statement and
// its ';' (0 when there is none); ok is false when q is neither.
func (e *Engine) fallbackStatement(q string, o ast.ParserOptions) (stmt ast.Statement, next int, ok bool, err error) {
	defer func() {
		if ok {
			// As timeParser does for what the grammar takes.
			stmt, err = resolved(stmt, err)
		}
	}()
	if e != nil {
		if stmt, next, ok, err = e.routineStatement(q, o); ok {
			return stmt, next, ok, err
		}
	}
	if stmt, next, ok, err = tableTextFixes(q, o); ok {
		return stmt, next, ok, err
	}
	return decimalFrames(q, o)
}

// tableTextFixes parses a CREATE or ALTER statement after the rewrites
// that make MySQL's forms vitess's grammar lacks its own: YEAR(4) as YEAR
// (yearWidths) and ALTER TABLE's table options separated by spaces
// (spacedTableOptions).
func tableTextFixes(q string, o ast.ParserOptions) (ast.Statement, int, bool, error) {
	kw := firstKeyword(q)
	if kw != "create" && kw != "alter" {
		return nil, 0, false, nil
	}
	fixed, err := yearWidths(q, o.AnsiQuotes)
	if err != nil {
		return nil, 0, true, err
	}
	fixed, added := spacedTableOptions(fixed, o.AnsiQuotes)
	if fixed == q {
		return nil, 0, false, nil
	}
	stmt, next, err := ast.ParseOneWithOptions(context.Background(), fixed, o)
	if err != nil {
		return nil, 0, false, nil
	}
	if next > 0 {
		next -= added // back to a position in q: the additions lie before it
	}
	return stmt, next, true, nil
}

// yearWidths returns q with its YEAR column types' display width, as
// MySQL 5.7 and MariaDB dumps write them, left out: YEAR(4) is YEAR (MySQL
// 8 takes it, deprecated); any other width is MySQL's 1818. Positions in
// the text stay.
func yearWidths(q string, ansiQuotes bool) (string, error) {
	toks, ok := tokenizeOpts(q, ansiQuotes)
	if !ok {
		return q, nil
	}
	var b strings.Builder
	last := 0
	for i := 0; i+3 < len(toks); i++ {
		if toks[i].typ != ast.YEAR || toks[i+1].typ != '(' || toks[i+2].typ != ast.INTEGRAL || toks[i+3].typ != ')' {
			continue
		}
		if toks[i+2].val != "4" {
			return q, mysql.NewSQLError(1818, "HY000", "Supports only YEAR or YEAR(4) column.")
		}
		b.WriteString(q[last:toks[i].end])
		b.WriteString(strings.Repeat(" ", toks[i+3].end-toks[i].end))
		last = toks[i+3].end
	}
	if last == 0 {
		return q, nil
	}
	b.WriteString(q[last:])
	return b.String(), nil
}

var globalParserOnce sync.Once

// setGlobalParser makes go-mysql-server's default parser, which it uses
// for the definitions of triggers and procedures, read what
// fallbackParser reads (except the statements on stored functions, which
// need an engine) and qualify calls as it does.
func setGlobalParser() {
	globalParserOnce.Do(func() { gms.GlobalParser = fallbackParser{Parser: timeParser{gms.NewMysqlParser()}} })
}

// decimalFrames parses q, whose window frames have decimal offsets
// (RANGE BETWEEN 1.25 PRECEDING ...), which the grammar takes only as
// integers: each such offset is parsed as an integer of the same length
// (so that positions in the text stay), then put back in the tree.
func decimalFrames(q string, o ast.ParserOptions) (ast.Statement, int, bool, error) {
	toks, ok := tokenizeOpts(q, o.AnsiQuotes)
	if !ok {
		return nil, 0, false, nil
	}
	offsets := map[string]string{} // placeholder -> decimal
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.typ != ast.FLOAT || toks[i+1].typ != ast.PRECEDING && toks[i+1].typ != ast.FOLLOWING {
			continue
		}
		ph := fmt.Sprintf("%0*d", t.end-t.start, len(offsets)+1)
		if len(ph) != t.end-t.start {
			return nil, 0, false, nil
		}
		offsets[ph] = q[t.start:t.end]
		b.WriteString(q[last:t.start])
		b.WriteString(ph)
		last = t.end
	}
	if len(offsets) == 0 {
		return nil, 0, false, nil
	}
	for _, t := range toks {
		if _, clash := offsets[t.val]; clash && t.typ == ast.INTEGRAL {
			return nil, 0, false, nil
		}
	}
	b.WriteString(q[last:])
	stmt, next, err := ast.ParseOneWithOptions(context.Background(), b.String(), o)
	if err != nil {
		return nil, 0, false, nil
	}
	qualifyCalls(q, stmt)
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Over:
			restoreOffsets(n.Frame, offsets)
		case *ast.WindowDef:
			restoreOffsets(n.Frame, offsets)
		}
		return true, nil
	}, stmt)
	return stmt, next, true, nil
}

func restoreOffsets(f *ast.Frame, offsets map[string]string) {
	if f == nil || f.Extent == nil {
		return
	}
	for _, b := range []*ast.FrameBound{f.Extent.Start, f.Extent.End} {
		if b == nil {
			continue
		}
		if v, ok := b.Expr.(*ast.SQLVal); ok && v.Type == ast.IntVal {
			if d, ok := offsets[string(v.Val)]; ok {
				b.Expr = ast.NewFloatVal([]byte(d))
			}
		}
	}
}

// fallbackParser is a go-mysql-server parser that reads, when its inner
// parser refuses a text, what fallbackStatement reads.
type fallbackParser struct {
	gms.Parser
	e *Engine
}

func (p fallbackParser) ParseSimple(q string) (ast.Statement, error) {
	stmt, err := p.Parser.ParseSimple(q)
	if err == nil {
		qualifyCalls(q, stmt)
	} else {
		if r, _, ok, rerr := p.e.fallbackStatement(gms.RemoveSpaceAndDelimiter(q, ';'), ast.ParserOptions{}); ok {
			return r, rerr
		}
	}
	return stmt, err
}

func (p fallbackParser) Parse(ctx *gms.Context, q string, multi bool) (ast.Statement, string, string, error) {
	return p.ParseWithOptions(ctx, q, ';', multi, gms.LoadSqlMode(ctx).ParserOptions())
}

func (p fallbackParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, s, rest, err := p.Parser.ParseWithOptions(ctx, q, delim, multi, o)
	if err == nil {
		qualifyCalls(s, stmt)
		return stmt, s, rest, err
	}
	s = gms.RemoveSpaceAndDelimiter(q, delim)
	r, next, ok, rerr := p.e.fallbackStatement(s, o)
	if !ok {
		return stmt, s, rest, err
	}
	if rerr != nil {
		return nil, s, "", rerr
	}
	if next == 0 || next >= len(s) {
		return r, s, "", nil
	}
	if !multi && strings.TrimSpace(s[next:]) != "" {
		return nil, s, "", errSyntax(strings.TrimSpace(s[next:]))
	}
	return r, gms.RemoveSpaceAndDelimiter(s[:next], delim), s[next:], nil
}

func (p fallbackParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	stmt, n, err := p.Parser.ParseOneWithOptions(ctx, q, o)
	if err == nil {
		qualifyCalls(q, stmt)
		return stmt, n, err
	}
	if r, next, ok, rerr := p.e.fallbackStatement(q, o); ok {
		return r, next, rerr
	}
	return stmt, n, err
}
