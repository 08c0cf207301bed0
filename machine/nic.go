package machine

import (
	"fmt"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	drvne2000 "simkron/stack/driver/ne2000"
)

// NIC is a network card of a host with the kernel's driver for it and the
// segment it is plugged into (nil when the experiment leaves it
// unplugged).
type NIC struct {
	Name   string // the [[device]] name
	Card   *ne2000.NE2000
	Driver *drvne2000.Driver
	Port   *ethersim.Attachment
	Spec   *NICSpec
	// OnFrame, when set, sees every frame that reaches the card, when its
	// last bit arrives, before the card does. It only looks.
	OnFrame func(frame []byte)
	// OnSend, when set, sees every frame the card hands to the wire (FCS
	// included). It only looks.
	OnSend func(frame []byte)
}

// Transmit is the card's wire: OnSend looks, then the port sends.
func (n *NIC) Transmit(frame []byte) error {
	if n.OnSend != nil {
		n.OnSend(frame)
	}
	return n.Port.Transmit(frame)
}

// Receive implements ethersim.Station for the card, letting OnFrame look
// first.
func (n *NIC) Receive(frame []byte) {
	if n.OnFrame != nil {
		n.OnFrame(frame)
	}
	n.Card.Receive(frame)
}

// ObserveReceive adds fn to the observers of the frames reaching the
// card, after any already there. It only looks.
func (n *NIC) ObserveReceive(fn func(frame []byte)) { n.OnFrame = chain(n.OnFrame, fn) }

// ObserveSend adds fn to the observers of the frames the card puts on
// the wire, after any already there. It only looks.
func (n *NIC) ObserveSend(fn func(frame []byte)) { n.OnSend = chain(n.OnSend, fn) }

func chain(prev, fn func([]byte)) func([]byte) {
	if prev == nil {
		return fn
	}
	return func(f []byte) { prev(f); fn(f) }
}

// DeviceName is the card's [[device]] name.
func (n *NIC) DeviceName() string { return n.Name }

// Plugged reports whether the card is plugged into a segment.
func (n *NIC) Plugged() bool { return n.Port != nil }

// StationAddress is the card's MAC address: the experiment's, or its
// PROM's default.
func (n *NIC) StationAddress() [6]byte {
	if n.Spec != nil {
		return n.Spec.MAC
	}
	return n.Card.Params().MAC
}

// Queue is the driver's device queue in the kernel's device layer.
func (n *NIC) Queue() int { return n.Driver.Queue() }

// TxTime reads the driver's accumulated transmit time and count.
func (n *NIC) TxTime() (sim.Time, uint64) { s := n.Driver.Stats(); return s.TxTime, s.TxTimed }

// SetLoopback makes the driver loop frames back to itself.
func (n *NIC) SetLoopback(on bool) { n.Driver.SetLoopback(on) }

// WireRate is the segment's signalling rate, 0 when unplugged.
func (n *NIC) WireRate() sim.BitRate {
	if n.Port == nil {
		return 0
	}
	return n.Port.Segment().Params().Rate
}

// nic returns the network card called device, or nil.
func (h *Host) nic(device string) *NIC {
	for _, n := range h.NICs {
		if n.Name == device {
			return n
		}
	}
	return nil
}

// nicSpec returns the experiment's binding of device, or nil.
func (h *Host) nicSpec(device string) *NICSpec {
	for i := range h.HostSpec.NICs {
		if h.HostSpec.NICs[i].Device == device {
			return &h.HostSpec.NICs[i]
		}
	}
	return nil
}

func buildNE2000(h *Host, k *sim.Kernel, d *DeviceSpec, irq *cpu.IRQLine) (Device, error) {
	if irq == nil {
		return nil, fmt.Errorf("an ne2000 needs an irq")
	}
	p := *d.Params.(*ne2000.Params)
	bind := h.nicSpec(d.Name)
	if bind != nil {
		p.MAC = bind.MAC
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	card := ne2000.New(k, h.Name+"."+d.Name, p, irq, h.Sys.Guest)
	nic := &NIC{Name: d.Name, Card: card, Spec: bind}
	if bind != nil {
		seg, ok := h.net.Segment(bind.Segment)
		if !ok {
			return nil, fmt.Errorf("segment %q is not defined in a [[segment]]", bind.Segment)
		}
		port, err := seg.Attach(h.Name+"."+d.Name, nic, bind.Faults)
		if err != nil {
			return nil, err
		}
		port.OnTxDone = card.TxDone
		card.SetWire(nic)
		nic.Port = port
		if err := h.net.RegisterHost(h.Name, bind.MAC, bind.IP); err != nil {
			return nil, err
		}
	}
	drv, err := drvne2000.New(h.Kernel, h.netStack(), fmt.Sprintf("eth%d", len(h.NICs)), d.Space, memory.Addr(d.Base), d.IRQ, *d.Driver.(*drvne2000.Params))
	if err != nil {
		return nil, err
	}
	nic.Driver = drv
	h.inits = append(h.inits, drv.Init)
	h.NICs = append(h.NICs, nic)
	return nicDevice{nic}, nil
}

type nicDevice struct{ *NIC }

func (n nicDevice) Name() string { return n.Card.Name() }

var _ ethersim.Station = (*NIC)(nil)

func (n nicDevice) Read(off uint64, size int) uint64 {
	return n.Card.Read(off, size)
}
func (n nicDevice) Write(off uint64, size int, v uint64) { n.Card.Write(off, size, v) }
func (n nicDevice) ReadBlock(off uint64, width int, p []byte) {
	n.Card.ReadBlock(off, width, p)
}
func (n nicDevice) WriteBlock(off uint64, width int, p []byte) {
	n.Card.WriteBlock(off, width, p)
}

// Peek lets observers read the card's registers without side effects.
func (n nicDevice) Peek(off uint64) (uint64, bool) { return n.Card.Peek(off) }

var (
	_ memory.BlockDevice = nicDevice{}
	_ memory.Peeker      = nicDevice{}
)

// Counters reports the card's, the driver's and the port's figures.
func (n nicDevice) Counters() []report.Counter {
	c := n.Card.Stats()
	d := n.Driver.Stats()
	out := []report.Counter{
		{Name: "card.tx_frames", Value: c.TxFrames}, {Name: "card.rx_frames", Value: c.RxFrames},
		{Name: "card.crc_errors", Value: c.CRCErrors}, {Name: "card.missed", Value: c.Missed},
		{Name: "card.overflows", Value: c.Overflows}, {Name: "card.interrupts", Value: c.Interrupts},
		{Name: "driver.tx_frames", Value: d.TxFrames}, {Name: "driver.rx_frames", Value: d.RxFrames},
		{Name: "driver.tx_errors", Value: d.TxErrors}, {Name: "driver.rx_errors", Value: d.RxErrors},
		{Name: "driver.overruns", Value: d.Overruns}, {Name: "driver.loopback_frames", Value: d.LoopbackFrames},
	}
	if n.Port != nil {
		p := n.Port.Stats()
		out = append(out,
			report.Counter{Name: "wire.tx_frames", Value: p.TxFrames}, report.Counter{Name: "wire.rx_frames", Value: p.RxFrames},
			report.Counter{Name: "wire.collisions", Value: p.Collisions}, report.Counter{Name: "wire.deferrals", Value: p.Deferrals},
			report.Counter{Name: "wire.aborts", Value: p.Aborts}, report.Counter{Name: "wire.dropped", Value: p.Dropped},
			report.Counter{Name: "wire.corrupted", Value: p.Corrupted},
		)
	}
	return out
}
