package server

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// precheck refuses, before go-mysql-server sees them, statements it would
// mishandle: it returns MySQL's error for them, or nil.
func (h *handler) precheck(c *mysql.Conn, query string) error {
	if t := strings.TrimLeft(query, " \t\r\n"); len(t) > 4 && strings.EqualFold(t[:4], "kill") {
		if err := h.checkKill(query); err != nil {
			return err
		}
	}
	if err := h.checkKeyLimits(c, query); err != nil {
		return err
	}
	if strings.Contains(query, "@@") {
		if near, bad := emptySysVar(query); bad {
			return errSyntax(near)
		}
	}
	return nil
}

// checkPreparedRequire refuses a prepared CREATE USER, ALTER USER or
// GRANT with a REQUIRE clause, which only the text protocol records
// (accountTLSBefore).
func checkPreparedRequire(query string) error {
	if verb, object := leadingTokens(query); object != sqlparser.USER && verb != sqlparser.GRANT {
		return nil
	}
	if _, _, _, found := requireClause(query); found {
		return mysql.NewSQLError(1295, mysql.SSUnknownSQLState,
			"This command is not supported in the prepared statement protocol yet")
	}
	return nil
}

// checkKill refuses KILL of a connection that does not exist (1094);
// go-mysql-server reports success.
func (h *handler) checkKill(query string) error {
	if m := reKill.FindStringSubmatch(query); m != nil {
		id, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil || id > 1<<32-1 || h.s.connState(uint32(id)) == nil {
			return errUnknownThread(m[1])
		}
	}
	return nil
}

var reKill = regexp.MustCompile(`(?is)^\s*KILL\s+(?:(?:CONNECTION|QUERY)\s+)?(\d+)\s*;?\s*$`)

func errUnknownThread(id string) error {
	return mysql.NewSQLError(mysql.ERNoSuchThread, mysql.SSUnknownSQLState, "Unknown thread id: %s", id)
}

// errSyntax is MySQL's 1064 for a statement that stops making sense at near.
func errSyntax(near string) error {
	return mysql.NewSQLError(mysql.ERParseError, "42000",
		"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line 1", near)
}

// emptySysVar finds a system variable reference with no name (@@, or
// @@session. and the like) outside quotes and comments, which
// go-mysql-server's planner panics on, and returns the text from there.
func emptySysVar(q string) (string, bool) {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'', '"', '`':
			for i++; i < len(q) && q[i] != c; i++ {
				if q[i] == '\\' && c != '`' {
					i++
				}
			}
		case '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case '-':
			if strings.HasPrefix(q[i:], "-- ") {
				for i < len(q) && q[i] != '\n' {
					i++
				}
			}
		case '/':
			if strings.HasPrefix(q[i:], "/*") && !strings.HasPrefix(q[i:], "/*!") {
				if end := strings.Index(q[i+2:], "*/"); end >= 0 {
					i += end + 3
				} else {
					i = len(q)
				}
			}
		case '@':
			if !strings.HasPrefix(q[i:], "@@") {
				continue
			}
			j := i + 2
			lower := strings.ToLower(q[j:])
			for _, scope := range []string{"global.", "session.", "local.", "persist.", "persist_only."} {
				if strings.HasPrefix(lower, scope) {
					j += len(scope)
					break
				}
			}
			if j >= len(q) || !isIdentByte(q[j]) {
				return q[i+2:], true
			}
			i = j
		}
	}
	return "", false
}

func isIdentByte(b byte) bool {
	return b == '_' || b == '$' || b == '`' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}
