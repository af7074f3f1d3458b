package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestUnsupportedIndexKinds: FULLTEXT and SPATIAL indexes are refused with
// 1235, in CREATE TABLE (which then creates nothing) and in ALTER TABLE.
func TestUnsupportedIndexKinds(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	for _, q := range []string{
		"CREATE TABLE ft (id INT PRIMARY KEY, b TEXT, FULLTEXT KEY (b))",
		"CREATE TABLE sp (id INT PRIMARY KEY, g GEOMETRY NOT NULL, SPATIAL KEY (g))",
	} {
		_, err := db.Exec(q)
		expectCode(t, err, 1235)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'd'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("tables left by the refused CREATE TABLEs: %d %v", n, err)
	}
	if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, b TEXT)"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec("ALTER TABLE t ADD FULLTEXT INDEX fb (b)")
	expectCode(t, err, 1235)
}
