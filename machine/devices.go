package machine

import (
	"fmt"
	"sort"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
)

// DeviceType is a device model that machine files can name with
// type = "...": its parameters, its register window and how to build it
// together with the driver the kernel uses for it.
type DeviceType struct {
	Name string
	Help string
	// Defaults returns a pointer to the type's default Params, into which
	// the [device.params] table is decoded.
	Defaults func() any
	// DriverDefaults, when set, returns a pointer to the default Params
	// of the kernel's driver for the device, decoded from [device.driver].
	DriverDefaults func() any
	// Size is the register window.
	Size  uint64
	build func(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error)
	// setMTU, for network devices, configures the card and its driver
	// for an interface MTU an experiment asks for ([[host.nic]] mtu).
	setMTU func(d *DeviceSpec, mtu int) error
	// cable, for network devices, connects two hosts' copies of the
	// device in an experiment PairExperiment writes; nil is an Ethernet
	// card on a shared segment at Ethernet's default rate.
	cable func(d *DeviceSpec) cable
	// check, when set, finds what neither the params nor the driver
	// table can alone; each problem names its key relative to the
	// [[device]] table ("driver", "dma_max_bytes").
	check func(d *DeviceSpec) []DeviceProblem
}

// DeviceProblem is a problem of a [[device]] that only its two tables
// together show, at Key (relative to the [[device]] table).
type DeviceProblem struct {
	Key []string
	Msg string
}

// deviceTypes are the registered device models by name. Each model
// registers itself from a file of its own (device_*.go) with
// registerDevice, so that a new model adds a file and edits none.
var deviceTypes = map[string]*DeviceType{}

// registerDevice adds a device model; a name taken twice is a simulator
// bug.
func registerDevice(t DeviceType) {
	if _, dup := deviceTypes[t.Name]; dup {
		panic(fmt.Sprintf("machine: device type %q registered twice", t.Name))
	}
	deviceTypes[t.Name] = &t
}

// LookupDeviceType finds a device model by name.
func LookupDeviceType(name string) (*DeviceType, bool) {
	t, ok := deviceTypes[name]
	return t, ok
}

// DeviceTypes returns the models, sorted by name.
func DeviceTypes() []*DeviceType {
	out := make([]*DeviceType, 0, len(deviceTypes))
	for _, t := range deviceTypes {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (h *Host) addDevice(k *sim.Kernel, d *DeviceSpec) error {
	if err := validName(d.Name); err != nil {
		return err
	}
	t, ok := deviceTypes[d.Type]
	if !ok {
		return fmt.Errorf("unknown type %q", d.Type)
	}
	if d.Params == nil {
		d.Params = t.Defaults()
	}
	if d.Driver == nil && t.DriverDefaults != nil {
		d.Driver = t.DriverDefaults()
	}
	var bus *memory.Bus
	if d.Bus != "" {
		if bus, ok = h.Buses[d.Bus]; !ok {
			return fmt.Errorf("bus %q is not defined", d.Bus)
		}
	}
	var irq *cpu.IRQLine
	if d.IRQ >= 0 {
		if other, used := h.irqs[d.IRQ]; used {
			return fmt.Errorf("irq %d is already used by device %q (lines are not shared)", d.IRQ, other)
		}
		h.irqs[d.IRQ] = d.Name
		var err error
		if irq, err = h.CPU.Line(d.IRQ, false); err != nil {
			return err
		}
	}
	dev, err := t.build(h, k, d, irq)
	if err != nil {
		return err
	}
	m := memory.Mapping{Name: d.Name, Space: d.Space, Base: memory.Addr(d.Base), Size: t.Size, Dev: dev, Bus: bus}
	if err := h.Sys.Devices.Map(m); err != nil {
		return err
	}
	h.Devices = append(h.Devices, dev)
	return nil
}
