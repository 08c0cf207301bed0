package atmnet

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"

	"simkron/sim"
)

// TraceKind says what a TraceRecord reports.
type TraceKind uint8

// Trace points.
const (
	TraceTx        TraceKind = iota // a cell leaves an end
	TraceRx                         // a cell is handed to an end's receiver
	TraceLost                       // cell_loss: lost on the way to an end
	TraceCorrupt                    // bit_error: a bit flipped on the way (the cell shown damaged)
	TraceBadHEC                     // a switch port dropped a cell with a header error
	TraceUnrouted                   // a switch port dropped a cell on a VC with no route
	TraceQueueDrop                  // an output port dropped a cell: queue full
)

var traceNames = [...]string{"tx", "rx", "lost", "corrupt", "badhec", "unrouted", "qdrop"}

func (k TraceKind) String() string {
	if int(k) < len(traceNames) {
		return traceNames[k]
	}
	return fmt.Sprintf("TraceKind(%d)", k)
}

// TraceRecord is one trace point: at At, Kind happened to Cell at the end
// called Where. Cell is valid only during the listener call.
type TraceRecord struct {
	At    sim.Time
	Where string
	Kind  TraceKind
	Cell  *Cell
}

// TraceWriter writes trace records as simkron's cell-level text trace,
// one line per record after a header line:
//
//	# simkron atm cell trace v1: time_ps where event vpi/vci pt header+hec payload
//	4240005 lo0.a rx 0/32 1 00000202c3 0102...(96 hex digits)
//
// Fields are separated by one space; header+hec is the 5 header bytes in
// hex as on the wire, payload the 48 payload bytes. Times are simulated
// picoseconds, so the file depends only on the simulation.
type TraceWriter struct {
	w   *bufio.Writer
	err error
	hdr bool
	buf []byte
}

// NewTraceWriter returns a writer of the trace to w; call Flush at the
// end.
func NewTraceWriter(w io.Writer) *TraceWriter { return &TraceWriter{w: bufio.NewWriter(w)} }

// Record writes r; it is a listener of Network.Trace. The first write
// error is kept for Flush and stops the trace.
func (t *TraceWriter) Record(r TraceRecord) {
	if t.err != nil {
		return
	}
	if !t.hdr {
		t.hdr = true
		_, t.err = t.w.WriteString("# simkron atm cell trace v1: time_ps where event vpi/vci pt header+hec payload\n")
	}
	c := r.Cell
	b := t.buf[:0]
	b = fmt.Appendf(b, "%d %s %s %v %d ", int64(r.At), r.Where, r.Kind, c.VC(), c.PT())
	b = hex.AppendEncode(b, c[:HeaderSize])
	b = append(b, ' ')
	b = hex.AppendEncode(b, c[HeaderSize:])
	b = append(b, '\n')
	t.buf = b
	if t.err == nil {
		_, t.err = t.w.Write(b)
	}
}

// Flush writes what is buffered and returns the first error.
func (t *TraceWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}
