package machine

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	drvne2000 "simkron/stack/driver/ne2000"
	"simkron/stack/driver/pktdrv"
)

func init() {
	registerDevice(DeviceType{
		Name:           "ne2000",
		Help:           "NE2000 ISA Ethernet card, DP8390 (devices/ne2000), with its driver (stack/driver/ne2000)",
		Defaults:       func() any { p := ne2000.DefaultParams(); return &p },
		DriverDefaults: func() any { p := drvne2000.DefaultParams(); return &p },
		Size:           ne2000.Size,
		build:          checkNE2000,
		setMTU:         ne2000MTU,
	})
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

func buildNE2000(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error) {
	if irq == nil {
		return nil, fmt.Errorf("an ne2000 needs an irq")
	}
	p := *d.Params.(*ne2000.Params)
	prom := p.MAC
	if bind := h.nicSpec(d.Name); bind != nil {
		p.MAC = bind.MAC
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	card := ne2000.New(k, h.Name+"."+d.Name, p, irq, h.Sys.Guest)
	var drv *drvne2000.Driver
	var pd *pktdrv.Driver
	nic, err := h.addNIC(d, card, prom, func(n *NIC) { card.SetWire(n) },
		func(ifname string) (NetDriver, error) {
			var err error
			if h.TOP != nil {
				// The TOP environment's resident packet driver (top.go).
				pd, err = h.TOP.AddPacketDriver(h.Name+"."+d.Name+".pktdrv", d.Space, memory.Addr(d.Base), d.IRQ, p.MAC)
				return residentDriver{pd}, err
			}
			drv, err = drvne2000.New(h.Kernel, h.netStack(), ifname, d.Space, memory.Addr(d.Base), d.IRQ, *d.Driver.(*drvne2000.Params))
			return drv, err
		},
		func() []report.Counter {
			c := card.Stats()
			out := []report.Counter{
				{Name: "card.tx_frames", Value: c.TxFrames}, {Name: "card.rx_frames", Value: c.RxFrames},
				{Name: "card.crc_errors", Value: c.CRCErrors}, {Name: "card.missed", Value: c.Missed},
				{Name: "card.overflows", Value: c.Overflows}, {Name: "card.interrupts", Value: c.Interrupts},
			}
			if pd != nil {
				return append(out, pktdrvCounters(pd)...)
			}
			d := drv.Stats()
			return append(out, []report.Counter{
				{Name: "driver.tx_frames", Value: d.TxFrames}, {Name: "driver.rx_frames", Value: d.RxFrames},
				{Name: "driver.tx_errors", Value: d.TxErrors}, {Name: "driver.rx_errors", Value: d.RxErrors},
				{Name: "driver.overruns", Value: d.Overruns}, {Name: "driver.loopback_frames", Value: d.LoopbackFrames},
			}...)
		})
	if err != nil {
		return nil, err
	}
	return nic.device(), nil
}
