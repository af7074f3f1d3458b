package sql_test

import (
	"context"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestAutoIncrementRange: an AUTO_INCREMENT column refuses a given value
// out of its type's range in strict mode (1264), as text and prepared, and
// once its counter passes the type's largest value the next row gets
// that value again, which the key refuses (1062), as in MySQL. Without
// strict mode a given value is clipped to the range.
func TestAutoIncrementRange(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("app")
	mustExec(t, db, "CREATE TABLE a (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
	mustExec(t, db, "CREATE TABLE b (id TINYINT UNSIGNED PRIMARY KEY AUTO_INCREMENT, v INT)")
	_, err := db.Exec("INSERT INTO a VALUES (3000000000, 1)")
	expectErr(t, err, 1264, "Out of range value for column 'id' at row 1")
	_, err = db.Exec("INSERT INTO a VALUES (1, 1), (3000000000, 2)")
	expectErr(t, err, 1264, "Out of range value for column 'id' at row 2")
	// Prepared, the value is not in the text that names the column:
	// the error is the expression's (1690), still a refusal.
	if _, err = db.Exec("INSERT INTO a VALUES (?, ?)", int64(3000000000), 3); errCode(err) != 1264 && errCode(err) != 1690 {
		t.Fatalf("prepared out-of-range id: %v", err)
	}
	_, err = db.Exec("INSERT INTO b VALUES (-1, 1)")
	expectErr(t, err, 1264, "Out of range value for column 'id' at row 1")
	expectRows(t, db, "SELECT COUNT(*) FROM a", "0")

	mustExec(t, db, "INSERT INTO b VALUES (254, 1)")
	mustExec(t, db, "INSERT INTO b (v) VALUES (2)")
	_, err = db.Exec("INSERT INTO b (v) VALUES (3)")
	expectErr(t, err, 1062, "Duplicate entry '255' for key 'b.PRIMARY'")
	_, err = db.Exec("INSERT INTO b (v) VALUES (?)", 4)
	expectErr(t, err, 1062, "Duplicate entry '255'")
	expectRows(t, db, "SELECT id, v FROM b ORDER BY id", "254,1", "255,2")

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "SET SESSION sql_mode = ''")
	mustExec(t, conn, "INSERT INTO a VALUES (3000000000, 9)")
	expectRows(t, conn, "SELECT id, v FROM a", "2147483647,9")
}
