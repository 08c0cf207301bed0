package ethernet

import (
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/machine/parts/kernelhost"
	"simkron/memory"
	"simkron/sim"
	drvsimoseth "simkron/stack/driver/simoseth"
	"simkron/stats"
)

func init() {
	part.RegisterDevice(part.DeviceType{
		Name:           "simoseth",
		Help:           "bus-master descriptor-DMA Ethernet NIC of the Linux/SimOS study (devices/simoseth), with its Linux-2.x-style ring driver (stack/driver/simoseth)",
		Technology:     Name,
		Defaults:       func() any { p := simoseth.DefaultParams(); return &p },
		DriverDefaults: func() any { p := drvsimoseth.DefaultParams(); return &p },
		Size:           simoseth.Size,
		Build:          checkSimoseth,
		SetMTU:         simosethMTU,
		Cable:          simosethCable,
		Counters:       []stats.Group{{Name: "card", Value: simoseth.Stats{}}, {Name: "wire", Value: ethersim.AttachmentStats{}}},
		Summary: slices.Concat([]string{"card.tx_frames", "card.rx_frames", "card.tx_desc_errors", "card.tx_waits",
			"card.rx_crc_errors", "card.rx_no_descriptor", "card.rx_overflow", "card.rx_desc_errors",
			"card.dma_transfers", "card.dma_bytes", "card.dma_busy_ps", "card.interrupts",
			"driver.tx_frames", "driver.rx_frames", "driver.tx_errors", "driver.tx_busy",
			"driver.rx_errors", "driver.rx_no_buffer", "driver.rx_restarts", "driver.missed"}, wireSummary),
	})
	part.RegisterDriver(part.Driver{Environment: kernelhost.Name, Device: "simoseth",
		New: func(h *part.Host, d *part.DeviceSpec, a part.DriverArgs) (any, error) {
			drv, err := drvsimoseth.New(kernelhost.Kernel(h), kernelhost.NetStack(h), a.Ifname, memory.Addr(d.Base), d.IRQ, *a.Params.(*drvsimoseth.Params))
			if err != nil {
				return nil, err
			}
			h.AddInit(drv.Init)
			return SimosethDriver{drv}, nil
		},
		Counters: []stats.Group{{Name: "driver", Value: drvsimoseth.Stats{}}}})
}

// simosethCable connects two hosts' cards as the Linux/SimOS study's
// experiment does (configs/simos-study.toml), so that simkron compare on
// the study's machine file measures what the study's experiment does: a
// gigabit switch that forwards a frame 1 us after receiving it, over
// 100 ns of cable (20 m). The study leaves MAC and physical-layer time out
// of its latencies, so the network only sets the round trip; EtherSim,
// which carried its hosts' frames, has no figures of its own.
func simosethCable(d *part.DeviceSpec, hosts [2]part.PairHost) part.Cable {
	c := Cable(d.Name, sim.Gbps, ethersim.ModeSwitch, hosts)
	c.Network += "switch_latency = \"1us\"\npropagation = \"100ns\"\n"
	return c
}

// simosethMTU sets the driver's MTU and lets the card carry its frames
// (past 1518 bytes the card's max_frame stands in for jumbo frames).
func simosethMTU(d *part.DeviceSpec, mtu int) error {
	card, drv := d.Params.(*simoseth.Params), d.Driver.(*drvsimoseth.Params)
	drv.MTU = mtu
	if err := drv.Validate(); err != nil {
		return err
	}
	card.MaxFrame = max(card.MaxFrame, sim.Size(drv.MaxFrame()))
	return nil
}

// checkSimoseth builds the NIC after checking what neither parameter
// table can check alone, against the card and the machine:
//
//   - the driver's frames (mtu + 18 bytes) must be ones the card sends;
//   - the driver's coherence must be the platform's: a driver that takes
//     the card's DMA for coherent when it does not snoop reads stale
//     lines, and one that flushes for a card that snoops is a different
//     platform from the one the machine file describes;
//   - the uncached region the driver takes its rings (and, with
//     uncached_buffers, its buffers) from must be one of the machine's
//     [[uncached]] ranges: otherwise it is cached memory, and a
//     non-coherent card would read stale rings;
//   - the driver reaches the card through memory-mapped registers only.
func checkSimoseth(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
	card, drv := d.Params.(*simoseth.Params), d.Driver.(*drvsimoseth.Params)
	if drv.MaxFrame() > int(card.MaxFrame) {
		return nil, fmt.Errorf("driver.mtu: %d needs frames of %d bytes (header and FCS included), longer than params.max_frame (%v) lets the card send",
			drv.MTU, drv.MaxFrame(), card.MaxFrame)
	}
	if drv.Coherent != card.Coherent {
		if card.Coherent {
			return nil, fmt.Errorf("driver.coherent: false, but the card's DMA snoops the caches (params.coherent = true): the driver would flush and keep its rings uncached on a platform that needs neither; set both the same")
		}
		return nil, fmt.Errorf("driver.coherent: true, but the card's DMA does not snoop the caches (params.coherent = false): the driver would read stale lines of what the card wrote; set driver.coherent = false (with dma_base in an [[uncached]] range)")
	}
	if drv.DMABase != 0 {
		if !h.Spec.InUncached(drv.DMABase, uint64(drv.DMASize)) {
			return nil, fmt.Errorf("driver.dma_base: [0x%x, 0x%x) is not inside one [[uncached]] range of the machine: the driver's uncached DMA memory would be cached",
				drv.DMABase, drv.DMABase+uint64(drv.DMASize))
		}
	}
	if d.Space != memory.SpaceMem {
		return nil, fmt.Errorf("space: the simoseth's registers are memory-mapped: space must be \"mem\"")
	}
	return buildSimoseth(h, d, irq)
}

func buildSimoseth(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
	if irq == nil {
		return nil, fmt.Errorf("a simoseth needs an irq")
	}
	p := *d.Params.(*simoseth.Params)
	prom := p.MAC
	if bind := binding(h, d.Name); bind != nil {
		p.MAC = bind.MAC
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := simoseth.New(h.Sched, h.Name+"."+d.Name, p, irq, h.Sys)
	nic, err := plug(h, d, c, prom, p.MAC, func(n *NIC) { c.SetWire(n) }, func() []stats.Group {
		return []stats.Group{{Name: "card", Value: c.Stats()}}
	})
	if err != nil {
		return nil, err
	}
	nic.dma = &c.DMA
	return nic.device(), nil
}

// SimosethDriver is the kernel's ring driver (a NIC's Driver on a host
// that runs the kernel) with its figures for reports.
type SimosethDriver struct{ *drvsimoseth.Driver }

func (d SimosethDriver) Counters() []stats.Group {
	return []stats.Group{{Name: "driver", Value: d.Stats()}}
}
