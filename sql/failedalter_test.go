package sql_test

import (
	"context"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestFailedAlterReleasesMetadataLock: an ALTER whose job fails leaves its
// idle connection holding no metadata lock, so the next schema change
// does not wait for that client's next statement.
func TestFailedAlterReleasesMetadataLock(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT, w INT)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 10, 1), (2, 123456, 2)")
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	_, err = c1.ExecContext(ctx, "ALTER TABLE t MODIFY v VARCHAR(4)")
	expectErr(t, err, 1265, "Data truncated")
	done := make(chan error, 1)
	go func() { _, err := db.Exec("ALTER TABLE t ADD INDEX iw (w)"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next ALTER waits on the idle connection of the failed one")
	}
}
