package ethersim

import (
	"encoding/binary"
	"hash/crc32"
)

// The frame check sequence is CRC-32 (generator 0x04C11DB7, here in its
// reflected form 0xEDB88320 as hash/crc32.IEEE), register preset to all
// ones, result complemented, sent least-significant bit first, which puts
// the least-significant byte first on the wire (IEEE 802.3 clause 3.2.9;
// docs/reference/ne2000.md sec. 13).
//
// Running the same CRC over a frame and its FCS leaves the register at the
// constant residue: 0xC704DD7B in the generator's bit order, 0xDEBB20E3 as
// the reflected, uncomplemented register; after hash/crc32's final
// complement that is FCSResidue.
const (
	FCSResidue = 0x2144DF1C // crc32.ChecksumIEEE(frame+FCS) for any good frame
)

// FCS returns the frame check sequence of frame (destination address
// through the end of the payload, padding included).
func FCS(frame []byte) uint32 { return crc32.ChecksumIEEE(frame) }

// AppendFCS appends the FCS of frame to it, least-significant byte first.
func AppendFCS(frame []byte) []byte {
	return binary.LittleEndian.AppendUint32(frame, FCS(frame))
}

// CheckFCS reports whether the last four bytes of frameWithFCS are the FCS
// of the bytes before them.
func CheckFCS(frameWithFCS []byte) bool {
	n := len(frameWithFCS) - FCSBytes
	if n < 0 {
		return false
	}
	return binary.LittleEndian.Uint32(frameWithFCS[n:]) == FCS(frameWithFCS[:n])
}
