package server_test

import (
	"bytes"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestOKInfo: the info string of an OK packet is length-encoded, as MySQL
// and MariaDB servers send it, whether the statement runs through
// go-mysql-server or the fast path, and the mariadb client prints it (it
// failed with "malformed packet" on a short one).
func TestOKInfo(t *testing.T) {
	s := servertest.Start(t)
	if _, err := s.DB("d").Exec("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	const clientMultiStatements = 1 << 16
	rc := dialRawCaps(t, s.Addr(), "d", clientMultiStatements)
	for _, c := range []struct{ q, info string }{
		{"PREPARE s FROM 'SELECT 1'", "Statement prepared"},
		{"INSERT INTO t VALUES (1, 'a'), (2, 'b')", ""},
		{"UPDATE t SET c = 'x' WHERE id > 0", "Rows matched: 2  Changed: 2  Warnings: 0"},
		// the text fast path
		{"UPDATE t SET c = 'y' WHERE id = 1", "Rows matched: 1  Changed: 1  Warnings: 0"},
		{"UPDATE t SET c = 'z' WHERE id = 2", "Rows matched: 1  Changed: 1  Warnings: 0"},
		// a multi-statement: each OK on its own
		{"UPDATE t SET c = 'm' WHERE id = 1; PREPARE s2 FROM 'SELECT 2'", "Rows matched: 1  Changed: 1  Warnings: 0"},
	} {
		rc.command(comQuery, []byte(c.q))
		p := rc.readPacket()
		if p[0] != 0x00 {
			t.Fatalf("%s: not an OK packet: %q", c.q, p)
		}
		_, rest := lenEnc(p[1:])
		_, rest = lenEnc(rest)
		status := rest[0]
		rest = rest[4:] // status flags, warnings
		var info []byte
		if len(rest) > 0 {
			n, r := lenEnc(rest)
			if int(n) != len(r) {
				t.Fatalf("%s: info length %d, %d bytes follow: %q", c.q, n, len(r), p)
			}
			info = r
		}
		if string(info) != c.info {
			t.Errorf("%s: info %q, want %q", c.q, info, c.info)
		}
		if status&0x08 != 0 { // more results
			if p := rc.readPacket(); p[0] != 0x00 || !bytes.HasSuffix(p, []byte("\x12Statement prepared")) {
				t.Errorf("%s: second OK %q", c.q, p)
			}
		}
	}

	client := mariadbPath(t)
	host, port, _ := net.SplitHostPort(s.Addr())
	out, err := exec.Command(client, "-h"+host, "-P"+port, "-uroot", "-vv", "-e",
		"PREPARE s FROM 'SELECT 41 + 1'; EXECUTE s; UPDATE t SET c = 'w' WHERE id = 2", "d").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Statement prepared") || !strings.Contains(string(out), "42") ||
		!strings.Contains(string(out), "Rows matched: 1  Changed: 1  Warnings: 0") {
		t.Errorf("mariadb client: %v\n%s", err, out)
	}
}
