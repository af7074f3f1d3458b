package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestForeignKeyDDL: ALTER TABLE ADD FOREIGN KEY checks the rows there
// are (1452) and adds an index to the child when it has none; a parent
// without an index on the referenced columns gets 1822; DROP FOREIGN KEY
// leaves the index; SHOW CREATE TABLE prints the constraint so that it
// loads back; information_schema shows it; temporary tables refuse it.
func TestForeignKeyDDL(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, u INT, n INT, UNIQUE KEY u (u))",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, pu INT)",
		"INSERT INTO p VALUES (1, 10, 100), (2, 20, 200)",
		"INSERT INTO c VALUES (1, 1, 10), (2, 3, 20)",
	)
	fkErr(t, db, "ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p(id)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	fkErr(t, db, "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE)")
	fkErr(t, db, "ALTER TABLE c ADD CONSTRAINT c_n FOREIGN KEY (pid) REFERENCES p(n)", 1822,
		"Failed to add the foreign key constraint. Missing index for constraint 'c_n' in the referenced table 'p'")
	fkErr(t, db, "CREATE TABLE c2 (id INT PRIMARY KEY, pn INT, CONSTRAINT c2_n FOREIGN KEY (pn) REFERENCES p(n))", 1822,
		"Failed to add the foreign key constraint. Missing index for constraint 'c2_n' in the referenced table 'p'")
	fkErr(t, db, "CREATE TABLE c2 (id INT PRIMARY KEY, pn INT, FOREIGN KEY (pn) REFERENCES nope(n))", 1824,
		"Failed to open the referenced table 'nope'")
	fkWant(t, db, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'd' AND table_name = 'c2'", "0")
	fkErr(t, db, "CREATE TEMPORARY TABLE tc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id))", 1215,
		"Cannot add foreign key constraint")
	fkExec(t, db, "CREATE TEMPORARY TABLE tp (id INT PRIMARY KEY)")
	fkErr(t, db, "ALTER TABLE tp ADD FOREIGN KEY (id) REFERENCES p(id)", 1215, "Cannot add foreign key constraint")
	fkErr(t, db, "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES tp(id)", 1215, "Cannot add foreign key constraint")
	fkErr(t, db, "CREATE TABLE c3 (id INT PRIMARY KEY, FOREIGN KEY (id) REFERENCES tp(id))", 1215, "Cannot add foreign key constraint")
	fkExec(t, db, "DROP TEMPORARY TABLE tp")
	fkExec(t, db,
		"UPDATE c SET pid = 2, pu = NULL WHERE id = 2",
		"ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE",
		"ALTER TABLE c ADD FOREIGN KEY (pu) REFERENCES p(u) ON UPDATE SET NULL",
	)
	fkExec(t, db, "ADMIN CHECK TABLE c")
	fkWant(t, db, "SELECT index_name, column_name FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 'c' ORDER BY index_name",
		"c_p,pid;PRIMARY,id;pu,pu")
	want := "CREATE TABLE `c` (\n" +
		"  `id` int NOT NULL,\n" +
		"  `pid` int DEFAULT NULL,\n" +
		"  `pu` int DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  KEY `c_p` (`pid`),\n" +
		"  KEY `pu` (`pu`),\n" +
		"  CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE,\n" +
		"  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pu`) REFERENCES `p` (`u`) ON UPDATE SET NULL\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE c").Scan(&name, &create); err != nil || create != want {
		t.Errorf("SHOW CREATE TABLE c: %v\n%s\nwant\n%s", err, create, want)
	}
	fkWant(t, db, "SELECT constraint_name, unique_constraint_name, update_rule, delete_rule, table_name, referenced_table_name FROM information_schema.referential_constraints WHERE constraint_schema = 'd' ORDER BY constraint_name",
		"c_ibfk_1,u,SET NULL,NO ACTION,c,p;c_p,PRIMARY,NO ACTION,CASCADE,c,p")
	fkWant(t, db, "SELECT constraint_name, column_name, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage WHERE table_schema = 'd' AND table_name = 'c' AND referenced_table_name IS NOT NULL ORDER BY constraint_name",
		"c_ibfk_1,pu,p,u;c_p,pid,p,id")

	// The printed statement makes the same table.
	fkExec(t, db, "CREATE DATABASE d2", "CREATE TABLE d2.p (id INT PRIMARY KEY, u INT, UNIQUE KEY u (u))", "USE d2", create, "USE d")
	var create2 string
	if err := db.QueryRow("SHOW CREATE TABLE d2.c").Scan(&name, &create2); err != nil || create2 != want {
		t.Errorf("SHOW CREATE TABLE d2.c: %v\n%s\nwant\n%s", err, create2, want)
	}

	fkExec(t, db, "DELETE FROM p WHERE id = 2")
	fkWant(t, db, "SELECT id, pid, pu FROM c ORDER BY id", "1,1,10")
	fkExec(t, db, "ALTER TABLE c DROP FOREIGN KEY c_p", "UPDATE c SET pu = NULL", "DELETE FROM p WHERE id = 1")
	fkWant(t, db, "SELECT id, pid, pu FROM c ORDER BY id", "1,1,NULL")
	fkErr(t, db, "ALTER TABLE c DROP FOREIGN KEY c_p", 1091, "Can't DROP 'c_p'; check that column/key exists")
	fkWant(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 'c' AND index_name = 'c_p'", "1")

	// RENAME TABLE of the parent keeps the constraint on it.
	fkExec(t, db, "INSERT INTO p VALUES (5, 50, 500)", "RENAME TABLE p TO p2")
	fkErr(t, db, "INSERT INTO c VALUES (9, NULL, 99)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pu`) REFERENCES `p2` (`u`) ON UPDATE SET NULL)")
	fkExec(t, db, "INSERT INTO c VALUES (9, NULL, 50)")
}

// TestForeignKeyRestart: foreign keys and checks are kept across a
// restart on the same data directory, and enforced after it.
func TestForeignKeyRestart(t *testing.T) {
	dir := t.TempDir()
	s := servertest.StartDir(t, dir)
	db := s.DB("d")
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, n INT CHECK (n > 0), CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE)",
		"INSERT INTO p VALUES (1), (2)",
		"INSERT INTO c VALUES (1, 1, 1), (2, 2, 2)",
	)
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.StartDir(t, dir)
	db2 := s2.DB("d")
	fkErr(t, db2, "INSERT INTO c VALUES (3, 3, 3)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE)")
	fkErr(t, db2, "INSERT INTO c VALUES (3, 1, 0)", 3819, "Check constraint 'c_chk_1' is violated.")
	fkExec(t, db2, "DELETE FROM p WHERE id = 1")
	fkWant(t, db2, "SELECT id, pid, n FROM c", "2,2,2")
	fkWant(t, db2, "SELECT constraint_name, constraint_type FROM information_schema.table_constraints WHERE table_schema = 'd' AND table_name = 'c' ORDER BY constraint_name",
		"c_chk_1,CHECK;c_p,FOREIGN KEY;PRIMARY,PRIMARY KEY")
}

// TestForeignKeyPrepared: prepared INSERT, UPDATE and DELETE by primary
// key, which ReorgDB otherwise runs without go-mysql-server, are checked
// on a child, a parent and a table with a check, also when the
// constraint comes after the statements were prepared and run.
func TestForeignKeyPrepared(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT)",
		"INSERT INTO p VALUES (1, 1), (2, 2)",
	)
	prep := func(q string) *sql.Stmt {
		st, err := db.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	insC := prep("INSERT INTO c (id, pid) VALUES (?, ?)")
	updC := prep("UPDATE c SET pid = ? WHERE id = ?")
	delP := prep("DELETE FROM p WHERE id = ?")
	updP := prep("UPDATE p SET v = ? WHERE id = ?")
	run := func(st *sql.Stmt, args ...any) error {
		_, err := st.Exec(args...)
		return err
	}
	// Fast before any constraint exists.
	hits := s.FastPathHits()
	if err := run(insC, 1, 9); err != nil {
		t.Fatal(err)
	}
	if s.FastPathHits() == hits {
		t.Fatal("the prepared INSERT did not take the fast path; the test proves nothing")
	}
	fkExec(t, db, "DELETE FROM c", "ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p(id)",
		"ALTER TABLE p ADD CONSTRAINT v_pos CHECK (v > 0)")
	fk := "(`d`.`c`, CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"
	for _, c := range []struct {
		st   *sql.Stmt
		args []any
		code uint16
		msg  string
	}{
		{insC, []any{1, 9}, 1452, "Cannot add or update a child row: a foreign key constraint fails " + fk},
		{insC, []any{1, 1}, 0, ""},
		{updC, []any{8, 1}, 1452, "Cannot add or update a child row: a foreign key constraint fails " + fk},
		{delP, []any{1}, 1451, "Cannot delete or update a parent row: a foreign key constraint fails " + fk},
		{updP, []any{-1, 2}, 3819, "Check constraint 'v_pos' is violated."},
		{delP, []any{2}, 0, ""},
	} {
		err := run(c.st, c.args...)
		if c.code == 0 && err != nil || c.code != 0 && !isMySQLError(err, c.code, c.msg) {
			t.Errorf("%v: %v, want %d %q", c.args, err, c.code, c.msg)
		}
	}
	fkWant(t, db, "SELECT id, pid FROM c", "1,1")
	fkWant(t, db, "SELECT id, v FROM p", "1,1")
}

// TestForeignKeyErrors: statements a foreign key refuses get MySQL's
// errors, and a CREATE TABLE refused for its foreign key leaves no table.
func TestForeignKeyErrors(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, s VARCHAR(3), nn INT NOT NULL, UNIQUE KEY (s))",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id))",
	)
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"CREATE TABLE c1 (id INT PRIMARY KEY, pid INT NOT NULL, CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL)",
			1830, "Column 'pid' cannot be NOT NULL: needed in a foreign key constraint 'fk1' SET NULL"},
		{"CREATE TABLE c1 (id INT PRIMARY KEY, pid VARCHAR(10), CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES p(id))",
			3780, "Referencing column 'pid' and referenced column 'id' in foreign key constraint 'fk1' are incompatible."},
		{"CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk1 FOREIGN KEY (nope) REFERENCES p(id))",
			1072, "Key column 'nope' doesn't exist in table"},
		{"CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id))",
			1826, "Duplicate foreign key constraint name 'fk'"},
		{"CREATE TABLE c1 (id INT PRIMARY KEY, a INT, b INT, CONSTRAINT f2 FOREIGN KEY (a) REFERENCES p(id), CONSTRAINT f2 FOREIGN KEY (b) REFERENCES p(id))",
			1826, "Duplicate foreign key constraint name 'f2'"},
		{"CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET DEFAULT)",
			1215, "Cannot add foreign key constraint"},
		{"ALTER TABLE p ADD FOREIGN KEY (nn) REFERENCES p(id) ON DELETE SET NULL",
			1830, "Column 'nn' cannot be NOT NULL: needed in a foreign key constraint 'p_ibfk_1' SET NULL"},
		{"ALTER TABLE c ADD CONSTRAINT zz FOREIGN KEY (pid) REFERENCES p(s)",
			3780, "Referencing column 'pid' and referenced column 's' in foreign key constraint 'zz' are incompatible."},
		{"ALTER TABLE c MODIFY pid BIGINT",
			3780, "Referencing column 'pid' and referenced column 'id' in foreign key constraint 'fk' are incompatible."},
		{"ALTER TABLE c DROP INDEX fk", 1553, "Cannot drop index 'fk': needed in a foreign key constraint"},
		{"ALTER TABLE c DROP COLUMN pid", 1828, "Cannot drop column 'pid': needed in a foreign key constraint 'fk'"},
		{"TRUNCATE TABLE p", 1701, "Cannot truncate a table referenced in a foreign key constraint (`d`.`c`, CONSTRAINT `fk`)"},
	} {
		fkErr(t, db, c.q, c.code, c.msg)
	}
	fkWant(t, db, "SHOW TABLES", "c;p")

	// Renamed columns stay in the key, on either side.
	fkExec(t, db, "ALTER TABLE c RENAME COLUMN pid TO parent", "ALTER TABLE p RENAME COLUMN id TO pk", "INSERT INTO p VALUES (1, 'a', 1)", "INSERT INTO c VALUES (1, 1)")
	fkErr(t, db, "INSERT INTO c VALUES (2, 2)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `fk` FOREIGN KEY (`parent`) REFERENCES `p` (`pk`))")

	// A self-referencing key cascades down a tree.
	fkExec(t, db,
		"CREATE TABLE tree (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) REFERENCES tree(id) ON DELETE CASCADE)",
		"INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 1)",
		"DELETE FROM tree WHERE id = 2",
	)
	fkWant(t, db, "SELECT id FROM tree ORDER BY id", "1;4")
	fkErr(t, db, "INSERT INTO tree VALUES (5, 9)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`tree`, CONSTRAINT `tree_ibfk_1` FOREIGN KEY (`up`) REFERENCES `tree` (`id`) ON DELETE CASCADE)")
}

// TestForeignKeyTransactions: a child may reference a parent inserted
// earlier in its transaction; a statement that fails on a foreign key
// leaves nothing of itself; a cascade is undone by ROLLBACK; and a child
// inserted while another transaction deletes its parent waits for that
// transaction and then gets 1452.
func TestForeignKeyTransactions(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE)",
		"INSERT INTO p VALUES (1), (2), (3)",
		"INSERT INTO c VALUES (1, 1), (2, 1)",
	)
	ctx := context.Background()
	a, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	exec := func(c *sql.Conn, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	exec(a, "BEGIN", "INSERT INTO p VALUES (10)", "INSERT INTO c VALUES (10, 10)", "COMMIT")
	if _, err := a.ExecContext(ctx, "INSERT INTO c VALUES (11, 1), (12, 99)"); !isMySQLErrorCode(err, 1452) {
		t.Errorf("multi-row insert with an orphan: %v, want 1452", err)
	}
	fkWant(t, db, "SELECT id FROM c ORDER BY id", "1;2;10")
	exec(a, "BEGIN", "DELETE FROM p WHERE id = 1")
	fkWant(t, db, "SELECT id FROM c ORDER BY id", "1;2;10")
	exec(a, "ROLLBACK")
	fkWant(t, db, "SELECT id FROM c ORDER BY id", "1;2;10")

	exec(a, "BEGIN", "DELETE FROM p WHERE id = 3")
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "INSERT INTO c VALUES (20, 3)")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("child insert did not wait for the parent's delete: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	exec(a, "COMMIT")
	if err := <-done; !isMySQLErrorCode(err, 1452) {
		t.Errorf("child of a parent deleted meanwhile: %v, want 1452", err)
	}
	fkWant(t, db, "SELECT id, pid FROM c ORDER BY id", "1,1;2,1;10,10")

	// The other order: the parent's delete waits for the child's
	// transaction, then finds the child and cascades to it.
	exec(a, "BEGIN", "INSERT INTO c VALUES (30, 2)")
	go func() {
		_, err := b.ExecContext(ctx, "DELETE FROM p WHERE id = 2")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("parent delete did not wait for the child's insert: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	exec(a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fkWant(t, db, "SELECT id, pid FROM c ORDER BY id", "1,1;2,1;10,10")
	fkWant(t, db, "SELECT id FROM p ORDER BY id", "1;10")
}

// TestForeignKeyOnlineIndex: an online ADD INDEX on a child and on a
// parent while clients insert children and delete parents (cascading)
// builds indexes that match the rows, and the keys hold afterwards.
func TestForeignKeyOnlineIndex(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, w INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE)",
	)
	var b strings.Builder
	b.WriteString("INSERT INTO p VALUES (1, 1)")
	for i := 2; i <= 2000; i++ {
		fmt.Fprintf(&b, ", (%d, %d)", i, i)
	}
	fkExec(t, db, b.String(), "INSERT INTO c SELECT id, id, id FROM p")
	stop := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.Exec("INSERT INTO c VALUES (?, ?, ?)", 10000+i, 1+i%1500, i); err != nil {
				errs <- err
				return
			}
			if _, err := db.Exec("DELETE FROM p WHERE id = ?", 2000-i%400); err != nil {
				errs <- err
				return
			}
		}
	}()
	fkExec(t, db, "ALTER TABLE c ADD INDEX w (w)", "ALTER TABLE p ADD INDEX v (v)")
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	fkExec(t, db, "ADMIN CHECK TABLE c", "ADMIN CHECK TABLE p")
	fkWant(t, db, "SELECT COUNT(*) FROM c LEFT JOIN p ON c.pid = p.id WHERE p.id IS NULL", "0")
	fkErr(t, db, "INSERT INTO c VALUES (1, 99999, 1)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE)")
}

// TestForeignKeyChecksOff: with foreign_key_checks = 0 a key may name a
// parent that does not exist yet, and is enforced once it does; a key to
// another database's table names that database in SHOW CREATE TABLE.
func TestForeignKeyChecksOff(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"SET foreign_key_checks = 0",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES later(id))",
		"INSERT INTO c VALUES (1, 1)",
		"SET foreign_key_checks = 1",
		"CREATE TABLE later (id INT PRIMARY KEY)",
		"INSERT INTO later VALUES (1)",
	)
	// The first statement to use the key checks it, inside its
	// transaction, which goes on.
	fkExec(t, db, "BEGIN", "INSERT INTO later VALUES (2)", "INSERT INTO c VALUES (2, 2)", "ROLLBACK")
	fkWant(t, db, "SELECT id FROM later", "1")
	fkErr(t, db, "INSERT INTO c VALUES (2, 5)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `later` (`id`))")
	fkErr(t, db, "DELETE FROM later", 1451,
		"Cannot delete or update a parent row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `later` (`id`))")

	fkExec(t, db, "CREATE DATABASE o", "CREATE TABLE o.p (id INT PRIMARY KEY)",
		"CREATE TABLE x (id INT PRIMARY KEY, pid INT, CONSTRAINT xo FOREIGN KEY (pid) REFERENCES o.p(id))")
	fkErr(t, db, "INSERT INTO x VALUES (1, 1)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`x`, CONSTRAINT `xo` FOREIGN KEY (`pid`) REFERENCES `o`.`p` (`id`))")
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE x").Scan(&name, &create); err != nil || !strings.Contains(create, "CONSTRAINT `xo` FOREIGN KEY (`pid`) REFERENCES `o`.`p` (`id`)") {
		t.Errorf("SHOW CREATE TABLE x: %v\n%s", err, create)
	}
	fkErr(t, db, "DROP DATABASE o", 3730, "Cannot drop table 'p' referenced by a foreign key constraint 'xo' on table 'x'.")
	fkExec(t, db, "SET foreign_key_checks = 0", "DROP DATABASE o", "SET foreign_key_checks = 1")
	fkErr(t, db, "INSERT INTO x VALUES (1, 1)", 1452,
		"Cannot add or update a child row: a foreign key constraint fails (`d`.`x`, CONSTRAINT `xo` FOREIGN KEY (`pid`) REFERENCES `o`.`p` (`id`))")
}
