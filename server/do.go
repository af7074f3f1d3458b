package server

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// doAsSelect turns a DO statement into the SELECT of its expressions:
// go-mysql-server's parser has no DO, and DO is a SELECT whose result is
// dropped (okOnly). Only the first statement of a multi-statement text is
// looked at, because the others come back here one by one.
func doAsSelect(query string) (string, bool) {
	t := strings.TrimLeft(query, " \t\r\n")
	if len(t) < 3 || !strings.EqualFold(t[:2], "do") || !strings.ContainsRune(" \t\r\n(", rune(t[2])) {
		return query, false
	}
	return "SELECT " + t[2:], true
}

// okOnly sends an OK packet in place of a DO's result set. The rows have
// been computed (and any error raised) by the time the first result comes,
// so the rest are dropped.
func okOnly(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	sent := false
	return func(r *sqltypes.Result, more bool) error {
		if sent {
			return nil
		}
		sent = true
		return cb(&sqltypes.Result{}, more)
	}
}

// markDo records that prepared statement id is a DO, so that its
// executions answer with an OK packet.
func (st *connState) markDo(id uint32) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.doStmts == nil {
		st.doStmts = map[uint32]bool{}
	}
	st.doStmts[id] = true
}

func (st *connState) isDo(id uint32) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.doStmts[id]
}
