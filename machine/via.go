package machine

import (
	"fmt"

	"simkron/stack/via"
)

// VIASpec is a machine file's [via] table: whether the host runs the
// M-VIA kernel agent (stack/via) and its settings. The agent drives every
// network card of the host (the VIPL opens one by its interface name,
// "eth0"); workloads find it on the host as a *via.Agent.
type VIASpec struct {
	Enabled bool `toml:"enabled" help:"run the M-VIA kernel agent on the host's network cards (VIA beside the Internet stack, under its own EtherType)"`
	via.Params
}

// defaultVIA is the [via] table a machine file starts from: no agent, the
// study's settings when one is asked for.
func defaultVIA() VIASpec { return VIASpec{Params: via.DefaultParams()} }

// addVIA starts the host's VIA agent when its machine asks for one.
func (h *Host) addVIA() error {
	if !h.Spec.VIA.Enabled {
		return nil
	}
	if len(h.NICs) == 0 {
		return fmt.Errorf("via: the machine has no network card for the agent")
	}
	a, err := via.New(h.Kernel, h.Net, h.Spec.VIA.Params)
	if err != nil {
		return fmt.Errorf("via: %w", err)
	}
	for _, n := range h.NICs {
		a.AddNIC(n.Queue())
	}
	h.VIA = a
	return nil
}
