package header

import (
	"encoding/binary"
	"fmt"
)

// IPv4 header (RFC 791 section 3.1, "Internet Header Format").
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|Version|  IHL  |Type of Service|          Total Length         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Identification        |Flags|      Fragment Offset    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Time to Live |    Protocol   |         Header Checksum       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Source Address                          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Destination Address                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Options                    |    Padding    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// IHL and Total Length count 32-bit words and bytes respectively; the
// fragment offset counts 8-byte units. Flags: bit 0 reserved, bit 1 DF,
// bit 2 MF.
const (
	ipVersIHL   = 0
	ipTOS       = 1
	ipTotalLen  = 2
	ipID        = 4
	ipFlagsFrag = 6
	ipTTL       = 8
	ipProtocol  = 9
	ipChecksum  = 10
	ipSrc       = 12
	ipDst       = 16
	ipOptions   = 20
)

// IPv4 sizes and limits (RFC 791 section 3.1).
const (
	// IPv4MinimumSize is the length of a header without options (IHL 5).
	IPv4MinimumSize = 20
	// IPv4MaximumHeaderSize is the longest header (IHL 15).
	IPv4MaximumHeaderSize = 60
	// IPv4MaximumOptionsSize is the room for options (IHL 15 less 5).
	IPv4MaximumOptionsSize = IPv4MaximumHeaderSize - IPv4MinimumSize
	// IPv4MaximumTotalLen is the largest datagram, header included.
	IPv4MaximumTotalLen = 65535
	// IPv4AddrLen is the length of an IPv4 address.
	IPv4AddrLen = 4
	// IPv4Version is the version field's value.
	IPv4Version = 4
	// IPv4FragmentUnit is the unit of the fragment offset field: every
	// fragment but the last carries a multiple of it (RFC 791 section 2.3,
	// "Fragmentation").
	IPv4FragmentUnit = 8
	// IPv4MaximumFragmentOffset is the largest fragment offset in bytes
	// (13 bits of 8-byte units).
	IPv4MaximumFragmentOffset = 0x1FFF * IPv4FragmentUnit
)

// IPv4 flag bits as they sit in the 16-bit flags/fragment-offset word
// (RFC 791 section 3.1, "Flags").
const (
	IPv4FlagReserved      = 0x8000 // must be zero
	IPv4FlagDontFragment  = 0x4000 // DF
	IPv4FlagMoreFragments = 0x2000 // MF
	ipv4FlagsMask         = 0xE000
	ipv4FragOffMask       = 0x1FFF
)

// IP protocol numbers (RFC 790 "Assigned Numbers", now the IANA Protocol
// Numbers registry).
const (
	IPv4ProtocolICMP = 1
	IPv4ProtocolTCP  = 6
	IPv4ProtocolUDP  = 17
)

// IPv4 is a view of an IPv4 datagram starting at its header. Call IsValid
// before the getters.
type IPv4 []byte

// IPv4Fields holds the fields of an IPv4 header for Encode. The header
// length comes from Options.
type IPv4Fields struct {
	TOS         uint8
	TotalLength uint16 // header and data, bytes
	ID          uint16
	// Flags holds IPv4FlagDontFragment and IPv4FlagMoreFragments (and
	// IPv4FlagReserved, to reproduce a received header) in place.
	Flags uint16
	// FragmentOffset is in bytes: a multiple of IPv4FragmentUnit, at most
	// IPv4MaximumFragmentOffset.
	FragmentOffset uint16
	TTL            uint8
	Protocol       uint8
	// Checksum is written as given; compute it afterwards with
	// CalculateChecksum.
	Checksum uint16
	Src      [4]byte
	Dst      [4]byte
	// Options are copied after the fixed header and padded with zero
	// bytes (End of Option List, RFC 791 section 3.1) to a multiple of 4;
	// at most IPv4MaximumOptionsSize bytes.
	Options []byte
}

// IsValid reports whether b starts with a well-formed IPv4 header for a
// datagram of which pktLen bytes were received: b holds the fixed header,
// version 4, IHL at least 5, b holds the whole header (options included),
// and the total length covers the header and is no more than pktLen. It
// does not verify the checksum (IsChecksumValid).
//
// pktLen is normally len(b). A view shorter than pktLen is allowed (the
// rest held elsewhere); Payload then returns only what b holds.
func (b IPv4) IsValid(pktLen int) bool {
	if len(b) < IPv4MinimumSize || b.Version() != IPv4Version {
		return false
	}
	hlen := b.HeaderLength()
	tlen := int(b.TotalLength())
	return hlen >= IPv4MinimumSize && hlen <= len(b) && tlen >= hlen && tlen <= pktLen
}

// Version returns the version field.
func (b IPv4) Version() int { return int(b[ipVersIHL] >> 4) }

// HeaderLength returns the header length in bytes, IHL × 4, options
// included.
func (b IPv4) HeaderLength() int { return int(b[ipVersIHL]&0x0F) * 4 }

// TOS returns the type-of-service byte.
func (b IPv4) TOS() uint8 { return b[ipTOS] }

// TotalLength returns the datagram's length in bytes, header included.
func (b IPv4) TotalLength() uint16 { return binary.BigEndian.Uint16(b[ipTotalLen:]) }

// ID returns the identification field.
func (b IPv4) ID() uint16 { return binary.BigEndian.Uint16(b[ipID:]) }

// Flags returns the three flag bits in place (IPv4FlagReserved,
// IPv4FlagDontFragment, IPv4FlagMoreFragments), the offset masked out.
func (b IPv4) Flags() uint16 { return binary.BigEndian.Uint16(b[ipFlagsFrag:]) & ipv4FlagsMask }

// More reports whether the MF (more fragments) flag is set.
func (b IPv4) More() bool { return b.Flags()&IPv4FlagMoreFragments != 0 }

// DontFragment reports whether the DF flag is set.
func (b IPv4) DontFragment() bool { return b.Flags()&IPv4FlagDontFragment != 0 }

// FragmentOffset returns the fragment's offset in the original datagram's
// data, in bytes (the field × 8).
func (b IPv4) FragmentOffset() uint16 {
	return (binary.BigEndian.Uint16(b[ipFlagsFrag:]) & ipv4FragOffMask) * IPv4FragmentUnit
}

// IsFragment reports whether the datagram is one fragment of a larger one:
// MF set or a non-zero offset.
func (b IPv4) IsFragment() bool {
	return binary.BigEndian.Uint16(b[ipFlagsFrag:])&(IPv4FlagMoreFragments|ipv4FragOffMask) != 0
}

// TTL returns the time to live.
func (b IPv4) TTL() uint8 { return b[ipTTL] }

// Protocol returns the protocol number of the payload.
func (b IPv4) Protocol() uint8 { return b[ipProtocol] }

// Checksum returns the header checksum field.
func (b IPv4) Checksum() uint16 { return binary.BigEndian.Uint16(b[ipChecksum:]) }

// Src returns the source address.
func (b IPv4) Src() [4]byte { return [4]byte(b[ipSrc:]) }

// Dst returns the destination address.
func (b IPv4) Dst() [4]byte { return [4]byte(b[ipDst:]) }

// Options returns the options area, padding included: the bytes between
// the fixed header and HeaderLength; empty for IHL 5.
func (b IPv4) Options() []byte { return b[ipOptions:b.HeaderLength()] }

// Payload returns the data after the header up to the total length, so
// that padding the link layer added (a short datagram in a 60-byte
// Ethernet frame) is left out. If the view is shorter than the total
// length it returns what the view holds.
func (b IPv4) Payload() []byte {
	end := min(int(b.TotalLength()), len(b))
	return b[b.HeaderLength():end]
}

// PayloadLength returns the length of the data according to the header:
// total length less header length.
func (b IPv4) PayloadLength() int { return int(b.TotalLength()) - b.HeaderLength() }

// CalculateChecksum returns the value the header checksum field must hold:
// the complement of the one's-complement sum of the header (options
// included) with the checksum field counted as zero (RFC 791 section 3.1,
// "Header Checksum"). Use it as b.SetChecksum(b.CalculateChecksum()).
func (b IPv4) CalculateChecksum() uint16 {
	hlen := b.HeaderLength()
	sum := Checksum(b[:ipChecksum], 0)
	sum = Checksum(b[ipChecksum+2:hlen], sum)
	return ^sum
}

// IsChecksumValid reports whether the header checksum is correct: the
// header summed with its checksum field is 0xFFFF (negative zero).
func (b IPv4) IsChecksumValid() bool {
	return Checksum(b[:b.HeaderLength()], 0) == 0xFFFF
}

// SetVersionIHL sets the version to 4 and the header length to hlen bytes,
// a multiple of 4 from IPv4MinimumSize to IPv4MaximumHeaderSize.
func (b IPv4) SetVersionIHL(hlen int) {
	if hlen%4 != 0 || hlen < IPv4MinimumSize || hlen > IPv4MaximumHeaderSize {
		panic(fmt.Sprintf("header: IPv4 header length %d not a multiple of 4 in [20, 60]", hlen))
	}
	b[ipVersIHL] = IPv4Version<<4 | uint8(hlen/4)
}

// SetTOS sets the type-of-service byte.
func (b IPv4) SetTOS(v uint8) { b[ipTOS] = v }

// SetTotalLength sets the total length in bytes.
func (b IPv4) SetTotalLength(v uint16) { binary.BigEndian.PutUint16(b[ipTotalLen:], v) }

// SetID sets the identification field.
func (b IPv4) SetID(v uint16) { binary.BigEndian.PutUint16(b[ipID:], v) }

// SetFlagsFragmentOffset sets the flag bits (in place, as Flags returns
// them) and the fragment offset in bytes, which must be a multiple of 8 no
// larger than IPv4MaximumFragmentOffset.
func (b IPv4) SetFlagsFragmentOffset(flags, offset uint16) {
	if offset%IPv4FragmentUnit != 0 || offset > IPv4MaximumFragmentOffset {
		panic(fmt.Sprintf("header: IPv4 fragment offset %d not a multiple of 8 up to %d", offset, IPv4MaximumFragmentOffset))
	}
	if flags&^ipv4FlagsMask != 0 {
		panic(fmt.Sprintf("header: IPv4 flags %#04x outside %#04x", flags, ipv4FlagsMask))
	}
	binary.BigEndian.PutUint16(b[ipFlagsFrag:], flags|offset/IPv4FragmentUnit)
}

// SetTTL sets the time to live.
func (b IPv4) SetTTL(v uint8) { b[ipTTL] = v }

// SetProtocol sets the protocol number.
func (b IPv4) SetProtocol(v uint8) { b[ipProtocol] = v }

// SetChecksum sets the header checksum field.
func (b IPv4) SetChecksum(v uint16) { binary.BigEndian.PutUint16(b[ipChecksum:], v) }

// SetSrc sets the source address.
func (b IPv4) SetSrc(a [4]byte) { copy(b[ipSrc:], a[:]) }

// SetDst sets the destination address.
func (b IPv4) SetDst(a [4]byte) { copy(b[ipDst:], a[:]) }

// Encode writes the whole header from f, options and padding included; b
// must be at least as long as the header. The checksum is written as
// f.Checksum; set it afterwards with b.SetChecksum(b.CalculateChecksum()).
func (b IPv4) Encode(f *IPv4Fields) {
	if len(f.Options) > IPv4MaximumOptionsSize {
		panic(fmt.Sprintf("header: %d bytes of IPv4 options, at most %d", len(f.Options), IPv4MaximumOptionsSize))
	}
	hlen := IPv4MinimumSize + (len(f.Options)+3)&^3
	b.SetVersionIHL(hlen)
	b.SetTOS(f.TOS)
	b.SetTotalLength(f.TotalLength)
	b.SetID(f.ID)
	b.SetFlagsFragmentOffset(f.Flags, f.FragmentOffset)
	b.SetTTL(f.TTL)
	b.SetProtocol(f.Protocol)
	b.SetChecksum(f.Checksum)
	b.SetSrc(f.Src)
	b.SetDst(f.Dst)
	n := copy(b[ipOptions:hlen], f.Options)
	clear(b[ipOptions+n : hlen])
}
