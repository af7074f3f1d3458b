package malloctrim

import "time"

// Every trims every period until stop is closed (nil: never).
func Every(period time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			Trim()
		}
	}
}
