package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

func TestFKScratch(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	db.SetMaxOpenConns(1)
	fkExec(t, db,
		"CREATE TABLE p (id INT PRIMARY KEY, x INT)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id))",
	)
	for _, q := range []string{
		"CREATE TABLE c1 (id INT PRIMARY KEY, pid INT NOT NULL, CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL)",
		"CREATE TABLE c2 (id INT PRIMARY KEY, pid VARCHAR(10), CONSTRAINT fk2 FOREIGN KEY (pid) REFERENCES p(id))",
		"CREATE TABLE c3 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk3 FOREIGN KEY (nope) REFERENCES p(id))",
		"CREATE TABLE c4 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p(id))",
		"CREATE TABLE c5 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk5 FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET DEFAULT)",
		"ALTER TABLE c DROP INDEX fk",
		"ALTER TABLE c DROP COLUMN pid",
		"ALTER TABLE p DROP COLUMN id",
		"ALTER TABLE c MODIFY pid BIGINT",
		"ALTER TABLE c RENAME COLUMN pid TO parent",
		"ALTER TABLE p RENAME COLUMN id TO pk",
		"TRUNCATE TABLE p",
		"CREATE TABLE tree (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) REFERENCES tree(id) ON DELETE CASCADE)",
		"INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 1)",
		"DELETE FROM tree WHERE id = 2",
		"SELECT id FROM tree",
		"SHOW CREATE TABLE c",
		"SHOW CREATE TABLE tree",
		"SHOW TABLES",
		"DROP DATABASE d",
	} {
		if q[:4] == "SELE" || q[:4] == "SHOW" {
			t.Logf("%s -> %s", q, fkRows(t, db, q))
			continue
		}
		_, err := db.Exec(q)
		t.Logf("%s -> %v", q, err)
	}
}
