package sql

import "testing"

func TestRewriteLockingClause(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE"},
		{"select v from t for share;", "select v from t LOCK IN SHARE MODE;"},
		{"SELECT * FROM (SELECT v FROM t FOR  SHARE) x", "SELECT * FROM (SELECT v FROM t LOCK IN SHARE MODE) x"},
		{"SELECT v FROM t /* c */ FOR SHARE", "SELECT v FROM t /* c */ LOCK IN SHARE MODE"},
		{"SELECT v FROM t FOR /* d */ SHARE", "SELECT v FROM t FOR /* d */ SHARE"}, // rare: left to the parser
		{"SELECT 'for share' FROM t FOR SHARE", "SELECT 'for share' FROM t LOCK IN SHARE MODE"},
		// Modifiers the grammar lacks become marks.
		{"SELECT v FROM t FOR SHARE NOWAIT", "SELECT v FROM t LOCK IN SHARE MODE /* NOWAIT */"},
		{"SELECT v FROM t FOR SHARE SKIP LOCKED", "SELECT v FROM t LOCK IN SHARE MODE /* SKIP LOCKED */"},
		{"SELECT v FROM t for update nowait;", "SELECT v FROM t FOR UPDATE /* NOWAIT */;"},
		{"SELECT * FROM (SELECT v FROM t FOR UPDATE NOWAIT) x", "SELECT * FROM (SELECT v FROM t FOR UPDATE /* NOWAIT */) x"},
		// OF becomes a mark with the names in lower case.
		{"SELECT v FROM t FOR SHARE OF t", "SELECT v FROM t LOCK IN SHARE MODE /* OF t */"},
		{"SELECT v FROM T a, u FOR UPDATE OF A, `u` NOWAIT", "SELECT v FROM T a, u FOR UPDATE /* OF a,u */ /* NOWAIT */"},
		{"SELECT v FROM t for update of t skip locked;", "SELECT v FROM t FOR UPDATE /* OF t */ /* SKIP LOCKED */;"},
		{"SELECT v FROM t FOR UPDATE OF `a*/b`", "SELECT v FROM t FOR UPDATE OF `a*/b`"},
		{"SELECT v FROM t FOR UPDATE OF", "SELECT v FROM t FOR UPDATE OF"},
		// The grammar's own, and what is left to the parser.
		{"SELECT v FROM t FOR UPDATE", "SELECT v FROM t FOR UPDATE"},
		{"SELECT v FROM t FOR UPDATE SKIP LOCKED", "SELECT v FROM t FOR UPDATE SKIP LOCKED"},
		{"SELECT v FROM t FOR SHARE NOWAIT SKIP LOCKED", "SELECT v FROM t FOR SHARE NOWAIT SKIP LOCKED"},
		{"SELECT 'x FOR SHARE'", "SELECT 'x FOR SHARE'"},
		{"SELECT 'FOR UPDATE NOWAIT' FROM t", "SELECT 'FOR UPDATE NOWAIT' FROM t"},
		{"SELECT `for share` FROM t", "SELECT `for share` FROM t"},
		{"SELECT v FROM t LOCK IN SHARE MODE", "SELECT v FROM t LOCK IN SHARE MODE"},
	} {
		if got := RewriteLockingClause(c.in); got != c.want {
			t.Errorf("RewriteLockingClause(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLockedTables(t *testing.T) {
	q := RewriteLockingClause("SELECT * FROM t AS a JOIN u ON a.id = u.id JOIN w b ON b.id = u.id FOR UPDATE OF a, U")
	got, unresolved := lockedTables(q)
	if len(got) != 2 || !got["t"] || !got["u"] || unresolved != "" {
		t.Fatalf("lockedTables(%q) = %v, %q; want t and u", q, got, unresolved)
	}
	// A table under an alias goes by the alias only, as in MySQL.
	if _, unresolved := lockedTables(RewriteLockingClause("SELECT * FROM t AS a FOR UPDATE OF t")); unresolved != "t" {
		t.Fatalf("OF t of a table aliased a: unresolved %q", unresolved)
	}
	if got, _ := lockedTables("SELECT * FROM t FOR UPDATE"); got != nil {
		t.Fatal("a clause without OF names tables")
	}
	for q, want := range map[string]bool{"select 1 from t for update  of t": true, "UPDATE\tOF": true, "update offset": false, "update t set x = 1": false} {
		if got := MayHaveLockingClause(q); got != want {
			t.Errorf("MayHaveLockingClause(%q) = %v", q, got)
		}
	}
}
