//go:build !(linux || darwin || freebsd)

package extsort

// mapAnon falls back to the Go heap where anonymous mappings are not
// available through x/sys/unix.
func mapAnon(n int) ([]byte, error) { return make([]byte, n), nil }

func unmapAnon([]byte) {}
