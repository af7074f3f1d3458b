package server

import (
	"fmt"
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// mysqlSchema answers what a dump of all databases (mariadb-dump or
// mysqldump --all-databases) sends about the mysql schema, which is
// go-mysql-server's fixed set of grant tables: no table in it can be
// dropped, created or altered, and it has no log tables.
//
// Dumping, the tools read the definition of mysql.general_log and
// mysql.slow_log whether or not they are listed; they get MySQL 8's
// (with no rows, as with log_output=FILE). Loading, the DROP TABLE,
// CREATE TABLE, ALTER TABLE and INSERT ... VALUES aimed at the mysql schema are
// skipped with a warning and a line in the server's log, so that the
// user databases of the dump load: accounts and grants are not restored
// from the dumped rows (go-mysql-server keeps them in memory, not in
// these tables) but from the statements of a dump with --system=users
// (dumpusers.go).
func (h *handler) mysqlSchema(c *mysql.Conn, query string) (*sqltypes.Result, bool, error) {
	// Most statements name no mysql table: answered before the regexp,
	// which every text statement would otherwise pay for.
	if !rsql.ContainsFold(query, "MYSQL") && !strings.EqualFold(h.currentDB(c), "mysql") {
		return nil, false, nil
	}
	m := reMysqlSchemaStmt.FindStringSubmatch(query)
	if m == nil {
		return nil, false, nil
	}
	verb, qualifier, table := strings.ToUpper(strings.Join(strings.Fields(m[1]), " ")), m[2], strings.ToLower(m[3])
	if (qualifier == "" && !strings.EqualFold(h.currentDB(c), "mysql")) ||
		(verb == "INSERT INTO" && !reDumpInsert.MatchString(query)) {
		return nil, false, nil
	}
	if verb == "SHOW CREATE TABLE" {
		def, ok := logTableDefs[table]
		if !ok {
			return nil, false, nil
		}
		return &sqltypes.Result{
			Fields: []*querypb.Field{varcharField("Table"), varcharField("Create Table")},
			Rows:   [][]sqltypes.Value{{sqltypes.NewVarChar(table), sqltypes.NewVarChar(def)}},
		}, true, nil
	}
	if err := h.s.mysqlSchemaPrivilege(c.UserData, verb, table); err != nil {
		return nil, true, err
	}
	if strings.HasPrefix(verb, "DROP") { // one line for each table of the dump
		h.s.log.Warn("skipped a statement on the mysql schema (a dump's); accounts and grants are restored from a dump with --system=users, not from these tables",
			"statement", verb, "table", "mysql."+table)
	}
	if sess := h.session(c); sess != nil {
		sess.ClearWarnings()
		sess.Warn(&gms.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet, Message: fmt.Sprintf(
			"%s `mysql`.`%s` skipped: ReorgDB does not restore the mysql schema's tables; dump accounts with mariadb-dump --system=users",
			verb, table)})
	}
	return &sqltypes.Result{}, true, nil
}

// mysqlSchemaPrivilege refuses a skipped statement with MySQL's 1142 to
// an account without the privilege it needs there.
func (s *Server) mysqlSchemaPrivilege(g mysql.Getter, verb, table string) error {
	need, cmd := gms.PrivilegeType_Insert, "INSERT"
	for _, p := range []struct {
		prefix string
		priv   gms.PrivilegeType
	}{{"DROP", gms.PrivilegeType_Drop}, {"CREATE", gms.PrivilegeType_Create}, {"ALTER", gms.PrivilegeType_Alter}} {
		if strings.HasPrefix(verb, p.prefix) {
			need, cmd = p.priv, p.prefix
		}
	}
	u, ok := g.(gms.MysqlConnectionUser)
	if !ok {
		return mysql.NewSQLError(1142, "42000", "%s command denied to user for table '%s'", cmd, table)
	}
	db := s.engine.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	if user := db.GetUser(rd, u.User, u.Host, false); user != nil &&
		(user.PrivilegeSet.Has(need) || user.PrivilegeSet.Database("mysql").Has(need)) {
		return nil
	}
	return mysql.NewSQLError(1142, "42000", "%s command denied to user '%s'@'%s' for table '%s'", cmd, u.User, u.Host, table)
}

// reMysqlSchemaStmt: a statement of a dump on a table, with its verb,
// schema qualifier and table name; a version comment (/*!40000 ALTER
// TABLE ... DISABLE KEYS */) counts as its content.
var reMysqlSchemaStmt = regexp.MustCompile("(?is)^\\s*(?:/\\*!\\d*\\s*)?" +
	`(SHOW\s+CREATE\s+TABLE|DROP\s+TABLE\s+IF\s+EXISTS|CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE|INSERT\s+INTO)\s+` +
	"(?:(`mysql`|mysql)\\s*\\.\\s*)?`?(\\w+)`?(?:\\s|\\(|;|\\*/|$)")

// reDumpInsert is a dump's INSERT, with no column list: one with a
// column list (an account written by hand) is left to go-mysql-server.
var reDumpInsert = regexp.MustCompile("(?is)^\\s*INSERT\\s+INTO\\s+(?:`?mysql`?\\s*\\.\\s*)?`?\\w+`?\\s+VALUES\\b")

// logTableDefs are MySQL 8's definitions of the log tables.
var logTableDefs = map[string]string{
	"general_log": "CREATE TABLE `general_log` (\n" +
		"  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `command_type` varchar(64) NOT NULL,\n" +
		"  `argument` mediumblob NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
	"slow_log": "CREATE TABLE `slow_log` (\n" +
		"  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `query_time` time(6) NOT NULL,\n" +
		"  `lock_time` time(6) NOT NULL,\n" +
		"  `rows_sent` int NOT NULL,\n" +
		"  `rows_examined` int NOT NULL,\n" +
		"  `db` varchar(512) NOT NULL,\n" +
		"  `last_insert_id` int NOT NULL,\n" +
		"  `insert_id` int NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `sql_text` mediumblob NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
}
