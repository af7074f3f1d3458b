package server

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/reorgdb/reorgdb/catalog"
)

// MySQL's limits on keys (InnoDB's MAX_KEY and MAX_REF_PARTS), which
// go-mysql-server does not enforce.
const (
	maxKeys     = 64
	maxKeyParts = 16
	// colKeyPrimary is vitess's (unexported) ColumnKeyOption of a column
	// declared PRIMARY KEY.
	colKeyPrimary sqlparser.ColumnKeyOption = 1
)

func errTooManyKeyParts() error {
	return mysql.NewSQLError(mysql.ERTooManyKeyParts, "42000", "Too many key parts specified; max %d parts allowed", maxKeyParts)
}

func errTooManyKeys() error {
	return mysql.NewSQLError(mysql.ERTooManyKeys, "42000", "Too many keys specified; max %d keys allowed", maxKeys)
}

// checkKeyLimits refuses CREATE TABLE, CREATE INDEX and ALTER TABLE
// statements that would give an index more than 16 columns or a table
// more than 64 indexes (the primary key included).
func (h *handler) checkKeyLimits(c *mysql.Conn, query string) error {
	switch statementType(query) {
	case "create", "alter":
	default:
		return nil
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return nil // go-mysql-server reports it
	}
	var ddls []*sqlparser.DDL
	var table sqlparser.TableName
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		ddls, table = []*sqlparser.DDL{s}, s.Table
	case *sqlparser.AlterTable:
		ddls, table = s.Statements, s.Table
	default:
		return nil
	}
	keys, primaries, creating := 0, 0, false
	for _, d := range ddls {
		if d.Action == sqlparser.CreateStr && d.TableSpec != nil {
			creating = true
		}
		if d.TableSpec != nil && (creating || d.ColumnAction == sqlparser.AddStr) {
			for _, col := range d.TableSpec.Columns {
				if col.Type.KeyOpt != 0 {
					keys++
				}
				if col.Type.KeyOpt == colKeyPrimary {
					primaries++
				}
			}
			for _, ix := range d.TableSpec.Indexes {
				if len(ix.Columns) > maxKeyParts {
					return errTooManyKeyParts()
				}
				keys++
				if ix.Info != nil && ix.Info.Primary {
					primaries++
				}
			}
		}
		if ix := d.IndexSpec; ix != nil {
			switch ix.Action {
			case sqlparser.CreateStr:
				if len(ix.Columns) > maxKeyParts {
					return errTooManyKeyParts()
				}
				keys++
			case sqlparser.DropStr:
				keys--
			}
		}
	}
	if creating && primaries > 1 {
		return mysql.NewSQLError(mysql.ERMultiplePriKey, "42000", "Multiple primary key defined")
	}
	if !creating && keys > 0 {
		keys += h.existingKeys(c, table)
	}
	if keys > maxKeys {
		return errTooManyKeys()
	}
	return nil
}

// existingKeys counts a table's indexes, its primary key included.
func (h *handler) existingKeys(c *mysql.Conn, name sqlparser.TableName) int {
	db := name.DbQualifier.String()
	if db == "" {
		if st := h.s.connState(c.ConnectionID); st != nil {
			if sess := st.session(); sess != nil {
				db = sess.GetCurrentDatabase()
			}
		}
	}
	t, ok := h.s.engine.TableFor(h.session(c), db, name.Name.String())
	if !ok {
		return 0
	}
	return countKeys(t)
}

func countKeys(t *catalog.Table) int {
	n := len(t.Indexes)
	hasPrimary := false
	for _, ix := range t.Indexes {
		if ix.Primary || strings.EqualFold(ix.Name, "PRIMARY") {
			hasPrimary = true
		}
	}
	if !hasPrimary && len(t.PKColumns) > 0 {
		n++
	}
	return n
}
