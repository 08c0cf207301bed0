// Package inetfamily is the part that runs the Internet protocols
// (stack/inet: ARP, IPv4, ICMP, UDP, TCP, sockets) in a host's kernel, on
// the first of its cards with an IP address (technology by technology in
// their order, Ethernet before ATM, each in machine order), configured by
// a machine file's [inet] and an experiment's [host.inet]. IP's MTU is
// the card's: its [[host.nic]] mtu, or its ATM driver's. Workloads find
// the protocols on the host as a *inet.Stack.
package inetfamily

import (
	"fmt"

	"simkron/card"
	"simkron/machine/part"
	"simkron/machine/parts/kernelhost"
	"simkron/stack/inet"
	"simkron/stats"
)

func init() {
	part.RegisterFamily(part.Family{
		Name:  "inet",
		Order: 1,
		Section: part.Section{Key: "inet", Help: "the Internet protocols (stack/inet), on the first card with an IP address; an experiment's [host.inet] overrides any key for one host",
			Defaults:     func() any { p := inet.DefaultParams(); return &p },
			HostOverride: func(p any) any { return p }},
		Environment: kernelhost.Name,
		Noun:        "Internet protocols",
		Load: func(h *part.HostSpec, params any) {
			if e, ok := part.Addressed(h); ok && e.IPMTU() != 0 {
				params.(*inet.Params).MTU = e.IPMTU()
			}
		},
		Build:    build,
		Counters: []stats.Group{{Name: "inet", Value: inet.Stats{}}},
	})
}

// addressed is a card the Internet protocols can run on.
type addressed interface {
	card.Card
	card.Addressed
	card.Interface
}

// build starts the Internet protocols on the host's first card with an
// address, if it has one.
func build(h *part.Host, params any) error {
	for _, c := range part.FindAll[addressed](h) {
		addr, mask, ok := c.IPv4()
		if !ok {
			continue
		}
		if c.Queue() < 0 {
			return fmt.Errorf("inet: card %s has no IP interface", c.DeviceName())
		}
		s, err := inet.New(kernelhost.Kernel(h), kernelhost.NetStack(h), c.Queue(), addr, mask, *params.(*inet.Params))
		if err != nil {
			return fmt.Errorf("inet: %w", err)
		}
		h.AddFamily(s)
		h.AddCounters("inet", func() any { return s.Stats() })
		return nil
	}
	return nil
}
