package ethernet

import (
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/machine/parts/kernelhost"
	"simkron/memory"
	"simkron/sim"
	drvne2000 "simkron/stack/driver/ne2000"
	"simkron/stats"
)

func init() {
	part.RegisterDevice(part.DeviceType{
		Name:           "ne2000",
		Help:           "NE2000 ISA Ethernet card, DP8390 (devices/ne2000), with its driver (stack/driver/ne2000)",
		Technology:     Name,
		Defaults:       func() any { p := ne2000.DefaultParams(); return &p },
		DriverDefaults: func() any { p := drvne2000.DefaultParams(); return &p },
		Size:           ne2000.Size,
		Build:          checkNE2000,
		SetMTU:         ne2000MTU,
		Cable: func(d *part.DeviceSpec, hosts [2]part.PairHost) part.Cable {
			return Cable(d.Name, ethersim.DefaultRate, ethersim.ModeShared, hosts)
		},
		Counters: []stats.Group{{Name: "card", Value: ne2000.Stats{}}, {Name: "wire", Value: ethersim.AttachmentStats{}}},
		Summary: slices.Concat([]string{"card.tx_frames", "card.rx_frames", "card.crc_errors", "card.missed", "card.overflows", "card.interrupts",
			"driver.tx_frames", "driver.rx_frames", "driver.tx_errors", "driver.rx_errors", "driver.overruns", "driver.loopback_frames",
			"pktdrv.tx_frames", "pktdrv.rx_frames", "pktdrv.tx_errors", "pktdrv.rx_errors", "pktdrv.rx_dropped", "pktdrv.overruns", "pktdrv.tx_waits", "pktdrv.loopback_frames"},
			wireSummary),
	})
	part.RegisterDriver(part.Driver{Environment: kernelhost.Name, Device: "ne2000",
		New: func(h *part.Host, d *part.DeviceSpec, a part.DriverArgs) (any, error) {
			drv, err := drvne2000.New(kernelhost.Kernel(h), kernelhost.NetStack(h), a.Ifname, d.Space, memory.Addr(d.Base), d.IRQ, *a.Params.(*drvne2000.Params))
			if err != nil {
				return nil, err
			}
			h.AddInit(drv.Init)
			return NE2000Driver{drv}, nil
		},
		Counters: []stats.Group{{Name: "driver", Value: drvne2000.Stats{}}}})
}

// ne2000MTU sets the driver's MTU and lets the card send the frames it
// needs (a simulation allowance past Ethernet's 1518 bytes, see the
// card's max_frame).
func ne2000MTU(d *part.DeviceSpec, mtu int) error {
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
func checkNE2000(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
	card, drv := d.Params.(*ne2000.Params), d.Driver.(*drvne2000.Params)
	if drv.MaxFrame() > int(card.MaxFrame) {
		return nil, fmt.Errorf("driver.mtu: %d needs frames of %d bytes (header and FCS included), longer than params.max_frame (%v) lets the card send",
			drv.MTU, drv.MaxFrame(), card.MaxFrame)
	}
	return buildNE2000(h, d, irq)
}

func buildNE2000(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
	if irq == nil {
		return nil, fmt.Errorf("an ne2000 needs an irq")
	}
	p := *d.Params.(*ne2000.Params)
	prom := p.MAC
	if bind := binding(h, d.Name); bind != nil {
		p.MAC = bind.MAC
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := ne2000.New(h.Sched, h.Name+"."+d.Name, p, irq, h.Sys.Guest)
	nic, err := plug(h, d, c, prom, p.MAC, func(n *NIC) { c.SetWire(n) }, func() []stats.Group {
		return []stats.Group{{Name: "card", Value: c.Stats()}}
	})
	if err != nil {
		return nil, err
	}
	return nic.device(), nil
}

// NE2000Driver is the kernel's NE2000 driver (a NIC's Driver on a host
// that runs the kernel) with its figures for reports.
type NE2000Driver struct{ *drvne2000.Driver }

func (d NE2000Driver) Counters() []stats.Group {
	return []stats.Group{{Name: "driver", Value: d.Stats()}}
}
