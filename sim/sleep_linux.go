package sim

import (
	"syscall"
	"time"
)

// shortSleep sleeps for d, a fraction of a millisecond, with nanosleep:
// Go's timers wake about a millisecond late for so short a wait.
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
