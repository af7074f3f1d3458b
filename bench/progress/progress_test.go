package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBarAndETA(t *testing.T) {
	if got := Bar(0.5, 10); got != "[#####.....]" {
		t.Fatalf("Bar = %q", got)
	}
	if Bar(-1, 4) != "[....]" || Bar(2, 4) != "[####]" {
		t.Fatal("Bar does not clamp")
	}
	if got := ETA(10*time.Second, 0.25); got != "30s" {
		t.Fatalf("ETA = %q", got)
	}
	if ETA(time.Second, 0) != "?" || ETA(time.Second, 1) != "0s" {
		t.Fatal("ETA edge cases")
	}
}

// Off a terminal, the status is printed as plain lines at most every
// interval, and permanent lines always.
func TestLineOffTerminal(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	l.Set("one %d", 1)
	l.Set("two")
	l.Printf("kept")
	if got := b.String(); got != "one 1\nkept\n" || strings.Contains(got, "\r") {
		t.Fatalf("%q", got)
	}
	var nilLine *Line
	nilLine.Set("x")
	nilLine.Printf("x")
	nilLine.Clear()
}
