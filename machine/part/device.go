package part

import (
	"fmt"
	"sort"

	"simkron/cpu"
	"simkron/stats"
)

// DeviceType is a device model that machine files can name with
// type = "...": its parameters, its register window and how to build it.
// Each model registers itself from a file of its own in the part of its
// technology (machine/parts/ethernet/ne2000.go) or environment, so that a
// new model adds a file and edits none.
type DeviceType struct {
	Name string
	Help string
	// Technology names the network technology whose cards the model's
	// devices are ("" for a device that is no network card): an
	// experiment plugs them in with that technology's bindings.
	Technology string
	// Defaults returns a pointer to the type's default Params, into which
	// the [device.params] table is decoded.
	Defaults func() any
	// DriverDefaults, when set, returns a pointer to the default Params
	// of the kernel's driver for the device, decoded from [device.driver].
	DriverDefaults func() any
	// Size is the register window.
	Size uint64
	// Build makes the device d of host h on its interrupt line (nil when
	// d has none), with its driver (NewDriver), and adds what it makes to
	// the host: a card (Host.AddCard), the driver's initialisation
	// (Host.AddInit).
	Build func(h *Host, d *DeviceSpec, irq *cpu.IRQLine) (Device, error)
	// NoDriver says the device needs no driver in any environment (the
	// PC's interval timer, which the TOP environment's BIOS programs).
	NoDriver bool
	// SetMTU, for network devices, configures the card and its driver
	// for an interface MTU an experiment asks for ([[host.nic]] mtu).
	SetMTU func(d *DeviceSpec, mtu int) error
	// Cable, for network devices, returns the experiment text that
	// connects two hosts' copies of the device in the experiment
	// machine.PairExperiment writes (simkron compare).
	Cable func(d *DeviceSpec, hosts [2]PairHost) Cable
	// Check, when set, finds what neither the params nor the driver
	// table can alone; each problem names its key relative to the
	// [[device]] table (["driver", "dma_max_bytes"]).
	Check func(d *DeviceSpec) []Problem
	// Counters declares the stats structs its devices report
	// (Device.Counters) beside their drivers' (Driver.Counters), each
	// under its name, as zero values: simkron counters lists them.
	Counters []stats.Group
	// Summary names the counters (relative to the device, "card.tx_frames")
	// the summary and result.json's devices[].counters show, in order; a
	// name the device does not report (a driver's the environment does
	// not use, an unplugged card's wire) is left out.
	Summary []string
}

// PairHost is one host of the experiment machine.PairExperiment writes.
type PairHost struct{ Name, IP string }

// Cable is the experiment text that connects two hosts' copies of a
// network device: the network's tables, and each host's tables binding
// its card to the network with the host's address.
type Cable struct {
	Network string
	Host    func(i int) string
}

// RegisterDevice adds a device model; a name taken twice is a simulator
// bug.
func RegisterDevice(t DeviceType) {
	if _, dup := devices[t.Name]; dup {
		panic(fmt.Sprintf("part: device type %q registered twice", t.Name))
	}
	if t.Build == nil || t.Defaults == nil {
		panic(fmt.Sprintf("part: device type %q needs Build and Defaults", t.Name))
	}
	devices[t.Name] = &t
}

// LookupDevice finds a device model by name.
func LookupDevice(name string) (*DeviceType, bool) {
	t, ok := devices[name]
	return t, ok
}

// DeviceTypes returns the models, sorted by name.
func DeviceTypes() []*DeviceType {
	out := make([]*DeviceType, 0, len(devices))
	for _, t := range devices {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Driver is the software an environment drives a device model with: a
// kernel's driver, a resident packet driver.
type Driver struct {
	Environment string // the environment's name ("kernel")
	Device      string // the device model's name ("ne2000")
	// New makes the driver of device d on host h. What it returns is the
	// driver; the device's part uses it through the interface it expects
	// of its drivers, and reports its counters when it is Counted.
	New func(h *Host, d *DeviceSpec, a DriverArgs) (any, error)
	// Counters declares the stats structs the driver reports, as zero
	// values, for simkron counters.
	Counters []stats.Group
}

// DriverArgs is what a device's part hands its driver beside the
// [[device]] table.
type DriverArgs struct {
	// Ifname is the network interface the card is to the kernel
	// ("eth0", "atm0"); empty for a device that is no card.
	Ifname string
	// MAC is the card's station address, as the experiment gives it.
	MAC [6]byte
	// Params are the driver's params: the [device.driver] table, or the
	// device part's copy of it with what the experiment adds.
	Params any
}

// RegisterDriver adds the driver of a device model in an environment; a
// pair registered twice is a simulator bug.
func RegisterDriver(d Driver) {
	k := [2]string{d.Environment, d.Device}
	if _, dup := drivers[k]; dup {
		panic(fmt.Sprintf("part: driver of %q in environment %q registered twice", d.Device, d.Environment))
	}
	if d.New == nil {
		panic(fmt.Sprintf("part: driver of %q in environment %q needs New", d.Device, d.Environment))
	}
	drivers[k] = &d
}

// Drivers returns the drivers registered for device model device, by
// environment in name order.
func Drivers(device string) []*Driver {
	var out []*Driver
	for _, d := range drivers {
		if d.Device == device {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Environment < out[j].Environment })
	return out
}

// Drives reports whether environment env can run a host with a device of
// model device: the model needs no driver, or env has one for it.
func Drives(env, device string) bool {
	if t, ok := devices[device]; ok && t.NoDriver {
		return true
	}
	_, ok := drivers[[2]string{env, device}]
	return ok
}

// NewDriver makes the driver host h's environment drives device d with.
func NewDriver(h *Host, d *DeviceSpec, a DriverArgs) (any, error) {
	drv, ok := drivers[[2]string{h.EnvName, d.Type}]
	if !ok {
		return nil, fmt.Errorf("the %s environment has no driver for a %s", h.EnvName, d.Type)
	}
	return drv.New(h, d, a)
}
