package atmnet

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/sim"
)

// Captures. A tap on an End reassembles the cells sent from it, per VC,
// up to each cell with the end-of-PDU mark, and writes every PDU as one
// pcap record of link type LINKTYPE_SUNATM (123; libpcap sunatmpos.h,
// docs/reference/atm-taxi.md sec. 10):
//
//	byte 0    flags: bit 7 the direction (1: DTE to DCE, cells sent from a
//	          link's user side), bits 3-0 the traffic type (2: LLC)
//	byte 1    VPI
//	bytes 2-3 VCI, big-endian
//	bytes 4-  the PDU
//
// A PDU that is a valid AAL5 CPCS-PDU (the trailer's Length fits and the
// CRC-32 matches) is written as its CPCS-SDU, without pad and trailer,
// with type LLC when it starts with an RFC 2684 routed LLC header (so that
// Wireshark decodes LLC/SNAP, IP and the rest) and type 0 otherwise. Any
// other PDU (a raw MSNL-like PDU of whole cells, or a broken AAL5 one) is
// written as the concatenated payloads of its cells, type 0.
//
// Timestamps are the simulated time the PDU's last bit left the end,
// from the Unix epoch, in nanoseconds.

// SunATM pseudo-header values.
const (
	SunATMHeaderLen = 4
	sunATMDTE       = 0x80
	SunATMTypeRaw   = 0
	SunATMTypeLLC   = 2
)

// maxPDU bounds a tap's reassembly: the largest AAL5 PDU (65535 bytes of
// payload, pad and trailer: 1366 cells).
const maxPDU = 1366 * PayloadSize

type tap struct {
	end  *End
	w    *pcapgo.Writer
	pdus map[VC][]byte
	err  *error
	// Overlong counts PDUs written before their end because they reached
	// the largest AAL5 PDU.
	overlong uint64
}

// Tap writes the PDUs sent from e to w as a pcap file (SunATM link type,
// snap length 65535 + 4). The file header is written now; a later write
// error stops the tap and is kept for TapErr.
func (e *End) Tap(w io.Writer) error {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(SunATMHeaderLen+maxPDU, layers.LinkTypeSunATM); err != nil {
		return fmt.Errorf("atmnet: %s: pcap tap: %w", e.name, err)
	}
	e.taps = append(e.taps, &tap{end: e, w: pw, pdus: map[VC][]byte{}})
	return nil
}

// Tap writes the PDUs sent from either end of l to w as one pcap file
// (SunATM, as End.Tap), the direction bit telling them apart: PDUs from
// the user side (a) are DTE to DCE. A loop-back cable has the one end.
func (l *Link) Tap(w io.Writer) error {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(SunATMHeaderLen+maxPDU, layers.LinkTypeSunATM); err != nil {
		return fmt.Errorf("atmnet: %s: pcap tap: %w", l.name, err)
	}
	for _, e := range []*End{l.a, l.b} {
		if e != nil {
			e.taps = append(e.taps, &tap{end: e, w: pw, pdus: map[VC][]byte{}})
		}
	}
	return nil
}

// TapErr returns the first write error of the end's taps, or nil.
func (e *End) TapErr() error {
	for _, t := range e.taps {
		if t.err != nil {
			return *t.err
		}
	}
	return nil
}

func (t *tap) cell(c *Cell) {
	if t.err != nil {
		return
	}
	vc := c.VC()
	p := append(t.pdus[vc], c[HeaderSize:]...)
	if !c.EndOfPDU() && len(p) < maxPDU {
		t.pdus[vc] = p
		return
	}
	if !c.EndOfPDU() {
		t.overlong++
	}
	t.pdus[vc] = p[:0]
	t.write(vc, p)
}

func (t *tap) write(vc VC, pdu []byte) {
	flags := byte(SunATMTypeRaw)
	data := pdu
	if n, ok := aal5SDU(pdu); ok {
		data = pdu[:n]
		if isRoutedLLC(data) {
			flags = SunATMTypeLLC
		}
	}
	if t.end.dte {
		flags |= sunATMDTE
	}
	rec := make([]byte, SunATMHeaderLen+len(data))
	rec[0], rec[1] = flags, vc.VPI
	binary.BigEndian.PutUint16(rec[2:], vc.VCI)
	copy(rec[SunATMHeaderLen:], data)
	at := t.end.link.net.k.Now() + t.end.link.p.CellTime()
	ci := gopacket.CaptureInfo{
		Timestamp:     time.Unix(0, int64(at/sim.Nanosecond)).UTC(),
		CaptureLength: len(rec),
		Length:        len(rec),
	}
	if err := t.w.WritePacket(ci, rec); err != nil {
		err = fmt.Errorf("atmnet: %s: pcap tap: %w", t.end.name, err)
		t.err = &err
	}
}

// aal5SDU returns the payload length of pdu when it is an intact AAL5
// CPCS-PDU: whole cells, CPI 0, a Length that needs exactly these cells,
// and a matching CRC-32.
func aal5SDU(pdu []byte) (int, bool) {
	if len(pdu) < PayloadSize || len(pdu)%PayloadSize != 0 {
		return 0, false
	}
	tr := pdu[len(pdu)-8:]
	n := int(binary.BigEndian.Uint16(tr[2:]))
	cells := (n + 8 + PayloadSize - 1) / PayloadSize
	if n == 0 || tr[1] != 0 || cells*PayloadSize != len(pdu) {
		return 0, false
	}
	if ^CRC32Update(CRC32Init, pdu[:len(pdu)-4]) != binary.BigEndian.Uint32(tr[4:]) {
		return 0, false
	}
	return n, true
}

// isRoutedLLC reports whether p starts with an RFC 2684 routed header:
// LLC/SNAP AA-AA-03 or routed ISO FE-FE-03.
func isRoutedLLC(p []byte) bool {
	switch {
	case len(p) >= 8 && p[0] == 0xAA && p[1] == 0xAA && p[2] == 0x03:
		return true
	case len(p) > 3 && p[0] == 0xFE && p[1] == 0xFE && p[2] == 0x03:
		return true
	}
	return false
}

// AAL5 CRC-32 as hardware computes it (the interface's CRC assist, and the
// tap's check): generator 0x04C11DB7, MSB first, preset to all ones, the
// transmitted value complemented (CRC-32/BZIP2). The software view in
// stack/header has its own copy; the tests hold both to the CRC
// catalogue's check value.
const (
	CRC32Init    = 0xFFFFFFFF
	CRC32Residue = 0xC704DD7B // register after an intact PDU, CRC included
)

// CRC32Update runs the CRC register over p.
func CRC32Update(crc uint32, p []byte) uint32 {
	for _, b := range p {
		crc = crc<<8 ^ crcTable[byte(crc>>24)^b]
	}
	return crc
}

var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
