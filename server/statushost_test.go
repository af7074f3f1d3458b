package server_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/reorgdb/reorgdb/server"
	"github.com/reorgdb/reorgdb/server/servertest"
)

// TestStatusHost: the status port listens on loopback even when the
// MySQL port listens everywhere, and --status-host moves it.
func TestStatusHost(t *testing.T) {
	get := func(addr, path string) string {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	s := servertest.StartConfig(t, t.TempDir(), func(c *server.Config) {
		c.Host, c.InitialRootPassword, c.EnablePprof = "0.0.0.0", "pw", true
	})
	if h, _, _ := net.SplitHostPort(s.Addr()); h == "127.0.0.1" {
		t.Fatalf("MySQL port on %s, want every address", s.Addr())
	}
	h, port, _ := net.SplitHostPort(s.StatusAddr())
	if h != "127.0.0.1" {
		t.Fatalf("status port on %s with --host 0.0.0.0, want 127.0.0.1", s.StatusAddr())
	}
	if body := get(s.StatusAddr(), "/status"); !strings.Contains(body, `"version"`) {
		t.Fatalf("/status: %s", body)
	}
	get(s.StatusAddr(), "/debug/pprof/")
	// Not reachable through another of the machine's addresses.
	if ip := nonLoopbackIP(); ip != "" {
		if c, err := net.Dial("tcp", net.JoinHostPort(ip, port)); err == nil {
			c.Close()
			t.Fatalf("status port reachable on %s", ip)
		}
	}

	s2 := servertest.StartConfig(t, t.TempDir(), func(c *server.Config) { c.StatusHost = "0.0.0.0" })
	if h, _, _ := net.SplitHostPort(s2.StatusAddr()); h == "127.0.0.1" {
		t.Fatalf("status port on %s with --status-host 0.0.0.0", s2.StatusAddr())
	}
	_, port2, _ := net.SplitHostPort(s2.StatusAddr())
	if body := get(net.JoinHostPort("127.0.0.1", port2), "/metrics"); !strings.Contains(body, "reorgdb_") {
		t.Fatalf("/metrics: %.200s", body)
	}
	// Go's profiler only with --enable-pprof.
	if resp, err := http.Get("http://" + net.JoinHostPort("127.0.0.1", port2) + "/debug/pprof/"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ without --enable-pprof: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if ip := nonLoopbackIP(); ip != "" {
		get(net.JoinHostPort(ip, port2), "/status")
	}
}

// nonLoopbackIP is an IPv4 address of this machine other than loopback,
// or "" when it has none.
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
