package ethersim

import (
	"fmt"
	"slices"
	"strings"

	"simkron/sim"
)

// A switch spread over several schedulers. In switch mode nothing a
// station does reaches another station sooner than a frame takes to cross
// the switch: the smallest frame's time on the uplink, the propagation
// delay and the switch's latency (Lookahead), and a frame's arrival at
// the switch is known when its first bit leaves its station, since a
// full-duplex link never collides. So the stations of one switch may run
// on different schedulers (package machine's linked parts, each host on
// its own clock), each scheduler holding an instance of the segment with
// its own stations attached: Split tells an instance every station of
// the whole segment and which part each lives in. A frame's ingress
// (Ingress) is then posted to every other part's instance, which Deliver
// schedules there, and each instance runs the switch's lookup for every
// frame of the segment: each keeps the same forwarding table, forwards
// to its own ports only, and counts the lookups of the frames its own
// stations sent. What every instance counts adds up to what one segment
// counts (SegmentStats).
//
// Whether split or not, a frame's lookup is an event of priority
// sim.PriorityWire ordered by the sending port and the port's frame
// count (sim.Scheduler.ScheduleKeyed): where it falls among a host's
// events does not depend on when it was handed over. Ports are numbered
// in the order of their attachments' names.

// Ingress is a frame that will have arrived whole at the switch, from
// port Port (its Key-th frame, with the port in Key's top bits), and been
// looked up at At.
type Ingress struct {
	Port  int
	Key   uint64
	At    sim.Time
	Frame []byte
}

// split is a segment instance's share of a switch spread over parts.
type split struct {
	self  int
	parts []int // the part of each port
	post  func(part int, in Ingress)
	// others are the other parts holding a port, in order.
	others []int
}

// Lookahead returns the least time between something happening at one
// station of a switch-mode segment and its effect reaching another
// station: the smallest frame's time on a link (preamble included), the
// propagation delay and the switch's latency.
func (p SegmentParams) Lookahead() sim.Time {
	return p.Rate.ByteTime(PreambleBytes+MinFrame) + p.Propagation + p.SwitchLatency
}

// Split makes s part self's instance of a switch-mode segment whose
// attachments, over every part, are names, the part of each in parts
// (the same length); post hands an ingress to another part's instance
// (which Delivers it there before its clock reaches the ingress's time).
// It is called before anything attaches; every name attached afterwards
// must be one of names with part self.
func (s *Segment) Split(names []string, parts []int, self int, post func(part int, in Ingress)) error {
	if s.p.Mode != ModeSwitch {
		return fmt.Errorf("ethersim: segment %q: only a switch can be split", s.name)
	}
	if len(names) != len(parts) || len(s.atts) > 0 || s.split != nil {
		return fmt.Errorf("ethersim: segment %q: split with %d names and %d parts after %d attachments", s.name, len(names), len(parts), len(s.atts))
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	sp := &split{self: self, post: post, parts: make([]int, len(names))}
	s.portOf = map[string]int{}
	for port, i := range order {
		if _, dup := s.portOf[names[i]]; dup {
			return fmt.Errorf("ethersim: segment %q: %q named twice", s.name, names[i])
		}
		s.portOf[names[i]] = port
		sp.parts[port] = parts[i]
		if parts[i] != self && !slices.Contains(sp.others, parts[i]) {
			sp.others = append(sp.others, parts[i])
		}
	}
	slices.Sort(sp.others)
	s.split = sp
	s.local = make([]*Attachment, len(names))
	return nil
}

// numberPorts numbers the ports of a segment that is not split: at its
// first frame, by name, the stations attached by then (as Split numbers
// them); a station that attaches later takes the next number, so that no
// port is ever numbered anew.
func (s *Segment) numberPorts() {
	if len(s.local) == 0 {
		s.local = slices.Clone(s.atts)
		slices.SortFunc(s.local, func(a, b *Attachment) int { return strings.Compare(a.name, b.name) })
	} else {
		s.local = append(s.local, s.atts[len(s.local):]...)
	}
	for i, a := range s.local {
		a.port = i
	}
}

// ingress announces, as a's frame starts on its link, its lookup at the
// switch at time at: here, and at every other part's instance.
func (s *Segment) ingress(a *Attachment, at sim.Time) {
	if s.split == nil && len(s.local) != len(s.atts) {
		s.numberPorts()
	}
	key := uint64(a.port)<<40 | a.frames&(1<<40-1)
	a.frames++
	a.tx.refs++
	s.lookupAt(a.port, key, at, a.tx)
	if sp := s.split; sp != nil {
		for _, p := range sp.others {
			sp.post(p, Ingress{Port: a.port, Key: key, At: at, Frame: slices.Clone(a.tx.data)})
		}
	}
}

// Deliver schedules an ingress another part's instance posted.
func (s *Segment) Deliver(in Ingress) {
	if s.split == nil || in.Port < 0 || in.Port >= len(s.split.parts) || s.split.parts[in.Port] == s.split.self {
		panic(fmt.Sprintf("ethersim: segment %q: an ingress from port %d delivered to part %v", s.name, in.Port, s.split))
	}
	buf := s.getBuf(in.Frame)
	s.lookupAt(in.Port, in.Key, in.At, buf)
}

// lookupAt schedules the switch's lookup of buf (whose reference it
// takes over), from port, at time at.
func (s *Segment) lookupAt(port int, key uint64, at sim.Time, buf *frameBuf) {
	t := s.getTransit()
	if t.wire == nil {
		t.wire = sim.NewEventPriority(s.name+".lookup", sim.PriorityWire, t.lookup)
	}
	t.buf, t.port = buf, port
	s.k.ScheduleKeyed(t.wire, at, key)
}

// lookup is a transit's wire event: the switch's lookup.
func (t *transit) lookup() {
	s, buf, port := t.seg, t.buf, t.port
	t.buf = nil
	s.freeTransit = append(s.freeTransit, t)
	s.forward(port, buf)
	s.release(buf)
}
