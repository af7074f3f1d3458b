package server

import "strings"

// go-mysql-server accepts sql_mode NO_BACKSLASH_ESCAPES, but its parser
// keeps treating a backslash in a string literal as an escape. A client
// told the mode is on (SERVER_STATUS_NO_BACKSLASH_ESCAPES) quotes values
// by doubling quotes only, so the server must read backslashes as plain
// characters, or a value ending in a backslash would end its literal
// elsewhere. protoConn therefore doubles every backslash inside string
// literals of the statements it passes on while the mode is on.

// literalBackslashes returns q with each backslash inside a quoted string
// doubled; with ANSI_QUOTES, "..." quotes an identifier, not a string.
func literalBackslashes(q string, ansiQuotes bool) string {
	if !strings.Contains(q, `\`) {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' && !ansiQuotes:
			b.WriteByte(c)
			for i++; i < len(q); i++ {
				if q[i] == c {
					if i+1 < len(q) && q[i+1] == c { // doubled quote
						b.WriteString(q[i : i+2])
						i++
						continue
					}
					break
				}
				if q[i] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(q[i])
			}
			if i < len(q) {
				b.WriteByte(c)
			}
		case c == '`' || c == '"':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+end+2])
			i += end + 1
		case c == '#' || c == '-' && strings.HasPrefix(q[i:], "-- ") || c == '/' && strings.HasPrefix(q[i:], "/*") && !strings.HasPrefix(q[i:], "/*!"):
			end := len(q)
			if c == '/' {
				if e := strings.Index(q[i+2:], "*/"); e >= 0 {
					end = i + 2 + e + 2
				}
			} else if e := strings.IndexByte(q[i:], '\n'); e >= 0 {
				end = i + e
			}
			b.WriteString(q[i:end])
			i = end - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
