package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestLoadDataSyntax: LOAD DATA LOCAL reads fields and lines as MySQL 8
// does: escapes become their characters, \N is NULL, an escaped or
// quoted separator is data, a doubled quote is one quote, IGNORE n LINES
// and LINES STARTING BY skip what they say.
func TestLoadDataSyntax(t *testing.T) {
	s := servertest.Start(t)
	db := s.DB("d")
	mustExecDB(t, db, "SET GLOBAL local_infile = 1")
	defer db.Exec("SET GLOBAL local_infile = 0")
	mustExecDB(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30) NULL)")
	null := "<NULL>"
	cases := []struct {
		name, data, opts string
		want             []string // v by id, from 1
	}{
		{"escapes", "1\ttab\\there\n2\tline\\nbreak\n3\tback\\\\slash\n4\t\\N\n" +
			"5\tnul\\0byte\n6\tsep\\\ttab\n7\tNULL\n8\t\\Nx\n9\tcr\\r\\Z\n10\t\n",
			"", []string{"tab\there", "line\nbreak", "back\\slash", null,
				"nul\x00byte", "sep\ttab", "NULL", "Nx", "cr\r\x1a", ""}},
		{"csv", "id,v\r\n1,\"a,b\"\r\n2,\"say \"\"hi\"\"\"\r\n3,\"two\r\nlines\"\r\n" +
			"4,NULL\r\n5,\"NULL\"\r\n6,plain\r\n7,\"q\\\"e\"\r\n8,a\\,b\r\n",
			"FIELDS TERMINATED BY ',' ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES",
			[]string{"a,b", "say \"hi\"", "two\r\nlines", null, "NULL", "plain", "q\"e", "a,b"}},
		{"prefix", "xx1\ta\nnoise\nnoisexx2\tb\\\nc\n",
			"LINES STARTING BY 'xx'", []string{"a", "b\nc"}},
		{"no escape", "1|a\\tb\n2|\\N\n",
			"FIELDS TERMINATED BY '|' ESCAPED BY ''", []string{"a\\tb", "\\N"}},
	}
	t.Run("empty number", func(t *testing.T) {
		mustExecDB(t, db, "CREATE TABLE n (id INT PRIMARY KEY, k INT NULL, d DECIMAL(5,2) NULL)")
		mysql.RegisterReaderHandler("n", func() io.Reader { return strings.NewReader("1\t\t\n2\t\\N\t3.5\n") })
		defer mysql.DeregisterReaderHandler("n")
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mustExec(t, c, "LOAD DATA LOCAL INFILE 'Reader::n' INTO TABLE n")
		rows, err := c.QueryContext(context.Background(), "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		var warnings []string
		for rows.Next() {
			var level, msg string
			var code int
			if err := rows.Scan(&level, &code, &msg); err != nil {
				t.Fatal(err)
			}
			warnings = append(warnings, fmt.Sprintf("%d %s", code, msg))
		}
		rows.Close()
		sort.Strings(warnings)
		if want := []string{"1366 Incorrect decimal value: '' for column 'd' at row 1",
			"1366 Incorrect integer value: '' for column 'k' at row 1"}; strings.Join(warnings, "|") != strings.Join(want, "|") {
			t.Fatalf("warnings %q, want %q", warnings, want)
		}
		query(t, db, "SELECT concat_ws(',', id, ifnull(k, 'null'), ifnull(d, 'null')) FROM n ORDER BY id LIMIT 1", "1,0,0.00")
		query(t, db, "SELECT concat_ws(',', id, ifnull(k, 'null'), ifnull(d, 'null')) FROM n WHERE id = 2", "2,null,3.50")
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustExecDB(t, db, "TRUNCATE TABLE t")
			data := c.data
			mysql.RegisterReaderHandler(c.name, func() io.Reader { return strings.NewReader(data) })
			defer mysql.DeregisterReaderHandler(c.name)
			if _, err := db.Exec("LOAD DATA LOCAL INFILE 'Reader::" + c.name + "' INTO TABLE t " + c.opts); err != nil {
				t.Fatal(err)
			}
			got := loadedValues(t, db, null)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("loaded %q\nwant   %q", got, c.want)
			}
		})
	}
}

func loadedValues(t *testing.T, db *sql.DB, null string) []string {
	t.Helper()
	rows, err := db.Query("SELECT id, v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int
		var v sql.NullString
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if id != len(got)+1 {
			t.Fatalf("id %d after %d rows", id, len(got))
		}
		if !v.Valid {
			v.String = null
		}
		got = append(got, v.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
