package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestConstraintValidatedAfterEnforced: ADD FOREIGN KEY and ADD CHECK on
// a table with rows check them only once every transaction enforces the
// constraint. A transaction still on the older schema that writes a row
// breaking it holds the ALTER until it commits; the ALTER then finds the
// row, fails with MySQL's error and leaves no constraint; a row that
// keeps it lets the ALTER succeed.
func TestConstraintValidatedAfterEnforced(t *testing.T) {
	const fkFails = "Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"
	s := servertest.Start(t)
	db := s.DB("")
	fkExec(t, db, "CREATE DATABASE d", "USE d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, n INT, KEY (pid))",
		"INSERT INTO p VALUES (1), (2)",
		"INSERT INTO c VALUES (1, 1, 1), (2, 2, 2)")
	other := s.DB("d")
	for _, tc := range []struct {
		name, write, alter string
		code               uint16
		msg                string
	}{
		{"foreign key, orphan", "INSERT INTO c VALUES (10, 99, 1)",
			"ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id)", 1452, fkFails},
		{"check, violation", "UPDATE c SET n = -5 WHERE id = 1",
			"ALTER TABLE c ADD CONSTRAINT c_n CHECK (n > 0)", 3819, "Check constraint 'c_n' is violated."},
		{"foreign key, kept", "UPDATE c SET pid = 2 WHERE id = 10",
			"ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id)", 0, ""},
		{"check, kept", "UPDATE c SET n = 7 WHERE id = 1",
			"ALTER TABLE c ADD CONSTRAINT c_n CHECK (n > 0)", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			old, err := other.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			for _, q := range []string{"BEGIN", "SELECT COUNT(*) FROM c", tc.write} {
				if _, err := old.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			done := make(chan error, 1)
			go func() { _, err := db.Exec(tc.alter); done <- err }()
			select {
			case err := <-done:
				t.Fatalf("the ALTER ended (%v) while a transaction on the older schema runs", err)
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := old.ExecContext(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
			err = <-done
			create := fkRows(t, db, "SHOW CREATE TABLE c")
			name := strings.Fields(tc.alter)[5]
			if tc.code != 0 {
				if !isMySQLError(err, tc.code, tc.msg) {
					t.Fatalf("%s: %v, want %d %q", tc.alter, err, tc.code, tc.msg)
				}
				if strings.Contains(create, name) {
					t.Fatalf("the failed ALTER left its constraint:\n%s", create)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.alter, err)
			}
			if !strings.Contains(create, name) {
				t.Fatalf("no constraint %s:\n%s", name, create)
			}
		})
	}
	fkWant(t, db, "SELECT id, pid, n FROM c ORDER BY id", "1,1,7;2,2,2;10,2,1")
	fkErr(t, db, "INSERT INTO c VALUES (11, 99, 1)", 1452, fkFails)
	fkErr(t, db, "INSERT INTO c VALUES (11, 1, 0)", 3819, "Check constraint 'c_n' is violated.")
}
