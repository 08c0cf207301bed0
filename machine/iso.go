package machine

import (
	"fmt"
	"strconv"

	"simkron/config"
	"simkron/ethersim"
	"simkron/stack/osi/netiso"
)

// ISOSpec is a machine file's [iso] table: whether the kernel runs the
// ISO protocol family (stack/osi/netiso: LLC type 1, CLNP and TP4 with
// sockets, 4.4BSD netiso's way) on the host's first Ethernet card, beside
// the Internet protocols, and its settings. A host without an Ethernet
// card runs it on its first ATM card with an IP address instead: CLNP
// over AAL5 as RFC 2684 routes ISO PDUs (LLC FE-FE-03, no LLC type 1),
// through the card's static VC table, which names each neighbour by its
// IPv4 address; the host's default NSAP takes its own address as the
// system ID (49 0001 AABBCCDD0000 00 for A.B.C.D). An experiment's [host.iso]
// overrides its keys for one host. Workloads find the family on the host
// as a *netiso.Family. The family is made lazily: a host that enables it
// and never uses it runs exactly as one without it.
type ISOSpec struct {
	Enabled bool `toml:"enabled" help:"run the ISO protocol family (LLC type 1, CLNP, TP4 and ISO sockets) in the kernel on the host's first Ethernet card, beside IP; a host without one runs it on its first ATM card with an IP address (CLNP over AAL5, RFC 2684 LLC FE-FE-03, through the card's VCs)"`
	netiso.Params
}

// defaultISO is the [iso] table a machine file starts from: off, the
// family's defaults when asked for.
func defaultISO() ISOSpec { return ISOSpec{Params: netiso.DefaultParams()} }

// addISO starts the host's ISO family when its machine asks for one.
func (h *Host) addISO() error {
	if !h.Spec.ISO.Enabled {
		return nil
	}
	if len(h.NICs) == 0 {
		a := h.isoATM()
		if a == nil {
			return fmt.Errorf("iso: the machine has no Ethernet card, nor an ATM card with an IP address, for the ISO family")
		}
		f, err := netiso.NewFramed(h.Kernel, h.Net, a.Driver.Interface().Queue(), netiso.FramedSNPA(a.Spec.IP), h.Spec.ISO.Params)
		if err != nil {
			return fmt.Errorf("iso: %w", err)
		}
		h.ISO = f
		return nil
	}
	n := h.NICs[0]
	f, err := netiso.New(h.Kernel, h.Net, n.Queue(), n.StationAddress(), h.Spec.ISO.Params)
	if err != nil {
		return fmt.Errorf("iso: %w", err)
	}
	h.ISO = f
	return nil
}

// isoATM returns the ATM card a host without an Ethernet card runs the
// ISO family on: its first with an IP address, or nil.
func (h *Host) isoATM() *ATMCard {
	if len(h.NICs) > 0 {
		return nil
	}
	for _, a := range h.ATMCards {
		if a.Spec != nil && a.Spec.IP != (ethersim.IP4{}) && a.Driver.Interface() != nil {
			return a
		}
	}
	return nil
}

// isoRoutes gives every host's ISO family a static route to every other
// host's on the same segment (an end system without ES-IS is configured
// so); over ATM, to every other host whose address the card's VC table
// has a VC to, through that VC (the SNPA is the neighbour's address).
func (r *Run) isoRoutes() {
	for _, h := range r.Hosts {
		if a := h.isoATM(); h.ISO != nil && a != nil {
			r.isoATMRoutes(h, a)
			continue
		}
		if h.ISO == nil || h.NICs[0].Port == nil {
			continue
		}
		for _, o := range r.Hosts {
			if o == h || o.ISO == nil || o.NICs[0].Port == nil || o.NICs[0].Port.Segment() != h.NICs[0].Port.Segment() {
				continue
			}
			h.ISO.AddRoute(o.ISO.NSAP(), o.NICs[0].StationAddress())
		}
	}
}

// isoATMRoutes gives host h, whose family runs on ATM card a, a route to
// each other family on ATM that a's VC table reaches.
func (r *Run) isoATMRoutes(h *Host, a *ATMCard) {
	vcs := a.Driver.Params().VCs
	for _, o := range r.Hosts {
		oa := o.isoATM()
		if o == h || o.ISO == nil || oa == nil {
			continue
		}
		for _, v := range vcs {
			if [4]byte(v.IP) == [4]byte(oa.Spec.IP) {
				h.ISO.AddRoute(o.ISO.NSAP(), netiso.FramedSNPA(oa.Spec.IP))
				break
			}
		}
	}
}

// checkHostISOKeys decodes an experiment's [host.iso] of host i onto the
// defaults before the machine files are read; it reports whether its
// keys were bad.
func checkHostISOKeys(f *config.File, i int) (bad bool, err error) {
	hk := strconv.Itoa(i)
	if !f.Has("host", hk, "iso") {
		return false, nil
	}
	scratch := defaultISO()
	err = f.DecodeInto(&scratch, "host", hk, "iso")
	return err != nil, err
}

// decodeHostISO applies the experiment's good [host.iso] of host i to its
// machine's [iso].
func decodeHostISO(f *config.File, h *HostSpec, i int) config.Errors {
	hk := strconv.Itoa(i)
	if h.Machine == nil || !f.Has("host", hk, "iso") {
		return nil
	}
	if err := f.DecodeInto(&h.Machine.ISO, "host", hk, "iso"); err != nil {
		return err.(config.Errors)
	}
	if h.Machine.ISO.Enabled && h.Machine.TOP.Enabled {
		return config.Errors{f.Errorf([]string{"host", hk, "iso", "enabled"}, "host %q runs the TOP environment: no kernel for the ISO family", h.Name)}
	}
	return nil
}
