package atm

import (
	"simkron/card"
	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim/atmnet"
	"simkron/machine/part"
	"simkron/memory"
	"simkron/sim"
	drvatm "simkron/stack/driver/atmtaxi"
	"simkron/stats"
	"simkron/trace"
)

// Card is a host's Yes V2 with its driver and the link end it is
// plugged into (nil: unplugged). It is one of the components workloads
// find by type; for the measuring programs over IP it is a card whose
// frames are RFC 2684 LLC/SNAP over AAL5 (card.LLCSNAP), seen as each
// PDU's first cell arrives (Received) and whole once its last has
// (Whole); a trace sees its PDUs whole on the line both ways
// (card.Segmenter).
type Card struct {
	Name   string // the [[device]] name
	Dev    *devatm.Device
	Driver *drvatm.Driver
	End    *atmnet.End
	Spec   *Spec
	k      *sim.Scheduler
	port   *atmnet.Port // the switch port on the far end, or nil
	// received fires the first cell of each PDU reaching the card; inPDU
	// says which VCs are inside a PDU, made when it is first listened to.
	received trace.Source[[]byte]
	inPDU    map[atmnet.VC]bool
	// whole and arrived fire each PDU once its last cell is in, rx
	// gathering the cells while either is listened to.
	whole   trace.Source[[]byte]
	arrived trace.Source[card.Carried]
	rx      pdus
	// sent fires each PDU once its last cell has gone on the line, tx
	// gathering the cells the board puts there while it is listened to
	// (offTx disconnects the gathering from the board's Line source).
	sent  trace.Source[card.Carried]
	tx    pdus
	offTx func()
}

var (
	_ atmnet.Receiver  = (*Card)(nil)
	_ card.Addressed   = (*Card)(nil)
	_ card.Interface   = (*Card)(nil)
	_ card.Plugged     = (*Card)(nil)
	_ card.Card        = (*Card)(nil)
	_ card.Reassembler = (*Card)(nil)
	_ card.Segmenter   = (*Card)(nil)
	_ card.Attached    = (*Card)(nil)
	_ card.FIFO        = (*Card)(nil)
	_ card.DMAMeter    = (*Card)(nil)
)

// Link implements card.Card: AAL5 PDUs carrying RFC 2684 routed LLC/SNAP,
// handed over at their first cell.
func (a *Card) Link() card.Link { return card.LLCSNAP }

// Received implements card.Card: it fires when the first cell of a PDU
// (on any VC) has arrived with a good header, with that cell's 48
// payload bytes, the PDU as far as it has come.
func (a *Card) Received() *trace.Source[[]byte] { return &a.received }

// Whole implements card.Reassembler: it fires when the last cell of a PDU
// (the one with the header indication flag) has arrived with a good
// header on a VC the driver frames with AAL5 (or has not open), with the
// AAL5 CPCS-SDU its VC's cells since the one before carried (padding and trailer removed by the trailer's length; a PDU
// whose length does not fit its cells, as after a lost cell, is not
// fired). It only looks: the card's CRC check and the driver's
// reassembly are the model's.
func (a *Card) Whole() *trace.Source[[]byte] { return &a.whole }

// ArrivedFrames implements card.Segmenter: what Whole fires, and the
// PDUs of the raw sockets' MSNL-like SAR (whole cells, no trailer: the
// driver says which VCs use it, and their first cells are marked), with
// their cells and the times a PDU's first cell began to arrive and its
// last cell ended to (a cell's arrival is its last bit's; its first came
// a cell time before).
func (a *Card) ArrivedFrames() *trace.Source[card.Carried] { return &a.arrived }

// SentFrames implements card.Segmenter: each PDU the board put on the
// line, fired as its last cell goes, with what its cells carried (as
// ArrivedFrames)
// and the times its first cell's first bit left and its last cell's last
// bit will have. Asking for the source starts the gathering of the
// board's cells (devices/atmtaxi Device.Line), which stops at the first
// cell sent once nobody listens: a card nobody asks costs its board
// nothing.
func (a *Card) SentFrames() *trace.Source[card.Carried] {
	if a.offTx == nil {
		a.offTx = a.Dev.Line.Connect(a.sentCell)
	}
	return &a.sent
}

// cellTime is a cell's time on the card's line, 0 when unplugged.
func (a *Card) cellTime() sim.Time {
	if a.End == nil {
		return 0
	}
	return a.End.Link().Params().CellTime()
}

// sentCell gathers a cell the board puts on the line for SentFrames.
func (a *Card) sentCell(c *atmnet.Cell) {
	if !a.sent.Listened() {
		a.offTx()
		a.offTx = nil
		a.tx.reset()
		return
	}
	now := a.k.Now()
	if f, cells, first, _, ok := a.tx.add(c, now, a.framing(c)); ok {
		a.sent.Fire(card.Carried{Frame: f, Parts: cells, First: first, Last: now + a.cellTime()})
	}
}

// framing is how the driver frames the PDUs of c's VC.
func (a *Card) framing(c *atmnet.Cell) drvatm.Framing {
	return a.Driver.Framing(drvatm.VC{VPI: c.VPI(), VCI: c.VCI()})
}

// arrivedCell gathers a cell for Whole's and ArrivedFrames' listeners.
func (a *Card) arrivedCell(c *atmnet.Cell) {
	now := a.k.Now()
	f, cells, first, aal5, ok := a.rx.add(c, max(now-a.cellTime(), 0), a.framing(c))
	if !ok {
		return
	}
	if aal5 {
		a.whole.Fire(f)
	}
	a.arrived.Fire(card.Carried{Frame: f, Parts: cells, First: first, Last: now})
}

// ReceiveCell implements atmnet.Receiver: the listeners look, then the
// board takes the cell.
func (a *Card) ReceiveCell(c *atmnet.Cell) {
	if a.received.Listened() && c.HECOK() {
		if a.inPDU == nil {
			a.inPDU = map[atmnet.VC]bool{}
		}
		vc := c.VC()
		if !a.inPDU[vc] {
			a.received.Fire(c[atmnet.HeaderSize:])
		}
		a.inPDU[vc] = !c.EndOfPDU()
	}
	switch {
	case a.whole.Listened() || a.arrived.Listened():
		if c.HECOK() {
			a.arrivedCell(c)
		}
	case a.rx.vcs != nil:
		a.rx.reset() // nobody listens now: what was gathered may never end
	}
	a.Dev.ReceiveCell(c)
}

// NetworkName implements card.Attached: the switch the card's link leads
// to, or the link's name when it leads to none (a loop-back cable), ""
// when the card is unplugged.
func (a *Card) NetworkName() string {
	switch {
	case a.End == nil:
		return ""
	case a.port != nil:
		return a.port.Switch().Name()
	}
	return a.End.Link().Name()
}

// DeviceName is the card's [[device]] name.
func (a *Card) DeviceName() string { return a.Name }

// IPv4 implements card.Addressed: the address the experiment gives the
// card's IP interface.
func (a *Card) IPv4() (addr, mask [4]byte, ok bool) {
	if a.Spec == nil {
		return addr, mask, false
	}
	return a.Spec.IPv4()
}

// Queue implements card.Interface: the device queue of the card's IP
// interface in the kernel's device layer, -1 when the driver has none.
func (a *Card) Queue() int {
	if f := a.Driver.Interface(); f != nil {
		return f.Queue()
	}
	return -1
}

// Plugged reports whether the card is on a link.
func (a *Card) Plugged() bool { return a.End != nil }

// DMABusy returns the board's summed DMA busy time in each direction:
// memory to interface (transmit) and interface to memory (receive).
func (a *Card) DMABusy() (read, write sim.Time) {
	s := a.Dev.Stats()
	return s.DMAReadBusy, s.DMAWriteBusy
}

// FIFO implements card.FIFO: the cells crossing between the host and the
// board's FIFOs (devices/atmtaxi Device.FIFO).
func (a *Card) FIFO() *trace.Source[card.FIFOCell] { return &a.Dev.FIFO }

// LinePayloadCeiling is the 48-byte payload rate of the card's line in
// bit/s, 0 when unplugged.
func (a *Card) LinePayloadCeiling() float64 {
	if a.End == nil {
		return 0
	}
	return a.End.Link().Params().PayloadCeiling()
}

// device is the card's register window as the device registry sees
// it: the board's registers, named as the board is.
type device struct{ *Card }

var (
	_ part.Device        = device{}
	_ memory.BlockDevice = device{}
	_ memory.Peeker      = device{}
)

func (a device) Name() string                         { return a.Dev.Name() }
func (a device) Read(off uint64, size int) uint64     { return a.Dev.Read(off, size) }
func (a device) Write(off uint64, size int, v uint64) { a.Dev.Write(off, size, v) }
func (a device) ReadBlock(off uint64, width int, p []byte) {
	a.Dev.ReadBlock(off, width, p)
}
func (a device) WriteBlock(off uint64, width int, p []byte) {
	a.Dev.WriteBlock(off, width, p)
}
func (a device) Peek(off uint64) (uint64, bool) { return a.Dev.Peek(off) }

// Counters reports the board's, the driver's, the IP interface's and the
// line's counters, and the far switch port's when there is one.
func (a *Card) Counters() []stats.Group {
	out := []stats.Group{{Name: "card", Value: a.Dev.Stats()}, {Name: "driver", Value: a.Driver.Stats()}}
	if f := a.Driver.Interface(); f != nil {
		out = append(out, stats.Group{Name: "ip", Value: f.Stats()})
	}
	if a.End != nil {
		out = append(out, stats.Group{Name: "line", Value: a.End.Stats()})
	}
	if a.port != nil {
		out = append(out, stats.Group{Name: "switch_port", Value: a.port.Stats()})
	}
	return out
}
