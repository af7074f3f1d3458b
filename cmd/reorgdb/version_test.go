package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.x", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got := versionLine(info); !strings.Contains(got, "ReorgDB") || !strings.Contains(got, "commit abc123+dirty, go1.x") {
		t.Fatalf("versionLine = %q", got)
	}
	if got := versionLine(nil); !strings.Contains(got, "commit unknown") {
		t.Fatalf("versionLine(nil) = %q", got)
	}
}
