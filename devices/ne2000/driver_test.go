package ne2000_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"simkron/devices/ne2000"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
)

// This file holds the test rig: fakes for the interrupt line and the
// wire, and a small driver that programs the card the way Linux's ne.c and
// lib8390.c do (docs/reference/ne2000.md sec. 7-11).

// Linux's NE2000 layout.
const (
	txPage  = 0x40
	rxStart = 0x4C
	rxStop  = 0x80
)

// Register offsets by page, for readability.
const (
	cr     = ne2000.RegCR
	pstart = ne2000.P0PSTART
	pstop  = ne2000.P0PSTOP
	bnry   = ne2000.P0BNRY
	tpsr   = ne2000.P0TPSR
	tsr    = ne2000.P0TSR
	tbcr0  = ne2000.P0TBCR0
	tbcr1  = ne2000.P0TBCR1
	isr    = ne2000.P0ISR
	rsar0  = ne2000.P0RSAR0
	rsar1  = ne2000.P0RSAR1
	rbcr0  = ne2000.P0RBCR0
	rbcr1  = ne2000.P0RBCR1
	rcr    = ne2000.P0RCR
	rsr    = ne2000.P0RSR
	tcr    = ne2000.P0TCR
	dcr    = ne2000.P0DCR
	imr    = ne2000.P0IMR
	cntr0  = ne2000.P0CNTR0
	cntr1  = ne2000.P0CNTR1
	cntr2  = ne2000.P0CNTR2
	curr   = ne2000.P1CURR
	data   = ne2000.RegDataPort
	reset  = ne2000.RegReset
)

// CR values Linux uses (8390.h).
const (
	crStop      = 0x21 // page 0, stop, no DMA
	crStart     = 0x22 // page 0, start, no DMA
	crRead      = 0x0A // start, remote read
	crWrite     = 0x12 // start, remote write
	crTransmit  = 0x26 // start, TXP, no DMA
	crPage1Stop = 0x61
	crPage1     = 0x62
	imrAll      = 0x3F
)

var ownMAC = ethersim.MAC{0x02, 0x00, 0x5E, 0x10, 0x20, 0x30}

type fakeIRQ struct {
	level bool
	rises int
}

func (f *fakeIRQ) Set(on bool) {
	if on && !f.level {
		f.rises++
	}
	f.level = on
}

type fakeWire struct {
	frames [][]byte
	err    error
}

func (w *fakeWire) Transmit(frame []byte) error {
	if w.err != nil {
		return w.err
	}
	w.frames = append(w.frames, bytes.Clone(frame))
	return nil
}

type rig struct {
	t    testing.TB
	k    *sim.Scheduler
	n    *ne2000.NE2000
	irq  *fakeIRQ
	wire *fakeWire
	log  *memory.GuestLog
}

func newRig(t testing.TB) *rig {
	r := &rig{t: t, k: sim.NewScheduler(1), irq: &fakeIRQ{}, wire: &fakeWire{}, log: &memory.GuestLog{}}
	p := ne2000.DefaultParams()
	p.MAC = ownMAC
	r.n = ne2000.New(r.k, "host.nic0", p, r.irq, r.log)
	r.n.SetWire(r.wire)
	return r
}

func (r *rig) out(off uint64, v byte) { r.n.Write(off, 1, uint64(v)) }
func (r *rig) in(off uint64) byte     { return byte(r.n.Read(off, 1)) }

// noGuestErrors fails the test if the card reported any misuse.
func (r *rig) noGuestErrors() {
	r.t.Helper()
	if c := r.log.Count(); c != 0 {
		r.t.Fatalf("%d guest errors, first: %v", c, r.log.Records()[0])
	}
}

// boardReset is ne.c's ne_reset_8390: outb(inb(reset), reset), wait for
// ISR.RST, ack it.
func (r *rig) boardReset() {
	r.t.Helper()
	r.out(reset, r.in(reset))
	if r.in(isr)&ne2000.IsrRST == 0 {
		r.t.Fatal("ISR.RST not set after a board reset")
	}
	r.out(isr, ne2000.IsrRST)
}

// readPROM is ne.c's probe: byte-wide remote read of 32 bytes at 0.
func (r *rig) readPROM() []byte {
	for _, w := range [][2]byte{
		{cr, crStop}, {dcr, 0x48}, {rbcr0, 0}, {rbcr1, 0}, {imr, 0}, {isr, 0xFF},
		{rcr, 0x20}, {tcr, 0x02}, {rbcr0, 32}, {rbcr1, 0}, {rsar0, 0}, {rsar1, 0}, {cr, crRead},
	} {
		r.out(uint64(w[0]), w[1])
	}
	p := make([]byte, 32)
	for i := range p {
		p[i] = r.in(data)
	}
	return p
}

// init is lib8390.c's __NS8390_init(dev, 1) followed by ei_open's
// receive configuration: stopped set-up, then start with RCR = rcrVal.
func (r *rig) init(rcrVal byte) {
	r.t.Helper()
	r.boardReset()
	prom := r.readPROM()
	for _, w := range [][2]byte{
		{cr, crStop}, {dcr, 0x49}, {rbcr0, 0}, {rbcr1, 0}, {rcr, 0x20}, {tcr, 0x02},
		{tpsr, txPage}, {pstart, rxStart}, {bnry, rxStop - 1}, {pstop, rxStop},
		{isr, 0xFF}, {imr, 0}, {cr, crPage1Stop},
	} {
		r.out(uint64(w[0]), w[1])
	}
	for i := range 6 {
		r.out(uint64(ne2000.P1PAR0+i), prom[2*i])
	}
	r.out(curr, rxStart)
	for i := range 8 {
		r.out(uint64(ne2000.P1MAR0+i), 0)
	}
	r.out(cr, crStop)
	r.out(isr, 0xFF)
	r.out(imr, imrAll)
	r.out(cr, crStart)
	r.out(tcr, 0x00)
	r.out(rcr, rcrVal)
}

// setMAR loads the multicast filter (page 1), leaving page 0 selected.
func (r *rig) setMAR(mar [8]byte) {
	r.out(cr, crPage1)
	for i, v := range mar {
		r.out(uint64(ne2000.P1MAR0+i), v)
	}
	r.out(cr, crStart)
}

// waitRDC polls ISR.RDC and acks it, as ne.c does after each remote DMA.
func (r *rig) waitRDC() {
	r.t.Helper()
	if r.in(isr)&ne2000.IsrRDC == 0 {
		r.t.Fatal("ISR.RDC not set after the remote DMA")
	}
	r.out(isr, ne2000.IsrRDC)
}

// blockOut is ne_block_output: a word-mode remote write of p at addr.
func (r *rig) blockOut(addr uint16, p []byte) {
	r.t.Helper()
	count := len(p)
	if count&1 != 0 {
		count++
		p = append(bytes.Clone(p), 0)
	}
	r.out(cr, crStart)
	r.out(isr, ne2000.IsrRDC)
	r.out(rbcr0, byte(count))
	r.out(rbcr1, byte(count>>8))
	r.out(rsar0, byte(addr))
	r.out(rsar1, byte(addr>>8))
	r.out(cr, crWrite)
	r.n.WriteBlock(data, 2, p[:count])
	r.waitRDC()
}

// blockIn is ne_block_input: a word-mode remote read of count bytes at
// addr, the odd last byte read with a byte access.
func (r *rig) blockIn(addr uint16, count int) []byte {
	r.t.Helper()
	r.out(cr, crStart)
	r.out(rbcr0, byte(count))
	r.out(rbcr1, byte(count>>8))
	r.out(rsar0, byte(addr))
	r.out(rsar1, byte(addr>>8))
	r.out(cr, crRead)
	p := make([]byte, count)
	r.n.ReadBlock(data, 2, p[:count&^1])
	if count&1 != 0 {
		p[count-1] = r.in(data)
	}
	r.waitRDC()
	return p
}

// xmit is ne_block_output into the TX page and the start of transmission.
func (r *rig) xmit(frame []byte) {
	r.t.Helper()
	r.blockOut(txPage<<8, frame)
	r.out(cr, crStart)
	if r.in(cr)&ne2000.CrTXP != 0 {
		r.t.Fatal("TXP still set before a transmit")
	}
	r.out(tbcr0, byte(len(frame)))
	r.out(tbcr1, byte(len(frame)>>8))
	r.out(tpsr, txPage)
	r.out(cr, crTransmit)
}

type header struct {
	Status, Next byte
	Count        uint16
	This         byte
}

// receiveAll is lib8390.c's ei_receive: read frames from BNRY+1 up to
// CURR, checking each header as Linux does, and advance BNRY. It returns
// the frames (FCS included) and their headers.
func (r *rig) receiveAll() ([][]byte, []header) {
	r.t.Helper()
	var frames [][]byte
	var hdrs []header
	for range 100 {
		r.out(cr, crPage1)
		cur := r.in(curr)
		r.out(cr, crStart)
		this := r.in(bnry) + 1
		if this >= rxStop {
			this = rxStart
		}
		if this == cur {
			break
		}
		h := r.blockIn(uint16(this)<<8, 4)
		hd := header{Status: h[0], Next: h[1], Count: binary.LittleEndian.Uint16(h[2:]), This: this}
		pktLen := int(hd.Count) - 4
		next := int(this) + 1 + (pktLen+4)>>8
		ring := rxStop - rxStart
		if n := int(hd.Next); n != next && n != next+1 && n != next-ring && n != next+1-ring {
			r.t.Fatalf("bogus header %+v: next should be %#x", hd, next)
		}
		if pktLen < 60 || pktLen > 1518 {
			r.t.Fatalf("bogus length in header %+v", hd)
		}
		frames = append(frames, r.blockIn(uint16(this)<<8+4, pktLen))
		hdrs = append(hdrs, hd)
		r.out(bnry, hd.Next-1) // literally, as Linux does
	}
	r.out(isr, ne2000.IsrPRX|ne2000.IsrRXE)
	return frames, hdrs
}

// frame builds an Ethernet frame to dst with payload bytes derived from
// seed, padded to the minimum, with a correct FCS.
func frame(dst ethersim.MAC, payload int, seed byte) []byte {
	f := make([]byte, 0, 14+payload+4)
	f = append(f, dst[:]...)
	f = append(f, 0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0x08, 0x00)
	for i := range payload {
		f = append(f, seed+byte(i*7))
	}
	for len(f) < 60 {
		f = append(f, 0)
	}
	return binary.LittleEndian.AppendUint32(f, crc32.ChecksumIEEE(f))
}

func fcsOK(f []byte) bool {
	n := len(f) - 4
	return n >= 0 && crc32.ChecksumIEEE(f[:n]) == binary.LittleEndian.Uint32(f[n:])
}

// etherCRC is Linux's ether_crc (big-endian Ethernet CRC, no final
// complement), written bit by bit as in include/linux/crc32.h's users.
func etherCRC(p []byte) uint32 {
	const poly = 0x04C11DB7
	crc := int32(-1)
	for _, b := range p {
		for range 8 {
			var x uint32
			if (crc < 0) != (b&1 == 1) {
				x = poly
			}
			crc = int32(uint32(crc)<<1 ^ x)
			b >>= 1
		}
	}
	return uint32(crc)
}

// marFor returns a filter with the bit of each address set (make_mc_bits).
func marFor(addrs ...ethersim.MAC) [8]byte {
	var m [8]byte
	for _, a := range addrs {
		c := etherCRC(a[:])
		m[c>>29] |= 1 << ((c >> 26) & 7)
	}
	return m
}

var errRefused = errors.New("segment not connected")

var _ ethersim.Station = (*ne2000.NE2000)(nil)
