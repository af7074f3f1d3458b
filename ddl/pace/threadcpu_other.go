//go:build !(linux || darwin || freebsd)

package pace

import "time"

// threadCPU cannot be read here; pacers measure wall time.
func threadCPU() (time.Duration, bool) { return 0, false }
