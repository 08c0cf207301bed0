//go:build !linux

package sim

import "time"

// shortSleep sleeps for d, a fraction of a millisecond.
func shortSleep(d time.Duration) { time.Sleep(d) }
