package machine

import (
	"fmt"
	"sort"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/driver/clock"
	drvne2000 "simkron/stack/driver/ne2000"
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
}

var deviceTypes = map[string]*DeviceType{
	"timer": {
		Name:     "timer",
		Help:     "real-time clock, periodic tick and one-shot timer (devices/timer)",
		Defaults: func() any { p := timer.DefaultParams(); return &p },
		Size:     timer.Size,
		build: func(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error) {
			if irq == nil {
				return nil, fmt.Errorf("a timer needs an irq")
			}
			t, err := timer.New(k, h.Name+"."+d.Name, *d.Params.(*timer.Params), irq, h.Sys.Guest)
			if err != nil {
				return nil, err
			}
			drv := clock.New(h.Kernel, d.Space, memory.Addr(d.Base), d.IRQ)
			h.inits = append(h.inits, drv.Init)
			return timerDevice{t}, nil
		},
	},
	"ne2000": {
		Name:           "ne2000",
		Help:           "NE2000 ISA Ethernet card, DP8390 (devices/ne2000), with its driver (stack/driver/ne2000)",
		Defaults:       func() any { p := ne2000.DefaultParams(); return &p },
		DriverDefaults: func() any { p := drvne2000.DefaultParams(); return &p },
		Size:           ne2000.Size,
		build:          checkNE2000,
		setMTU:         ne2000MTU,
	},
}

// ne2000MTU sets the driver's MTU and lets the card send the frames it
// needs (a simulation allowance past Ethernet's 1518 bytes, see the
// card's max_frame).
func ne2000MTU(d *DeviceSpec, mtu int) error {
	card, drv := d.Params.(*ne2000.Params), d.Driver.(*drvne2000.Params)
	drv.MTU = mtu
	if err := drv.Validate(); err != nil {
		return err
	}
	card.MaxFrame = max(card.MaxFrame, sim.Size(drv.MaxFrame()))
	return nil
}

// checkNE2000 builds an NE2000 after checking what neither parameter
// table can check alone: the driver's frames, mtu + 18 bytes, must be
// ones the card transmits.
func checkNE2000(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error) {
	card, drv := d.Params.(*ne2000.Params), d.Driver.(*drvne2000.Params)
	if drv.MaxFrame() > int(card.MaxFrame) {
		return nil, fmt.Errorf("driver.mtu: %d needs frames of %d bytes (header and FCS included), longer than params.max_frame (%v) lets the card send",
			drv.MTU, drv.MaxFrame(), card.MaxFrame)
	}
	return buildNE2000(h, k, d, irq)
}

type timerDevice struct{ *timer.Timer }

func (t timerDevice) Counters() []report.Counter {
	s := t.Stats()
	return []report.Counter{{Name: "ticks", Value: s.Ticks}, {Name: "one_shots", Value: s.OneShots}}
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
