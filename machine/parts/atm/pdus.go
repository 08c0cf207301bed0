package atm

import (
	"encoding/binary"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	drvatm "simkron/stack/driver/atmtaxi"
	"simkron/stack/header"
)

// pdus gathers cells into PDUs, VC by VC, for the card's sources of
// whole frames. Its zero value is empty; it makes its buffers when first
// given a cell.
type pdus struct {
	vcs map[atmnet.VC]*pdu
}

// pdu is the part of one VC's PDU gathered so far.
type pdu struct {
	b     []byte
	cells int
	first sim.Time // when its first cell's first bit crossed the line
	// begun says that the PDU's first cell was seen (MSNL framing, whose
	// first cell is marked; AAL5's trailer says it at the end).
	begun bool
}

// add adds cell c, whose first bit crossed the line at first, on a VC
// framed as f says. When c ends a PDU seen whole, it returns the frame
// it carried (valid until the next add): an AAL5 CPCS-SDU (aal5), its
// trailer's length fitting its cells, or the payloads of an MSNL PDU's
// cells from its marked first; its cells; and when its first cell's
// first bit crossed. A PDU not seen whole (the tail of one begun before
// the gathering was, one that lost a cell) is dropped. A VC the driver
// has not open is taken for AAL5.
func (g *pdus) add(c *atmnet.Cell, first sim.Time, f drvatm.Framing) (frame []byte, cells int, from sim.Time, aal5, ok bool) {
	if g.vcs == nil {
		g.vcs = map[atmnet.VC]*pdu{}
	}
	vc := c.VC()
	p := g.vcs[vc]
	if p == nil {
		p = &pdu{}
		g.vcs[vc] = p
	}
	msnl := f == drvatm.FramingMSNL
	if msnl && drvatm.MSNLFirst(c.Word()) {
		p.b, p.cells, p.begun = p.b[:0], 0, true // a PDU before it lost its end
	}
	if msnl && !p.begun {
		return nil, 0, 0, false, false
	}
	if p.cells == 0 {
		p.first = first
	}
	p.b = append(p.b, c[atmnet.HeaderSize:]...)
	p.cells++
	if !c.EndOfPDU() {
		return nil, 0, 0, false, false
	}
	b, cells, from := p.b, p.cells, p.first
	p.b, p.cells, p.begun = p.b[:0], 0, false
	if msnl {
		return b, cells, from, false, true
	}
	sdu, ok := aal5SDU(b)
	return sdu, cells, from, true, ok
}

// reset forgets every PDU in progress: the gathering stopped, and a PDU
// it saw begin may end unseen.
func (g *pdus) reset() { g.vcs = nil }

// aal5SDU returns the CPCS-SDU of the CPCS-PDU b (its cells' payloads),
// padding and trailer removed by the trailer's length, and false when
// the length does not fit the cells.
func aal5SDU(b []byte) ([]byte, bool) {
	if len(b) < header.AAL5TrailerLen {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(b[len(b)-6:]))
	if pad := len(b) - header.AAL5TrailerLen - n; pad < 0 || pad >= atmnet.PayloadSize {
		return nil, false
	}
	return b[:n], true
}
