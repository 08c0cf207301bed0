package header

import "encoding/binary"

// AAL5 CPCS-PDU (ITU-T I.363.5 section 9.2; docs/reference/atm-taxi.md
// sec. 7). The PDU is a whole number of 48-byte cell payloads; the
// trailer fills the last 8 bytes of the last cell.
//
//	+-------------------+-----------+------+------+--------+--------+
//	| CPCS-SDU payload  | PAD 0..47 | UU   | CPI  | Length | CRC-32 |
//	|   1..65535 bytes  |           | (1)  | (1)  |  (2)   |  (4)   |
//	+-------------------+-----------+------+------+--------+--------+
//	                                 \______ 8-byte trailer ______/
//
// Length counts the payload only (0 signals an aborted PDU); CPI must be
// 0. The CRC-32 covers the whole PDU up to the CRC field: generator
// 0x04C11DB7, preset to all ones, computed most significant bit first
// (not reflected), result complemented — the CRC-32/BZIP2 variant.
const (
	aal5UU     = 0 // offsets within the trailer
	aal5CPI    = 1
	aal5Length = 2
	aal5CRC    = 4
)

const (
	// AAL5TrailerLen is the length of the CPCS-PDU trailer.
	AAL5TrailerLen = 8
	// AAL5MaxPayload is the largest CPCS-SDU (the 16-bit Length field).
	AAL5MaxPayload = 65535
	// AAL5CRCPolynomial is the CRC-32 generator, MSB-first form.
	AAL5CRCPolynomial = 0x04C11DB7
	// AAL5CRCInit is the CRC register's preset; the transmitted CRC is the
	// complement of the final register.
	AAL5CRCInit = 0xFFFFFFFF
	// AAL5CRCResidue is the register after running the CRC over a whole
	// intact PDU, CRC field included (the complement is not taken).
	AAL5CRCResidue = 0xC704DD7B
)

// AAL5PDULen returns the length of the CPCS-PDU for a payload of n bytes:
// payload, pad and trailer, a multiple of 48.
func AAL5PDULen(n int) int { return AAL5Cells(n) * ATMPayloadLen }

// AAL5Cells returns how many cells carry a payload of n bytes:
// ceil((n + 8) / 48).
func AAL5Cells(n int) int { return (n + AAL5TrailerLen + ATMPayloadLen - 1) / ATMPayloadLen }

// AAL5Pad returns the pad bytes between a payload of n bytes and the
// trailer.
func AAL5Pad(n int) int { return AAL5PDULen(n) - n - AAL5TrailerLen }

// AAL5 is a view of a whole CPCS-PDU, as reassembled from its cells. Call
// IsValid before the getters.
type AAL5 []byte

// AAL5Fields holds the trailer fields for Encode; the CRC is computed.
type AAL5Fields struct {
	UU     uint8
	CPI    uint8
	Length uint16
}

// IsValid reports whether b is shaped like a PDU: a non-zero whole number
// of cell payloads. The trailer's fields are then readable; whether they
// are consistent is IsLengthValid's and IsCRCValid's question.
func (b AAL5) IsValid() bool { return len(b) >= ATMPayloadLen && len(b)%ATMPayloadLen == 0 }

func (b AAL5) trailer() []byte { return b[len(b)-AAL5TrailerLen:] }

// UU returns the CPCS user-to-user byte.
func (b AAL5) UU() uint8 { return b.trailer()[aal5UU] }

// CPI returns the common part indicator.
func (b AAL5) CPI() uint8 { return b.trailer()[aal5CPI] }

// Length returns the Length field: the payload bytes.
func (b AAL5) Length() uint16 { return binary.BigEndian.Uint16(b.trailer()[aal5Length:]) }

// CRC returns the CRC field as received.
func (b AAL5) CRC() uint32 { return binary.BigEndian.Uint32(b.trailer()[aal5CRC:]) }

// IsLengthValid reports whether the Length field fits the PDU: not zero
// (an abort), and the pad it implies is 0..47 bytes, so the PDU has
// exactly the cells the payload needs. CPI must be 0 too.
func (b AAL5) IsLengthValid() bool {
	n := int(b.Length())
	return n > 0 && b.CPI() == 0 && AAL5PDULen(n) == len(b)
}

// IsCRCValid reports whether the CRC field matches the PDU.
func (b AAL5) IsCRCValid() bool { return b.CalculateCRC() == b.CRC() }

// CalculateCRC returns the value the CRC field must hold: the complement
// of the CRC register after the PDU up to the CRC field.
func (b AAL5) CalculateCRC() uint32 {
	return ^AAL5CRCUpdate(AAL5CRCInit, b[:len(b)-4])
}

// Payload returns the CPCS-SDU: the first Length bytes. Call it after
// IsLengthValid; otherwise it returns at most what the PDU holds before
// the trailer.
func (b AAL5) Payload() []byte {
	return b[:min(int(b.Length()), len(b)-AAL5TrailerLen)]
}

// Encode completes a PDU whose payload already fills the first f.Length
// bytes of b (len(b) must be AAL5PDULen(f.Length)): it zeroes the pad,
// writes the trailer and the CRC.
func (b AAL5) Encode(f *AAL5Fields) {
	clear(b[f.Length : len(b)-AAL5TrailerLen])
	t := b.trailer()
	t[aal5UU] = f.UU
	t[aal5CPI] = f.CPI
	binary.BigEndian.PutUint16(t[aal5Length:], f.Length)
	binary.BigEndian.PutUint32(t[aal5CRC:], b.CalculateCRC())
}

// AAL5CRCUpdate runs the CRC register crc over p, most significant bit of
// each byte first, and returns the new register. Start from AAL5CRCInit;
// the transmitted CRC is the complement of the register after the PDU
// up to the CRC field. Running it over a whole intact PDU, CRC field
// included, leaves AAL5CRCResidue.
func AAL5CRCUpdate(crc uint32, p []byte) uint32 {
	for _, c := range p {
		crc = crc<<8 ^ aal5Table[byte(crc>>24)^c]
	}
	return crc
}

// AAL5CRCTableEntry returns entry i of the byte-at-a-time table behind
// AAL5CRCUpdate: what a software CRC loop looks up, per byte, at
// table + 4*i. Simulated drivers use it to know which table word each
// byte touches.
func AAL5CRCTableEntry(i uint8) uint32 { return aal5Table[i] }

// aal5Table[i] is the CRC register contribution of the byte i shifted out
// of the top: i·x^32 mod the generator, MSB first.
var aal5Table = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ AAL5CRCPolynomial
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
