package latency

import (
	"simkron/report/shape"
	"simkron/trace"
	"simkron/workload"
)

// The marks of the measured messages (workload.Messages): each message's
// begin, its four measurements (the client's send, the server's receive,
// the server's send of the echo, the client's receive of it) with the
// spans of the host's core they were made over, and its end once all four
// are made. They are built only while someone listens.

var _ workload.Messages = (*Runs)(nil)

// MessageKinds implements workload.Messages: each series' protocol and
// sizes (a size listed twice once, its counts added).
func (w *Runs) MessageKinds() []workload.MessageKind {
	var out []workload.MessageKind
	for _, s := range w.Series {
	sizes:
		for _, size := range s.p.Sizes {
			for i := range out {
				if out[i].Protocol == s.name() && out[i].Size == size {
					out[i].Count += s.p.Messages
					continue sizes
				}
			}
			out = append(out, workload.MessageKind{Protocol: s.name(), Size: size, Count: s.p.Messages})
		}
	}
	return out
}

// Marks implements workload.Messages: one source for every series of the
// workload.
func (w *Runs) Marks() *trace.Source[workload.Mark] {
	src := w.Series[0].marks
	for _, s := range w.Series[1:] {
		s.marks = src
	}
	return src
}

// id returns the name of measured message i: its protocol, size, and
// place among the measured messages of that size (sizes listed twice
// count on from the first).
func (s *Series) id(i int) workload.MessageID {
	m := s.msg(i)
	n := i%s.perSize - s.p.Warmup + 1
	for si := range m.sizeIdx {
		if s.p.Sizes[si] == m.Size {
			n += s.p.Messages
		}
	}
	return workload.MessageID{Protocol: s.name(), Size: m.Size, N: n}
}

// mark fires a mark of kind k for message i, when someone listens.
func (s *Series) mark(k workload.MarkKind, i int) {
	if s.marks.Listened() {
		s.marks.Fire(workload.Mark{Kind: k, Message: s.id(i)})
	}
}

// measured fires message i's measurement m at e's host, then the
// message's end if it was the last of the four.
func (e *End) measured(i int, m *workload.Measure) {
	s := e.s
	s.marks.Fire(workload.Mark{Kind: workload.MarkMeasured, Message: s.id(i), Host: e.Host.Name, Measure: m})
	client, server := s.ends[0], s.ends[1]
	if client.sendDone.has(i) && server.recvDone.has(i) && server.sendDone.has(i) && client.recvDone.has(i) {
		s.mark(workload.MarkEnd, i)
	}
}

// measuredThread is a send_span "thread" send of message i by context
// ctx, its call's entry at e.sendCycle and return at end.
func (e *End) measuredThread(i int, ctx string, end int64) {
	m := Layers{}
	m.Add(e.sendLay, e.layBuf)
	e.measured(i, &workload.Measure{Direction: shape.Send, Layers: m.Means(1),
		Pieces: []workload.Piece{{From: e.sendCycle, To: end, Count: workload.CountThread, Context: ctx}}})
}

// measuredTail is a send_span "dma" send of message i whose tail has just
// ended (e.tail.end): the host's every cycle from the call's entry to its
// return rt (as the interrupts before it moved it), then its interrupts
// until the message had left host memory, the rest as DMA.
func (e *End) measuredTail(i int, rt int64) {
	t := &e.tail
	m := Layers{}
	m.AddReceive(e.sendAcct, t.end)
	e.measured(i, &workload.Measure{Direction: shape.Send, Layers: m.Means(1), IdleAsDMA: true,
		Pieces: []workload.Piece{
			{From: e.sendAcct.Cycle, To: rt, Count: workload.CountAll},
			{From: rt, To: t.end.Cycle, Count: workload.CountInterrupts},
		}})
}

// measuredReceive is the receive of message i as p holds it, the receive
// call having returned at cycle end (p.end.Cycle less the wait for the
// wire, for the "dma" receive).
func (e *End) measuredReceive(i int, p *recvSample, end int64) {
	m := Layers{}
	m.AddReceive(p.start, p.end)
	count := workload.CountAll
	if e.s.p.dmaReceive() {
		count = workload.CountAllButWire
	}
	e.measured(i, &workload.Measure{Direction: shape.Receive, Layers: m.Means(1), IdleAsDMA: true,
		Pieces: []workload.Piece{{From: p.start.Cycle, To: end, Count: count}}})
}
