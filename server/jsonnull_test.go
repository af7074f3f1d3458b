package server_test

import (
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestJSONNullNumbers checks JSON null, and other JSON values that are no
// number, cast to numbers and strings, used as conditions and compared,
// against MySQL 8's results (Json_wrapper::coerce_*: 0 with warning 3156).
func TestJSONNullNumbers(t *testing.T) {
	s := servertest.Start(t)
	c := pinConn(t, s.DB(""))
	c.want("SELECT CAST(CAST('null' AS JSON) AS SIGNED), CAST(CAST('null' AS JSON) AS UNSIGNED), CAST(CAST('null' AS JSON) AS DECIMAL(5,2)), "+
		"CAST(CAST('null' AS JSON) AS DOUBLE), CAST(CAST('null' AS JSON) AS CHAR), CAST(CAST('null' AS JSON) AS DECIMAL(5,2)) IS NULL",
		"0,0,0.00,0,null,0")
	if w := c.rows("SHOW WARNINGS"); strings.Count(w, "Warning,3156,Invalid JSON value for CAST to ") != 5 {
		t.Errorf("warnings: %q, want one 3156 per numeric cast", w)
	}
	c.want("SELECT CAST(CAST('[1]' AS JSON) AS DECIMAL(4,1)), CAST(CAST('{}' AS JSON) AS SIGNED), CAST(CAST('\"2.5\"' AS JSON) AS DECIMAL(4,1)), CAST(CAST('true' AS JSON) AS DECIMAL(4,1))",
		"0.0,0,2.5,1.0")
	c.want("SELECT IF(CAST('null' AS JSON), 'y', 'n'), IF(CAST('1' AS JSON), 'y', 'n'), IF(CAST('true' AS JSON), 'y', 'n'), IF(CAST('{}' AS JSON), 'y', 'n'), "+
		"NOT CAST('null' AS JSON), CAST('0.5' AS JSON) AND 1, CAST('null' AS JSON) OR NULL", "n,y,y,n,1,1,NULL")
	// JSON null is not SQL NULL: IS NULL is false, comparisons with it are
	// JSON comparisons, and with SQL NULL they are NULL.
	c.want("SELECT CAST('null' AS JSON) IS NULL, CAST('null' AS JSON) = NULL, CAST('null' AS JSON) <=> NULL, JSON_EXTRACT('{\"a\": null}', '$.a') IS NULL, "+
		"JSON_EXTRACT('{\"a\": null}', '$.b') IS NULL, JSON_EXTRACT('{\"a\": null}', '$.a') = CAST('null' AS JSON), JSON_EXTRACT('{\"a\": null}', '$.a') = 'null', "+
		"JSON_EXTRACT('{\"a\": null}', '$.a') = 0, JSON_UNQUOTE(JSON_EXTRACT('{\"a\": null}', '$.a')), JSON_TYPE(JSON_EXTRACT('{\"a\": null}', '$.a'))",
		"0,NULL,0,0,1,1,0,0,null,NULL")
	c.want("SELECT JSON_TYPE(JSON_EXTRACT('{\"a\": null}', '$.a')) IS NULL, COALESCE(CAST('null' AS JSON), 1)", "0,null")

	c.exec("CREATE DATABASE jn", "USE jn", "CREATE TABLE j (id INT PRIMARY KEY, j JSON)",
		`INSERT INTO j VALUES (1, 'null'), (2, NULL), (3, '{"a": null}'), (4, '1'), (5, 'true'), (6, '0')`)
	c.want("SELECT id FROM j WHERE j ORDER BY id", "4;5")
	c.want("SELECT id, CASE WHEN j THEN 'y' WHEN j IS NULL THEN '-' ELSE 'n' END FROM j ORDER BY id", "1,n;2,-;3,n;4,y;5,y;6,n")
	c.want("SELECT id FROM j GROUP BY id, j HAVING j ORDER BY id", "4;5")
	c.want("SELECT id FROM j WHERE NOT j ORDER BY id", "1;3;6")
	c.want("SELECT id, j IS NULL, CAST(j AS SIGNED), CAST(j AS DECIMAL(4,1)), j->'$.a' IS NULL, CAST(j->'$.a' AS DECIMAL(4,1)) FROM j ORDER BY id",
		"1,0,0,0.0,1,NULL;2,1,NULL,NULL,1,NULL;3,0,0,0.0,0,0.0;4,0,1,1.0,1,NULL;5,0,1,1.0,1,NULL;6,0,0,0.0,1,NULL")
	c.want("SELECT id FROM j ORDER BY j, id", "2;1;6;4;3;5")
}
