package machine

import (
	"fmt"

	"simkron/machine/part"
	"simkron/report"
	"simkron/sim"
)

// Network is the experiment's network: each technology's, built in the
// technologies' order, and the pacer of a run bridged to real hosts. A
// run in islands (island.go) has, instead, each island's instance of it
// (apart) and the island each element belongs to (owner): every instance
// builds every element, and the one of the element's island is the one
// that ran; its figures and captures are the network's. An element split
// among islands (linked.go) ran in each of them: its figures are the sum
// of theirs.
type Network struct {
	byTech map[string]part.Network
	order  []string
	// pacer paces a bridged run to the wall clock once its bridges are
	// open (paced.go).
	pacer *sim.Pacer
	apart []*Network
	owner func(tech, element string) int
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
// technology, or the run is in islands, each with its own): a part's
// package offers it typed (ethernet.NetworkIn).
func (n *Network) Of(tech string) part.Network { return n.byTech[tech] }

// Captures returns the pcap files and traces recorded so far, technology
// by technology in their order, each in the experiment's order.
func (n *Network) Captures() []Capture {
	var out []Capture
	for _, t := range n.order {
		if n.apart == nil {
			out = append(out, n.byTech[t].Captures()...)
			continue
		}
		each := make([][]Capture, len(n.apart))
		for i, a := range n.apart {
			each[i] = a.byTech[t].Captures()
		}
		for j, c := range each[0] {
			out = append(out, pick(n, t, c.Segment, j, len(each[0]), func(i int) int { return len(each[i]) }, func(i int) Capture { return each[i][j] }))
		}
	}
	return out
}

// report adds each technology's figures to res (part.Network.Report).
func (n *Network) report(res *report.Result) {
	for _, t := range n.order {
		if n.apart == nil {
			n.byTech[t].Report(res)
			continue
		}
		each := make([]report.Result, len(n.apart))
		for i, a := range n.apart {
			a.byTech[t].Report(&each[i])
		}
		for j, s := range each[0].Segments {
			if n.owner(t, s.Name) < 0 {
				// Split among islands (linked.go): each counted its share.
				sum := s
				for _, e := range each[1:] {
					o := e.Segments[j]
					sum.Frames += o.Frames
					sum.Bytes += o.Bytes
					sum.Collisions += o.Collisions
					sum.BusyPS += o.BusyPS
				}
				res.Segments = append(res.Segments, sum)
				continue
			}
			res.Segments = append(res.Segments, pick(n, t, s.Name, j, len(each[0].Segments),
				func(i int) int { return len(each[i].Segments) }, func(i int) report.Segment { return each[i].Segments[j] }))
		}
	}
}

// pick returns the j-th of count things the islands' instances of
// technology t list, that of the island element belongs to; every
// instance lists the same (lenOf says how many each has).
func pick[T any](n *Network, t, element string, j, count int, lenOf func(int) int, get func(int) T) T {
	o := n.owner(t, element)
	if lenOf(o) != count {
		panic(fmt.Sprintf("machine: the islands' %s networks list %d and %d elements", t, count, lenOf(o)))
	}
	return get(o)
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
