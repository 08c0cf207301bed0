package atmnet

import "fmt"

// Cell sizes (ITU-T I.361; docs/reference/atm-taxi.md sec. 1).
const (
	CellSize    = 53
	HeaderSize  = 5 // four header bytes and the HEC
	PayloadSize = 48
	// HostCellSize is a cell as a host interface moves it: the four header
	// bytes without the HEC, and the payload (13 words).
	HostCellSize = 52
)

// Cell is one cell as it crosses a wire: the UNI header, the HEC the
// sending hardware computed, and the payload.
type Cell [CellSize]byte

// Header word layout: GFC<<28 | VPI<<20 | VCI<<4 | PT<<1 | CLP, sent most
// significant byte first.
const (
	ptAUU = 1 // ATM-user-to-ATM-user bit of a user-data PT: AAL5's last cell
	ptOAM = 4 // set in every PT that is not user data
)

// Word returns the four header bytes as a big-endian word.
func (c *Cell) Word() uint32 {
	return uint32(c[0])<<24 | uint32(c[1])<<16 | uint32(c[2])<<8 | uint32(c[3])
}

// VPI returns the virtual path identifier (UNI: 8 bits).
func (c *Cell) VPI() uint8 { return uint8(c.Word() >> 20) }

// VCI returns the virtual channel identifier.
func (c *Cell) VCI() uint16 { return uint16(c.Word() >> 4) }

// PT returns the payload type.
func (c *Cell) PT() uint8 { return c[3] >> 1 & 7 }

// VC returns the cell's virtual channel.
func (c *Cell) VC() VC { return VC{VPI: c.VPI(), VCI: c.VCI()} }

// EndOfPDU reports whether the cell is a user-data cell with the
// ATM-user-to-ATM-user bit set: the last cell of an AAL5 PDU, the header
// indication flag of a host interface.
func (c *Cell) EndOfPDU() bool { pt := c.PT(); return pt&ptOAM == 0 && pt&ptAUU != 0 }

// SetWord writes the four header bytes and the HEC for them, as a
// transmitter does.
func (c *Cell) SetWord(w uint32) {
	c[0], c[1], c[2], c[3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	c[4] = HEC(c[:4])
}

// SetVC rewrites the cell's VPI and VCI, keeping GFC, PT and CLP, and
// makes a new HEC: a switch's label translation.
func (c *Cell) SetVC(vc VC) {
	w := c.Word()&0xF000000F | uint32(vc.VPI)<<20 | uint32(vc.VCI)<<4
	c.SetWord(w)
}

// HECOK reports whether the HEC matches the header.
func (c *Cell) HECOK() bool { return HEC(c[:4]) == c[4] }

// CorrectHEC repairs a header with a single-bit error, as an I.432
// receiver in correction mode does; it reports whether the header is
// intact afterwards.
func (c *Cell) CorrectHEC() bool {
	s := HEC(c[:4]) ^ c[4]
	if s == 0 {
		return true
	}
	bit := hecSyndromeBit[s]
	if bit == 0xFF {
		return false
	}
	c[bit/8] ^= 0x80 >> (bit % 8)
	return true
}

// VC is a virtual channel: the VPI/VCI label of a cell on one link.
type VC struct {
	VPI uint8
	VCI uint16
}

func (v VC) String() string { return fmt.Sprintf("%d/%d", v.VPI, v.VCI) }

// word returns the label as it sits in a header word.
func (v VC) word() uint32 { return uint32(v.VPI)<<20 | uint32(v.VCI)<<4 }

// Word returns a header word for a cell on v with payload type pt (CLP 0,
// GFC 0).
func (v VC) Word(pt uint8) uint32 { return v.word() | uint32(pt&7)<<1 }

// HEC returns the header error control byte of the four header bytes h
// (ITU-T I.432.1 section 7.3.2.2): the CRC-8 with generator
// x^8 + x^2 + x + 1, XORed with the coset 0x55. The hardware here computes
// it on every cell it sends; the software views in stack/header have
// their own copy, and the tests hold the two to the same known values.
func HEC(h []byte) uint8 {
	var crc uint8
	for _, b := range h[:4] {
		crc = hecTable[crc^b]
	}
	return crc ^ 0x55
}

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

// hecSyndromeBit maps the syndrome of each single-bit error of the 40
// header bits (HEC included) to the bit (0 = first sent), 0xFF otherwise.
var hecSyndromeBit = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xFF
	}
	for bit := range 40 {
		var h [HeaderSize]byte
		h[4] = HEC(h[:4])
		h[bit/8] ^= 0x80 >> (bit % 8)
		t[HEC(h[:4])^h[4]] = uint8(bit)
	}
	return t
}()
