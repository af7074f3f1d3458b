package sql

import "testing"

func TestRewriteAlterCharset(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ALTER TABLE t CHARSET utf8mb4", "ALTER TABLE t CHARACTER SET utf8mb4"},
		{"alter table t default charset=utf8mb4 collate=utf8mb4_bin", "alter table t default CHARACTER SET=utf8mb4 collate=utf8mb4_bin"},
		{"  ALTER TABLE t CONVERT TO CHARSET latin1", "  ALTER TABLE t CONVERT TO CHARACTER SET latin1"},
		{"ALTER DATABASE d CHARSET utf8mb4", "ALTER DATABASE d CHARACTER SET utf8mb4"},
		{"ALTER TABLE t ADD COLUMN c VARCHAR(5) COMMENT 'charset'", "ALTER TABLE t ADD COLUMN c VARCHAR(5) COMMENT 'charset'"},
		{"ALTER TABLE t /* charset */ ADD COLUMN c INT", "ALTER TABLE t /* charset */ ADD COLUMN c INT"},
		{"SELECT 'x' CHARSET", "SELECT 'x' CHARSET"},
		{"CREATE TABLE t (a INT) CHARSET utf8mb4", "CREATE TABLE t (a INT) CHARSET utf8mb4"},
		{"ALTER TABLE `charset` ADD COLUMN c INT", "ALTER TABLE `charset` ADD COLUMN c INT"},
	} {
		if got := RewriteAlterCharset(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
