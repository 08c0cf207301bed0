package machinetest

import (
	"hash"
	"hash/fnv"
	"strconv"

	"simkron/sim"
)

// EventTrace hashes a run's events as they fire (its Fire is a
// machine.Options.Trace): each one's time and name, in order, so that two
// runs can be compared event for event without keeping their traces.
type EventTrace struct {
	h      hash.Hash64
	buf    []byte
	Events int // how many fired
}

// NewEventTrace returns an empty trace.
func NewEventTrace() *EventTrace { return &EventTrace{h: fnv.New64a()} }

// Fire adds ev to the trace.
func (e *EventTrace) Fire(ev *sim.Event) {
	e.buf = strconv.AppendInt(e.buf[:0], int64(ev.When()), 10)
	e.buf = append(e.buf, ' ')
	e.buf = append(e.buf, ev.Name()...)
	e.buf = append(e.buf, '\n')
	e.h.Write(e.buf)
	e.Events++
}

// Sum returns the hash of the events so far.
func (e *EventTrace) Sum() uint64 { return e.h.Sum64() }
