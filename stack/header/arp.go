package header

import "encoding/binary"

// ARP packet for IPv4 over Ethernet (RFC 826, "Packet format"). The view
// covers only this combination — hardware type Ethernet, protocol type
// IPv4, 6-byte and 4-byte addresses — which IsValid checks.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Hardware type (ar$hrd)      |   Protocol type (ar$pro)      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| HLen (ar$hln) | PLen (ar$pln) |       Opcode (ar$op)          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Sender hardware address (ar$sha)                 |
//	+                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                               | Sender protocol address (spa) |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//	|                               |                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//	|              Target hardware address (ar$tha)                 |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Target protocol address (ar$tpa)                 |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
const (
	arpHType = 0
	arpPType = 2
	arpHLen  = 4
	arpPLen  = 5
	arpOp    = 6
	arpSHA   = 8
	arpSPA   = 14
	arpTHA   = 18
	arpTPA   = 24
)

// ARP constants (RFC 826; hardware type 1 and operation codes from the
// IANA ARP parameters registry).
const (
	// ARPLen is the length of an IPv4-over-Ethernet ARP packet; in a frame
	// it is padded to EthernetMinFrameLen.
	ARPLen = 28
	// ARPHardwareEthernet is ar$hrd for Ethernet (10 Mb).
	ARPHardwareEthernet = 1
	// ARPProtocolIPv4 is ar$pro for IPv4: its EtherType.
	ARPProtocolIPv4 = EtherTypeIPv4
	// ARPRequest and ARPReply are the ar$op values.
	ARPRequest = 1
	ARPReply   = 2
)

// ARP is a view of an IPv4-over-Ethernet ARP packet, starting after the
// Ethernet header. Call IsValid before the getters.
type ARP []byte

// ARPFields holds the variable fields of an ARP packet for Encode; the
// hardware and protocol types and lengths are always Ethernet and IPv4.
type ARPFields struct {
	Op        uint16
	SenderMAC [6]byte
	SenderIP  [4]byte
	TargetMAC [6]byte
	TargetIP  [4]byte
}

// IsValid reports whether b holds a whole ARP packet for IPv4 over
// Ethernet: long enough, hardware type 1, protocol type 0x0800, address
// lengths 6 and 4. The opcode is not checked; callers handle the ones
// they know.
func (b ARP) IsValid() bool {
	return len(b) >= ARPLen &&
		b.HardwareType() == ARPHardwareEthernet &&
		b.ProtocolType() == ARPProtocolIPv4 &&
		b[arpHLen] == EthernetAddrLen &&
		b[arpPLen] == IPv4AddrLen
}

// HardwareType returns ar$hrd.
func (b ARP) HardwareType() uint16 { return binary.BigEndian.Uint16(b[arpHType:]) }

// ProtocolType returns ar$pro.
func (b ARP) ProtocolType() uint16 { return binary.BigEndian.Uint16(b[arpPType:]) }

// HardwareAddrLen returns ar$hln.
func (b ARP) HardwareAddrLen() uint8 { return b[arpHLen] }

// ProtocolAddrLen returns ar$pln.
func (b ARP) ProtocolAddrLen() uint8 { return b[arpPLen] }

// Op returns the opcode (ARPRequest, ARPReply).
func (b ARP) Op() uint16 { return binary.BigEndian.Uint16(b[arpOp:]) }

// SenderMAC returns ar$sha.
func (b ARP) SenderMAC() [6]byte { return [6]byte(b[arpSHA:]) }

// SenderIP returns ar$spa.
func (b ARP) SenderIP() [4]byte { return [4]byte(b[arpSPA:]) }

// TargetMAC returns ar$tha.
func (b ARP) TargetMAC() [6]byte { return [6]byte(b[arpTHA:]) }

// TargetIP returns ar$tpa.
func (b ARP) TargetIP() [4]byte { return [4]byte(b[arpTPA:]) }

// SetOp sets the opcode.
func (b ARP) SetOp(op uint16) { binary.BigEndian.PutUint16(b[arpOp:], op) }

// SetSenderMAC sets ar$sha.
func (b ARP) SetSenderMAC(a [6]byte) { copy(b[arpSHA:], a[:]) }

// SetSenderIP sets ar$spa.
func (b ARP) SetSenderIP(a [4]byte) { copy(b[arpSPA:], a[:]) }

// SetTargetMAC sets ar$tha.
func (b ARP) SetTargetMAC(a [6]byte) { copy(b[arpTHA:], a[:]) }

// SetTargetIP sets ar$tpa.
func (b ARP) SetTargetIP(a [4]byte) { copy(b[arpTPA:], a[:]) }

// Encode writes a whole ARP packet: the fixed Ethernet/IPv4 types and
// lengths, then the fields of f. b must hold ARPLen bytes.
func (b ARP) Encode(f *ARPFields) {
	binary.BigEndian.PutUint16(b[arpHType:], ARPHardwareEthernet)
	binary.BigEndian.PutUint16(b[arpPType:], ARPProtocolIPv4)
	b[arpHLen] = EthernetAddrLen
	b[arpPLen] = IPv4AddrLen
	b.SetOp(f.Op)
	b.SetSenderMAC(f.SenderMAC)
	b.SetSenderIP(f.SenderIP)
	b.SetTargetMAC(f.TargetMAC)
	b.SetTargetIP(f.TargetIP)
}
