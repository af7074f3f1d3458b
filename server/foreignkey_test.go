package server_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// fkExec runs statements that must succeed.
func fkExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// fkErr runs a statement that must fail with MySQL's code and message.
func fkErr(t *testing.T, db *sql.DB, q string, code uint16, msg string) {
	t.Helper()
	if _, err := db.Exec(q); !isMySQLError(err, code, msg) {
		t.Errorf("%s: %v, want %d %q", q, err, code, msg)
	}
}

// fkRows is the result of a query as "a,b;c,d" with NULL as "NULL".
func fkRows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, ","))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ";")
}

func fkWant(t *testing.T, db *sql.DB, q, want string) {
	t.Helper()
	if got := fkRows(t, db, q); got != want {
		t.Errorf("%s: %q, want %q", q, got, want)
	}
}

// TestForeignKeyActions: RESTRICT (the default) refuses to delete or
// change a referenced parent with 1451, CASCADE deletes and updates the
// children, SET NULL nulls them, an orphan child gets 1452, and
// foreign_key_checks = 0 lets everything through.
func TestForeignKeyActions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id))",
		"CREATE TABLE cc (id INT PRIMARY KEY, pid INT, CONSTRAINT cc_fk FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE)",
		"CREATE TABLE cn (id INT PRIMARY KEY, pid INT, CONSTRAINT cn_fk FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL ON UPDATE SET NULL)",
		"INSERT INTO p VALUES (1, 10), (2, 20), (3, 30), (4, 40)",
		"INSERT INTO c VALUES (1, 1), (2, NULL)",
		"INSERT INTO cc VALUES (1, 2), (2, 2), (3, 3)",
		"INSERT INTO cn VALUES (1, 3), (2, 4)",
	)
	fkErr(t, db, "INSERT INTO c VALUES (3, 99)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	fkErr(t, db, "UPDATE c SET pid = 98 WHERE id = 1", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	fkErr(t, db, "DELETE FROM p WHERE id = 1", 1451,
		"Cannot delete or update a parent row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	fkErr(t, db, "UPDATE p SET id = 100 WHERE id = 1", 1451,
		"Cannot delete or update a parent row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	fkWant(t, db, "SELECT id FROM p ORDER BY id", "1;2;3;4")
	fkWant(t, db, "SELECT id, pid FROM c ORDER BY id", "1,1;2,NULL")

	// CASCADE
	fkExec(t, db, "UPDATE p SET id = 22 WHERE id = 2")
	fkWant(t, db, "SELECT id, pid FROM cc ORDER BY id", "1,22;2,22;3,3")
	fkExec(t, db, "DELETE FROM p WHERE id = 22")
	fkWant(t, db, "SELECT id, pid FROM cc ORDER BY id", "3,3")
	// SET NULL, and CASCADE from the same parent row
	fkExec(t, db, "DELETE FROM p WHERE id = 3")
	fkWant(t, db, "SELECT id, pid FROM cc ORDER BY id", "")
	fkWant(t, db, "SELECT id, pid FROM cn ORDER BY id", "1,NULL;2,4")
	fkExec(t, db, "UPDATE p SET id = 44 WHERE id = 4")
	fkWant(t, db, "SELECT id, pid FROM cn ORDER BY id", "1,NULL;2,NULL")
	// A child may still point at a row that stays.
	fkExec(t, db, "UPDATE p SET v = 11 WHERE id = 1", "DELETE FROM c WHERE id = 1", "DELETE FROM p WHERE id = 1")

	// foreign_key_checks = 0
	fkExec(t, db, "SET foreign_key_checks = 0", "INSERT INTO c VALUES (5, 77)", "SET foreign_key_checks = 1")
	fkWant(t, db, "SELECT id, pid FROM c ORDER BY id", "2,NULL;5,77")

	// DROP TABLE of a parent, TRUNCATE of a parent.
	fkErr(t, db, "DROP TABLE p", 3730, "Cannot drop table 'p' referenced by a foreign key constraint 'c_ibfk_1' on table 'c'.")
	fkExec(t, db, "DROP TABLE c, cc, cn", "DROP TABLE p")
}
