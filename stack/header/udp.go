package header

import "encoding/binary"

// UDP header (RFC 768, "Format").
//
//	 0      7 8     15 16    23 24    31
//	+--------+--------+--------+--------+
//	|     Source      |   Destination   |
//	|      Port       |      Port       |
//	+--------+--------+--------+--------+
//	|                 |                 |
//	|     Length      |    Checksum     |
//	+--------+--------+--------+--------+
//	|          data octets ...
//	+---------------- ...
//
// Length counts header and data in bytes. The checksum covers the IPv4
// pseudo-header (PseudoHeaderChecksum), the header and the data; 0 means
// the sender computed none (see UDPWireChecksum).
const (
	udpSrcPort  = 0
	udpDstPort  = 2
	udpLength   = 4
	udpChecksum = 6
)

const (
	// UDPMinimumSize is the length of the UDP header.
	UDPMinimumSize = 8
	// UDPMaximumPayloadIPv4 is the largest UDP payload over IPv4 without
	// options: 65535 − 20 − 8.
	UDPMaximumPayloadIPv4 = IPv4MaximumTotalLen - IPv4MinimumSize - UDPMinimumSize
)

// UDP is a view of a UDP datagram starting at its header. Call IsValid
// before the getters.
type UDP []byte

// UDPFields holds the fields of a UDP header for Encode.
type UDPFields struct {
	SrcPort  uint16
	DstPort  uint16
	Length   uint16 // header and data, bytes
	Checksum uint16 // written as given; see CalculateChecksum
}

// IsValid reports whether b starts with a well-formed UDP header for a
// datagram of which pktLen bytes arrived (normally the IP payload length,
// len(b)): b holds the header, and the length field covers the header and
// is no more than pktLen.
func (b UDP) IsValid(pktLen int) bool {
	if len(b) < UDPMinimumSize {
		return false
	}
	n := int(b.Length())
	return n >= UDPMinimumSize && n <= pktLen
}

// SrcPort returns the source port.
func (b UDP) SrcPort() uint16 { return binary.BigEndian.Uint16(b[udpSrcPort:]) }

// DstPort returns the destination port.
func (b UDP) DstPort() uint16 { return binary.BigEndian.Uint16(b[udpDstPort:]) }

// Length returns the length field: header and data in bytes.
func (b UDP) Length() uint16 { return binary.BigEndian.Uint16(b[udpLength:]) }

// Checksum returns the checksum field; 0 means none was computed.
func (b UDP) Checksum() uint16 { return binary.BigEndian.Uint16(b[udpChecksum:]) }

// Payload returns the data up to the length field (anything after it in
// the view is ignored), or what the view holds if it is shorter.
func (b UDP) Payload() []byte {
	end := min(int(b.Length()), len(b))
	return b[UDPMinimumSize:end]
}

// SetSrcPort sets the source port.
func (b UDP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(b[udpSrcPort:], p) }

// SetDstPort sets the destination port.
func (b UDP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(b[udpDstPort:], p) }

// SetLength sets the length field.
func (b UDP) SetLength(n uint16) { binary.BigEndian.PutUint16(b[udpLength:], n) }

// SetChecksum sets the checksum field.
func (b UDP) SetChecksum(v uint16) { binary.BigEndian.PutUint16(b[udpChecksum:], v) }

// Encode writes the header from f.
func (b UDP) Encode(f *UDPFields) {
	b.SetSrcPort(f.SrcPort)
	b.SetDstPort(f.DstPort)
	b.SetLength(f.Length)
	b.SetChecksum(f.Checksum)
}

// HeaderSum returns the one's-complement sum of the header with the
// checksum field counted as zero, added to partial. It serves callers that
// sum the pseudo-header and the data separately (the data in another
// buffer, or summed while being copied); the field value is then
// UDPWireChecksum(HeaderSum(ChecksumCombine(pseudo, data))).
func (b UDP) HeaderSum(partial uint16) uint16 {
	return Checksum(b[:udpChecksum], partial)
}

// CalculateChecksum returns the value the checksum field must hold for a
// datagram whose header and data are all in the view (up to the length
// field), sent from src to dst: the complement of the sum of pseudo-header,
// header (checksum counted as zero) and data, with a computed 0 sent as
// 0xFFFF (RFC 768). Use it as b.SetChecksum(b.CalculateChecksum(src, dst)).
func (b UDP) CalculateChecksum(src, dst [4]byte) uint16 {
	n := b.Length()
	sum := PseudoHeaderChecksum(IPv4ProtocolUDP, src, dst, n)
	sum = b.HeaderSum(sum)
	sum = Checksum(b[UDPMinimumSize:min(int(n), len(b))], sum)
	return UDPWireChecksum(sum)
}

// IsChecksumValid reports whether the datagram from src to dst, wholly in
// the view, passes its checksum: pseudo-header, header and data sum to
// 0xFFFF. A checksum field of 0 means the sender computed none (RFC 768)
// and is accepted; callers that insist on one test Checksum() != 0.
func (b UDP) IsChecksumValid(src, dst [4]byte) bool {
	if b.Checksum() == 0 {
		return true
	}
	n := b.Length()
	sum := PseudoHeaderChecksum(IPv4ProtocolUDP, src, dst, n)
	return Checksum(b[:min(int(n), len(b))], sum) == 0xFFFF
}
