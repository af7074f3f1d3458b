package sql

import "testing"

func TestRewriteForShare(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE"},
		{"select v from t for share;", "select v from t LOCK IN SHARE MODE;"},
		{"SELECT * FROM (SELECT v FROM t FOR  SHARE) x", "SELECT * FROM (SELECT v FROM t LOCK IN SHARE MODE) x"},
		{"SELECT v FROM t /* c */ FOR SHARE", "SELECT v FROM t /* c */ LOCK IN SHARE MODE"},
		{"SELECT v FROM t FOR /* d */ SHARE", "SELECT v FROM t FOR /* d */ SHARE"}, // rare: left to the parser
		{"SELECT 'for share' FROM t FOR SHARE", "SELECT 'for share' FROM t LOCK IN SHARE MODE"},
		// Left to the parser: options that change the lock, and text.
		{"SELECT v FROM t FOR SHARE NOWAIT", "SELECT v FROM t FOR SHARE NOWAIT"},
		{"SELECT v FROM t FOR SHARE SKIP LOCKED", "SELECT v FROM t FOR SHARE SKIP LOCKED"},
		{"SELECT v FROM t FOR SHARE OF t", "SELECT v FROM t FOR SHARE OF t"},
		{"SELECT 'x FOR SHARE'", "SELECT 'x FOR SHARE'"},
		{"SELECT `for share` FROM t", "SELECT `for share` FROM t"},
		{"SELECT v FROM t LOCK IN SHARE MODE", "SELECT v FROM t LOCK IN SHARE MODE"},
	} {
		if got := RewriteForShare(c.in); got != c.want {
			t.Errorf("RewriteForShare(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
