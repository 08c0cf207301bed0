package header

import "encoding/binary"

// ICMP message for IPv4 (RFC 792). Every message starts with type, code
// and checksum; the next four bytes depend on the type. Echo and echo
// reply carry an identifier and a sequence number there, followed by
// arbitrary data; destination unreachable and time exceeded leave them
// unused (RFC 1191 puts the next-hop MTU in the low half for
// "fragmentation needed") and carry the offending datagram's IP header
// plus its first 64 bits of data.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     Type      |     Code      |          Checksum             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           Identifier          |        Sequence Number        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     Data ...
//	+-+-+-+-+-
//
// The checksum covers the whole ICMP message (no pseudo-header).
const (
	icmpType     = 0
	icmpCode     = 1
	icmpChecksum = 2
	icmpIdent    = 4
	icmpSeq      = 6
	icmpMTU      = 6
)

// ICMPv4MinimumSize is the length of the fixed part of every ICMP message
// RFC 792 defines here.
const ICMPv4MinimumSize = 8

// ICMP types (RFC 792).
const (
	ICMPv4EchoReply      = 0
	ICMPv4DstUnreachable = 3
	ICMPv4Echo           = 8
	ICMPv4TimeExceeded   = 11
)

// ICMP codes (RFC 792).
const (
	// Destination unreachable.
	ICMPv4NetUnreachable      = 0
	ICMPv4HostUnreachable     = 1
	ICMPv4ProtoUnreachable    = 2
	ICMPv4PortUnreachable     = 3
	ICMPv4FragmentationNeeded = 4 // and DF set
	// Time exceeded.
	ICMPv4TTLExceeded        = 0 // in transit
	ICMPv4ReassemblyExceeded = 1 // fragment reassembly time exceeded
)

// ICMPv4 is a view of an ICMP message starting at its type byte. Call
// IsValid before the getters.
type ICMPv4 []byte

// ICMPv4Fields holds the fixed fields of an ICMP message for Encode. For
// types without identifier and sequence (unreachable, time exceeded)
// leave them zero, or put the next-hop MTU in Sequence for "fragmentation
// needed" (RFC 1191).
type ICMPv4Fields struct {
	Type     uint8
	Code     uint8
	Checksum uint16 // written as given; see CalculateChecksum
	Ident    uint16
	Sequence uint16
}

// IsValid reports whether b holds the 8-byte fixed part.
func (b ICMPv4) IsValid() bool { return len(b) >= ICMPv4MinimumSize }

// Type returns the message type.
func (b ICMPv4) Type() uint8 { return b[icmpType] }

// Code returns the code.
func (b ICMPv4) Code() uint8 { return b[icmpCode] }

// Checksum returns the checksum field.
func (b ICMPv4) Checksum() uint16 { return binary.BigEndian.Uint16(b[icmpChecksum:]) }

// Ident returns the echo identifier.
func (b ICMPv4) Ident() uint16 { return binary.BigEndian.Uint16(b[icmpIdent:]) }

// Sequence returns the echo sequence number.
func (b ICMPv4) Sequence() uint16 { return binary.BigEndian.Uint16(b[icmpSeq:]) }

// MTU returns the next-hop MTU of a "fragmentation needed" message
// (RFC 1191 section 4); 0 from a router that predates RFC 1191.
func (b ICMPv4) MTU() uint16 { return binary.BigEndian.Uint16(b[icmpMTU:]) }

// Payload returns the bytes after the fixed part: echo data, or the
// offending datagram's header and first 8 data bytes.
func (b ICMPv4) Payload() []byte { return b[ICMPv4MinimumSize:] }

// SetType sets the message type.
func (b ICMPv4) SetType(t uint8) { b[icmpType] = t }

// SetCode sets the code.
func (b ICMPv4) SetCode(c uint8) { b[icmpCode] = c }

// SetChecksum sets the checksum field.
func (b ICMPv4) SetChecksum(v uint16) { binary.BigEndian.PutUint16(b[icmpChecksum:], v) }

// SetIdent sets the echo identifier.
func (b ICMPv4) SetIdent(v uint16) { binary.BigEndian.PutUint16(b[icmpIdent:], v) }

// SetSequence sets the echo sequence number.
func (b ICMPv4) SetSequence(v uint16) { binary.BigEndian.PutUint16(b[icmpSeq:], v) }

// SetMTU sets the next-hop MTU of a "fragmentation needed" message.
func (b ICMPv4) SetMTU(v uint16) { binary.BigEndian.PutUint16(b[icmpMTU:], v) }

// Encode writes the fixed part from f.
func (b ICMPv4) Encode(f *ICMPv4Fields) {
	b.SetType(f.Type)
	b.SetCode(f.Code)
	b.SetChecksum(f.Checksum)
	b.SetIdent(f.Ident)
	b.SetSequence(f.Sequence)
}

// CalculateChecksum returns the value the checksum field must hold for the
// message that fills the view: the complement of the sum of the whole
// message with the checksum field counted as zero (RFC 792). Use it as
// b.SetChecksum(b.CalculateChecksum()).
func (b ICMPv4) CalculateChecksum() uint16 {
	sum := Checksum(b[:icmpChecksum], 0)
	return ^Checksum(b[icmpChecksum+2:], sum)
}

// IsChecksumValid reports whether the message that fills the view sums,
// checksum included, to 0xFFFF.
func (b ICMPv4) IsChecksumValid() bool { return Checksum(b, 0) == 0xFFFF }
