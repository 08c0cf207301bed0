package header

import "encoding/binary"

// ATM cell at the user-network interface (ITU-T I.361 section 2.2, figure
// 2; docs/reference/atm-taxi.md sec. 1). Bit 8 of byte 1 is sent first.
//
//	  8   7   6   5   4   3   2   1
//	+---------------+---------------+
//	|      GFC      |   VPI (high)  |  byte 1
//	+---------------+---------------+
//	|   VPI (low)   |  VCI (16-13)  |  byte 2
//	+---------------+---------------+
//	|          VCI (12-5)           |  byte 3
//	+---------------+-----------+---+
//	|   VCI (4-1)   |    PT     |CLP|  byte 4
//	+---------------+-----------+---+
//	|              HEC              |  byte 5
//	+-------------------------------+
//	|   payload: 48 bytes ...       |  bytes 6-53
//
// As one big-endian 32-bit word the first four bytes are
// GFC<<28 | VPI<<20 | VCI<<4 | PT<<1 | CLP (ATMHeaderWord).
const (
	atmWord    = 0 // the four bytes the HEC covers
	atmHEC     = 4
	atmPayload = 5
)

const (
	// ATMCellSize is the length of a cell.
	ATMCellSize = 53
	// ATMHeaderLen is the length of the header, HEC included.
	ATMHeaderLen = 5
	// ATMPayloadLen is the length of the payload.
	ATMPayloadLen = 48
)

// Payload type values (ITU-T I.361 table 3; Wireshark atm_pt_vals). The
// low bit of a user-data PT is the ATM-user-to-ATM-user indication, which
// AAL5 uses to mark the last cell of a PDU; the middle bit is EFCI, set by
// a congested switch.
const (
	ATMPTUserData    = 0 // user data, no congestion, SDU-type 0
	ATMPTUserDataEnd = 1 // user data, no congestion, SDU-type 1
	ATMPTUserCongest = 2 // user data, congestion experienced, SDU-type 0
	ATMPTSegmentOAM  = 4 // segment OAM F5 cell
	ATMPTEndToEndOAM = 5 // end-to-end OAM F5 cell
	ATMPTResourceMgt = 6 // VC resource management cell

	// ATMPTAUU is the ATM-user-to-ATM-user bit of a user-data PT.
	ATMPTAUU = 1
	// ATMPTEFCI is the explicit forward congestion indication bit.
	ATMPTEFCI = 2
	// ATMPTOAM is set in every PT that is not user data.
	ATMPTOAM = 4
)

// ATMHECCoset is added (XOR) to the CRC-8 remainder (ITU-T I.432.1
// section 7.3.2.2: the pattern 01010101).
const ATMHECCoset = 0x55

// ATMCell is a view of an ATM cell starting at its header. Call IsValid
// before the getters; a header alone (5 bytes) is valid for the header
// getters, and Payload then returns what the view holds after it.
type ATMCell []byte

// ATMCellFields holds the header fields of a cell for Encode.
type ATMCellFields struct {
	GFC uint8  // 4 bits at the UNI
	VPI uint8  // 8 bits at the UNI
	VCI uint16 // 16 bits
	PT  uint8  // 3 bits
	CLP bool
}

// IsValid reports whether b holds at least a whole header.
func (b ATMCell) IsValid() bool { return len(b) >= ATMHeaderLen }

// HeaderWord returns the first four header bytes as one big-endian word.
func (b ATMCell) HeaderWord() uint32 { return binary.BigEndian.Uint32(b[atmWord:]) }

// GFC returns the generic flow control field.
func (b ATMCell) GFC() uint8 { return b[0] >> 4 }

// VPI returns the virtual path identifier.
func (b ATMCell) VPI() uint8 { return uint8(b.HeaderWord() >> 20) }

// VCI returns the virtual channel identifier.
func (b ATMCell) VCI() uint16 { return uint16(b.HeaderWord() >> 4) }

// PT returns the payload type.
func (b ATMCell) PT() uint8 { return b[3] >> 1 & 7 }

// CLP returns the cell loss priority bit.
func (b ATMCell) CLP() bool { return b[3]&1 != 0 }

// HEC returns the header error control byte as received.
func (b ATMCell) HEC() uint8 { return b[atmHEC] }

// Payload returns the bytes after the header, at most 48.
func (b ATMCell) Payload() []byte {
	return b[atmPayload:min(len(b), ATMCellSize)]
}

// IsLastOfPDU reports whether a user-data cell carries the AAL5
// end-of-PDU mark (SDU-type 1).
func (b ATMCell) IsLastOfPDU() bool { pt := b.PT(); return pt&ATMPTOAM == 0 && pt&ATMPTAUU != 0 }

// SetHeaderWord writes the first four header bytes (not the HEC).
func (b ATMCell) SetHeaderWord(w uint32) { binary.BigEndian.PutUint32(b[atmWord:], w) }

// SetHEC writes the HEC byte.
func (b ATMCell) SetHEC(v uint8) { b[atmHEC] = v }

// Encode writes the header from f and its HEC.
func (b ATMCell) Encode(f *ATMCellFields) {
	b.SetHeaderWord(ATMHeaderWord(f))
	b.SetHEC(b.CalculateHEC())
}

// CalculateHEC returns the HEC the first four header bytes need.
func (b ATMCell) CalculateHEC() uint8 { return ATMHEC(b[:4]) }

// IsHECValid reports whether the HEC byte matches the header.
func (b ATMCell) IsHECValid() bool { return b.HECSyndrome() == 0 }

// HECSyndrome returns the CRC-8 of the header bytes 1-4 with the received
// HEC (coset removed): 0 for an intact header. A receiver in I.432's
// correction mode maps a non-zero syndrome to a single-bit error with
// ATMHECErrorBit.
func (b ATMCell) HECSyndrome() uint8 { return ATMHEC(b[:4]) ^ b[atmHEC] }

// CorrectHEC repairs a single-bit header error in place, as an I.432
// receiver in correction mode does, and reports whether the header is now
// intact: true with nothing changed for an intact header, true after
// flipping the one bit a single-bit error explains, false (nothing
// changed) when the syndrome points at no single bit.
func (b ATMCell) CorrectHEC() bool {
	s := b.HECSyndrome()
	if s == 0 {
		return true
	}
	bit, ok := ATMHECErrorBit(s)
	if !ok {
		return false
	}
	// Bit 0 is the first bit sent: the most significant bit of byte 1.
	b[bit/8] ^= 0x80 >> (bit % 8)
	return true
}

// ATMHeaderWord packs header fields into the word of the first four bytes.
func ATMHeaderWord(f *ATMCellFields) uint32 {
	w := uint32(f.GFC&0xF)<<28 | uint32(f.VPI)<<20 | uint32(f.VCI)<<4 | uint32(f.PT&7)<<1
	if f.CLP {
		w |= 1
	}
	return w
}

// ATMHEC returns the HEC of the four header bytes in h (ITU-T I.432.1
// section 7.3.2.2): the remainder of x^8 times the header divided by the
// generator x^8 + x^2 + x + 1, XORed with the coset 0x55.
func ATMHEC(h []byte) uint8 {
	var crc uint8
	for _, c := range h[:4] {
		crc = hecTable[crc^c]
	}
	return crc ^ ATMHECCoset
}

// hecTable[i] is the CRC-8 (generator 0x07, MSB first) of the byte i.
var hecTable = func() (t [256]uint8) {
	for i := range t {
		c := uint8(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// hecErrorBit maps the syndrome of every single-bit error in the 40
// header bits to the bit's position (0 = first bit sent), 0xFF for
// syndromes no single-bit error gives.
var hecErrorBit = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xFF
	}
	var h [ATMHeaderLen]byte
	good := ATMHEC(h[:4])
	for bit := range 40 {
		h = [ATMHeaderLen]byte{4: good}
		h[bit/8] ^= 0x80 >> (bit % 8)
		t[ATMCell(h[:]).HECSyndrome()] = uint8(bit)
	}
	return t
}()

// ATMHECErrorBit returns the header bit (0 = first sent, 39 = the HEC's
// last) whose flip gives syndrome s, or false when no single-bit error
// does: the CRC is linear, so the syndrome of a single-bit error does not
// depend on the rest of the header.
func ATMHECErrorBit(s uint8) (int, bool) {
	b := hecErrorBit[s]
	return int(b), b != 0xFF
}
