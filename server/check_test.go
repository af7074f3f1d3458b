package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestCheckConstraints: column and table CHECK constraints of CREATE
// TABLE refuse an INSERT or UPDATE that makes one false with 3819 (NULL
// passes, NOT ENFORCED is not checked); ALTER TABLE ADD CHECK checks the
// rows there are; DROP CHECK and DROP CONSTRAINT remove one; SHOW CREATE
// TABLE prints them so that the statement loads back.
func TestCheckConstraints(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY, a INT CHECK (a >= 0), b INT, CONSTRAINT a_lt_b CHECK (a < b), CONSTRAINT loose CHECK (b < 100) NOT ENFORCED)",
		"INSERT INTO t VALUES (1, 1, 2), (2, NULL, 5), (3, 0, 500)",
	)
	fkErr(t, db, "INSERT INTO t VALUES (4, -1, 5)", 3819, "Check constraint 't_chk_1' is violated.")
	fkErr(t, db, "INSERT INTO t VALUES (4, 6, 5)", 3819, "Check constraint 'a_lt_b' is violated.")
	fkErr(t, db, "UPDATE t SET b = 0 WHERE id = 1", 3819, "Check constraint 'a_lt_b' is violated.")
	fkErr(t, db, "REPLACE INTO t VALUES (1, 3, 2)", 3819, "Check constraint 'a_lt_b' is violated.")
	fkWant(t, db, "SELECT id, a, b FROM t ORDER BY id", "1,1,2;2,NULL,5;3,0,500")

	want := "CREATE TABLE `t` (\n" +
		"  `id` int NOT NULL,\n" +
		"  `a` int DEFAULT NULL,\n" +
		"  `b` int DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  CONSTRAINT `t_chk_1` CHECK ((`a` >= 0)),\n" +
		"  CONSTRAINT `a_lt_b` CHECK ((`a` < `b`)),\n" +
		"  CONSTRAINT `loose` CHECK ((`b` < 100)) /*!80016 NOT ENFORCED */\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE t").Scan(&name, &create); err != nil || create != want {
		t.Errorf("SHOW CREATE TABLE t: %v\n%s\nwant\n%s", err, create, want)
	}
	fkExec(t, db, "CREATE DATABASE d2", "USE d2", create, "USE d")
	fkErr(t, db, "INSERT INTO d2.t VALUES (4, 6, 5)", 3819, "Check constraint 'a_lt_b' is violated.")

	fkErr(t, db, "ALTER TABLE t ADD CONSTRAINT big CHECK (b > 3)", 3819, "Check constraint 'big' is violated.")
	fkErr(t, db, "ALTER TABLE t ADD CONSTRAINT a_lt_b CHECK (b > 0)", 3822, "Duplicate check constraint name 'a_lt_b'.")
	fkErr(t, db, "ALTER TABLE t DROP CHECK nope", 3940, "Constraint 'nope' does not exist.")
	fkErr(t, db, "CREATE TABLE t3 (a INT, CONSTRAINT a_lt_b CHECK (a > 0))", 3822, "Duplicate check constraint name 'a_lt_b'.")
	fkErr(t, db, "CREATE TABLE t3 (a INT, CONSTRAINT x CHECK (a > 0), CONSTRAINT x CHECK (a < 9))", 3822, "Duplicate check constraint name 'x'.")
	fkWant(t, db, "SHOW TABLES", "t")
	fkExec(t, db, "ALTER TABLE t ADD CONSTRAINT big CHECK (b > 1)")
	fkErr(t, db, "INSERT INTO t VALUES (4, 0, 1)", 3819, "Check constraint 'big' is violated.")
	fkExec(t, db, "ALTER TABLE t DROP CHECK big", "ALTER TABLE t DROP CONSTRAINT a_lt_b", "INSERT INTO t VALUES (4, 9, 1)")
	fkWant(t, db, "SELECT constraint_name, check_clause FROM information_schema.check_constraints WHERE constraint_schema = 'd' ORDER BY constraint_name",
		"loose,(b < 100);t_chk_1,(a >= 0)")

	// A column a check on several columns uses stays; a check on the
	// column alone goes with it; a column added with a check is checked.
	fkExec(t, db, "CREATE TABLE t4 (a INT, b INT, c INT, CONSTRAINT ab CHECK (a < b), CONSTRAINT cpos CHECK (c > 0))")
	fkErr(t, db, "ALTER TABLE t4 DROP COLUMN b", 3959, "Check constraint 'ab' uses column 'b', hence column cannot be dropped or renamed.")
	fkErr(t, db, "ALTER TABLE t4 RENAME COLUMN a TO aa", 3959, "Check constraint 'ab' uses column 'a', hence column cannot be dropped or renamed.")
	fkExec(t, db, "ALTER TABLE t4 DROP COLUMN c")
	fkWant(t, db, "SELECT constraint_name FROM information_schema.check_constraints WHERE constraint_schema = 'd' AND constraint_name IN ('ab', 'cpos')", "ab")
	fkExec(t, db, "ALTER TABLE t4 ADD COLUMN z INT CHECK (z IS NULL OR z > 0)")
	fkErr(t, db, "INSERT INTO t4 VALUES (1, 2, 0)", 3819, "Check constraint 't4_chk_1' is violated.")
	fkExec(t, db, "INSERT INTO t4 VALUES (1, 2, NULL)")
	fkErr(t, db, "ALTER TABLE t4 ADD COLUMN z2 INT DEFAULT 0 CHECK (z2 > 0 AND z2 < 9)", 3819, "Check constraint 't4_chk_2' is violated.")
	fkWant(t, db, "SELECT column_name FROM information_schema.columns WHERE table_schema = 'd' AND table_name = 't4' ORDER BY ordinal_position", "a;b;z")

	// Temporary tables have checks too.
	fkExec(t, db, "CREATE TEMPORARY TABLE tt (a INT, CHECK (a > 0))")
	fkErr(t, db, "INSERT INTO tt VALUES (0)", 3819, "Check constraint 'tt_chk_1' is violated.")
}
