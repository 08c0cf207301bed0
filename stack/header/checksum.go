package header

import "encoding/binary"

// The Internet checksum (RFC 1071; RFC 791 section 3.1, RFC 768, RFC 793
// section 3.1) is the 16-bit one's complement of the one's-complement sum
// of the data taken as 16-bit big-endian words. The functions here work on
// the sum itself, not its complement, so that partial sums over separate
// pieces (pseudo-header, header, data held elsewhere) combine with
// ChecksumCombine. The value written into a header field is the
// complement of the final sum (^sum); a receiver verifies by summing the
// covered bytes including the checksum field and expecting 0xFFFF.
//
// UDP (RFC 768) adds one rule: a transmitted checksum of 0 means "no
// checksum computed", so a computed value of 0 is sent as 0xFFFF (the
// other representation of zero in one's complement); see UDPWireChecksum.
// TCP's and ICMP's checksums are mandatory and have no such rule.

// Checksum returns the one's-complement sum (RFC 1071 section 1) of buf
// taken as 16-bit big-endian words, added to initial. An odd final byte is
// padded with a zero byte on the right. The result is the folded sum with
// end-around carry, not its complement.
//
// Partial sums combine (RFC 1071 section 2(B), associativity) only when each
// piece but the last has an even length, as the pieces then keep their
// byte positions within 16-bit words.
func Checksum(buf []byte, initial uint16) uint16 {
	// RFC 1071 section 2(C): summing 32-bit words into a wider accumulator
	// and folding at the end gives the same result as 16-bit words. A uint64
	// cannot overflow for any buffer shorter than 2^34 bytes.
	sum := uint64(initial)
	for len(buf) >= 8 {
		sum += uint64(binary.BigEndian.Uint32(buf)) + uint64(binary.BigEndian.Uint32(buf[4:]))
		buf = buf[8:]
	}
	for len(buf) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(buf))
		buf = buf[2:]
	}
	if len(buf) == 1 {
		sum += uint64(buf[0]) << 8
	}
	return fold(sum)
}

// fold reduces a wide one's-complement accumulator to 16 bits with
// end-around carry (RFC 1071 section 2(A)).
func fold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// ChecksumCombine returns the one's-complement sum of two partial sums a
// and b (RFC 1071 section 2(B)).
func ChecksumCombine(a, b uint16) uint16 {
	return fold(uint64(a) + uint64(b))
}

// PseudoHeaderChecksum returns the one's-complement sum of the IPv4
// pseudo-header that UDP (RFC 768) and TCP (RFC 793 section 3.1) prefix to
// their checksum:
//
//	+--------+--------+--------+--------+
//	|          source address           |
//	+--------+--------+--------+--------+
//	|        destination address        |
//	+--------+--------+--------+--------+
//	|  zero  |protocol|  UDP/TCP length |
//	+--------+--------+--------+--------+
//
// totalLen is the transport length: header plus data, not the IP total
// length.
func PseudoHeaderChecksum(protocol uint8, src, dst [4]byte, totalLen uint16) uint16 {
	sum := uint64(binary.BigEndian.Uint16(src[0:])) + uint64(binary.BigEndian.Uint16(src[2:])) +
		uint64(binary.BigEndian.Uint16(dst[0:])) + uint64(binary.BigEndian.Uint16(dst[2:])) +
		uint64(protocol) + uint64(totalLen)
	return fold(sum)
}

// ChecksumUpdate returns the header checksum field value after one 16-bit
// word covered by it changes from oldWord to newWord, without summing the
// rest again: HC' = ~(~HC + ~m + m') (RFC 1624 section 3, equation 3).
// Routers use it when they decrement the IPv4 TTL.
func ChecksumUpdate(checksum, oldWord, newWord uint16) uint16 {
	return ^fold(uint64(^checksum) + uint64(^oldWord) + uint64(newWord))
}

// UDPWireChecksum returns the value to place in a UDP header's checksum
// field for the one's-complement sum sum over pseudo-header, header (with
// the checksum field counted as zero) and data: its complement, except that
// a complement of 0 is sent as 0xFFFF because 0 means "no checksum"
// (RFC 768).
func UDPWireChecksum(sum uint16) uint16 {
	if v := ^sum; v != 0 {
		return v
	}
	return 0xFFFF
}
