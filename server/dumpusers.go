package server

import (
	"regexp"
	"strings"
)

// mariadb-dump --system=users dumps a MySQL 8 server's accounts by reading
// mysql.user, mysql.role_edges and mysql.default_roles, SHOW CREATE USER
// and SHOW GRANTS, and writes statements that go-mysql-server's grammar
// or schema lack in places. dumpCompat gives the text of such a
// statement the meaning MySQL 8 gives it before go-mysql-server parses
// it; the account statements themselves are in roles.go.

// dumpCompat returns q as go-mysql-server is to read it.
func dumpCompat(q string) string {
	if strings.Count(q, "/*") > 1 {
		q = unnestComments(q)
	}
	if strings.Contains(q, "default_roles") || strings.Contains(q, "DEFAULT_ROLES") {
		q = emptyDefaultRoles(q)
	}
	return q
}

// unnestComments drops the comments nested in an executable comment
// (/*!80001 CREATE ROLE 'r'/*!80001 @'%'*/ */): MySQL discards them,
// while vitess's lexer would end the outer comment at the inner one's
// end. A MariaDB-only comment (/*M!...*/) is skipped whole by MySQL 8;
// mariadb-dump nests one in it too, and it stays one comment here, where
// MySQL 8 would fail on the text after the inner comment.
func unnestComments(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); {
		j := skipNonCode(q, i, false)
		switch {
		case j > i && !strings.HasPrefix(q[i:], "/*"):
			b.WriteString(q[i:j]) // a string or quoted identifier
			i = j
		case strings.HasPrefix(q[i:], "/*!") || strings.HasPrefix(q[i:], "/*M!"):
			end, body := executableComment(q, i)
			b.WriteString(body)
			i = end
		case j > i:
			b.WriteString(q[i:j])
			i = j
		default:
			b.WriteByte(q[i])
			i++
		}
	}
	return b.String()
}

// executableComment reads the /*! or /*M! comment at q[i]: the index past
// its closing */ and its text with the comments nested in it dropped.
func executableComment(q string, i int) (int, string) {
	var b strings.Builder
	b.WriteString(q[i : i+3])
	for k := i + 3; k < len(q); {
		switch {
		case strings.HasPrefix(q[k:], "*/"):
			b.WriteString("*/")
			return k + 2, b.String()
		case strings.HasPrefix(q[k:], "/*"):
			end := strings.Index(q[k+2:], "*/")
			if end < 0 {
				return len(q), b.String() + q[k:]
			}
			k += 2 + end + 2
		case q[k] == '\'' || q[k] == '"' || q[k] == '`':
			end := skipNonCode(q, k, false)
			b.WriteString(q[k:end])
			k = end
		default:
			b.WriteByte(q[k])
			k++
		}
	}
	return len(q), b.String()
}

// reDefaultRoles is a reference to mysql.default_roles, with its alias.
var reDefaultRoles = regexp.MustCompile("(?i)(?:`mysql`|\\bmysql)\\s*\\.\\s*(?:`default_roles`|default_roles\\b)(\\s+(?:AS\\s+)?(`[^`]+`|\\w+))?")

// emptyDefaultRolesTable is mysql.default_roles, which go-mysql-server's
// mysql schema lacks: with MySQL 8's columns and no rows, since every role
// granted to an account is active in its sessions (roles.go) and none is
// recorded as a default.
const emptyDefaultRolesTable = "(SELECT CAST('' AS CHAR(255)) AS `HOST`, CAST('' AS CHAR(32)) AS `USER`," +
	" CAST('' AS CHAR(255)) AS `DEFAULT_ROLE_HOST`, CAST('' AS CHAR(32)) AS `DEFAULT_ROLE_USER` LIMIT 0)"

// notAlias are the words that may follow a table reference and are not
// its alias.
var notAlias = map[string]bool{"using": true, "on": true, "where": true, "join": true, "left": true,
	"right": true, "inner": true, "cross": true, "natural": true, "straight_join": true, "group": true,
	"order": true, "limit": true, "having": true, "union": true, "window": true, "for": true, "lock": true,
	"into": true, "full": true, "outer": true, "except": true, "intersect": true}

// emptyDefaultRoles reads each mysql.default_roles of q as an empty table.
func emptyDefaultRoles(q string) string {
	var b strings.Builder
	last := 0
	for _, m := range reDefaultRoles.FindAllStringSubmatchIndex(q, -1) {
		if inString(q, m[0]) {
			continue
		}
		b.WriteString(q[last:m[0]])
		b.WriteString(emptyDefaultRolesTable)
		switch {
		case m[4] >= 0 && !notAlias[strings.ToLower(q[m[4]:m[5]])]:
			b.WriteString(" AS " + q[m[4]:m[5]])
		case m[2] >= 0:
			b.WriteString(" AS `default_roles`" + q[m[2]:m[3]])
		default:
			b.WriteString(" AS `default_roles`")
		}
		last = m[1]
	}
	return b.String() + q[last:]
}

// inString reports whether q[pos] is inside a string literal.
func inString(q string, pos int) bool {
	for i := 0; i < pos; {
		j := skipNonCode(q, i, false)
		if j > pos && (q[i] == '\'' || q[i] == '"') {
			return true
		}
		i = max(j, i+1)
	}
	return false
}
