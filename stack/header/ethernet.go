package header

import "encoding/binary"

// Ethernet II frame header (IEEE 802.3-2018 clause 3.1.1, with the
// Length/Type field holding an EtherType >= 0x0600 as in clause 3.2.6; the
// DIX "Ethernet II" framing of RFC 894). The preamble, SFD and FCS belong
// to the device and are not part of the view.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 Destination MAC address (6 bytes)             |
//	+                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                               |                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//	|                   Source MAC address (6 bytes)                |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           EtherType           |  payload ...
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
const (
	ethDst  = 0
	ethSrc  = 6
	ethType = 12
)

// Sizes of Ethernet frames, without the 4-byte FCS.
const (
	// EthernetHeaderLen is the length of the Ethernet II header.
	EthernetHeaderLen = 14
	// EthernetAddrLen is the length of a MAC address.
	EthernetAddrLen = 6
	// EthernetMinFrameLen is the shortest frame a sender may transmit
	// without the FCS: 64 bytes minFrameSize (IEEE 802.3 clause 4.4.2)
	// less 4 bytes FCS; shorter payloads are padded.
	EthernetMinFrameLen = 60
	// EthernetMaxPayload is the largest payload, the Ethernet MTU
	// (IEEE 802.3 clause 3.2.7; RFC 894).
	EthernetMaxPayload = 1500
	// EthernetMaxFrameLen is the longest untagged frame without the FCS.
	EthernetMaxFrameLen = EthernetHeaderLen + EthernetMaxPayload
)

// The frame check sequence, and what a frame adds to its payload.
const (
	// EthernetFCSLen is the length of the frame check sequence, a CRC-32
	// that ends every frame on the wire (IEEE 802.3 clause 3.2.9).
	EthernetFCSLen = 4
	// EthernetOverhead is what a frame adds to its payload: the header
	// and the FCS, 18 bytes. A payload of MTU bytes needs frames of
	// MTU + EthernetOverhead bytes, FCS included: 1518 for 1500.
	EthernetOverhead = EthernetHeaderLen + EthernetFCSLen
)

// EtherType values (IEEE Registration Authority; RFC 894 for IPv4, RFC 826
// for ARP).
const (
	EtherTypeIPv4 = 0x0800
	EtherTypeARP  = 0x0806
)

// EthernetBroadcast is the all-ones broadcast MAC address (IEEE 802.3
// clause 3.2.3). It is a value: read it, never assign to it.
var EthernetBroadcast = [EthernetAddrLen]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// Ethernet is a view of an Ethernet II frame starting at its destination
// address. Call IsValid before the getters.
type Ethernet []byte

// EthernetFields holds the fields of an Ethernet header for Encode.
type EthernetFields struct {
	Dst  [6]byte
	Src  [6]byte
	Type uint16
}

// IsValid reports whether b is long enough to hold an Ethernet header.
func (b Ethernet) IsValid() bool { return len(b) >= EthernetHeaderLen }

// Dst returns the destination MAC address.
func (b Ethernet) Dst() [6]byte { return [6]byte(b[ethDst:]) }

// Src returns the source MAC address.
func (b Ethernet) Src() [6]byte { return [6]byte(b[ethSrc:]) }

// Type returns the EtherType.
func (b Ethernet) Type() uint16 { return binary.BigEndian.Uint16(b[ethType:]) }

// SetDst sets the destination MAC address.
func (b Ethernet) SetDst(a [6]byte) { copy(b[ethDst:], a[:]) }

// SetSrc sets the source MAC address.
func (b Ethernet) SetSrc(a [6]byte) { copy(b[ethSrc:], a[:]) }

// SetType sets the EtherType.
func (b Ethernet) SetType(t uint16) { binary.BigEndian.PutUint16(b[ethType:], t) }

// Encode writes all header fields from f.
func (b Ethernet) Encode(f *EthernetFields) {
	b.SetDst(f.Dst)
	b.SetSrc(f.Src)
	b.SetType(f.Type)
}

// Payload returns the bytes after the header, including any padding the
// sender added to reach EthernetMinFrameLen: the frame does not say how
// much of it is padding; the payload's own length field does.
func (b Ethernet) Payload() []byte { return b[EthernetHeaderLen:] }

// IsBroadcastMAC reports whether a is the broadcast address.
func IsBroadcastMAC(a [6]byte) bool { return a == EthernetBroadcast }

// IsMulticastMAC reports whether a is a group address (broadcast
// included): the I/G bit, the least significant bit of the first octet
// (IEEE 802.3 clause 3.2.3).
func IsMulticastMAC(a [6]byte) bool { return a[0]&1 != 0 }
