package server

import (
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// TestInteractiveWaitTimeout: an interactive client's session starts
// with interactive_timeout as its wait_timeout; another keeps wait_timeout.
func TestInteractiveWaitTimeout(t *testing.T) {
	ctx := gms.NewEmptyContext()
	_, old, _ := gms.SystemVariables.GetGlobal("interactive_timeout")
	if err := gms.SystemVariables.SetGlobal(ctx, "interactive_timeout", int64(77)); err != nil {
		t.Fatal(err)
	}
	defer gms.SystemVariables.SetGlobal(ctx, "interactive_timeout", old)
	for _, c := range []struct {
		caps uint32
		want int64
	}{{clientInteractive, 77}, {0, 28800}} {
		base := gms.NewBaseSession()
		interactiveWaitTimeout(base, c.caps)
		if v, err := base.GetSessionVariable(ctx, "wait_timeout"); err != nil || v != c.want {
			t.Errorf("capabilities %#x: wait_timeout %v (%v), want %d", c.caps, v, err, c.want)
		}
	}
}
