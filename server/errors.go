package server

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	errorkinds "gopkg.in/src-d/go-errors.v1"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/kv"
	rsql "github.com/reorgdb/reorgdb/sql"
)

// This file is the one place where errors get MySQL's codes and texts.
//
// go-mysql-server returns typed errors (errors.Kind values such as
// sql.ErrUnknownSystemVariable), but its handler turns every error into a
// *mysql.SQLError (sql.CastSQLError) before ReorgDB's handler sees it, with
// code 1105 for most kinds and the kind's formatted message. kindErrors
// recognises a kind by matching the message against the kind's own format
// (so a change of wording in go-mysql-server moves with the kind), takes
// the format's arguments back out, and builds MySQL's error from them.

// stmtInfo is what is known of the statement that failed, for errors
// whose MySQL text names a column or row go-mysql-server does not report.
type stmtInfo struct {
	query string
	// qualify names the database of table name as the statement does.
	qualify func(name string) string
	// clause names the clause where the statement uses column col.
	clause func(col string) string
	// mismatchedRow is the row of an INSERT with the wrong value count.
	mismatchedRow func() int
	currentDB     func() string
	// foreignKey is MySQL's text of foreign key name of child table
	// table (ForeignKeyText); fkChild names the child of parent that has
	// foreign key name.
	foreignKey func(table, name string) (string, bool)
	fkChild    func(parent, name string) string
	// stmtForeignKey is the foreign key an ALTER TABLE adds;
	// columnForeignKey the one that holds a column of the table it alters.
	stmtForeignKey   func() (catalog.ForeignKey, bool)
	columnForeignKey func(col string) (catalog.ForeignKey, bool)
	// locate finds the column (its name and declared type) and the row
	// (1-based) where the statement gave value to a column named col
	// ("" for any) whose type typeOK accepts; nil when unknown.
	locate func(value, col string, typeOK func(string) bool) (column, typ string, row int, ok bool)
}

// errCheckNotFound is go-mysql-server's DROP CHECK of a check the table
// does not have, which it makes with fmt.Errorf.
var errCheckNotFound = errorkinds.NewKind("check '%s' was not found on the table")

// fkText is MySQL's text of foreign key name of child table table.
func fkText(st *stmtInfo, table, name string) string {
	table, name = unquote(table), unquote(name)
	if name == "" && st != nil && st.stmtForeignKey != nil {
		// go-mysql-server names an unnamed key after checking the rows.
		if fk, ok := st.stmtForeignKey(); ok {
			name = fk.Name
		}
	}
	if st != nil && st.foreignKey != nil {
		if s, ok := st.foreignKey(table, name); ok {
			return s
		}
	}
	return "(" + gms.QuoteIdentifier(table) + ", CONSTRAINT " + gms.QuoteIdentifier(name) + ")"
}

// fixError maps an error without knowing the statement.
func fixError(err error) error { return mapError(err, nil) }

// kindError maps one go-mysql-server error kind to MySQL's error.
type kindError struct {
	kind *errorkinds.Kind
	re   *regexp.Regexp
	// mysql builds the error from the kind's format arguments.
	mysql func(args []string, st *stmtInfo) error
}

func sqlErr(code int, state, format string, args ...any) error {
	return mysql.NewSQLError(code, state, format, args...)
}

// kindPattern turns a kind's format into a regexp capturing its arguments;
// Kind.Wrap's ": cause" suffix is allowed.
func kindPattern(format string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteString(regexp.QuoteMeta(string(c)))
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*", format[j]) >= 0 {
			j++
		}
		if j < len(format) && format[j] == '%' {
			b.WriteString("%")
		} else {
			b.WriteString(`(.*?)`)
		}
		i = j
	}
	b.WriteString(`(?:: .*)?$`)
	return regexp.MustCompile(b.String())
}

func byKind(k *errorkinds.Kind, f func(args []string, st *stmtInfo) error) kindError {
	return kindError{kind: k, re: kindPattern(k.Message), mysql: f}
}

// columnAndRow names the column (and its type) and the row of a value a
// statement could not store, as far as the statement tells.
func columnAndRow(st *stmtInfo, value, col string, typeOK func(string) bool) (string, string, int) {
	if st != nil && st.locate != nil {
		if c, t, row, ok := st.locate(value, col, typeOK); ok {
			return c, t, row
		}
	}
	return "", "", 1
}

func typePrefix(p ...string) func(string) bool {
	return func(t string) bool {
		t = strings.ToLower(t)
		for _, x := range p {
			if strings.HasPrefix(t, x) {
				return true
			}
		}
		return false
	}
}

// kindErrors, most common first.
var reDiskFull = regexp.MustCompile(regexp.QuoteMeta(kv.ErrDiskFull.Error()) + ` \(([^)]*)\)`)

var kindErrors = []kindError{
	byKind(gms.ErrJSONIndex, func(a []string, _ *stmtInfo) error {
		return sqlErr(3152, "42000", "JSON column '%s' supports indexing only via generated columns on a specified JSON path.", a[0])
	}),
	byKind(gms.ErrCharSetUnknown, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERUnknownCharacterSet, "42000", "Unknown character set: '%s'", a[0])
	}),
	byKind(gms.ErrCollationUnknown, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERUnknownCollation, "HY000", "Unknown collation: '%s'", a[0])
	}),
	byKind(gms.ErrForeignKeyChildViolation, func(a []string, st *stmtInfo) error {
		return sqlErr(mysql.ErNoReferencedRow2, "23000", "Cannot add or update a child row: a foreign key constraint fails %s", fkText(st, a[1], a[0]))
	}),
	byKind(gms.ErrForeignKeyParentViolation, func(a []string, st *stmtInfo) error {
		return sqlErr(mysql.ERRowIsReferenced2, "23000", "Cannot delete or update a parent row: a foreign key constraint fails %s", fkText(st, a[1], a[0]))
	}),
	// A key whose parent is gone (dropped under foreign_key_checks = 0).
	byKind(gms.ErrForeignKeyNotResolved, func(a []string, st *stmtInfo) error {
		return sqlErr(mysql.ErNoReferencedRow2, "23000", "Cannot add or update a child row: a foreign key constraint fails %s", fkText(st, a[1], a[2]))
	}),
	byKind(gms.ErrCheckConstraintViolated, func(a []string, _ *stmtInfo) error {
		return sqlErr(3819, "HY000", "Check constraint '%s' is violated.", unquote(a[0]))
	}),
	byKind(gms.ErrForeignKeyDropTable, func(a []string, st *stmtInfo) error {
		child := ""
		if st != nil && st.fkChild != nil {
			child = st.fkChild(unquote(a[0]), unquote(a[1]))
		}
		return sqlErr(3730, "HY000", "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", unquote(a[0]), unquote(a[1]), child)
	}),
	byKind(gms.ErrTruncateReferencedFromForeignKey, func(a []string, st *stmtInfo) error {
		db := ""
		if st != nil && st.currentDB != nil {
			db = st.currentDB()
		}
		return sqlErr(1701, "42000", "Cannot truncate a table referenced in a foreign key constraint (%s.%s, CONSTRAINT %s)",
			gms.QuoteIdentifier(db), gms.QuoteIdentifier(a[2]), gms.QuoteIdentifier(a[1]))
	}),
	byKind(gms.ErrForeignKeyMissingReferenceIndex, func(a []string, _ *stmtInfo) error {
		return sqlErr(1822, "HY000", "Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'", unquote(a[0]), unquote(a[1]))
	}),
	byKind(gms.ErrForeignKeyDropIndex, func(a []string, _ *stmtInfo) error {
		return sqlErr(1553, "HY000", "Cannot drop index '%s': needed in a foreign key constraint", unquote(a[0]))
	}),
	byKind(gms.ErrForeignKeyDropColumn, func(a []string, _ *stmtInfo) error {
		return sqlErr(1828, "HY000", "Cannot drop column '%s': needed in a foreign key constraint '%s'", unquote(a[0]), unquote(a[1]))
	}),
	byKind(gms.ErrForeignKeyNotFound, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", unquote(a[0]))
	}),
	byKind(gms.ErrMultiplePrimaryKeysDefined, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERMultiplePriKey, "42000", "Multiple primary key defined")
	}),
	byKind(gms.ErrTemporaryTablesForeignKeySupport, func([]string, *stmtInfo) error {
		return sqlErr(1215, "HY000", "Cannot add foreign key constraint")
	}),
	byKind(gms.ErrForeignKeySetDefault, func([]string, *stmtInfo) error {
		return sqlErr(1215, "HY000", "Cannot add foreign key constraint")
	}),
	byKind(gms.ErrForeignKeySetNullNonNullable, func(a []string, st *stmtInfo) error {
		name := ""
		if st != nil && st.stmtForeignKey != nil {
			if fk, ok := st.stmtForeignKey(); ok {
				name = fk.Name
			}
		}
		return sqlErr(1830, "HY000", "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL", unquote(a[0]), name)
	}),
	byKind(gms.ErrForeignKeyColumnTypeMismatch, func(a []string, st *stmtInfo) error {
		if st != nil && st.stmtForeignKey != nil {
			if fk, ok := st.stmtForeignKey(); ok {
				return rsql.IncompatibleKeyError(fk)
			}
		}
		return sqlErr(1215, "HY000", "Cannot add foreign key constraint")
	}),
	byKind(gms.ErrForeignKeyTypeChange, func(a []string, st *stmtInfo) error {
		if st != nil && st.columnForeignKey != nil {
			if fk, ok := st.columnForeignKey(unquote(a[0])); ok {
				return rsql.IncompatibleKeyError(fk)
			}
		}
		return sqlErr(1215, "HY000", "Cannot add foreign key constraint")
	}),
	byKind(gms.ErrForeignKeyDepthLimit, func([]string, *stmtInfo) error {
		return sqlErr(3008, "HY000", "Foreign key cascade delete/update exceeds max depth of 15.")
	}),
	byKind(errCheckNotFound, func(a []string, _ *stmtInfo) error {
		return sqlErr(3940, "HY000", "Constraint '%s' does not exist.", a[0])
	}),
	byKind(gms.ErrCheckConstraintInvalidatedByColumnAlter, func(a []string, _ *stmtInfo) error {
		return sqlErr(3959, "HY000", "Check constraint '%s' uses column '%s', hence column cannot be dropped or renamed.", unquote(a[1]), unquote(a[0]))
	}),
	byKind(gms.ErrUnknownConstraint, func(a []string, _ *stmtInfo) error {
		return sqlErr(3940, "HY000", "Constraint '%s' does not exist.", unquote(a[0]))
	}),
	byKind(gms.ErrGeneratedColumnValue, func(a []string, _ *stmtInfo) error {
		return sqlErr(3105, "HY000", "The value specified for generated column '%s' in table '%s' is not allowed.", unquote(a[0]), unquote(a[1]))
	}),
	byKind(gms.ErrFullTextNotSupported, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERNotSupportedYet, "42000", "This version of ReorgDB doesn't yet support 'FULLTEXT, SPATIAL and VECTOR indexes'")
	}),
	byKind(gms.ErrFullTextDatabaseNotSupported, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERNotSupportedYet, "42000", "This version of ReorgDB doesn't yet support 'FULLTEXT, SPATIAL and VECTOR indexes'")
	}),
	byKind(gms.ErrNoDatabaseSelected, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERNoDb, "3D000", "No database selected")
	}),
	byKind(types.ErrLengthBeyondLimit, func(a []string, st *stmtInfo) error {
		_, _, row := columnAndRow(st, a[0], a[1], nil)
		return sqlErr(mysql.ERDataTooLong, "22001", "Data too long for column '%s' at row %d", a[1], row)
	}),
	byKind(gms.ErrValueOutOfRange, func(a []string, st *stmtInfo) error {
		// a[1] is the column's type as go-mysql-server prints it
		// ("tinyint", "int unsigned", "decimal(5,2)").
		base, _, _ := strings.Cut(a[1], "(")
		base, _, _ = strings.Cut(base, " ")
		col, _, row := columnAndRow(st, a[0], "", typePrefix(base))
		if col == "" {
			// No column to name (not an INSERT or UPDATE of a literal):
			// MySQL's text for an expression out of range.
			return sqlErr(mysql.ERDataOutOfRange, "22003", "%s value is out of range in '%s'", strings.ToUpper(a[1]), a[0])
		}
		return sqlErr(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s' at row %d", col, row)
	}),
	byKind(types.ErrConvertingToTime, func(a []string, st *stmtInfo) error {
		col, typ, row := columnAndRow(st, a[0], "", typePrefix("date", "time", "year"))
		if col == "" {
			return sqlErr(mysql.ERTruncatedWrongValue, "22007", "Incorrect datetime value: '%s'", a[0])
		}
		kind := "datetime"
		switch {
		case typePrefix("datetime", "timestamp")(typ):
		case typePrefix("date")(typ):
			kind = "date"
		case typePrefix("time")(typ):
			kind = "time"
		case typePrefix("year")(typ):
			kind = "year"
		}
		return sqlErr(mysql.ERTruncatedWrongValue, "22007", "Incorrect %s value: '%s' for column '%s' at row %d", kind, a[0], col, row)
	}),
	byKind(types.ErrConvertingToYear, func(a []string, st *stmtInfo) error {
		col, _, row := columnAndRow(st, a[0], "", typePrefix("year"))
		if _, err := strconv.ParseFloat(strings.TrimSpace(a[0]), 64); err == nil {
			return sqlErr(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s' at row %d", col, row)
		}
		return sqlErr(1366, "HY000", "Incorrect integer value: '%s' for column '%s' at row %d", a[0], col, row)
	}),
	byKind(types.ErrConvertingToTimeType, func(a []string, st *stmtInfo) error {
		col, _, row := columnAndRow(st, a[0], "", typePrefix("time"))
		if col == "" {
			return sqlErr(mysql.ERTruncatedWrongValue, "22007", "Incorrect time value: '%s'", a[0])
		}
		return sqlErr(mysql.ERTruncatedWrongValue, "22007", "Incorrect time value: '%s' for column '%s' at row %d", a[0], col, row)
	}),
	byKind(gms.ErrUnknownSystemVariable, func(a []string, _ *stmtInfo) error {
		name := strings.TrimPrefix(a[0], "@@")
		for _, scope := range []string{"global.", "session.", "local.", "persist.", "persist_only."} {
			if len(name) > len(scope) && strings.EqualFold(name[:len(scope)], scope) {
				name = name[len(scope):]
				break
			}
		}
		return sqlErr(mysql.ERUnknownSystemVariable, mysql.SSUnknownSQLState, "Unknown system variable '%s'", name)
	}),
	byKind(gms.ErrInvalidSystemVariableValue, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERWrongValueForVar, "42000", "Variable '%s' can't be set to the value of '%s'", a[0], a[1])
	}),
	byKind(gms.ErrUnknownPreparedStatement, func(a []string, st *stmtInfo) error {
		to := "EXECUTE"
		if st != nil && statementType(st.query) == "other" && reDeallocate.MatchString(st.query) {
			to = "DEALLOCATE PREPARE"
		}
		return sqlErr(1243, mysql.SSUnknownSQLState, "Unknown prepared statement handler (%s) given to %s", a[0], to)
	}),
	byKind(planbuilder.ErrUnionSchemasDifferentLength, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERWrongNumberOfColumnsInSelect, "21000", "The used SELECT statements have a different number of columns")
	}),
	byKind(gms.ErrDuplicateColumn, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERDupFieldName, "42S21", "Duplicate column name '%s'", a[0])
	}),
	byKind(gms.ErrInvalidIdentifier, func(a []string, _ *stmtInfo) error {
		// go-mysql-server's only reason for it is the length.
		return sqlErr(mysql.ERTooLongIdent, "42000", "Identifier name '%s' is too long", a[0])
	}),
	byKind(gms.ErrInsertIntoNonNullableDefaultNullColumn, func(a []string, _ *stmtInfo) error {
		return sqlErr(1364, mysql.SSUnknownSQLState, "Field '%s' doesn't have a default value", a[0])
	}),
	byKind(gms.ErrInsertIntoNonNullableProvidedNull, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERBadNullError, "23000", "Column '%s' cannot be null", a[0])
	}),
	byKind(gms.ErrInsertIntoMismatchValueCount, func(_ []string, st *stmtInfo) error {
		row := 1
		if st != nil && st.mismatchedRow != nil {
			row = st.mismatchedRow()
		}
		return sqlErr(mysql.ERWrongValueCountOnRow, "21S01", "Column count doesn't match value count at row %d", row)
	}),
	byKind(gms.ErrInvalidValue, func(a []string, st *stmtInfo) error {
		base, _, _ := strings.Cut(a[1], "(")
		base, _, _ = strings.Cut(base, " ")
		word := strings.ToLower(base)
		switch word {
		case "tinyint", "smallint", "mediumint", "int", "bigint":
			word = "integer"
		case "float", "double":
			word = "double"
		}
		col, _, row := columnAndRow(st, a[0], "", typePrefix(strings.ToLower(base)))
		if col == "" {
			return sqlErr(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState, "Incorrect %s value: '%s'", word, a[0])
		}
		return sqlErr(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState, "Incorrect %s value: '%s' for column '%s' at row %d", word, a[0], col, row)
	}),
	byKind(types.ErrConvertingToEnum, func(a []string, st *stmtInfo) error {
		col, _, row := columnAndRow(st, a[0], "", typePrefix("enum"))
		return sqlErr(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s' at row %d", col, row)
	}),
	byKind(gms.ErrInvalidSetValue, func(a []string, st *stmtInfo) error {
		if st != nil && statementType(st.query) == "set" {
			if v := setVariable(st.query); v != "" {
				return sqlErr(mysql.ERWrongValueForVar, "42000", "Variable '%s' can't be set to the value of '%s'", v, a[0])
			}
		}
		col, _, row := columnAndRow(st, a[0], "", typePrefix("set"))
		return sqlErr(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s' at row %d", col, row)
	}),
	byKind(types.ErrConvertToDecimalLimit, func(_ []string, st *stmtInfo) error {
		col, _, row := columnAndRow(st, "", "", typePrefix("decimal"))
		return sqlErr(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s' at row %d", col, row)
	}),
	byKind(gms.ErrTableAccessDeniedForUser, func(a []string, st *stmtInfo) error {
		cmd := "SELECT"
		if st != nil {
			if w := statementType(st.query); w != "other" {
				cmd = strings.ToUpper(w)
			}
		}
		return sqlErr(1142, "42000", "%s command denied to user %s for table '%s'", cmd, a[0], a[1])
	}),
	byKind(gms.ErrDatabaseAccessDeniedForUser, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERDBAccessDenied, "42000", "Access denied for user %s to database '%s'", a[0], a[1])
	}),
	byKind(gms.ErrPrivilegeCheckFailed, func(a []string, st *stmtInfo) error {
		priv := "SUPER"
		if st != nil {
			if m := reCreateTemp.FindStringSubmatch(st.query); m != nil {
				return errTempDenied(a[0], m[1], st)
			}
			// go-mysql-server refuses a write to a table this way too.
			if m := reWriteTarget.FindStringSubmatch(st.query); m != nil {
				table := strings.Trim(m[2], "`")
				if i := strings.LastIndex(table, "."); i >= 0 {
					table = strings.Trim(table[i+1:], "`")
				}
				return sqlErr(1142, "42000", "%s command denied to user %s for table '%s'", strings.ToUpper(m[1]), a[0], table)
			}
			if m := rePrivNeeded.FindStringSubmatch(st.query); m != nil {
				priv = privFor[strings.ToUpper(strings.Join(strings.Fields(m[1]), " "))]
			}
		}
		return sqlErr(mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the %s privilege(s) for this operation", priv)
	}),
	byKind(gms.ErrExistingView, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERTableExists, "42S01", "Table '%s' already exists", a[1])
	}),
	// DROP TEMPORARY TABLE of an ordinary table.
	byKind(gms.ErrUnknownTable, func(a []string, st *stmtInfo) error {
		return errUnknownTable(qualifiedTable(a[0], st))
	}),
	byKind(gms.ErrViewDoesNotExist, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERBadTable, "42S02", "Unknown table '%s.%s'", a[0], a[1])
	}),
	byKind(gms.ErrStoredProcedureAlreadyExists, func(a []string, _ *stmtInfo) error {
		return sqlErr(1304, "42000", "PROCEDURE %s already exists", a[0])
	}),
	byKind(gms.ErrStoredProcedureDoesNotExist, func(a []string, _ *stmtInfo) error {
		return sqlErr(1305, "42000", "PROCEDURE %s does not exist", a[0])
	}),
	byKind(gms.ErrTriggerDoesNotExist, func(a []string, _ *stmtInfo) error {
		return sqlErr(1360, "HY000", "Trigger does not exist")
	}),
	byKind(gms.ErrIncompatibleDefaultType, func(_ []string, st *stmtInfo) error {
		col := ""
		if st != nil {
			for _, re := range reDefaultColumn {
				if m := re.FindStringSubmatch(st.query); m != nil {
					col = m[1]
					break
				}
			}
		}
		return sqlErr(mysql.ERInvalidDefault, "42000", "Invalid default value for '%s'", col)
	}),
	byKind(gms.ErrColumnNotFound, func(a []string, st *stmtInfo) error {
		col := unquote(a[0])
		clause := "field list"
		if st != nil && st.clause != nil {
			clause = st.clause(col)
		}
		return sqlErr(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in '%s'", col, clause)
	}),
	byKind(gms.ErrUnknownColumn, func(a []string, _ *stmtInfo) error {
		// go-mysql-server names the table; MySQL the INSERT's field list.
		return sqlErr(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in 'field list'", a[0])
	}),
	byKind(gms.ErrAmbiguousColumnName, func(a []string, st *stmtInfo) error {
		col := unquote(a[0])
		clause := "field list"
		if st != nil && st.clause != nil {
			clause = st.clause(col)
		}
		return sqlErr(mysql.ERNonUniq, "23000", "Column '%s' in %s is ambiguous", col, clause)
	}),
	byKind(gms.ErrTableColumnNotFound, func(a []string, st *stmtInfo) error {
		if st != nil && reDrop.MatchString(st.query) {
			return sqlErr(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", unquote(a[1]))
		}
		return sqlErr(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in '%s'", unquote(a[1]), unquote(a[0]))
	}),
	byKind(gms.ErrColumnExists, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERDupFieldName, "42S21", "Duplicate column name '%s'", unquote(a[0]))
	}),
	byKind(gms.ErrDatabaseExists, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERDbCreateExists, mysql.SSUnknownSQLState, "Can't create database '%s'; database exists", a[0])
	}),
	byKind(gms.ErrDuplicateAliasOrTable, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERNonUniqTable, "42000", "Not unique table/alias: '%s'", a[0])
	}),
	byKind(gms.ErrColumnNumberDoesNotMatch, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERWrongNumberOfColumnsInSelect, "21000", "The used SELECT statements have a different number of columns")
	}),
	byKind(gms.ErrSystemVariableGlobalOnly, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERGlobalVariable, mysql.SSUnknownSQLState, "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL", a[0])
	}),
	byKind(gms.ErrSystemVariableSessionOnly, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERLocalVariable, mysql.SSUnknownSQLState, "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL", a[0])
	}),
	byKind(gms.ErrSystemVariableReadOnly, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERIncorrectGlobalLocalVar, mysql.SSUnknownSQLState, "Variable '%s' is a read only variable", a[0])
	}),
	byKind(gms.ErrInvalidOperandColumns, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.EROperandColumns, "21000", "Operand should contain %s column(s)", a[0])
	}),
	byKind(gms.ErrColumnCountMismatch, func(_ []string, st *stmtInfo) error {
		// The derived table of a rewritten x > ANY (subquery)
		// (sql.RewriteQuantified) has one column.
		if st != nil && strings.Contains(st.query, rsql.QuantTable) {
			return sqlErr(mysql.EROperandColumns, "21000", "Operand should contain 1 column(s)")
		}
		return sqlErr(1353, "HY000", "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")
	}),
	byKind(gms.ErrSavepointDoesNotExist, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERSPDoesNotExist, "42000", "SAVEPOINT %s does not exist", a[0])
	}),
	byKind(gms.ErrFunctionNotFound, func(a []string, st *stmtInfo) error {
		if st != nil && st.currentDB != nil {
			if db := st.currentDB(); db != "" {
				return sqlErr(mysql.ERSPDoesNotExist, "42000", "FUNCTION %s.%s does not exist", db, a[0])
			}
		}
		return sqlErr(mysql.ERSPDoesNotExist, "42000", "FUNCTION %s does not exist", a[0])
	}),
	byKind(gms.ErrInvalidArgumentNumber, func(a []string, st *stmtInfo) error {
		name := a[0]
		if st != nil {
			if i := strings.Index(strings.ToLower(st.query), strings.ToLower(name)+"("); i >= 0 {
				name = st.query[i : i+len(name)]
			}
		}
		return sqlErr(1582, "42000", "Incorrect parameter count in the call to native function '%s'", name)
	}),
	byKind(gms.ErrInvalidAutoIncCols, func([]string, *stmtInfo) error {
		return sqlErr(mysql.ERWrongAutoKey, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key")
	}),
	byKind(types.ErrLengthTooLarge, func(a []string, st *stmtInfo) error {
		col := ""
		if st != nil {
			col = columnWithLength(st.query, a[0])
		}
		return sqlErr(mysql.ERTooBigFieldLength, "42000", "Column length too big for column '%s' (max = %s); use BLOB or TEXT instead", col, a[1])
	}),
	byKind(gms.ErrGrantUserDoesNotExist, func([]string, *stmtInfo) error {
		return sqlErr(1410, "42000", "You are not allowed to create a user with GRANT")
	}),
	byKind(gms.ErrUserCreationFailure, func(a []string, _ *stmtInfo) error {
		return sqlErr(1396, mysql.SSUnknownSQLState, "Operation CREATE USER failed for %s", a[0])
	}),
	byKind(gms.ErrKeyColumnDoesNotExist, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERKeyColumnDoesNotExist, "42000", "Key column '%s' doesn't exist in table", a[0])
	}),
	byKind(analyzererrors.ErrValidationGroupBy, func(a []string, st *stmtInfo) error {
		// MySQL names the select-list position and the column with its
		// database.
		col := a[0]
		pos := 1
		if st != nil {
			pos = selectPosition(st.query, col)
			if st.currentDB != nil && strings.Count(col, ".") == 1 {
				if db := st.currentDB(); db != "" {
					col = db + "." + col
				}
			}
		}
		return sqlErr(mysql.ERWrongFieldWithGroup, "42000", "Expression #%d of SELECT list is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by", pos, col)
	}),
	byKind(gms.ErrColumnSpecifiedTwice, func(a []string, _ *stmtInfo) error {
		return sqlErr(mysql.ERFieldSpecifiedTwice, "42000", "Column '%s' specified twice", a[0])
	}),
	byKind(gms.ErrInvalidJson, func(a []string, st *stmtInfo) error {
		// MySQL also names the position in the text, which
		// go-mysql-server's JSON decoder does not report.
		col, _, _ := columnAndRow(st, "", "", typePrefix("json"))
		if col == "" {
			return sqlErr(3141, "22032", "Invalid JSON text in argument 1 to function cast_as_json: \"%s\".", a[0])
		}
		return sqlErr(3140, "22032", "Invalid JSON text: \"%s\" in value for column '%s'.", a[0], col)
	}),
	byKind(gms.ErrReadOnlyTransaction, func([]string, *stmtInfo) error {
		return sqlErr(1792, "25006", "Cannot execute statement in a READ ONLY transaction.")
	}),
}

var reSyntax = regexp.MustCompile(`^syntax error at position (\d+)(?: near '(.*)')?$`)

// syntaxError turns vitess's "syntax error at position N near 'tok'" into
// MySQL's 1064, which quotes the statement from the offending token on
// and names its line.
func syntaxError(msg string, st *stmtInfo) error {
	m := reSyntax.FindStringSubmatch(msg)
	if m == nil {
		return errSyntax(msg)
	}
	if st == nil || st.query == "" {
		return errSyntax(m[2])
	}
	q := st.query
	pos, _ := strconv.Atoi(m[1])
	pos = min(max(pos, 0), len(q))
	idx := -1
	if m[2] != "" {
		idx = strings.LastIndex(q[:pos], m[2])
		if idx < 0 {
			idx = strings.LastIndex(strings.ToLower(q[:pos]), strings.ToLower(m[2]))
		}
	}
	if idx < 0 && m[2] != "" {
		// The position is in another statement's text (PREPARE ... FROM).
		idx = strings.Index(q, m[2])
	}
	if idx < 0 {
		if m[2] != "" {
			return errSyntax(m[2])
		}
		idx = pos
	}
	near := q[idx:]
	if len(near) > 80 {
		near = near[:80]
	}
	line := 1 + strings.Count(q[:idx], "\n")
	return mysql.NewSQLError(mysql.ERParseError, "42000",
		"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %d", near, line)
}

// unquote removes the quotes %q put around a name.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// rePrivNeeded and privFor name the privilege MySQL says a refused
// administrative statement needs.
var rePrivNeeded = regexp.MustCompile(`(?is)^\s*(CREATE\s+USER|DROP\s+USER|RENAME\s+USER|ALTER\s+USER|CREATE\s+ROLE|DROP\s+ROLE|GRANT|REVOKE|FLUSH|KILL|SET\s+GLOBAL|SET\s+PERSIST|SHUTDOWN)\b`)

// reCreateTemp finds the table of CREATE TEMPORARY TABLE.
var reCreateTemp = regexp.MustCompile(`(?is)^\s*CREATE\s+TEMPORARY\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([^\s(,;]+)`)

// errTempDenied is MySQL's answer to CREATE TEMPORARY TABLE without the
// CREATE TEMPORARY TABLES privilege on the table's database.
func errTempDenied(user, table string, st *stmtInfo) error {
	db := ""
	if i := strings.LastIndex(table, "."); i >= 0 {
		db = strings.Trim(table[:i], "`")
	} else if st.currentDB != nil {
		db = st.currentDB()
	}
	return sqlErr(mysql.ERDBAccessDenied, "42000", "Access denied for user %s to database '%s'", user, db)
}

// reWriteTarget finds the verb and table of a single-table write.
var reWriteTarget = regexp.MustCompile(`(?is)^\s*(INSERT|REPLACE|UPDATE|DELETE)\s+(?:LOW_PRIORITY\s+|IGNORE\s+)*(?:INTO\s+|FROM\s+)?([^\s(,;]+)`)

var privFor = map[string]string{
	"CREATE USER": "CREATE USER", "DROP USER": "CREATE USER", "RENAME USER": "CREATE USER", "ALTER USER": "CREATE USER",
	"CREATE ROLE": "CREATE ROLE", "DROP ROLE": "DROP ROLE", "GRANT": "GRANT OPTION", "REVOKE": "GRANT OPTION",
	"FLUSH": "RELOAD", "KILL": "SUPER or CONNECTION_ADMIN", "SET GLOBAL": "SUPER or SYSTEM_VARIABLES_ADMIN",
	"SET PERSIST": "SUPER or SYSTEM_VARIABLES_ADMIN", "SHUTDOWN": "SHUTDOWN",
}

// reDefaultColumn find the column whose DEFAULT a statement sets: ALTER
// COLUMN c SET DEFAULT, else the first column definition with a DEFAULT.
var reDefaultColumn = []*regexp.Regexp{
	regexp.MustCompile("(?is)\\bALTER\\s+(?:COLUMN\\s+)?`?([^`\\s]+)`?\\s+SET\\s+DEFAULT\\b"),
	regexp.MustCompile("(?is)(?:[(,]\\s*|\\b(?:ADD|MODIFY)\\s+(?:COLUMN\\s+)?|\\bCHANGE\\s+(?:COLUMN\\s+)?\\S+\\s+)`?([^`\\s,()]+)`?\\s+\\w+(?:\\([^)]*\\))?[^,()]*?\\bDEFAULT\\b"),
}

var reWrappedSQLError = regexp.MustCompile(`^(.*) \(errno (\d+)\) \(sqlstate (\w{5})\)$`)

// mapError gives an error MySQL's code, SQLSTATE and text.
func mapError(err error, st *stmtInfo) error {
	var full *kv.DiskFullError
	if errors.As(err, &full) {
		return rsql.DiskFullError(full.Path)
	}
	// go-mysql-server's own KILL QUERY cancels the statement's context
	// before ReorgDB's interrupt records why; the statement then ends
	// with the bare cancellation.
	if errors.Is(err, context.Canceled) {
		return rsql.ErrInterrupted()
	}
	se, ok := err.(*mysql.SQLError)
	if !ok {
		return err
	}
	if se.Num == mysql.ERUnknownError && se.Message == context.Canceled.Error() {
		return rsql.ErrInterrupted()
	}
	// go-mysql-server wraps an error ReorgDB's parser gives (a TIME
	// precision past 6) in a syntax error of its own, as text.
	if m := reWrappedSQLError.FindStringSubmatch(se.Message); m != nil && se.Num == mysql.ERUnknownError {
		num, _ := strconv.Atoi(m[2])
		return mysql.NewSQLError(num, m[3], "%s", m[1])
	}
	// A kv.DiskFullError that reached go-mysql-server other than as a
	// commit error (a catalog write of DDL, say) arrives as its text.
	if m := reDiskFull.FindStringSubmatch(se.Message); m != nil {
		return rsql.DiskFullError(m[1])
	}
	// go-mysql-server gives some kinds a code but not MySQL's text.
	for _, k := range kindErrors {
		if k.kind == gms.ErrInvalidJson && se.Num == 3140 {
			continue // already MySQL's (a MODIFY COLUMN's conversion)
		}
		if m := k.re.FindStringSubmatch(se.Message); m != nil {
			return k.mysql(m[1:], st)
		}
	}
	switch se.Num {
	case mysql.ERDupEntry:
		msg := se.Message
		if i := strings.Index(msg, "Duplicate entry '"); i > 0 {
			return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", msg[i:])
		}
		if se.State == "" || se.State == mysql.SSUnknownSQLState {
			return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSDupKey, "%s", msg)
		}
	case mysql.ERNoSuchTable:
		if m := reTableNotFound.FindStringSubmatch(se.Message); m != nil && st != nil && reCreateWithFK.MatchString(st.query) {
			// go-mysql-server looks the parents up before the table exists.
			return mysql.NewSQLError(1824, "HY000", "Failed to open the referenced table '%s'", m[1])
		}
		if m := reTableNotFound.FindStringSubmatch(se.Message); m != nil {
			name := qualifiedTable(m[1], st)
			if st != nil && reDropTable.MatchString(st.query) {
				return errUnknownTable(name)
			}
			return mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "Table '%s' doesn't exist", name)
		}
	case mysql.ERBadDb:
		if m := reDBNotFound.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", m[1])
		}
	case mysql.ERCantDropFieldOrKey:
		if m := reCantDrop.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", m[1])
		}
	case mysql.ERKeyColumnDoesNotExist:
		msg := se.Message
		if strings.HasPrefix(msg, "key column") {
			msg = "K" + msg[1:]
		}
		return sqlErr(mysql.ERKeyColumnDoesNotExist, "42000", "%s", msg)
	case 1792:
		return sqlErr(1792, "25006", "Cannot execute statement in a READ ONLY transaction.")
	case mysql.ERUnknownError:
		msg := se.Message
		if m := reBlobKey.FindStringSubmatch(msg); m != nil {
			return mysql.NewSQLError(mysql.ERBlobKeyWithoutLength, "42000", "BLOB/TEXT column '%s' used in key specification without a key length", m[1])
		}
		if strings.HasPrefix(msg, "incorrect prefix key") {
			return mysql.NewSQLError(mysql.ERWrongSubKey, "HY000", "Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")
		}
		if strings.HasSuffix(msg, "cannot be altered") {
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of ReorgDB doesn't yet support 'ALTER TABLE column changes' (%s)", msg)
		}
		if m := reTableExists.FindStringSubmatch(msg); m != nil {
			return mysql.NewSQLError(mysql.ERTableExists, "42S01", "Table '%s' already exists", m[1])
		}
		switch {
		case strings.HasPrefix(msg, "syntax error"):
			return syntaxError(msg, st)
		case strings.HasPrefix(msg, "column \"") && strings.Contains(msg, "could not be found"):
			return mysql.NewSQLError(mysql.ERBadFieldError, mysql.SSBadFieldError, "%s", msg)
		case msg == "local_infile needs to be set to 1 to use LOCAL":
			return mysql.NewSQLError(3948, "42000", "Loading local data is disabled; this must be enabled on both the client and server sides")
		case reNoGrant.MatchString(msg):
			m := reNoGrant.FindStringSubmatch(msg)
			host := m[2]
			if host == "" {
				host = "%"
			}
			return mysql.NewSQLError(1141, "42000", "There is no such grant defined for user '%s' on host '%s'", m[1], host)
		case reUserOpFailed.MatchString(msg):
			return mysql.NewSQLError(1396, "HY000", "%s", msg)
		case msg == "not yet implemented" && st != nil:
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of ReorgDB doesn't yet support '%s'", statementWords(st.query, 2))
		}
	}
	return err
}

var (
	reTableNotFound = regexp.MustCompile(`^table not found: (.*)$`)
	reDropTable     = regexp.MustCompile(`(?i)^\s*DROP\s+(TEMPORARY\s+)?TABLES?\s`)
	reDBNotFound    = regexp.MustCompile(`^database not found: (.*)$`)
	reBlobKey       = regexp.MustCompile(`^blob/text column '(.*)' used in key specification without a key length`)
	reTableExists   = regexp.MustCompile(`^table with name (.*) already exists$`)
	reCantDrop      = regexp.MustCompile(`^(?:error: )?can't drop '(.*)'; check that column/key exists$`)
	reDrop          = regexp.MustCompile(`(?i)\bDROP\b`)
	reCreateWithFK  = regexp.MustCompile(`(?is)^\s*CREATE\s+TABLE\b.*\bREFERENCES\b`)
	reDeallocate    = regexp.MustCompile(`(?i)^\s*(?:DEALLOCATE|DROP)\s+PREPARE\b`)
	reNoGrant       = regexp.MustCompile(`^There is no such grant defined for user '(.*)' on host '(.*)'$`)
	reUserOpFailed  = regexp.MustCompile(`^Operation [A-Z ]+ failed for '.*'@'.*'$`)
)

// statementWords is the first n words of a statement, upper-cased, for
// an error that names what is not supported.
func statementWords(q string, n int) string {
	w := strings.Fields(q)
	return strings.ToUpper(strings.Join(w[:min(n, len(w))], " "))
}

// qualifiedTable is name with the database the statement names it in.
func qualifiedTable(name string, st *stmtInfo) string {
	if st != nil && st.qualify != nil && !strings.Contains(name, ".") {
		if db := st.qualify(name); db != "" {
			return db + "." + name
		}
	}
	return name
}

// errUnknownTable is what MySQL answers DROP [TEMPORARY] TABLE of a table
// that does not exist.
func errUnknownTable(name string) error {
	return mysql.NewSQLError(mysql.ERBadTable, "42S02", "Unknown table '%s'", name)
}
