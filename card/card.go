// Package card names what a host's network cards can do, as interfaces a
// workload, an annotation or a protocol family finds a card by
// (workload.FindAll[card.Card]), and the link types their frames come
// in. A network technology's card (machine/parts/ethernet's NIC,
// machine/parts/atm's ATMCard) implements the ones it offers; a user
// asks for a capability by its interface and never by an anonymous
// interface assertion, so that a capability has one name and one
// contract, stated here.
//
// The package imports only sim and trace: workloads, the assembler's
// parts and the devices (for the events they fire) may all use it.
package card

import (
	"simkron/sim"
	"simkron/trace"
)

// Link is how a card frames what it carries: what a frame seen by its
// Received source holds.
type Link string

const (
	// Ethernet: Ethernet II frames (IPv4 under EtherType 0x0800), or
	// 802.3 frames with an 802.2 LLC header, whole, FCS included,
	// handed over when their last bit has arrived.
	Ethernet Link = "ethernet"
	// LLCSNAP: AAL5 PDUs carrying RFC 2684 routed LLC/SNAP
	// encapsulation, handed over when their first cell arrives: the
	// frame may end after the first cell's 48 bytes (Whole sees it
	// whole).
	LLCSNAP Link = "llc-snap"
)

// Card is a network card of a host: every technology's card is one.
type Card interface {
	// DeviceName is the card's [[device]] name in its machine file
	// ("nic0").
	DeviceName() string
	// Link says how the card frames what it carries.
	Link() Link
	// Received fires what reaches the card from the network, before the
	// card takes it: a whole frame (Ethernet), or the first cell's
	// payload of each PDU (LLCSNAP). A listener only looks.
	Received() *trace.Source[[]byte]
}

// Sender is a card whose frames to the network can be watched.
type Sender interface {
	// Sent fires every frame the card hands to the network (FCS
	// included). A listener only looks.
	Sent() *trace.Source[[]byte]
}

// Reassembler is a card whose Received sees only the first part of a
// frame (an AAL5 PDU's first cell); Whole sees each frame once all of it
// has arrived.
type Reassembler interface {
	// Whole fires each frame once its last part has arrived: an AAL5
	// CPCS-SDU, padding and trailer removed (a PDU whose length does not
	// fit its cells, as after a lost cell, is not fired).
	Whole() *trace.Source[[]byte]
}

// Carried is a frame a card carried on its line in parts (an AAL5 PDU in
// cells), seen once its last part has crossed.
type Carried struct {
	// Frame is the frame whole, as its parts carried it: an AAL5
	// CPCS-SDU, padding and trailer removed, or the payloads of a PDU's
	// cells where the PDU has no trailer. It is valid only during the
	// call.
	Frame []byte
	// Parts is how many parts (cells) carried it.
	Parts int
	// First is when the first part's first bit crossed the line, Last
	// when the last part's last bit did.
	First, Last sim.Time
}

// Segmenter is a card that carries frames in parts on its line (AAL5
// PDUs in cells), whose frames can be watched whole at the line: what
// Sender and Received are to a card that carries frames whole.
type Segmenter interface {
	// SentFrames fires each frame the card put on its line, when its last
	// part went (its Last is when that part's last bit will have left).
	// A listener only looks.
	SentFrames() *trace.Source[Carried]
	// ArrivedFrames fires each frame that arrived whole from the line,
	// when its last part did; a frame whose parts do not make one whole
	// (a PDU whose length does not fit its cells, as after a lost cell)
	// is not fired. A listener only looks.
	ArrivedFrames() *trace.Source[Carried]
}

// BusMaster is a card that can move data between host memory and itself
// with a DMA engine of its own.
type BusMaster interface {
	// DMA fires true when the card's DMA engine starts moving data and
	// false when it stops; nil for a card without a DMA engine
	// (programmed I/O).
	DMA() *trace.Source[bool]
}

// Interface is a card the kernel's device layer (stack/netdev) drives.
type Interface interface {
	// Queue is the card's device queue in the kernel's device layer, or
	// -1 when the kernel does not drive it (a TOP host's packet driver;
	// an ATM card without an IP interface).
	Queue() int
}

// Addressed is a card an experiment gives an IPv4 address.
type Addressed interface {
	// IPv4 returns the card's address and netmask, and false when the
	// experiment gives it none.
	IPv4() (addr, mask [4]byte, ok bool)
}

// Station is a card with a station (MAC) address.
type Station interface {
	// StationAddress is the card's MAC address: the experiment's, or its
	// PROM's default.
	StationAddress() [6]byte
}

// Plugged is a card that may be plugged into the network or left out.
type Plugged interface {
	// Plugged reports whether the card is plugged into the network.
	Plugged() bool
}

// Attached is a card plugged into a network that has a name: an
// Ethernet segment, or an ATM switch.
type Attached interface {
	// NetworkName names what the card is plugged into ("lan0", "sw0"),
	// "" when it is unplugged. Cards of one link type with one network
	// name are on one network.
	NetworkName() string
}

// Networked is a card that describes what it is plugged into, for
// reports: "lan0: 1Gbps switch, 1us switch latency, 100ns propagation";
// "" when unplugged.
type Networked interface {
	Network() string
}

// Wire is a card on a wire of a known signalling rate.
type Wire interface {
	// WireRate is the wire's signalling rate, 0 when unplugged.
	WireRate() sim.BitRate
}

// TxTimer is a card whose driver times its transmissions.
type TxTimer interface {
	// TxTime returns the driver's accumulated transmit time (loading the
	// card to its transmit-done interrupt) and how many transmissions it
	// covers; zeros for a driver that does not time them.
	TxTime() (sim.Time, uint64)
}

// Loopback is a card whose driver can loop frames back to itself.
type Loopback interface {
	// SetLoopback makes the driver loop frames back: no card, no wire;
	// it does nothing where the driver cannot.
	SetLoopback(on bool)
}

// DMAMeter is a card that sums its DMA engine's busy time.
type DMAMeter interface {
	// DMABusy returns the summed DMA busy time in each direction: memory
	// to card (transmit) and card to memory (receive).
	DMABusy() (read, write sim.Time)
}

// FIFOCell is a cell crossing between host and a cell interface's FIFOs.
type FIFOCell struct {
	Tx  bool   // the transmit FIFO (else the receive FIFO)
	VCI uint16 // the cell's VCI
	// Begin and End are when its first word and its last crossed.
	Begin, End sim.Time
}

// FIFO is a cell interface whose FIFO traffic can be watched.
type FIFO interface {
	// FIFO fires every cell that crosses between the host and the
	// card's FIFOs, once its last word has. A listener only looks.
	FIFO() *trace.Source[FIFOCell]
}
