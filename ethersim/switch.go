package ethersim

import "simkron/sim"

// Switch mode: every attachment has its own full-duplex link to one port of
// a store-and-forward switch, so nothing collides and both directions of a
// link carry traffic at once.
//
//	station A ──tx──► port A ─┐                  ┌─► port B ──► station B
//	          ◄──────  queue ◄┤ lookup after the ├─► port C ──► station C
//	                          └ whole frame + L ─┘
//
// A frame leaves its station (own inter-frame gap respected), arrives
// whole at the switch P later, and SwitchLatency L after that the switch
// learns the source address's port and forwards: to the learned port of
// the destination, to every other port when the destination is unknown,
// broadcast or multicast, or nowhere when the destination sits on the
// ingress port. Each output port is a FIFO (unbounded; its peak length is
// counted) that sends one frame at a time with the gap between frames; the
// station receives the frame P after its last bit left the port. Frames
// are shared by reference among the ports they are flooded to. The
// forwarding table never ages.

// port is the switch's output side towards one station.
type port struct {
	queue   fifo
	busy    bool
	cur     *frameBuf
	freeAt  sim.Time // end of the last frame plus the gap
	startEv *sim.Event
	endEv   *sim.Event
}

// forward is the switch's lookup for a frame received whole from port
// in: on its own ports only, when the switch is split (split.go), and
// counted where the frame's sender is.
func (s *Segment) forward(in int, buf *frameBuf) {
	var dst, src MAC
	copy(dst[:], buf.data[0:6])
	copy(src[:], buf.data[6:12])
	if !src.IsMulticast() {
		s.fdb[src] = in
	}
	out, known := s.fdb[dst]
	from := s.local[in]
	switch {
	case dst.IsMulticast() || !known:
		if from != nil {
			s.stats.Flooded++
			s.emit(from, TraceFlood, len(buf.data))
		}
		for _, a := range s.atts {
			if a.port != in {
				a.enqueue(buf)
			}
		}
	case out == in:
		if from != nil {
			s.stats.Filtered++
			s.emit(from, TraceFilter, len(buf.data))
		}
	default:
		if from != nil {
			s.stats.Forwarded++
		}
		if a := s.local[out]; a != nil {
			a.enqueue(buf)
		}
	}
}

// enqueue puts buf on the port towards a, taking a reference.
func (a *Attachment) enqueue(buf *frameBuf) {
	s := a.seg
	buf.refs++
	o := &a.out
	o.queue.push(buf)
	if n := o.queue.len(); n > a.stats.QueuePeak {
		a.stats.QueuePeak = n
	}
	s.emit(a, TraceEnqueue, o.queue.len())
	if !o.busy && !o.startEv.Scheduled() {
		s.k.Schedule(o.startEv, max(s.k.Now(), o.freeAt))
	}
}

// portStart is out.startEv: the port sends the next queued frame.
func (a *Attachment) portStart() {
	o := &a.out
	o.cur = o.queue.pop()
	o.busy = true
	a.seg.k.Schedule(o.endEv, a.seg.k.Now()+a.seg.wireTime(len(o.cur.data)))
}

// portEnd is out.endEv: the frame's last bit has left the port.
func (a *Attachment) portEnd() {
	s := a.seg
	o := &a.out
	now := s.k.Now()
	s.send(deliverOne, o.cur, a, now+s.p.Propagation)
	o.cur = nil
	o.busy = false
	o.freeAt = now + s.ifg
	if o.queue.len() > 0 {
		s.k.Schedule(o.startEv, o.freeAt)
	}
}

// fifo is a growable ring of frames.
type fifo struct {
	buf        []*frameBuf
	head, size int
}

func (q *fifo) len() int { return q.size }

func (q *fifo) push(b *frameBuf) {
	if q.size == len(q.buf) {
		n := make([]*frameBuf, max(8, 2*len(q.buf)))
		for i := range q.size {
			n[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = n, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = b
	q.size++
}

func (q *fifo) pop() *frameBuf {
	b := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return b
}
