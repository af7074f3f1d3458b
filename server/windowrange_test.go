package server_test

import (
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestWindowRangeFrames checks RANGE frames against MySQL 8's results:
// decimal and INTERVAL offsets, DESC order, NULL ORDER BY values (their
// frame is their NULL peers, and they are never within N of a value), and
// the default frame of an ordered window, which takes the current row's
// peers.
func TestWindowRangeFrames(t *testing.T) {
	s := servertest.Start(t)
	c := pinConn(t, s.DB(""))
	c.exec("CREATE DATABASE wr", "USE wr", "CREATE TABLE t (id INT PRIMARY KEY, i INT, x DECIMAL(5,2), dt DATE)",
		`INSERT INTO t VALUES (1, 1, 1.00, '2020-01-01'), (2, 2, 2.00, '2020-01-02'), (3, 3, 2.50, '2020-01-04'),
		 (4, 5, 4.00, '2020-01-05'), (5, NULL, NULL, NULL), (6, 2, 2.00, '2020-01-02')`)
	for _, tc := range []struct{ over, want string }{
		{"ORDER BY x RANGE BETWEEN 1.25 PRECEDING AND CURRENT ROW", "1,1;2,9;3,11;4,4;5,5;6,9"},
		{"ORDER BY x RANGE BETWEEN 0.5 PRECEDING AND 0.75 FOLLOWING", "1,1;2,11;3,11;4,4;5,5;6,11"},
		{"ORDER BY i RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW", "1,1;2,9;3,11;4,4;5,5;6,9"},
		{"ORDER BY i RANGE BETWEEN 1 PRECEDING AND CURRENT ROW", "1,1;2,9;3,11;4,4;5,5;6,9"},
		{"ORDER BY i DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW", "1,9;2,11;3,3;4,4;5,5;6,11"},
		{"ORDER BY i RANGE BETWEEN CURRENT ROW AND CURRENT ROW", "1,1;2,8;3,3;4,4;5,5;6,8"},
		{"ORDER BY i RANGE BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING", "1,14;2,17;3,17;4,21;5,5;6,17"},
		{"ORDER BY dt RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW", "1,1;2,9;3,3;4,7;5,5;6,9"},
		{"ORDER BY i", "1,6;2,14;3,17;4,21;5,5;6,14"},
		{"ORDER BY i DESC", "1,16;2,15;3,7;4,4;5,21;6,15"},
		{"ORDER BY i, id", "1,6;2,8;3,17;4,21;5,5;6,14"},
		{"ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", ""},
	} {
		q := "SELECT id, SUM(id) OVER (" + tc.over + ") FROM t ORDER BY id"
		if tc.want == "" {
			c.rows(q) // ROWS frames: the order of peers is not fixed
			continue
		}
		c.want(q, tc.want)
	}
	c.want("SELECT id, SUM(id) OVER w FROM t WINDOW w AS (ORDER BY x RANGE BETWEEN 1.25 PRECEDING AND CURRENT ROW) ORDER BY id", "1,1;2,9;3,11;4,4;5,5;6,9")
	c.want("SELECT id, MAX(id) OVER (ORDER BY i), RANK() OVER (ORDER BY i) FROM t WHERE id IN (2, 3, 6) ORDER BY id", "2,6,1;3,6,3;6,6,1")
	c.want("SELECT id, SUM(id) OVER (PARTITION BY i > 2 ORDER BY i RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t ORDER BY id", "1,9;2,9;3,3;4,4;5,5;6,9")
}
