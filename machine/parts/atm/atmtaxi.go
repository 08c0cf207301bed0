package atm

import (
	"fmt"

	"simkron/cpu"
	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim/atmnet"
	"simkron/machine/part"
	"simkron/machine/parts/kernelhost"
	"simkron/memory"
	drvatm "simkron/stack/driver/atmtaxi"
	"simkron/stats"
)

func init() {
	part.RegisterDevice(part.DeviceType{
		Name:           "atmtaxi",
		Help:           "Yes V2 TURBOchannel ATM interface on a 100 Mbit/s TAXI line (devices/atmtaxi), with its driver (stack/driver/atmtaxi): raw ATM sockets and classical IP over AAL5",
		Technology:     Name,
		Defaults:       func() any { p := devatm.DefaultParams(); return &p },
		DriverDefaults: func() any { p := drvatm.DefaultParams(); return &p },
		Size:           devatm.Size,
		Build:          buildATMTaxi,
		SetMTU:         atmMTU,
		Check:          checkATMTaxi,
		Cable:          atmCable,
		Counters: []stats.Group{{Name: "card", Value: devatm.Stats{}}, {Name: "ip", Value: drvatm.InterfaceStats{}},
			{Name: "line", Value: atmnet.EndStats{}}, {Name: "switch_port", Value: atmnet.PortStats{}}},
		Summary: []string{"card.tx_cells", "card.rx_cells", "card.rx_overflow", "card.rx_bad_hec",
			"card.dma_transfers", "card.dma_bytes", "card.dma_errors", "card.interrupts",
			"card.tx_crc_pdus", "card.rx_crc_pdus", "card.sort_cells", "card.sort_pdus", "card.sort_no_buffer",
			"driver.tx_pdus", "driver.tx_cells", "driver.tx_dmas", "driver.tx_spins", "driver.tx_deferred", "driver.tx_paced",
			"driver.rx_cells", "driver.rx_pdus", "driver.rx_no_vc", "driver.rx_seq_errors", "driver.rx_too_long", "driver.rx_no_buffer",
			"driver.rx_bad_crc", "driver.rx_bad_length", "driver.rx_bad_llc", "driver.rx_broken", "driver.rx_socket_full",
			"driver.overruns", "driver.interrupts",
			"ip.tx_frames", "ip.rx_frames", "ip.no_vc", "ip.tx_drops",
			"line.tx_cells", "line.rx_cells", "line.lost", "line.corrupted",
			"switch_port.tx_cells", "switch_port.queue_drops", "switch_port.queue_peak"},
	})
	part.RegisterDriver(part.Driver{Environment: kernelhost.Name, Device: "atmtaxi",
		New: func(h *part.Host, d *part.DeviceSpec, a part.DriverArgs) (any, error) {
			drv, err := drvatm.New(kernelhost.Kernel(h), kernelhost.NetStack(h), a.Ifname, d.Space, memory.Addr(d.Base), d.IRQ, *a.Params.(*drvatm.Params))
			if err != nil {
				return nil, err
			}
			h.AddInit(drv.Init)
			return drv, nil
		},
		Counters: []stats.Group{{Name: "driver", Value: drvatm.Stats{}}}})
}

// atmCable connects two hosts' ATM cards as configs/atm-ip.toml does:
// each on a TAXI link to one switch, which routes VC 0/100 of the first to
// 0/200 of the second both ways, classical IP over that VC paced at 30000
// cells/s and the receive interrupt on every cell (the base programmed-I/O
// receive path overruns its FIFO on unpaced PDUs, and a header-flag
// interrupt cannot serve IP; see atm-ip.toml).
func atmCable(d *part.DeviceSpec, hosts [2]part.PairHost) part.Cable {
	links := [2]string{"a", "b"}
	vcis := [2]int{100, 200}
	return part.Cable{
		Network: `[[atm_link]]
name = "a"

[[atm_link]]
name = "b"

[[atm_switch]]
name = "sw0"
ports = ["a", "b"]
[[atm_switch.route]]
in = "a"
vc = "0/100"
out = "b"
out_vc = "0/200"
duplex = true
`,
		Host: func(i int) string {
			return fmt.Sprintf("[[host.atm]]\ndevice = %q\nlink = %q\nip = %q\n[[host.atm.vc]]\nip = %q\nvpi = 0\nvci = %d\npcr = 30000\n[host.atm.driver]\nrx_interrupt = \"cell\"\n",
				d.Name, links[i], hosts[i].IP, hosts[1-i].IP, vcis[i])
		},
	}
}

// atmMTU sets the IP interface's MTU: an AAL5 PDU carries it with the 8
// bytes of LLC/SNAP, so any MTU the driver accepts fits the line.
func atmMTU(d *part.DeviceSpec, mtu int) error {
	drv := d.Driver.(*drvatm.Params)
	drv.MTU = mtu
	return drv.Validate()
}

// checkATMTaxi finds what neither the board's nor the driver's table
// shows alone: the driver must not start a DMA longer than the board
// takes, and may use an assist only where the board has it fitted.
func checkATMTaxi(d *part.DeviceSpec) []part.Problem {
	card, drv := d.Params.(*devatm.Params), d.Driver.(*drvatm.Params)
	var out []part.Problem
	add := func(key, format string, args ...any) {
		out = append(out, part.Problemf([]string{"driver", key}, format, args...))
	}
	if drv.DMAMaxBytes > card.DMAMaxBytes {
		add("dma_max_bytes", "%v is longer than the board's DMA limit, params.dma_max_bytes = %v: the driver would start transfers the board refuses",
			drv.DMAMaxBytes, card.DMAMaxBytes)
	}
	if drv.HeaderInsertion && !card.HeaderInsertion {
		add("header_insertion", "the board has no header insertion fitted (params.header_insertion = false)")
	}
	if drv.CRCAssist && !card.AAL5CRC {
		add("crc_assist", "the board has no AAL5 CRC assist fitted (params.aal5_crc = false)")
	}
	if drv.Rx == drvatm.Sort && !card.VCISort {
		add("rx", "%q needs the board's VCI sorter (params.vci_sort = false)", drvatm.Sort)
	}
	return out
}

// buildATMTaxi builds the board and its driver and plugs the board into
// the link the experiment's [[host.atm]] names (none: unplugged).
func buildATMTaxi(h *part.Host, d *part.DeviceSpec, irq *cpu.IRQLine) (part.Device, error) {
	if irq == nil {
		return nil, fmt.Errorf("an atmtaxi needs an irq")
	}
	if prs := checkATMTaxi(d); len(prs) > 0 {
		return nil, fmt.Errorf("driver.%s: %s", prs[0].Key[1], prs[0].Msg)
	}
	p := *d.Params.(*devatm.Params)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	dp := *d.Driver.(*drvatm.Params)
	bind := binding(h, d.Name)
	if bind != nil {
		dp.VCs = append(dp.VCs, bind.VCs...)
	}
	dev := devatm.New(h.Sched, h.Name+"."+d.Name, p, irq, h.Sys)
	drv, err := part.NewDriver(h, d, part.DriverArgs{Ifname: fmt.Sprintf("atm%d", len(Cards(h))), Params: &dp})
	if err != nil {
		return nil, err
	}
	c := &Card{Name: d.Name, Dev: dev, Driver: drv.(*drvatm.Driver), Spec: bind, k: h.Sched}
	if bind != nil {
		net := NetworkOf(h)
		end, err := net.end(bind.Link)
		if err != nil {
			return nil, err
		}
		dev.SetLine(end)
		end.SetReceiver(c) // the card's listeners look, then the board
		c.End = end
		c.port = net.port(bind.Link)
	}
	h.AddCard(Name, c, c.Driver)
	return device{c}, nil
}

// Cards returns host h's ATM cards, in machine order.
func Cards(h *part.Host) []*Card {
	var out []*Card
	for _, x := range h.Cards(Name) {
		if c, ok := x.(*Card); ok {
			out = append(out, c)
		}
	}
	return out
}

// binding returns the experiment's [[host.atm]] of host h's device, or
// nil.
func binding(h *part.Host, device string) *Spec {
	b := BindingsOf(h.HostSpec)
	for i := range b.Cards {
		if b.Cards[i].Device == device {
			return &b.Cards[i]
		}
	}
	return nil
}
