package sim

import "fmt"

// Priority orders events scheduled for the same instant: lower runs first.
// Most events use PriorityDefault; devices that must settle before the CPU
// observes them at the same instant use PriorityDevice.
type Priority int8

// Event priorities.
const (
	// PriorityWire is the priority of what arrives from another host
	// through a link (Scheduler.ScheduleKeyed): it comes before anything
	// the host itself does at that instant.
	PriorityWire    Priority = -20
	PriorityDevice  Priority = -10
	PriorityDefault Priority = 0
	PriorityLate    Priority = 10
)

// Event is a reusable, cancellable callback owned by the object that
// schedules it. Create it once (d.txDone = sim.NewEvent(...)) and reschedule
// it as often as needed: scheduling allocates nothing.
type Event struct {
	name string
	fn   func()
	prio Priority
	when Time
	// index is the event's position in the queue, or -1 when idle.
	index int
}

// NewEvent returns an idle event that calls fn when it fires. name appears in
// traces ("hostA.nic0.txdone").
func NewEvent(name string, fn func()) *Event {
	return &Event{name: name, fn: fn, index: -1}
}

// NewEventPriority is NewEvent with a same-instant priority.
func NewEventPriority(name string, prio Priority, fn func()) *Event {
	e := NewEvent(name, fn)
	e.prio = prio
	return e
}

// Name returns the event's name.
func (e *Event) Name() string { return e.name }

// Scheduled reports whether the event is waiting in a queue.
func (e *Event) Scheduled() bool { return e.index >= 0 }

// When returns the time the event is scheduled for; meaningful only while
// Scheduled.
func (e *Event) When() Time { return e.when }

func (e *Event) String() string {
	if e.Scheduled() {
		return fmt.Sprintf("%s@%v", e.name, e.when)
	}
	return e.name + "(idle)"
}
