package workload

import (
	"fmt"

	"simkron/report/shape"
	"simkron/trace"
)

// Messages is a Workload that measures messages one by one (an echo
// latency series): a trace of its run can be limited to one of them
// (simkron run --trace-window message=PROTOCOL:SIZE:N), and a trace shows
// each message's measurements beside the machine's slices, so that a
// reader checks that the slices sum to what the workload reports.
type Messages interface {
	Workload
	// MessageKinds returns what it will measure: each protocol and size,
	// with the number of measured messages (warm-up ones not counted).
	MessageKinds() []MessageKind
	// Marks returns the source of its messages' marks. Connecting to it
	// changes nothing of the run.
	Marks() *trace.Source[Mark]
}

// MessageKind is a protocol and message size a Messages workload
// measures, and how many messages of it.
type MessageKind struct {
	Protocol string // as the workload's section names it: "udp"
	Size     int    // bytes
	Count    int
}

// MessageID names one measured message: the Nth (from 1) of its
// protocol and size.
type MessageID struct {
	Protocol string
	Size     int
	N        int
}

func (m MessageID) String() string { return fmt.Sprintf("%s:%d:%d", m.Protocol, m.Size, m.N) }

// MarkKind says what a Mark marks.
type MarkKind uint8

const (
	// MarkBegin: the message's round trip begins, before anything of it
	// is measured (the client about to send it).
	MarkBegin MarkKind = iota
	// MarkMeasured: one of the message's measurements is made (a send or
	// a receive at one host).
	MarkMeasured
	// MarkEnd: every measurement of the message has been made.
	MarkEnd
)

// Mark is a moment of a measured message, fired by a Messages
// workload's Marks source when it happens.
type Mark struct {
	Kind    MarkKind
	Message MessageID
	// Host is the host a MarkMeasured's measurement is of, and Measure
	// the measurement.
	Host    string
	Measure *Measure
}

// Measure is one measurement of a message at a host, as the workload
// reports it (Layers), and the spans of the host's core it is made of
// (Pieces), so that a trace reader can sum the slices of those spans and
// find the same.
type Measure struct {
	Direction string // shape.Send or shape.Receive
	Pieces    []Piece
	// IdleAsDMA says that the idle loop's cycles and the core's halted
	// cycles in the pieces count as DMA (the core waiting for the wire
	// and the card).
	IdleAsDMA bool
	// Layers is the measurement's cycles by layer ("-" for cycles with
	// no function active), what the workload adds to its breakdowns.
	Layers []shape.LayerCycles
}

// Piece is a span of a host's core, in its cycles, and what of it a
// measurement counts.
type Piece struct {
	From, To int64
	Count    Count
	// Context is the context whose own cycles a CountThread piece counts
	// (its name, "mipsA.udp-client").
	Context string
}

// Count says which of a piece's cycles a measurement counts.
type Count uint8

const (
	// CountAll: every cycle of the core, halted ones as idle.
	CountAll Count = iota
	// CountThread: the cycles of one context's own work (Piece.Context):
	// none of the interrupts' and their deferred work's, none of other
	// contexts'.
	CountThread
	// CountInterrupts: the cycles of interrupt handlers and their
	// deferred work by layer; every other cycle of the piece as DMA (the
	// message waiting to leave host memory).
	CountInterrupts
	// CountAllButWire: every cycle of the core but the halted ones while
	// no DMA engine of the host's cards moved data (the wait for the
	// wire).
	CountAllButWire
)

var countNames = [...]string{"all", "thread", "interrupts", "all-but-wire"}

func (c Count) String() string {
	if int(c) < len(countNames) {
		return countNames[c]
	}
	return fmt.Sprintf("Count(%d)", c)
}

// ParseCount is String's inverse.
func ParseCount(s string) (Count, bool) {
	for i, n := range countNames {
		if n == s {
			return Count(i), true
		}
	}
	return 0, false
}
