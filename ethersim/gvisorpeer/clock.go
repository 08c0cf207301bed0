package gvisorpeer

import (
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"

	"simkron/sim"
)

// Clock is a tcpip.Clock driven by the simulation: Now is the event
// kernel's time (picoseconds truncated to nanoseconds) after an epoch,
// and AfterFunc schedules a sim event that calls the function on the
// simulation's goroutine. gVisor documents that a timer's function runs
// in its own goroutine; running it from an event instead is safe because
// nothing else is inside gVisor while an event fires, and it keeps the
// run deterministic.
type Clock struct {
	k     *sim.Scheduler
	epoch time.Time
	name  string
}

var _ tcpip.Clock = (*Clock)(nil)

// NewClock returns a clock on k that reads epoch at simulated time 0.
// name prefixes the names of its timer events.
func NewClock(k *sim.Scheduler, epoch time.Time, name string) *Clock {
	return &Clock{k: k, epoch: epoch, name: name}
}

// elapsed is the simulated time since the start, in nanoseconds.
func (c *Clock) elapsed() time.Duration { return time.Duration(c.k.Now() / sim.Nanosecond) }

// Now implements tcpip.Clock.
func (c *Clock) Now() time.Time { return c.epoch.Add(c.elapsed()) }

// NowMonotonic implements tcpip.Clock.
func (c *Clock) NowMonotonic() tcpip.MonotonicTime {
	return tcpip.MonotonicTime{}.Add(c.elapsed())
}

// AfterFunc implements tcpip.Clock: f runs from a sim event d after now.
func (c *Clock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	t := &timer{c: c}
	t.ev = sim.NewEvent(c.name+".timer", f)
	t.Reset(d)
	return t
}

// timer is one AfterFunc: a reusable sim event.
type timer struct {
	c       *Clock
	ev      *sim.Event
	forever bool // armed beyond sim.Never: pending, but never fires
}

// maxDelay is the longest delay that fits sim.Time; longer timers never
// fire (gVisor uses very long ones as "infinite").
const maxDelay = time.Duration(sim.Never / sim.Nanosecond / 2)

// Stop implements tcpip.Timer.
func (t *timer) Stop() bool {
	pending := t.forever || t.ev.Scheduled()
	t.forever = false
	t.c.k.Cancel(t.ev)
	return pending
}

// Reset implements tcpip.Timer.
func (t *timer) Reset(d time.Duration) {
	t.c.k.Cancel(t.ev)
	t.forever = d > maxDelay
	if t.forever {
		return
	}
	t.c.k.ScheduleAfter(t.ev, sim.Time(max(d, 0))*sim.Nanosecond)
}
