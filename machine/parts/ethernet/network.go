package ethernet

import (
	"bytes"
	"fmt"

	"simkron/config"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/report"
	"simkron/sim"
)

// Network is an experiment's Ethernet as built for a run: its segments by
// name, the pcap captures being recorded, and the bridges to real hosts.
type Network struct {
	*ethersim.Network
	segments map[string]*ethersim.Segment
	order    []string
	pcaps    map[string]*bytes.Buffer
	// bridges to real hosts, and the pacer they post to once open
	// (bridge.go).
	bridges []*bridge
	pacer   *sim.Pacer
	file    *config.File
}

var _ part.Paced = (*Network)(nil)

func newNetwork(k *sim.Scheduler, f *config.File, specs []SegmentSpec, capture bool) (*Network, error) {
	n := &Network{Network: ethersim.NewNetwork(k), segments: map[string]*ethersim.Segment{}, pcaps: map[string]*bytes.Buffer{}, file: f}
	for i, s := range specs {
		if _, dup := n.segments[s.Name]; dup {
			return nil, fmt.Errorf("segment %q defined twice", s.Name)
		}
		seg, err := n.NewSegment(s.Name, s.SegmentParams)
		if err != nil {
			return nil, fmt.Errorf("segment %q: %w", s.Name, err)
		}
		n.segments[s.Name] = seg
		n.order = append(n.order, s.Name)
		if err := n.addBridges(seg, s, i); err != nil {
			return nil, err
		}
		if s.Pcap && capture {
			var buf bytes.Buffer
			if err := seg.Tap(&buf); err != nil {
				return nil, fmt.Errorf("segment %q: pcap: %w", s.Name, err)
			}
			n.pcaps[s.Name] = &buf
		}
	}
	return n, nil
}

// Segment returns the segment called name.
func (n *Network) Segment(name string) (*ethersim.Segment, bool) {
	s, ok := n.segments[name]
	return s, ok
}

// Captures returns the pcap files recorded so far, in segment order.
func (n *Network) Captures() []part.Capture {
	var out []part.Capture
	for _, name := range n.order {
		if b, ok := n.pcaps[name]; ok {
			out = append(out, part.Capture{Segment: name, Data: b.Bytes()})
		}
	}
	return out
}

// Report gives the result each segment's figures.
func (n *Network) Report(res *report.Result) {
	for _, seg := range n.Segments() {
		st := seg.Stats()
		res.Segments = append(res.Segments, report.Segment{
			Name: seg.Name(), Rate: int64(seg.Params().Rate), Mode: seg.Params().Mode,
			Frames: st.Frames, Bytes: st.Bytes, Collisions: st.Collisions, BusyPS: int64(st.BusyTime),
		})
	}
}

// NetworkOf returns host h's run's Ethernet, or nil when the experiment
// has none.
func NetworkOf(h *part.Host) *Network {
	n, _ := h.Network(Name).(*Network)
	return n
}

var _ part.Splitter = (*Network)(nil)

// Split makes this instance part self's share of the switch called
// element (ethersim.Segment.Split): its stations are the cards of hosts
// bound to it, each named as it attaches.
func (n *Network) Split(element string, hosts []part.HostSpec, partOf func(int) int, self int, post func(int, part.Message)) error {
	seg, ok := n.segments[element]
	if !ok {
		return fmt.Errorf("segment %q is not defined in a [[segment]]", element)
	}
	var names []string
	var parts []int
	for i := range hosts {
		for _, nic := range BindingsOf(&hosts[i]).NICs {
			if nic.Segment == element {
				names = append(names, hosts[i].Name+"."+nic.Device)
				parts = append(parts, partOf(i))
			}
		}
	}
	return seg.Split(names, parts, self, func(p int, in ethersim.Ingress) {
		post(p, part.Message{Element: element, At: in.At, Data: in})
	})
}

// Deliver schedules a frame's ingress another part's instance of its
// switch posted.
func (n *Network) Deliver(m part.Message) {
	n.segments[m.Element].Deliver(m.Data.(ethersim.Ingress))
}
