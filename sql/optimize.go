package sql

import (
	"context"
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/reorgdb/reorgdb/codec"
)

// OPTIMIZE TABLE, which go-mysql-server's parser does not know, compacts
// each table's keys (rows and indexes) in the store: what is in memory
// goes to disk, and versions and deletions the garbage collection has
// released are dropped. It answers with MySQL's result set, a row per
// table (two for a table that does not exist).

var reOptimize = regexp.MustCompile(`(?is)^\s*OPTIMIZE\s+(?:NO_WRITE_TO_BINLOG\s+|LOCAL\s+)?TABLES?\s+(.+?)\s*;?\s*$`)

// IsOptimize reports whether query is OPTIMIZE TABLE.
func IsOptimize(query string) bool { return reOptimize.MatchString(query) }

// OptimizeResult is a row of OPTIMIZE TABLE's answer.
type OptimizeResult struct{ Table, Op, MsgType, MsgText string }

// Optimize runs OPTIMIZE TABLE for a connection whose session is sess
// (nil for none) and current database is curDB.
func (e *Engine) Optimize(ctx context.Context, sess gms.Session, query, curDB string) ([]OptimizeResult, error) {
	m := reOptimize.FindStringSubmatch(query)
	if m == nil {
		return nil, mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s'", query)
	}
	names, err := splitTableList(m[1])
	if err != nil {
		return nil, err
	}
	var out []OptimizeResult
	for _, n := range names {
		db, table := n[0], n[1]
		if db == "" {
			if curDB == "" {
				return nil, mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
			}
			db = curDB
		}
		sch := e.cat.Current()
		d, ok := sch.Database(db)
		var tid int64
		if ok {
			if t, found := sessionTable(sess, sch, d.ID, table); found {
				db, table, tid = d.Name, t.Name, t.ID
			}
		}
		name := db + "." + table
		if tid == 0 {
			out = append(out,
				OptimizeResult{name, "optimize", "Error", "Table '" + name + "' doesn't exist"},
				OptimizeResult{name, "optimize", "status", "Operation failed"})
			continue
		}
		lo := codec.TablePrefix(tid)
		if err := e.store.Compact(ctx, lo, codec.PrefixEnd(lo)); err != nil {
			if ctx.Err() != nil {
				return nil, mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
			}
			e.log.Error("OPTIMIZE TABLE", "table", name, "err", err)
			out = append(out,
				OptimizeResult{name, "optimize", "Error", "Got error during compaction of the table's data"},
				OptimizeResult{name, "optimize", "status", "Operation failed"})
			continue
		}
		out = append(out, OptimizeResult{name, "optimize", "status", "OK"})
	}
	return out, nil
}

// splitTableList splits "a, `b`.c, d.`e“f`" into (database, table)
// pairs.
func splitTableList(s string) ([][2]string, error) {
	syntax := mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s'", s)
	var out [][2]string
	var name []string // the identifiers of the table being read
	wantIdent := true
	end := func() error {
		switch len(name) {
		case 1:
			out = append(out, [2]string{"", name[0]})
		case 2:
			out = append(out, [2]string{name[0], name[1]})
		default:
			return syntax
		}
		name = nil
		return nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case wantIdent && c == '`':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(s) {
					return nil, syntax
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			name = append(name, b.String())
			i, wantIdent = j+1, false
		case wantIdent && isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			name = append(name, s[i:j])
			i, wantIdent = j, false
		case !wantIdent && c == '.':
			i, wantIdent = i+1, true
		case !wantIdent && c == ',':
			if err := end(); err != nil {
				return nil, err
			}
			i, wantIdent = i+1, true
		default:
			return nil, syntax
		}
	}
	if wantIdent {
		return nil, syntax
	}
	if err := end(); err != nil {
		return nil, err
	}
	return out, nil
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

var reChecksum = regexp.MustCompile(`(?is)^\s*CHECKSUM\s+TABLES?\s+(.+?)(?:\s+(?:QUICK|EXTENDED))?\s*;?\s*$`)

// ChecksumTables returns the tables a CHECKSUM TABLE statement names, as
// (database or "", table) pairs; ok is false for another statement.
func ChecksumTables(query string) (tables [][2]string, ok bool, err error) {
	m := reChecksum.FindStringSubmatch(query)
	if m == nil {
		return nil, false, nil
	}
	tables, err = splitTableList(m[1])
	return tables, true, err
}
