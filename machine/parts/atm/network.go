package atm

import (
	"bytes"
	"fmt"

	"simkron/config"
	"simkron/ethersim/atmnet"
	"simkron/machine/part"
	"simkron/report"
	"simkron/sim"
)

// Network is an experiment's ATM network as built for a run: its links
// and switches, and the captures and cell traces being recorded.
type Network struct {
	*atmnet.Network
	links  map[string]*atmnet.Link
	ports  map[string]*atmnet.Port // by link: the switch port on its end b
	pcaps  []string                // links with a capture, in experiment order
	pcap   map[string]*bytes.Buffer
	traces []string
	trace  map[string]*cellTrace // by link
	byEnd  map[string]*cellTrace // by end name, for the trace listener
}

type cellTrace struct {
	buf bytes.Buffer
	w   *atmnet.TraceWriter
}

var _ part.Network = (*Network)(nil)

// build creates the experiment's links and switches.
func build(k *sim.Scheduler, _ *config.File, tables any, capture bool) (part.Network, error) {
	t := tables.(*Tables)
	a := &Network{Network: atmnet.New(k), links: map[string]*atmnet.Link{}, ports: map[string]*atmnet.Port{},
		pcap: map[string]*bytes.Buffer{}, trace: map[string]*cellTrace{}, byEnd: map[string]*cellTrace{}}
	for _, s := range t.Links {
		var l *atmnet.Link
		var err error
		if s.Loopback {
			l, err = a.NewLoopback(s.Name, s.LinkParams)
		} else {
			l, err = a.NewLink(s.Name, s.LinkParams)
		}
		if err != nil {
			return nil, err
		}
		a.links[s.Name] = l
		if err := l.A().SetFaults(s.Faults); err != nil {
			return nil, fmt.Errorf("atm_link %q: faults: %w", s.Name, err)
		}
		if !s.Loopback {
			if err := l.B().SetFaults(s.NetFaults); err != nil {
				return nil, fmt.Errorf("atm_link %q: net_faults: %w", s.Name, err)
			}
		}
		if s.Pcap && capture {
			var buf bytes.Buffer
			if err := l.Tap(&buf); err != nil {
				return nil, err
			}
			a.pcaps = append(a.pcaps, s.Name)
			a.pcap[s.Name] = &buf
		}
		if s.Trace && capture {
			t := &cellTrace{}
			t.w = atmnet.NewTraceWriter(&t.buf)
			a.traces = append(a.traces, s.Name)
			a.trace[s.Name] = t
			a.byEnd[l.A().Name()] = t
			if !s.Loopback {
				a.byEnd[l.B().Name()] = t
			}
		}
	}
	if len(a.traces) > 0 {
		a.Trace.Connect(func(r atmnet.TraceRecord) {
			if t := a.byEnd[r.Where]; t != nil {
				t.w.Record(r)
			}
		})
	}
	for _, s := range t.Switches {
		sw, err := a.NewSwitch(s.Name, s.SwitchParams)
		if err != nil {
			return nil, err
		}
		index := map[string]int{}
		for _, name := range s.Ports {
			l := a.links[name]
			if l == nil || l.B() == nil {
				return nil, fmt.Errorf("atm_switch %q: port %q is not a link with a network end", s.Name, name)
			}
			i, err := sw.Connect(l.B())
			if err != nil {
				return nil, err
			}
			index[name] = i
			a.ports[name] = sw.Ports()[i]
		}
		for _, r := range s.Routes {
			in, ok1 := index[r.In]
			out, ok2 := index[r.Out]
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("atm_switch %q: route %s -> %s names a link that is not a port", s.Name, r.In, r.Out)
			}
			to := r.outVC()
			if err := sw.Route(in, r.VC.VC, out, to); err != nil {
				return nil, err
			}
			if r.Duplex {
				if err := sw.Route(out, to, in, r.VC.VC); err != nil {
					return nil, err
				}
			}
		}
	}
	return a, nil
}

func (r RouteSpec) outVC() atmnet.VC {
	if r.OutVC.Set {
		return r.OutVC.VC
	}
	return r.VC.VC
}

// end returns the host end of the link called name.
func (n *Network) end(name string) (*atmnet.End, error) {
	if n == nil || n.links[name] == nil {
		return nil, fmt.Errorf("atm link %q is not defined in an [[atm_link]]", name)
	}
	return n.links[name].A(), nil
}

// port returns the switch port on the link's network end, or nil.
func (n *Network) port(link string) *atmnet.Port {
	if n == nil {
		return nil
	}
	return n.ports[link]
}

// Captures returns the links' pcap files and cell traces, in the
// experiment's order.
func (n *Network) Captures() []part.Capture {
	var out []part.Capture
	for _, name := range n.pcaps {
		out = append(out, part.Capture{Segment: name, Data: n.pcap[name].Bytes()})
	}
	for _, name := range n.traces {
		t := n.trace[name]
		_ = t.w.Flush() // a bytes.Buffer does not fail
		out = append(out, part.Capture{Segment: name, Ext: ".cells", Data: t.buf.Bytes()})
	}
	return out
}

// Report adds nothing to the result: the cards' counters hold the
// links' and switch ports' figures.
func (n *Network) Report(*report.Result) {}

// NetworkOf returns host h's run's ATM network, or nil.
func NetworkOf(h *part.Host) *Network {
	n, _ := h.Network(Name).(*Network)
	return n
}
