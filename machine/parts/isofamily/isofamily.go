// Package isofamily is the part that runs the ISO protocol family
// (stack/osi/netiso: LLC type 1, CLNP and TP4 with sockets, 4.4BSD
// netiso's way) in a host's kernel when its machine file's [iso] asks for
// it: on the host's first Ethernet card, beside the Internet protocols. A
// host without an Ethernet card runs it on its first ATM card with an IP
// address instead: CLNP over AAL5 as RFC 2684 routes ISO PDUs (LLC
// FE-FE-03, no LLC type 1), through the card's static VC table, which
// names each neighbour by its IPv4 address; the host's default NSAP takes
// its own address as the system ID (49 0001 AABBCCDD0000 00 for A.B.C.D).
// An experiment's [host.iso] overrides its keys for one host. Workloads
// find the family on the host as a *netiso.Family. The family is made
// lazily: a host that enables it and never uses it runs exactly as one
// without it.
package isofamily

import (
	"fmt"

	"simkron/machine/part"
	"simkron/machine/parts/atm"
	"simkron/machine/parts/ethernet"
	"simkron/machine/parts/kernelhost"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/llc"
	"simkron/stack/osi/netiso"
	"simkron/stack/osi/tp4"
	"simkron/stats"
)

// Spec is a machine file's [iso] table: whether the kernel runs the ISO
// family, and its settings.
type Spec struct {
	Enabled bool `toml:"enabled" help:"run the ISO protocol family (LLC type 1, CLNP, TP4 and ISO sockets) in the kernel on the host's first Ethernet card, beside IP; a host without one runs it on its first ATM card with an IP address (CLNP over AAL5, RFC 2684 LLC FE-FE-03, through the card's VCs)"`
	netiso.Params
}

func init() {
	part.RegisterFamily(part.Family{
		Name:  "iso",
		Order: 3,
		Section: part.Section{Key: "iso", Help: "the kernel's ISO protocol family (stack/osi/netiso); an experiment's [host.iso] overrides any key for one host",
			// Off; the family's defaults when asked for.
			Defaults:     func() any { return &Spec{Params: netiso.DefaultParams()} },
			HostOverride: func(p any) any { return p }},
		Environment: kernelhost.Name,
		Noun:        "ISO family",
		Enabled:     func(p any) bool { return p.(*Spec).Enabled },
		Build:       build,
		Connect:     routes,
		Counters: []stats.Group{{Name: "iso", Value: netiso.Stats{}}, {Name: "iso.tp4", Value: tp4.Stats{}},
			{Name: "iso.clnp", Value: clnp.Stats{}}, {Name: "iso.llc", Value: llc.Stats{}}},
	})
}

// build starts the host's ISO family.
func build(h *part.Host, params any) error {
	p := params.(*Spec).Params
	nics := ethernet.NICs(h)
	if len(nics) == 0 {
		a := onATM(h)
		if a == nil {
			return fmt.Errorf("iso: the machine has no Ethernet card, nor an ATM card with an IP address, for the ISO family")
		}
		f, err := netiso.NewFramed(kernelhost.Kernel(h), kernelhost.NetStack(h), a.Queue(), netiso.FramedSNPA(a.Spec.IP), p)
		if err != nil {
			return fmt.Errorf("iso: %w", err)
		}
		add(h, f)
		return nil
	}
	n := nics[0]
	f, err := netiso.New(kernelhost.Kernel(h), kernelhost.NetStack(h), n.Queue(), n.StationAddress(), p)
	if err != nil {
		return fmt.Errorf("iso: %w", err)
	}
	add(h, f)
	return nil
}

// add adds the family and its protocol machines' counters to h: those of
// a machine the family has not made (it makes them when first used; no
// LLC type 1 over ATM) are absent.
func add(h *part.Host, f *netiso.Family) {
	h.AddFamily(f)
	h.AddCounters("iso", func() any { return f.Stats() })
	h.AddCounters("iso.tp4", func() any {
		if t := f.TP4(); t != nil {
			return t.Stats()
		}
		return nil
	})
	h.AddCounters("iso.clnp", func() any {
		if c := f.CLNP(); c != nil {
			return c.Stats()
		}
		return nil
	})
	h.AddCounters("iso.llc", func() any {
		if l := f.LLC(); l != nil {
			return l.Stats()
		}
		return nil
	})
}

// onATM returns the ATM card a host without an Ethernet card runs the
// ISO family on: its first with an IP address, or nil.
func onATM(h *part.Host) *atm.Card {
	if len(ethernet.NICs(h)) > 0 {
		return nil
	}
	for _, a := range atm.Cards(h) {
		if _, _, ok := a.IPv4(); ok && a.Driver.Interface() != nil {
			return a
		}
	}
	return nil
}

// family returns host h's ISO family, or nil.
func family(h *part.Host) *netiso.Family {
	f, _ := part.Find[*netiso.Family](h)
	return f
}

// routes gives every host's ISO family a static route to every other
// host's on the same segment (an end system without ES-IS is configured
// so); over ATM, to every other host whose address the card's VC table
// has a VC to, through that VC (the SNPA is the neighbour's address).
func routes(hosts []*part.Host) {
	for _, h := range hosts {
		f := family(h)
		if a := onATM(h); f != nil && a != nil {
			atmRoutes(hosts, h, f, a)
			continue
		}
		if f == nil || ethernet.NICs(h)[0].Port == nil {
			continue
		}
		seg := ethernet.NICs(h)[0].Port.Segment()
		for _, o := range hosts {
			of, on := family(o), ethernet.NICs(o)
			if o == h || of == nil || len(on) == 0 || on[0].Port == nil || on[0].Port.Segment() != seg {
				continue
			}
			f.AddRoute(of.NSAP(), on[0].StationAddress())
		}
	}
}

// atmRoutes gives host h, whose family f runs on ATM card a, a route to
// each other family on ATM that a's VC table reaches.
func atmRoutes(hosts []*part.Host, h *part.Host, f *netiso.Family, a *atm.Card) {
	vcs := a.Driver.Params().VCs
	for _, o := range hosts {
		of, oa := family(o), onATM(o)
		if o == h || of == nil || oa == nil {
			continue
		}
		for _, v := range vcs {
			if [4]byte(v.IP) == [4]byte(oa.Spec.IP) {
				f.AddRoute(of.NSAP(), netiso.FramedSNPA(oa.Spec.IP))
				break
			}
		}
	}
}
