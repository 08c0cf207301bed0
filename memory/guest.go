package memory

import (
	"fmt"

	"simkron/sim"
)

// GuestError records one misuse of hardware by a guest: simulated software,
// or a device programmed by it. It is reported, never panicked.
type GuestError struct {
	Time      sim.Time
	Component string // hierarchical name, e.g. "hostA.mem.dma.ne2000"
	Msg       string
}

// String renders e as "time component: message".
func (e GuestError) String() string {
	return fmt.Sprintf("%v %s: %s", e.Time, e.Component, e.Msg)
}

// maxGuestRecords bounds the memory a runaway guest can make the log use.
const maxGuestRecords = 100

// GuestLog collects guest errors: it counts all of them and keeps the first
// 100. The zero value is ready to use.
type GuestLog struct {
	count   int
	records []GuestError

	// OnReport, if set, is called for every report (kept or not); it is a
	// listener for logs and traces and must not change the model.
	OnReport func(GuestError)
}

// Report records a guest error at time t by component.
func (l *GuestLog) Report(t sim.Time, component, format string, args ...any) {
	e := GuestError{Time: t, Component: component, Msg: fmt.Sprintf(format, args...)}
	l.count++
	if len(l.records) < maxGuestRecords {
		l.records = append(l.records, e)
	}
	if l.OnReport != nil {
		l.OnReport(e)
	}
}

// Count returns how many guest errors were reported.
func (l *GuestLog) Count() int { return l.count }

// Records returns a copy of the first (up to 100) reported errors.
func (l *GuestLog) Records() []GuestError {
	return append([]GuestError(nil), l.records...)
}
