package atm

import (
	"encoding/binary"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	"simkron/stack/header"
)

// pdus gathers cells into AAL5 PDUs, VC by VC, for the card's sources of
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
}

// add adds cell c, whose first bit crossed the line at first. When c ends
// a PDU whose length fits its cells, it returns that PDU's CPCS-SDU
// (valid until the next add), its cells and when its first cell's first
// bit crossed; a PDU that does not fit (the tail of one begun before the
// gathering was, or one that lost a cell) is dropped.
func (g *pdus) add(c *atmnet.Cell, first sim.Time) (sdu []byte, cells int, from sim.Time, ok bool) {
	if g.vcs == nil {
		g.vcs = map[atmnet.VC]*pdu{}
	}
	vc := c.VC()
	p := g.vcs[vc]
	if p == nil {
		p = &pdu{}
		g.vcs[vc] = p
	}
	if p.cells == 0 {
		p.first = first
	}
	p.b = append(p.b, c[atmnet.HeaderSize:]...)
	p.cells++
	if !c.EndOfPDU() {
		return nil, 0, 0, false
	}
	b, cells, from := p.b, p.cells, p.first
	p.b, p.cells = p.b[:0], 0
	sdu, ok = aal5SDU(b)
	return sdu, cells, from, ok
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
