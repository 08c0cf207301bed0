package machine

import (
	"bytes"
	"fmt"

	"simkron/ethersim"
	"simkron/sim"
)

// Network is the experiment's network: its segments by name, and the pcap
// captures being recorded.
type Network struct {
	*ethersim.Network
	segments map[string]*ethersim.Segment
	order    []string
	pcaps    map[string]*bytes.Buffer
	capture  bool    // record the pcap captures and cell traces asked for
	atm      *atmNet // the ATM links and switches, when the experiment has them
	// bridges to real hosts, and the pacer they post to once open
	// (bridge.go).
	bridges []*bridge
	pacer   *sim.Pacer
}

func newNetwork(k *sim.Kernel, specs []SegmentSpec, capture bool) (*Network, error) {
	n := &Network{Network: ethersim.NewNetwork(k), segments: map[string]*ethersim.Segment{}, pcaps: map[string]*bytes.Buffer{}, capture: capture}
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

// Capture is one segment's or ATM link's pcap file, or an ATM link's
// cell trace.
type Capture struct {
	Segment string
	// Ext is the file's extension: "" for ".pcap".
	Ext  string
	Data []byte
}

// FileName is the capture's file name: SEGMENT.pcap, or LINK.cells for
// a cell trace.
func (c Capture) FileName() string {
	if c.Ext == "" {
		return c.Segment + ".pcap"
	}
	return c.Segment + c.Ext
}

// Captures returns the pcap files recorded so far, in segment order,
// then the ATM links' captures and cell traces.
func (n *Network) Captures() []Capture {
	var out []Capture
	for _, name := range n.order {
		if b, ok := n.pcaps[name]; ok {
			out = append(out, Capture{Segment: name, Data: b.Bytes()})
		}
	}
	return append(out, n.atmCaptures()...)
}
