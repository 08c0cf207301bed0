package header

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// TCP header (RFC 793 section 3.1, "Header Format"; the two flags before
// URG are ECE and CWR from RFC 3168 section 23.2, the bit before them NS
// from RFC 3540, here simply reserved).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          Source Port          |       Destination Port        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Sequence Number                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Acknowledgment Number                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Data |       |C|E|U|A|P|R|S|F|                               |
//	| Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
//	|       |       |R|E|G|K|H|T|N|N|                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           Checksum            |         Urgent Pointer        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Options                    |    Padding    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             data                              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Data Offset counts 32-bit words. The checksum covers the IPv4
// pseudo-header (PseudoHeaderChecksum), header and data, and is mandatory.
// TCP has no length field: the segment is the IP payload.
const (
	tcpSrcPort  = 0
	tcpDstPort  = 2
	tcpSeqNum   = 4
	tcpAckNum   = 8
	tcpDataOff  = 12
	tcpFlags    = 13
	tcpWindow   = 14
	tcpChecksum = 16
	tcpUrgent   = 18
	tcpOptions  = 20
)

// TCP sizes.
const (
	// TCPMinimumSize is the length of a header without options.
	TCPMinimumSize = 20
	// TCPMaximumHeaderSize is the longest header (data offset 15).
	TCPMaximumHeaderSize = 60
	// TCPMaximumOptionsSize is the room for options.
	TCPMaximumOptionsSize = TCPMaximumHeaderSize - TCPMinimumSize
	// TCPDefaultMSS is the MSS a sender assumes when the peer's SYN has no
	// MSS option (RFC 879; RFC 1122 section 4.2.2.6).
	TCPDefaultMSS = 536
)

// TCP option kinds and lengths (RFC 793 section 3.1, "Options").
const (
	TCPOptionEOL    = 0 // end of option list, one byte
	TCPOptionNOP    = 1 // no operation, one byte
	TCPOptionMSS    = 2 // maximum segment size, in a SYN only
	TCPOptionMSSLen = 4
)

// TCPFlags is the flags byte of a TCP header (byte 13).
type TCPFlags uint8

// TCP flag bits (RFC 793 section 3.1 "Control Bits"; ECE and CWR RFC
// 3168 section 23.2).
const (
	TCPFlagFIN TCPFlags = 1 << iota
	TCPFlagSYN
	TCPFlagRST
	TCPFlagPSH
	TCPFlagACK
	TCPFlagURG
	TCPFlagECE
	TCPFlagCWR
)

var tcpFlagNames = [8]string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}

// Contains reports whether all the flags in want are set in f.
func (f TCPFlags) Contains(want TCPFlags) bool { return f&want == want }

// String returns the set flags joined by "|", e.g. "SYN|ACK", or "0".
func (f TCPFlags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for i, name := range tcpFlagNames {
		if f&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "|")
}

// TCP is a view of a TCP segment starting at its header. Call IsValid
// before the getters.
type TCP []byte

// TCPFields holds the fields of a TCP header for Encode. The header
// length comes from Options.
type TCPFields struct {
	SrcPort  uint16
	DstPort  uint16
	SeqNum   uint32
	AckNum   uint32
	Flags    TCPFlags
	Window   uint16
	Checksum uint16 // written as given; see CalculateChecksum
	Urgent   uint16
	// Options are copied after the fixed header and padded with zero
	// bytes (EOL) to a multiple of 4; at most TCPMaximumOptionsSize bytes.
	Options []byte
}

// IsValid reports whether b starts with a well-formed TCP header: b holds
// the fixed header, the data offset is at least 5 words, and b holds the
// whole header with its options. The view is the whole segment.
func (b TCP) IsValid() bool {
	if len(b) < TCPMinimumSize {
		return false
	}
	n := b.DataOffset()
	return n >= TCPMinimumSize && n <= len(b)
}

// SrcPort returns the source port.
func (b TCP) SrcPort() uint16 { return binary.BigEndian.Uint16(b[tcpSrcPort:]) }

// DstPort returns the destination port.
func (b TCP) DstPort() uint16 { return binary.BigEndian.Uint16(b[tcpDstPort:]) }

// SeqNum returns the sequence number.
func (b TCP) SeqNum() uint32 { return binary.BigEndian.Uint32(b[tcpSeqNum:]) }

// AckNum returns the acknowledgment number.
func (b TCP) AckNum() uint32 { return binary.BigEndian.Uint32(b[tcpAckNum:]) }

// DataOffset returns the header length in bytes (the field × 4), options
// included.
func (b TCP) DataOffset() int { return int(b[tcpDataOff]>>4) * 4 }

// Flags returns the flags byte.
func (b TCP) Flags() TCPFlags { return TCPFlags(b[tcpFlags]) }

// Window returns the window field (unscaled).
func (b TCP) Window() uint16 { return binary.BigEndian.Uint16(b[tcpWindow:]) }

// Checksum returns the checksum field.
func (b TCP) Checksum() uint16 { return binary.BigEndian.Uint16(b[tcpChecksum:]) }

// Urgent returns the urgent pointer.
func (b TCP) Urgent() uint16 { return binary.BigEndian.Uint16(b[tcpUrgent:]) }

// Options returns the options area, padding included: the bytes between
// the fixed header and DataOffset. Parse it with ParseTCPOptions.
func (b TCP) Options() []byte { return b[tcpOptions:b.DataOffset()] }

// Payload returns the segment's data, everything after the header.
func (b TCP) Payload() []byte { return b[b.DataOffset():] }

// SetSrcPort sets the source port.
func (b TCP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(b[tcpSrcPort:], p) }

// SetDstPort sets the destination port.
func (b TCP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(b[tcpDstPort:], p) }

// SetSeqNum sets the sequence number.
func (b TCP) SetSeqNum(v uint32) { binary.BigEndian.PutUint32(b[tcpSeqNum:], v) }

// SetAckNum sets the acknowledgment number.
func (b TCP) SetAckNum(v uint32) { binary.BigEndian.PutUint32(b[tcpAckNum:], v) }

// SetDataOffset sets the header length to n bytes, a multiple of 4 from
// TCPMinimumSize to TCPMaximumHeaderSize; the reserved bits are cleared.
func (b TCP) SetDataOffset(n int) {
	if n%4 != 0 || n < TCPMinimumSize || n > TCPMaximumHeaderSize {
		panic(fmt.Sprintf("header: TCP data offset %d not a multiple of 4 in [20, 60]", n))
	}
	b[tcpDataOff] = uint8(n/4) << 4
}

// SetFlags sets the flags byte.
func (b TCP) SetFlags(f TCPFlags) { b[tcpFlags] = uint8(f) }

// SetWindow sets the window field.
func (b TCP) SetWindow(v uint16) { binary.BigEndian.PutUint16(b[tcpWindow:], v) }

// SetChecksum sets the checksum field.
func (b TCP) SetChecksum(v uint16) { binary.BigEndian.PutUint16(b[tcpChecksum:], v) }

// SetUrgent sets the urgent pointer.
func (b TCP) SetUrgent(v uint16) { binary.BigEndian.PutUint16(b[tcpUrgent:], v) }

// Encode writes the whole header from f, options and padding included; b
// must be at least as long as the header.
func (b TCP) Encode(f *TCPFields) {
	if len(f.Options) > TCPMaximumOptionsSize {
		panic(fmt.Sprintf("header: %d bytes of TCP options, at most %d", len(f.Options), TCPMaximumOptionsSize))
	}
	hlen := TCPMinimumSize + (len(f.Options)+3)&^3
	b.SetSrcPort(f.SrcPort)
	b.SetDstPort(f.DstPort)
	b.SetSeqNum(f.SeqNum)
	b.SetAckNum(f.AckNum)
	b.SetDataOffset(hlen)
	b.SetFlags(f.Flags)
	b.SetWindow(f.Window)
	b.SetChecksum(f.Checksum)
	b.SetUrgent(f.Urgent)
	n := copy(b[tcpOptions:hlen], f.Options)
	clear(b[tcpOptions+n : hlen])
}

// HeaderSum returns the one's-complement sum of the header (options
// included) with the checksum field counted as zero, added to partial. It
// serves callers that sum the pseudo-header and the data separately; the
// field value is then ^HeaderSum(ChecksumCombine(pseudo, data)).
func (b TCP) HeaderSum(partial uint16) uint16 {
	sum := Checksum(b[:tcpChecksum], partial)
	return Checksum(b[tcpChecksum+2:b.DataOffset()], sum)
}

// CalculateChecksum returns the value the checksum field must hold for the
// segment that fills the view, sent from src to dst: the complement of the
// sum of pseudo-header, header (checksum counted as zero) and data (RFC 793
// section 3.1, "Checksum"). Use it as
// b.SetChecksum(b.CalculateChecksum(src, dst)).
func (b TCP) CalculateChecksum(src, dst [4]byte) uint16 {
	sum := PseudoHeaderChecksum(IPv4ProtocolTCP, src, dst, uint16(len(b)))
	sum = b.HeaderSum(sum)
	return ^Checksum(b[b.DataOffset():], sum)
}

// IsChecksumValid reports whether the segment that fills the view, from
// src to dst, sums with its pseudo-header and checksum to 0xFFFF.
func (b TCP) IsChecksumValid(src, dst [4]byte) bool {
	sum := PseudoHeaderChecksum(IPv4ProtocolTCP, src, dst, uint16(len(b)))
	return Checksum(b, sum) == 0xFFFF
}

// TCPOptions holds the options ParseTCPOptions understands.
type TCPOptions struct {
	// MSS is the peer's maximum segment size, valid when HasMSS.
	MSS    uint16
	HasMSS bool
}

// ParseTCPOptions parses an options area (TCP.Options) as RFC 793 section
// 3.1 lays it out: EOL ends the list, NOP is one byte, every other kind is
// followed by a length byte that counts kind and length. Kinds it does not
// know are skipped. It reports ok false for a malformed list — a length
// below 2, an option running past the area, or an MSS option whose length
// is not 4 — returning what it parsed before the fault; RFC 1122 section
// 4.2.2.5 requires that such a list not crash the receiver.
func ParseTCPOptions(opts []byte) (o TCPOptions, ok bool) {
	for i := 0; i < len(opts); {
		switch kind := opts[i]; kind {
		case TCPOptionEOL:
			return o, true
		case TCPOptionNOP:
			i++
			continue
		}
		if i+1 >= len(opts) {
			return o, false
		}
		n := int(opts[i+1])
		if n < 2 || i+n > len(opts) {
			return o, false
		}
		if opts[i] == TCPOptionMSS {
			if n != TCPOptionMSSLen {
				return o, false
			}
			o.MSS = binary.BigEndian.Uint16(opts[i+2:])
			o.HasMSS = true
		}
		i += n
	}
	return o, true
}

// PutTCPMSSOption writes an MSS option (kind 2, length 4, the value) at
// the start of b and returns its length, TCPOptionMSSLen.
func PutTCPMSSOption(b []byte, mss uint16) int {
	b[0] = TCPOptionMSS
	b[1] = TCPOptionMSSLen
	binary.BigEndian.PutUint16(b[2:], mss)
	return TCPOptionMSSLen
}
