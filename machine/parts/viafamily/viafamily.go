// Package viafamily is the part that runs the M-VIA kernel agent
// (stack/via) on a host's Ethernet cards when its machine file's [via]
// asks for it: VIA beside the Internet protocols, under its own
// EtherType. The agent drives every Ethernet card of the host (the VIPL
// opens one by its interface name, "eth0"); workloads find it on the host
// as a *via.Agent.
package viafamily

import (
	"fmt"

	"simkron/card"
	"simkron/machine/part"
	"simkron/machine/parts/kernelhost"
	"simkron/stack/via"
	"simkron/stats"
)

// Spec is a machine file's [via] table: whether the host runs the agent,
// and its settings.
type Spec struct {
	Enabled bool `toml:"enabled" help:"run the M-VIA kernel agent on the host's network cards (VIA beside the Internet stack, under its own EtherType)"`
	via.Params
}

func init() {
	part.RegisterFamily(part.Family{
		Name:  "via",
		Order: 2,
		Section: part.Section{Key: "via", Help: "the M-VIA kernel agent (stack/via) on the host's Ethernet cards",
			// No agent; the study's settings when one is asked for.
			Defaults: func() any { return &Spec{Params: via.DefaultParams()} }},
		Environment: kernelhost.Name,
		Noun:        "VIA agent",
		Enabled:     func(p any) bool { return p.(*Spec).Enabled },
		Build:       build,
		Counters:    []stats.Group{{Name: "via", Value: via.Stats{}}},
	})
}

// ethernet is a card the agent drives: an Ethernet card the kernel's
// device layer drives.
type ethernet interface {
	card.Card
	card.Interface
}

func build(h *part.Host, params any) error {
	var cards []ethernet
	for _, c := range part.FindAll[ethernet](h) {
		if c.Link() == card.Ethernet {
			cards = append(cards, c)
		}
	}
	if len(cards) == 0 {
		return fmt.Errorf("via: the machine has no network card for the agent")
	}
	a, err := via.New(kernelhost.Kernel(h), kernelhost.NetStack(h), params.(*Spec).Params)
	if err != nil {
		return fmt.Errorf("via: %w", err)
	}
	for _, c := range cards {
		a.AddNIC(c.Queue())
	}
	h.AddFamily(a)
	h.AddCounters("via", func() any { return a.Stats() })
	return nil
}
