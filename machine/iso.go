package machine

import (
	"fmt"
	"strconv"

	"simkron/config"
	"simkron/stack/osi/netiso"
)

// ISOSpec is a machine file's [iso] table: whether the kernel runs the
// ISO protocol family (stack/osi/netiso: LLC type 1, CLNP and TP4 with
// sockets, 4.4BSD netiso's way) on the host's first Ethernet card, beside
// the Internet protocols, and its settings. An experiment's [host.iso]
// overrides its keys for one host. Workloads find the family on the host
// as a *netiso.Family. The family is made lazily: a host that enables it
// and never uses it runs exactly as one without it.
type ISOSpec struct {
	Enabled bool `toml:"enabled" help:"run the ISO protocol family (LLC type 1, CLNP, TP4 and ISO sockets) in the kernel on the host's first Ethernet card, beside IP"`
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
		return fmt.Errorf("iso: the machine has no Ethernet card for the ISO family")
	}
	n := h.NICs[0]
	f, err := netiso.New(h.Kernel, h.Net, n.Queue(), n.StationAddress(), h.Spec.ISO.Params)
	if err != nil {
		return fmt.Errorf("iso: %w", err)
	}
	h.ISO = f
	return nil
}

// isoRoutes gives every host's ISO family a static route to every other
// host's on the same segment (an end system without ES-IS is configured
// so).
func (r *Run) isoRoutes() {
	for _, h := range r.Hosts {
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
