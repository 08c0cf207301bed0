// Package ethersim is the network between simulated hosts: Ethernet
// segments that carry real frames (with their FCS) with serialisation and
// propagation delay, CSMA/CD on shared segments, a full-duplex switch,
// seeded faults, pcap taps with simulated timestamps, and bridges that
// join a segment to real hosts through a Linux TAP device (bridge.go).
// Like SimOS's EtherSim it also keeps a registry of the hosts on the
// network, with their MAC and IP addresses.
//
// It imports only sim (and gopacket's pcap writer for taps, x/sys/unix
// for TAP devices): a network card model attaches as a Station and sends
// through its Attachment; it never sees the hosts' software.
//
// Simplifications, each explained where it is modelled: a shared segment
// has one propagation delay between every pair of stations, the jam
// starts the moment a collision is heard and there are no late collisions
// (shared.go); the switch's forwarding table never ages and its queues are
// unbounded (switch.go); receive faults are independent per frame and per
// receiver (Attachment.receive).
package ethersim

import "simkron/sim"

// Station is the network side of a card model: the segment delivers every
// frame that reaches the station's port, whatever its destination address
// (address filtering is the card's job).
type Station interface {
	// Receive is called when the last bit of a frame has arrived. frame
	// holds destination, source, type/length, payload (padded to the
	// minimum) and the 4-byte FCS as sent; it is valid only during the
	// call. A frame damaged on the wire arrives with its bits flipped and
	// a wrong FCS, as it would.
	Receive(frame []byte)
}

// TxStatus is the outcome of one transmission.
type TxStatus struct {
	OK         bool // sent without collision on the last attempt
	Collisions int  // collisions suffered before success or abort
	Aborted    bool // 16 attempts collided (IEEE 802.3 attempt limit)
	Deferred   bool // the medium was busy when the transmission was asked for
}

// Constants of 10 Mbit/s Ethernet (IEEE 802.3 clause 4;
// docs/reference/ne2000.md sec. 13).
const (
	PreambleBytes = 8    // 7 preamble + start-of-frame delimiter
	MinFrame      = 64   // bytes, FCS included
	MaxFrame      = 1518 // bytes, FCS included, without VLAN tag
	FCSBytes      = 4
	IFGBits       = 96
	SlotBits      = 512
	JamBits       = 32
	AttemptLimit  = 16
	BackoffLimit  = 10 // exponent cap of truncated binary exponential backoff
)

// Now is how the network reads the clock; the event scheduler satisfies it.
var _ interface{ Now() sim.Time } = (*sim.Scheduler)(nil)
