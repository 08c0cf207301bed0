package machine

import (
	"simkron/machine/part"
	"simkron/sim"
)

// Network is the experiment's network: each technology's, built in the
// technologies' order, and the pacer of a run bridged to real hosts.
type Network struct {
	byTech map[string]part.Network
	order  []string
	// pacer paces a bridged run to the wall clock once its bridges are
	// open (paced.go).
	pacer *sim.Pacer
}

func newNetwork(k *sim.Scheduler, exp *Experiment, capture bool) (*Network, error) {
	n := &Network{byTech: map[string]part.Network{}}
	for _, t := range part.Technologies() {
		tables := exp.Networks[t.Name]
		if tables == nil {
			tables = t.Tables()
		}
		net, err := t.Build(k, exp.file, tables, capture)
		if err != nil {
			return nil, err
		}
		n.byTech[t.Name] = net
		n.order = append(n.order, t.Name)
	}
	return n, nil
}

// Of returns the network of technology tech (nil when there is no such
// technology): a part's package offers it typed (ethernet.NetworkIn).
func (n *Network) Of(tech string) part.Network { return n.byTech[tech] }

// Captures returns the pcap files and traces recorded so far, technology
// by technology in their order, each in the experiment's order.
func (n *Network) Captures() []Capture {
	var out []Capture
	for _, t := range n.order {
		out = append(out, n.byTech[t].Captures()...)
	}
	return out
}

// paced returns the networks connected to real hosts.
func (n *Network) paced() []part.Paced {
	var out []part.Paced
	for _, t := range n.order {
		if p, ok := n.byTech[t].(part.Paced); ok && p.Paced() {
			out = append(out, p)
		}
	}
	return out
}
