package sql

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Quantified comparisons, x op ANY|SOME|ALL (subquery), are outside
// go-mysql-server's grammar. RewriteQuantified turns each into an
// expression it parses, with MySQL's three-valued result:
//
//   - x = ANY (S) is x IN (S), and x <> ALL (S) is x NOT IN (S);
//   - x op ANY (S) is 1 when some s in S has x op s true, NULL when none
//     does and some comparison is NULL, and 0 otherwise (S empty too),
//     which a scalar subquery over S computes with MAX and COUNT;
//   - x op ALL (S) is NOT (x (NOT op) ANY (S)).
//
// The rewrite works on the vitess tokenizer's tokens, not the raw text,
// so that quotes, comments and nested parentheses are read as the parser
// reads them.

// QuantTable names the derived table of a rewritten comparison (its
// errors name it).
const QuantTable = "reorgdb_quant_t"

const (
	quantTable  = QuantTable
	quantColumn = "reorgdb_quant_v"
)

// RewriteQuantified returns q with its quantified comparisons rewritten,
// or q itself when it has none or they cannot be rewritten (the parser
// then reports the syntax error).
func RewriteQuantified(q string) (out string) {
	if !MayHaveQuantified(q) || strings.Contains(q, "/*!") {
		return q
	}
	// It runs on the connection's goroutine, before any handler that
	// would turn a panic into an error: a text it cannot read is left
	// to the parser.
	defer func() {
		if recover() != nil {
			out = q
		}
	}()
	for range 256 {
		out, ok := rewriteFirstQuantified(q)
		if !ok {
			return q
		}
		q = out
	}
	return q
}

// MayHaveQuantified says whether some '(' follows the word ANY, SOME or
// ALL, a cheap test before tokenizing.
func MayHaveQuantified[T string | []byte](q T) bool {
	for i := 0; i < len(q); i++ {
		if q[i] != '(' {
			continue
		}
		j := i
		for j > 0 && (q[j-1] == ' ' || q[j-1] == '\t' || q[j-1] == '\n' || q[j-1] == '\r') {
			j--
		}
		for _, w := range [...]string{"any", "some", "all"} {
			if j >= len(w) && foldEqual(q[j-len(w):j], w) && (j == len(w) || !isWordByte(q[j-len(w)-1])) {
				return true
			}
		}
	}
	return false
}

// foldEqual says q equals the lower-case ASCII word w, ignoring case.
func foldEqual[T string | []byte](q T, w string) bool {
	for i := range len(w) {
		if q[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

func isWordByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// token is one token of a statement: its type, its text and the byte
// range [start, end) it spans.
type token struct {
	typ        int
	val        string
	start, end int
}

// tokenize splits q into tokens; ok is false on a lexical error.
func tokenize(q string) (toks []token, ok bool) { return tokenizeOpts(q, false) }

// tokenizeOpts is tokenize with ANSI_QUOTES on or off.
func tokenizeOpts(q string, ansiQuotes bool) (toks []token, ok bool) {
	tkn := ast.NewStringTokenizer(q)
	if ansiQuotes {
		tkn = ast.NewStringTokenizerForAnsiQuotes(q)
	}
	prev := 0
	for {
		typ, val := tkn.Scan()
		if typ == 0 {
			return toks, true
		}
		if typ == ast.LEX_ERROR {
			return nil, false
		}
		start := prev
		for start < len(q) && strings.IndexByte(" \t\r\n\f\v", q[start]) >= 0 {
			start++
		}
		end := tkn.Position - 1
		if typ == ast.NOT || typ == ast.FOR {
			// The tokenizer reads the next token ahead after these.
			end = start + len(val)
		}
		if end < start || end > len(q) {
			return nil, false
		}
		if typ != ast.COMMENT {
			toks = append(toks, token{typ, string(val), start, end})
		}
		prev = end
	}
}

// rewriteFirstQuantified rewrites the first quantified comparison of q;
// ok is false when there is none that can be rewritten.
func rewriteFirstQuantified(q string) (string, bool) {
	toks, ok := tokenize(q)
	if !ok {
		return q, false
	}
	for i := 1; i+2 < len(toks); i++ {
		quant := strings.ToLower(toks[i+1].val)
		if toks[i+2].typ != '(' || (quant != "any" && quant != "some" && quant != "all") {
			continue
		}
		op, isCmp := comparison(toks[i])
		if !isCmp {
			continue
		}
		close := matchParen(toks, i+2)
		if close < 0 || !startsSubquery(toks[i+3]) {
			continue
		}
		xs := operandStart(toks, i)
		if xs == i {
			continue
		}
		first, last := i+3, close-1
		// IN ((SELECT ...)) would be a list of one scalar subquery.
		for first < last && toks[first].typ == '(' && matchParen(toks, first) == last {
			first, last = first+1, last-1
		}
		if first > last || !startsSubquery(toks[first]) {
			continue
		}
		x := q[toks[xs].start:toks[i-1].end]
		sub := q[toks[first].start:toks[last].end]
		var b strings.Builder
		b.WriteString(q[:toks[xs].start])
		if op != "<=>" && hasAggregate(toks[xs:i]) {
			b.WriteString(quantifiedOutside(x, op, quant == "all", sub))
		} else {
			b.WriteString(quantified(x, op, quant == "all", sub))
		}
		if selectListItem(toks, xs, close) {
			// The result column keeps the name MySQL gives it: the text
			// as written.
			b.WriteString(" AS `" + strings.ReplaceAll(q[toks[xs].start:toks[close].end], "`", "``") + "`")
		}
		b.WriteString(q[toks[close].end:])
		return b.String(), true
	}
	return q, false
}

// selectListItem says whether toks[start:end+1] is a whole item of a
// SELECT list without an alias: it follows SELECT [DISTINCT|ALL] or a
// comma that belongs to the SELECT list, and ends the item.
func selectListItem(toks []token, start, end int) bool {
	if start == 0 {
		return false
	}
	if end+1 < len(toks) {
		switch toks[end+1].typ {
		case ',', ')', ';', ast.FROM, ast.UNION, ast.INTO, ast.ORDER, ast.LIMIT:
		default:
			return false
		}
	}
	switch toks[start-1].typ {
	case ast.SELECT, ast.DISTINCT, ast.ALL, ',':
	default:
		return false
	}
	depth := 0
	for i := start - 1; i >= 0; i-- {
		switch toks[i].typ {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return false
			}
			depth--
		case ast.SELECT:
			if depth == 0 {
				return true
			}
		case ast.FROM, ast.WHERE, ast.ON, ast.HAVING, ast.BY, ast.SET, ast.VALUES, ast.UPDATE, ast.WHEN, ast.THEN, ast.ELSE, ast.USING:
			if depth == 0 {
				return false
			}
		}
	}
	return false
}

// comparison is the operator text of a comparison token.
func comparison(t token) (string, bool) {
	switch t.typ {
	case '=':
		return "=", true
	case '<':
		return "<", true
	case '>':
		return ">", true
	case ast.LE:
		return "<=", true
	case ast.GE:
		return ">=", true
	case ast.NE:
		return "<>", true
	case ast.NULL_SAFE_EQUAL:
		return "<=>", true
	}
	return "", false
}

func startsSubquery(t token) bool {
	return t.typ == ast.SELECT || t.typ == ast.WITH || t.typ == '('
}

// quantified is the expression that replaces x op ANY|ALL (sub).
func quantified(x, op string, all bool, sub string) string {
	switch {
	case op == "=" && !all:
		return "((" + x + ") IN (" + sub + "))"
	case op == "<>" && all:
		return "((" + x + ") NOT IN (" + sub + "))"
	}
	cmp := "(" + x + ") " + op + " " + quantTable + "." + quantColumn
	if !all {
		return anyOf(cmp, sub)
	}
	return "(NOT " + anyOf("NOT ("+cmp+")", sub) + ")"
}

// quantifiedOutside is quantified for an x that holds an aggregate
// (SUM(a) > ANY (...) in a grouped query), which must stay in the outer
// query: x is compared with the MIN or MAX of sub in scalar subqueries.
func quantifiedOutside(x, op string, all bool, sub string) string {
	switch {
	case op == "=" && !all:
		return "((" + x + ") IN (" + sub + "))"
	case op == "<>" && all:
		return "((" + x + ") NOT IN (" + sub + "))"
	case all:
		return "(NOT " + anyOutside(x, negated[op], sub) + ")"
	}
	return anyOutside(x, op, sub)
}

// negated is the comparison true where op is false, for non-NULL values.
var negated = map[string]string{"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}

// anyOutside is x op ANY (sub) with x outside the subqueries over sub.
func anyOutside(x, op, sub string) string {
	agg := func(f string) string {
		return "(SELECT " + f + " FROM (" + sub + ") AS " + quantTable + "(" + quantColumn + "))"
	}
	mn, mx := agg("MIN("+quantColumn+")"), agg("MAX("+quantColumn+")")
	var hit string
	switch op {
	case ">", ">=":
		hit = "(" + x + ") " + op + " " + mn
	case "<", "<=":
		hit = "(" + x + ") " + op + " " + mx
	case "=":
		hit = "(" + x + ") IN (" + sub + ")"
	default: // <>
		hit = "(" + x + ") <> " + mn + " OR (" + x + ") <> " + mx
	}
	return "(CASE WHEN " + agg("COUNT(*)") + " = 0 THEN 0 WHEN " + hit + " THEN 1 WHEN (" + x + ") IS NULL OR " +
		agg("COUNT(*) - COUNT("+quantColumn+")") + " > 0 THEN NULL ELSE 0 END)"
}

// hasAggregate says the tokens call an aggregate function.
func hasAggregate(toks []token) bool {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i+1].typ != '(' {
			continue
		}
		switch strings.ToLower(toks[i].val) {
		case "count", "sum", "avg", "min", "max", "group_concat", "bit_and", "bit_or", "bit_xor", "std", "stddev",
			"stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "json_arrayagg", "json_objectagg", "any_value":
			return true
		}
	}
	return false
}

// anyOf is 1 when cmp is true for some row of sub, NULL when it is for
// none and NULL for some, else 0.
func anyOf(cmp, sub string) string {
	return "(SELECT CASE WHEN MAX(" + cmp + ") = 1 THEN 1 WHEN COUNT(*) > COUNT(" + cmp + ") THEN NULL ELSE 0 END FROM (" +
		sub + ") AS " + quantTable + "(" + quantColumn + "))"
}

// matchParen is the index of the ')' closing the '(' at open, or -1.
func matchParen(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].typ {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// operandStart is the index of the first token of the left operand of
// the comparison at op: tokens are taken back from op while they bind
// at least as tightly as a comparison (comparisons are left-associative,
// so an earlier one belongs to the operand); op itself when there is
// none.
func operandStart(toks []token, op int) int {
	i := op - 1
	for i >= 0 {
		t := toks[i]
		switch {
		case t.typ == ')':
			open := matchOpen(toks, i)
			if open < 0 {
				return op
			}
			i = open - 1
			if i >= 0 && isFuncName(toks[i]) {
				i--
			}
			continue
		case t.typ == ast.END:
			c := matchCase(toks, i)
			if c < 0 {
				return op
			}
			i = c - 1
			continue
		case t.typ == ast.NOT && i > 0 && toks[i-1].typ == ast.IS:
		case !bindsTight(t):
			return i + 1
		}
		i--
	}
	return 0
}

// matchOpen is the index of the '(' that the ')' at close closes, or -1.
func matchOpen(toks []token, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch toks[i].typ {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// matchCase is the index of the CASE that the END at end closes, or -1.
func matchCase(toks []token, end int) int {
	depth := 0
	for i := end; i >= 0; i-- {
		switch toks[i].typ {
		case ast.END:
			depth++
		case ast.CASE:
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// bindsTight says the token can be part of a comparison's operand.
func bindsTight(t token) bool {
	switch t.typ {
	case ast.ID, ast.STRING, ast.INTEGRAL, ast.FLOAT, ast.HEXNUM, ast.HEX, ast.BIT_LITERAL, ast.VALUE_ARG,
		ast.NULL, ast.TRUE, ast.FALSE, '.', '=', '<', '>', ast.LE, ast.GE, ast.NE, ast.NULL_SAFE_EQUAL,
		ast.IS, ast.LIKE, ast.REGEXP, ast.IN, '|', '&', '^', '~', '!', '+', '-', '*', '/', '%', ast.DIV, ast.MOD,
		ast.SHIFT_LEFT, ast.SHIFT_RIGHT, ast.COLLATE, ast.BINARY, ast.INTERVAL,
		ast.JSON_EXTRACT_OP, ast.JSON_UNQUOTE_EXTRACT_OP:
		return true
	}
	v := strings.ToLower(t.val)
	if strings.HasPrefix(v, "_") || strings.HasPrefix(v, "@") {
		return true // a character set introducer or a variable
	}
	switch v {
	case "microsecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year", "unknown":
		return true
	}
	return false
}

// isFuncName says the token before a parenthesized group names a
// function rather than ending a clause.
func isFuncName(t token) bool {
	switch t.typ {
	case ast.ID, ast.IF, ast.EXISTS, ast.BINARY:
		return true
	case ast.SELECT, ast.WHERE, ast.HAVING, ast.ON, ast.WHEN, ast.THEN, ast.ELSE, ast.ELSEIF, ast.SET,
		ast.RETURN, ast.AND, ast.OR, ast.XOR, ast.NOT, ast.DISTINCT, ast.BY, ast.VALUES, ast.IN, ast.AS,
		ast.WHILE, ast.UNTIL, ast.LIMIT, ast.FROM, ast.JOIN, ast.USING, ast.ALL, ast.ANY, ast.CASE:
		return false
	}
	s := t.val
	return len(s) > 0 && isWordByte(s[0]) && !strings.HasPrefix(s, "_")
}
