package server

import "strings"

// MySQL accepts unquoted identifiers with characters beyond ASCII
// (U+0080 to U+FFFF: CREATE TABLE café (ö INT)); vitess's lexer takes
// only ASCII letters, digits, '_' and '$'. protoConn therefore
// backquotes, in the statements it passes on, each run of identifier
// characters that has a non-ASCII byte and stands outside strings,
// quoted identifiers and comments. Such a run cannot be a keyword, a
// number or an operator, so quoting it keeps its meaning.

// hasNonASCII says whether b has a byte beyond ASCII.
func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// isUnquotedIdentByte says whether c may be part of an unquoted
// identifier.
func isUnquotedIdentByte(c byte) bool {
	return c >= 0x80 || c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// quoteNonASCIIIdents returns q with its non-ASCII unquoted identifiers
// backquoted; with ANSI_QUOTES, "..." quotes an identifier.
func quoteNonASCIIIdents(q string, ansiQuotes bool) string {
	if !hasNonASCII([]byte(q)) {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	for i := 0; i < len(q); {
		j := skipNonCode(q, i, ansiQuotes)
		if j > i {
			b.WriteString(q[i:j])
			i = j
			continue
		}
		if !isUnquotedIdentByte(q[i]) {
			b.WriteByte(q[i])
			i++
			continue
		}
		for j = i; j < len(q) && isUnquotedIdentByte(q[j]); j++ {
		}
		if hasNonASCII([]byte(q[i:j])) {
			b.WriteByte('`')
			b.WriteString(q[i:j])
			b.WriteByte('`')
		} else {
			b.WriteString(q[i:j])
		}
		i = j
	}
	return b.String()
}

// skipNonCode returns the end of the string, quoted identifier or comment
// starting at q[i], or i if none starts there. The text of a /*! ... */
// comment is code to MySQL, so only its opening is skipped.
func skipNonCode(q string, i int, ansiQuotes bool) int {
	c := q[i]
	switch {
	case c == '\'' || c == '"' && !ansiQuotes:
		return skipQuoted(q, i, c, true)
	case c == '`' || c == '"' && ansiQuotes:
		return skipQuoted(q, i, c, false)
	case c == '#' || c == '-' && strings.HasPrefix(q[i:], "-- "):
		if k := strings.IndexByte(q[i:], '\n'); k >= 0 {
			return i + k + 1
		}
		return len(q)
	case c == '/' && strings.HasPrefix(q[i:], "/*!"):
		return i + 3
	case c == '/' && strings.HasPrefix(q[i:], "/*"):
		if k := strings.Index(q[i+2:], "*/"); k >= 0 {
			return i + 2 + k + 2
		}
		return len(q)
	}
	return i
}

// skipQuoted returns the end of the quoted text starting at q[i] with
// quote character c (a doubled quote stands for one; in a string a
// backslash escapes the next byte).
func skipQuoted(q string, i int, c byte, backslash bool) int {
	for j := i + 1; j < len(q); j++ {
		switch {
		case backslash && q[j] == '\\':
			j++
		case q[j] == c:
			if j+1 < len(q) && q[j+1] == c {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}
