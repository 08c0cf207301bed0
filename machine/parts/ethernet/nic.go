package ethernet

import (
	"fmt"

	"simkron/card"
	"simkron/ethersim"
	"simkron/machine/part"
	"simkron/memory"
	"simkron/sim"
	"simkron/stats"
	"simkron/trace"
)

// NIC is a network card of a host on an Ethernet segment, with the
// driver the host's environment drives it with and the segment it is
// plugged into (nil when the experiment leaves it unplugged). A card
// model builds one with plug. It is a component of its host that
// workloads find by the interfaces of package card.
type NIC struct {
	Name   string // the [[device]] name
	Card   Card
	Driver NetDriver
	Port   *ethersim.Attachment
	Spec   *NICSpec
	// prom is the station address the card has when the experiment
	// gives none.
	prom [6]byte
	// counters returns the card's stats.
	counters func() []stats.Group
	// received and sent are the card's trace sources (Received, Sent);
	// dma the card's DMA engine's, when it is a bus master.
	received, sent trace.Source[[]byte]
	dma            *trace.Source[bool]
}

var (
	_ card.Card        = (*NIC)(nil)
	_ card.Sender      = (*NIC)(nil)
	_ card.BusMaster   = (*NIC)(nil)
	_ card.Addressed   = (*NIC)(nil)
	_ card.Station     = (*NIC)(nil)
	_ card.Interface   = (*NIC)(nil)
	_ card.Plugged     = (*NIC)(nil)
	_ card.Networked   = (*NIC)(nil)
	_ card.Attached    = (*NIC)(nil)
	_ card.Wire        = (*NIC)(nil)
	_ card.TxTimer     = (*NIC)(nil)
	_ card.Loopback    = (*NIC)(nil)
	_ ethersim.Station = (*NIC)(nil)
)

// Card is a network card model on an Ethernet segment: its registers,
// and its side of the wire.
type Card interface {
	memory.Device
	// Receive takes a frame whose last bit has arrived (ethersim.Station).
	Receive(frame []byte)
	// TxDone says the frame the card gave the wire has gone.
	TxDone(st ethersim.TxStatus)
}

// NetDriver is the driver of a network card, as the host's environment
// made it (part.NewDriver): the kernel's, or a TOP station's packet
// driver. It may also offer card.TxTimer, card.Loopback and part.Counted.
type NetDriver interface {
	// Queue is the driver's device queue in the kernel's device layer, or
	// -1 when the kernel does not drive the card.
	Queue() int
}

// NICs returns host h's Ethernet cards, in machine order.
func NICs(h *part.Host) []*NIC {
	var out []*NIC
	for _, c := range h.Cards(Name) {
		if n, ok := c.(*NIC); ok {
			out = append(out, n)
		}
	}
	return out
}

// binding returns the experiment's [[host.nic]] of host h's device, or
// nil.
func binding(h *part.Host, device string) *NICSpec {
	b := BindingsOf(h.HostSpec)
	for i := range b.NICs {
		if b.NICs[i].Device == device {
			return &b.NICs[i]
		}
	}
	return nil
}

// plug makes the NIC of card, the [[device]] d of host h: it plugs the
// card into the segment the experiment binds it to (when it does),
// registers the host's addresses with the network, makes the driver the
// host's environment drives d with (part.NewDriver, given the card's
// interface name, "eth0", and its station address mac) and adds the NIC
// to the host's cards. wire gives the card its side of the attachment;
// prom is the card's own station address; counters its figures.
func plug(h *part.Host, d *part.DeviceSpec, c Card, prom, mac [6]byte, wire func(*NIC), counters func() []stats.Group) (*NIC, error) {
	bind := binding(h, d.Name)
	nic := &NIC{Name: d.Name, Card: c, Spec: bind, prom: prom, counters: counters}
	if bind != nil {
		net := NetworkOf(h)
		var seg *ethersim.Segment
		ok := false
		if net != nil {
			seg, ok = net.Segment(bind.Segment)
		}
		if !ok {
			return nil, fmt.Errorf("segment %q is not defined in a [[segment]]", bind.Segment)
		}
		port, err := seg.Attach(h.Name+"."+d.Name, nic, bind.Faults)
		if err != nil {
			return nil, err
		}
		port.OnTxDone = c.TxDone
		nic.Port = port
		wire(nic)
		if err := net.RegisterHost(h.Name, bind.MAC, bind.IP); err != nil {
			return nil, err
		}
	}
	drv, err := part.NewDriver(h, d, part.DriverArgs{Ifname: fmt.Sprintf("eth%d", len(NICs(h))), MAC: mac, Params: d.Driver})
	if err != nil {
		return nil, err
	}
	nd, ok := drv.(NetDriver)
	if !ok {
		return nil, fmt.Errorf("the %s environment's driver of a %s is no network driver (%T)", h.EnvName, d.Type, drv)
	}
	nic.Driver = nd
	h.AddCard(Name, nic)
	return nic, nil
}

// Transmit is the card's wire: Sent fires, then the port sends.
func (n *NIC) Transmit(frame []byte) error {
	if n.sent.Listened() {
		n.sent.Fire(frame)
	}
	return n.Port.Transmit(frame)
}

// Receive implements ethersim.Station for the card: Received fires, then
// the card takes the frame.
func (n *NIC) Receive(frame []byte) {
	if n.received.Listened() {
		n.received.Fire(frame)
	}
	n.Card.Receive(frame)
}

// Link implements card.Card: Ethernet frames.
func (n *NIC) Link() card.Link { return card.Ethernet }

// Received implements card.Card: every frame that reaches the card, when
// its last bit arrives, before the card takes it.
func (n *NIC) Received() *trace.Source[[]byte] { return &n.received }

// Sent implements card.Sender: every frame the card hands to the wire
// (FCS included).
func (n *NIC) Sent() *trace.Source[[]byte] { return &n.sent }

// DMA implements card.BusMaster: the card's DMA engine (true when it
// starts moving data between host memory and the card, false when it
// stops), or nil when the card has none.
func (n *NIC) DMA() *trace.Source[bool] { return n.dma }

// Network describes the segment the card is plugged into, for reports:
// "lan0: 1Gbps switch, 1us switch latency, 100ns propagation"; "" when
// unplugged.
func (n *NIC) Network() string {
	if n.Port == nil {
		return ""
	}
	seg := n.Port.Segment()
	p := seg.Params()
	if p.Mode == ethersim.ModeSwitch {
		return fmt.Sprintf("%s: %v switch, %v switch latency, %v propagation", seg.Name(), p.Rate, p.SwitchLatency, p.Propagation)
	}
	return fmt.Sprintf("%s: %v %s segment, %v propagation", seg.Name(), p.Rate, p.Mode, p.Propagation)
}

// NetworkName implements card.Attached: the segment's name, "" when the
// card is unplugged.
func (n *NIC) NetworkName() string {
	if n.Port == nil {
		return ""
	}
	return n.Port.Segment().Name()
}

// DeviceName is the card's [[device]] name.
func (n *NIC) DeviceName() string { return n.Name }

// Plugged reports whether the card is plugged into a segment.
func (n *NIC) Plugged() bool { return n.Port != nil }

// IPv4 implements card.Addressed: the address the experiment gives the
// card.
func (n *NIC) IPv4() (addr, mask [4]byte, ok bool) {
	if n.Spec == nil {
		return addr, mask, false
	}
	return n.Spec.IPv4()
}

// StationAddress is the card's MAC address: the experiment's, or its
// PROM's default.
func (n *NIC) StationAddress() [6]byte {
	if n.Spec != nil {
		return n.Spec.MAC
	}
	return n.prom
}

// Queue is the driver's device queue in the kernel's device layer.
func (n *NIC) Queue() int { return n.Driver.Queue() }

// TxTime reads the driver's accumulated transmit time and count (zero
// for a driver that does not time its transmissions).
func (n *NIC) TxTime() (sim.Time, uint64) {
	if d, ok := n.Driver.(card.TxTimer); ok {
		return d.TxTime()
	}
	return 0, 0
}

// SetLoopback makes the driver loop frames back to itself, where the
// driver can.
func (n *NIC) SetLoopback(on bool) {
	if d, ok := n.Driver.(card.Loopback); ok {
		d.SetLoopback(on)
	}
}

// WireRate is the segment's signalling rate, 0 when unplugged.
func (n *NIC) WireRate() sim.BitRate {
	if n.Port == nil {
		return 0
	}
	return n.Port.Segment().Params().Rate
}

// nicDevice is a card's register window as the device registry sees it.
type nicDevice struct{ *NIC }

func (n nicDevice) Name() string                         { return n.Card.Name() }
func (n nicDevice) Read(off uint64, size int) uint64     { return n.Card.Read(off, size) }
func (n nicDevice) Write(off uint64, size int, v uint64) { n.Card.Write(off, size, v) }

// nicBlockDevice is the register window of a card with a data port:
// string I/O passes on to it.
type nicBlockDevice struct{ nicDevice }

func (n nicBlockDevice) ReadBlock(off uint64, width int, p []byte) {
	n.Card.(memory.BlockDevice).ReadBlock(off, width, p)
}
func (n nicBlockDevice) WriteBlock(off uint64, width int, p []byte) {
	n.Card.(memory.BlockDevice).WriteBlock(off, width, p)
}

// device returns n's register window for the device registry.
func (n *NIC) device() part.Device {
	if _, ok := n.Card.(memory.BlockDevice); ok {
		return nicBlockDevice{nicDevice{n}}
	}
	return nicDevice{n}
}

// Peek lets observers read the card's registers without side effects.
func (n nicDevice) Peek(off uint64) (uint64, bool) {
	if p, ok := n.Card.(memory.Peeker); ok {
		return p.Peek(off)
	}
	return 0, false
}

var (
	_ memory.BlockDevice = nicBlockDevice{}
	_ memory.Peeker      = nicDevice{}
)

// Counters reports the card's, the driver's and the port's counters
// (card, driver or pktdrv, wire).
func (n nicDevice) Counters() []stats.Group {
	out := n.counters()
	if d, ok := n.Driver.(part.Counted); ok {
		out = append(out, d.Counters()...)
	}
	if n.Port != nil {
		out = append(out, stats.Group{Name: "wire", Value: n.Port.Stats()})
	}
	return out
}

// wireSummary are the wire's counters the summary shows.
var wireSummary = []string{"wire.tx_frames", "wire.rx_frames", "wire.collisions", "wire.deferrals", "wire.aborts", "wire.dropped", "wire.corrupted"}
