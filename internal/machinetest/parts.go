// Package machinetest is what tests share to build and run experiments
// on the assembled machine (package machine): typed access to a built
// host's components, which the host offers by type only
// (machine.Find); an experiment builder that edits a shipped config by
// its keys, not its text (Builder); and a two-host rig on which tests
// spawn simulated threads and run them (Rig), so that the behaviour of
// a protocol is tested in the protocol's own package. Only tests import
// it (cmd/simkron's TestLayering holds that).
package machinetest

import (
	"reflect"
	"slices"

	"simkron/machine"
	"simkron/machine/part"
	"simkron/machine/parts/atm"
	"simkron/machine/parts/ethernet"
	"simkron/machine/parts/isofamily"
	"simkron/machine/parts/tophost"
	"simkron/machine/parts/viafamily"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/stack/osi/netiso"
	"simkron/stack/top"
	"simkron/stack/via"

	_ "simkron/stack/apps" // every workload, as the command links them
)

// Kernel returns h's kernel, or nil when h runs another environment.
func Kernel(h *machine.Host) *kernel.Kernel { return find[*kernel.Kernel](h) }

// Net returns h's device layer, or nil when h has no card the kernel
// drives.
func Net(h *machine.Host) *netdev.Stack { return find[*netdev.Stack](h) }

// Inet returns h's Internet protocols, or nil when no card of h has an
// address.
func Inet(h *machine.Host) *inet.Stack { return find[*inet.Stack](h) }

// ISO returns h's ISO family, or nil.
func ISO(h *machine.Host) *netiso.Family { return find[*netiso.Family](h) }

// VIA returns h's VIA agent, or nil.
func VIA(h *machine.Host) *via.Agent { return find[*via.Agent](h) }

// Station returns h's TOP station, or nil when h runs the kernel.
func Station(h *machine.Host) *top.Station { return find[*top.Station](h) }

// NICs returns h's Ethernet cards, in machine order.
func NICs(h *machine.Host) []*ethernet.NIC { return ethernet.NICs(h) }

// ATMCards returns h's ATM cards, in machine order.
func ATMCards(h *machine.Host) []*atm.Card { return atm.Cards(h) }

// Ethernet returns a run's Ethernet (its segments).
func Ethernet(n *machine.Network) *ethernet.Network {
	e, _ := n.Of(ethernet.Name).(*ethernet.Network)
	return e
}

// EthernetOf returns the Ethernet host h's cards are on: its island's
// instance in a run in islands (machine.Run.Islands), the run's when it
// is whole.
func EthernetOf(h *machine.Host) *ethernet.Network { return ethernet.NetworkOf(h) }

// ATM returns a run's ATM network.
func ATM(n *machine.Network) *atm.Network {
	a, _ := n.Of(atm.Name).(*atm.Network)
	return a
}

// Segments returns an experiment's [[segment]] tables.
func Segments(e *machine.Experiment) []ethernet.SegmentSpec {
	return ethernet.TablesOf(e.Networks).Segments
}

// ATMLinks returns an experiment's [[atm_link]] tables.
func ATMLinks(e *machine.Experiment) []atm.LinkSpec { return atm.TablesOf(e.Networks).Links }

// ATMSwitches returns an experiment's [[atm_switch]] tables.
func ATMSwitches(e *machine.Experiment) []atm.SwitchSpec { return atm.TablesOf(e.Networks).Switches }

// NICSpecs returns a [[host]]'s [[host.nic]] tables.
func NICSpecs(h *machine.HostSpec) []ethernet.NICSpec { return ethernet.BindingsOf(h).NICs }

// ATMSpecs returns a [[host]]'s [[host.atm]] tables.
func ATMSpecs(h *machine.HostSpec) []atm.Spec { return atm.BindingsOf(h).Cards }

// InetParams returns a machine's [inet] table.
func InetParams(m *machine.Spec) *inet.Params { return part.SectionOf[inet.Params](m, "inet") }

// KernelParams returns a machine's [kernel] table.
func KernelParams(m *machine.Spec) *kernel.Params { return part.SectionOf[kernel.Params](m, "kernel") }

// ISOParams returns a machine's [iso] table.
func ISOParams(m *machine.Spec) *isofamily.Spec { return part.SectionOf[isofamily.Spec](m, "iso") }

// VIAParams returns a machine's [via] table.
func VIAParams(m *machine.Spec) *viafamily.Spec { return part.SectionOf[viafamily.Spec](m, "via") }

// TOPParams returns a machine's [top] table.
func TOPParams(m *machine.Spec) *tophost.Spec { return part.SectionOf[tophost.Spec](m, "top") }

// Clone returns a copy of m whose tables a test may change without
// changing m's: its buses, devices and parts' tables are copied (each
// device's params are still m's).
func Clone(m *machine.Spec) *machine.Spec {
	c := *m
	c.Buses = slices.Clone(m.Buses)
	c.Devices = slices.Clone(m.Devices)
	c.Sections = map[string]any{}
	for k, v := range m.Sections {
		p := reflect.New(reflect.TypeOf(v).Elem())
		p.Elem().Set(reflect.ValueOf(v).Elem())
		c.Sections[k] = p.Interface()
	}
	return &c
}

func find[T any](h *machine.Host) T {
	v, _ := machine.Find[T](h)
	return v
}
