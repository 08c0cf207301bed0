package ethersim

import (
	"fmt"

	"simkron/sim"
)

// CSMA/CD on a shared segment (IEEE 802.3 clause 4.2; docs/reference/ne2000.md sec. 13).
//
// Simplification: every pair of stations is the same distance apart, so a
// signal sent from s to e is on the wire at every other station during
// [s+P, e+P) for the one segment-wide propagation delay P. On a real coax
// stations in the middle hear each other sooner; here the worst case
// applies to all. With this model a station's view of the medium follows
// from the other stations' recent transmissions alone:
//
//	station A   |==== frame =====|
//	station B         ·P·|===== frame ======|     (B saw nothing at its start)
//	            sA    sB  sA+P   sB+P          A detects B at sB+P, B detects A at sA+P
//
// A station transmits when, at the moment it wants to, it has sensed no
// carrier for an inter-frame gap (and its own last transmission ended at
// least a gap ago); otherwise it defers to the end of the carrier plus the
// gap and looks again. It does not model the two-part IFG of clause
// 4.2.3.2.1 (ignoring carrier in the last third of the gap). Stations that
// start within P of each other collide; each detects the collision when
// the other's signal arrives, sends the 32-bit jam at once (no completing
// the preamble first) and stops; the fragments reach no station. After
// the n-th collision the station waits k slot times, k uniform in
// [0, 2^min(n,10)-1], then defers as before; the 16th collision aborts the
// frame. Validate keeps 2P within one slot, so every collision is seen by
// every transmitter while it is still sending (no late collisions).

// signal is one transmission on the wire, from start until end at its
// sender (end moves earlier when a collision cuts the frame to a jam).
type signal struct {
	start, end sim.Time
}

// histLen signals per attachment suffice: successive starts of one station
// are more than jam+IFG (128 bit times) apart and P is at most 256 bit
// times, so at most two of them are still unheard somewhere plus one
// heard.
const histLen = 4

func (a *Attachment) pushSignal(sig signal) *signal {
	a.head = (a.head + 1) % histLen
	if a.nhist < histLen {
		a.nhist++
	}
	a.hist[a.head] = sig
	return &a.hist[a.head]
}

// signals returns the recorded transmissions (in no particular order):
// hist fills from index 0 and then wraps.
func (a *Attachment) signals() []signal { return a.hist[:a.nhist] }

// readyAt returns the earliest time, as far as a can tell at now, that it
// may start sending: a gap after its own last transmission and after every
// signal it has started to hear.
func (a *Attachment) readyAt(now sim.Time) sim.Time {
	s := a.seg
	ready := sim.Time(-1 << 62)
	if a.nhist > 0 {
		ready = a.hist[a.head].end + s.ifg
	}
	if s.p.Mode != ModeShared {
		return ready
	}
	p := s.p.Propagation
	for _, b := range s.atts {
		if b == a {
			continue
		}
		for _, sig := range b.signals() {
			if sig.start+p <= now && sig.end+p+s.ifg > ready {
				ready = sig.end + p + s.ifg
			}
		}
	}
	return ready
}

// start begins an attempt at now.
func (a *Attachment) start(now sim.Time) {
	s := a.seg
	end := now + s.wireTime(len(a.tx.data))
	a.pushSignal(signal{start: now, end: end})
	a.state = stTx
	s.emit(a, TraceTxStart, len(a.tx.data))
	s.k.Schedule(a.endEv, end)
	if s.p.Mode != ModeShared {
		// A full-duplex link never collides: the frame will arrive.
		s.ingress(a, end+s.p.Propagation+s.p.SwitchLatency)
		return
	}
	s.carrierOn()
	// Collisions: every signal a has not heard yet reaches it P after it
	// started; a's own reaches each other sender at now+P.
	p := s.p.Propagation
	detect := sim.Never
	for _, b := range s.atts {
		if b == a {
			continue
		}
		for _, sig := range b.signals() {
			if t := sig.start + p; t > now && t < detect {
				detect = t
			}
		}
		if b.state == stTx {
			bs := &b.hist[b.head]
			if t := now + p; t < bs.end && (!b.collEv.Scheduled() || t < b.collEv.When()) {
				s.k.Schedule(b.collEv, t)
			}
		}
	}
	if detect < end {
		s.k.Schedule(a.collEv, detect)
	}
}

// collide is collEv: another station's signal has reached a while it
// sends; a jams and stops.
func (a *Attachment) collide() {
	if a.state != stTx {
		panic(fmt.Sprintf("ethersim: %s: collision in state %d", a.name, a.state))
	}
	s := a.seg
	now := s.k.Now()
	a.state = stJam
	a.status.Collisions++
	a.stats.Collisions++
	s.stats.Collisions++
	s.emit(a, TraceCollision, a.status.Collisions)
	sig := &a.hist[a.head]
	sig.end = now + s.jam
	s.k.Schedule(a.endEv, sig.end)
	// Stations deferring to this signal's old end may go sooner.
	for _, b := range s.atts {
		if b != a && b.state == stDefer && b.tryEv.Scheduled() {
			s.k.Schedule(b.tryEv, max(now, b.readyAt(now)))
		}
	}
}

// jamSent ends a collided attempt: back off, or abort at the limit.
func (a *Attachment) jamSent() {
	s := a.seg
	s.carrierOff()
	n := a.status.Collisions
	if n >= AttemptLimit {
		a.status.Aborted = true
		a.stats.Aborts++
		s.emit(a, TraceAbort, n)
		s.release(a.tx)
		a.tx = nil
		a.done()
		return
	}
	var k int
	if a.backoff != nil {
		k = a.backoff(n)
	} else {
		k = a.backoffRng.IntN(1 << min(n, BackoffLimit))
	}
	a.state = stBackoff
	s.emit(a, TraceBackoff, k)
	s.k.Schedule(a.tryEv, s.k.Now()+sim.Time(k)*s.slot)
}

// carrierOn and carrierOff keep the shared medium's busy time: the union
// of all transmissions at their senders.
func (s *Segment) carrierOn() {
	if s.active == 0 {
		s.busySince = s.k.Now()
	}
	s.active++
}

func (s *Segment) carrierOff() {
	s.active--
	if s.active == 0 {
		s.stats.BusyTime += s.k.Now() - s.busySince
	}
}
