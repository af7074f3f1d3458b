package sql

import (
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// ruleMax1Row is the id of clearMax1Row, past go-mysql-server's own.
const ruleMax1Row analyzer.RuleId = 10000

// ruleViewDDL is the id of clearViewDDL.
const ruleViewDDL analyzer.RuleId = 10016

var onceAfterAllRules sync.Once

// addRules adds ReorgDB's analyzer rules to go-mysql-server's last batch;
// enforceReadOnly, clearViewDDL and onDupOnUpdateRule also to the rules
// go-mysql-server runs instead of the batches for simple INSERTs and
// UPDATEs (analyzer.OnceAfterAll).
func addRules(a *analyzer.Analyzer) {
	registerReadOnly()
	ro := analyzer.Rule{Id: ruleReadOnly, Apply: enforceReadOnly}
	vd := analyzer.Rule{Id: ruleViewDDL, Apply: clearViewDDL}
	od := analyzer.Rule{Id: ruleOnDupOnUpdate, Apply: onDupOnUpdateRule}
	onceAfterAllRules.Do(func() {
		analyzer.OnceAfterAll = append(analyzer.OnceAfterAll[:len(analyzer.OnceAfterAll):len(analyzer.OnceAfterAll)], ro, vd, od)
	})
	for _, b := range a.Batches {
		if b.Desc == "after-all" && !hasRule(b.Rules, ruleReadOnly) {
			b.Rules = append(b.Rules[:len(b.Rules):len(b.Rules)], ro, vd, od)
		}
	}
	// noteResultPrecisions last: timeToTextRule changes result types.
	own := []analyzer.Rule{{Id: ruleIndexOrder, Apply: indexOrderRule}, {Id: ruleMax1Row, Apply: clearMax1Row}, {Id: ruleColumnsTable, Apply: fixColumnsTable},
		{Id: ruleTimeToText, Apply: timeToTextRule}, {Id: ruleJSONNumbers, Apply: jsonNumbersRule},
		{Id: ruleWindowRange, Apply: windowRangeRule}, {Id: ruleTableComment, Apply: tableCommentRule}, {Id: ruleLockOf, Apply: checkLockOf}, {Id: ruleResultPrecisions, Apply: noteResultPrecisions}}
	for _, b := range a.Batches {
		if b.Desc == "after-all" {
			b.Rules = append(b.Rules[:len(b.Rules):len(b.Rules)], own...)
			return
		}
	}
	a.Batches = append(a.Batches, &analyzer.Batch{Desc: "reorgdb", Iterations: 1, Rules: own})
}

// clearMax1Row drops the flag that makes the handler read a single result
// row (QFlagMax1Row) where go-mysql-server sets it wrongly: it sets it for
// a COUNT(*) without GROUP BY or an index lookup of one unique key, and
// keeps it when that is one branch of a UNION (SELECT ... WHERE id = 1
// UNION SELECT ... WHERE id = 2 failed with "result max1Row iterator
// returned more than one row") or the query under EXPLAIN, whose rows are
// the plan's. The flag only selects a shortcut; without it the handler
// reads the rows the usual way.
func clearMax1Row(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.IsSet(gms.QFlagMax1Row) {
		return n, transform.SameTree, nil
	}
	clear := isExplain(ctx.Query())
	if !clear {
		transform.Inspect(n, func(n gms.Node) bool {
			if _, ok := n.(*plan.SetOp); ok {
				clear = true
			}
			return !clear
		})
	}
	if clear {
		qFlags.Unset(gms.QFlagMax1Row)
	}
	return n, transform.SameTree, nil
}

// clearViewDDL drops the flag that makes go-mysql-server commit the
// session's transaction after a statement (QFlagDDL) where it sets it
// wrongly: reading a view binds the view's CREATE VIEW statement, which
// sets the flag for the statement that reads it, so a SELECT, INSERT or
// SHOW that touched a view committed the open transaction (and lost its
// savepoints, which broke mariadb-dump --single-transaction). Only a
// statement that is DDL commits implicitly.
func clearViewDDL(ctx *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	if qFlags != nil && qFlags.IsSet(gms.QFlagDDL) && !startsDDL(ctx.Query()) {
		qFlags.Unset(gms.QFlagDDL)
	}
	return n, transform.SameTree, nil
}

// startsDDL reports whether a statement's first keyword is one that
// begins a statement committing implicitly in MySQL.
func startsDDL(q string) bool {
	switch firstKeyword(q) {
	case "select", "with", "insert", "replace", "update", "delete", "show", "describe", "desc",
		"explain", "table", "values", "call", "do", "set", "handler":
		return false
	}
	return true
}

// isExplain reports whether a statement is EXPLAIN / DESCRIBE / DESC of a
// query.
func isExplain(q string) bool {
	switch firstKeyword(q) {
	case "explain", "describe", "desc":
		return true
	}
	return false
}

// firstKeyword is a statement's first word, lowercased, past comments
// and opening parentheses.
func firstKeyword(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		if !strings.HasPrefix(q, "/*") {
			break
		}
		end := strings.Index(q, "*/")
		if end < 0 {
			return ""
		}
		q = q[end+2:]
	}
	end := strings.IndexFunc(q, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if end < 0 {
		end = len(q)
	}
	return strings.ToLower(q[:end])
}

func hasRule(rules []analyzer.Rule, id analyzer.RuleId) bool {
	for _, r := range rules {
		if r.Id == id {
			return true
		}
	}
	return false
}
