// Package ne2000 models an NE2000 ISA Ethernet card at register level: a
// National Semiconductor DP8390 network interface controller with its three
// register pages, a 16 KiB packet RAM holding the transmit buffers and the
// receive ring, remote DMA through a data port (programmed I/O), a station
// address PROM and a reset port. It is hardware: it knows nothing of the
// driver that programs it, reaches the network only through a Wire and is
// reached by the network only through Receive (ethersim.Station).
//
// Timing. The chip's own work is instantaneous: copying a received frame
// into the ring happens when Receive is called (the last bit has arrived),
// and a transmit command hands the frame to the Wire at once. The wire time
// is the network's: a transmission ends when the network calls TxDone. The
// cost of programmed I/O (each register access, each data-port word) is
// the bus's, charged by the CPU that makes the access; ReadBlock and
// WriteBlock move many words in one call for string I/O.
//
// Simplifications, each documented where it is modelled:
//   - Frames are whole bytes, so frame-alignment errors (CNTR0) never occur;
//     a damaged frame is recognised by its FCS only.
//   - Loopback (TCR.LB != 0, whatever DCR.LS says) takes the chip off the
//     wire: a transmit completes at once without reaching the network or
//     the receive ring, and frames from the network are ignored.
//   - The transmitter pads a frame shorter than 60 bytes with zeros before
//     appending the FCS (the real DP8390 leaves padding to the driver);
//     with TCR.CRC set the frame goes out exactly as loaded.
//   - After a ring overflow the receiver stays wedged, missing every frame,
//     until the chip is stopped (CR.STP): the driver must run the data
//     sheet's recovery sequence (docs/reference/ne2000.md sec. 10).
//   - Remote DMA works while the chip is stopped (the real chip needs STA);
//     the access is reported as a guest error.
//   - Ring pointers are compared as the chip does: the chip never writes
//     into the BNRY page. BNRY = PSTART-1, which Linux writes when the next
//     frame is at PSTART, is taken as PSTOP-1.
//
// Frame length. The DP8390 counts a transmit in the 16-bit TBCR and a
// stored frame in the receive header's 16-bit count; it enforces no
// Ethernet maximum itself. On 10 Mbit/s Ethernet a real card sends at most
// 1518 bytes (IEEE 802.3) because its driver never loads more. The model
// refuses a transmit longer than Params.MaxFrame (1518 by default) as a
// guest error, so a driver bug shows; raising max_frame is a simulation
// allowance that lets the card stand in for an FDDI interface (MTU 4352).
// The receiver checks no maximum, as on the chip: its local DMA links ring
// pages until the frame ends and aborts only when the next page would be
// the BNRY page (DP8390D data sheet, sec. 7 "Linking receive buffer
// pages", "Buffer ring overflow"), so a long frame is stored whenever the
// ring has room for it and overflows the ring otherwise.
package ne2000

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"

	"simkron/cpu"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
)

// Wire is the network side of the card's transmitter. Transmit starts
// sending frame (FCS included); the card keeps frame unchanged until the
// network calls TxDone. An error means the frame was not sent at all.
// ethersim's Attachment satisfies it.
type Wire interface {
	Transmit(frame []byte) error
}

var (
	_ memory.Device      = (*NE2000)(nil)
	_ memory.BlockDevice = (*NE2000)(nil)
	_ ethersim.Station   = (*NE2000)(nil)
)

// Stats counts the card's events.
type Stats struct {
	TxFrames      uint64 `stat:"tx_frames" help:"frames handed to the wire"`
	TxBytes       uint64 `stat:"tx_bytes" help:"bytes handed to the wire, FCS included"`
	TxErrors      uint64 `stat:"tx_errors" help:"transmissions that ended with ISR.TXE"`
	TxCollisions  uint64 `stat:"tx_collisions" help:"collisions reported by the wire"`
	TxLoopback    uint64 `stat:"tx_loopback" help:"transmissions completed in loopback, not sent"`
	RxFrames      uint64 `stat:"rx_frames" help:"good frames stored in the ring (ISR.PRX)"`
	RxBytes       uint64 `stat:"rx_bytes" help:"bytes of those frames, FCS included, headers not"`
	RxErrored     uint64 `stat:"rx_errored" help:"frames with a bad FCS stored because of RCR.SEP"`
	RxFiltered    uint64 `stat:"rx_filtered" help:"frames refused by the address filter"`
	RxOffline     uint64 `stat:"rx_offline" help:"frames that arrived while stopped or in loopback"`
	RxRunts       uint64 `stat:"rx_runts" help:"frames under 64 bytes dropped (RCR.AR clear)"`
	CRCErrors     uint64 `stat:"crc_errors" help:"frames with a bad FCS that passed the filter (CNTR1: the DP8390 checks the address first)"`
	AlignErrors   uint64 `stat:"align_errors" help:"frame-alignment errors (CNTR0): always 0, see package doc"`
	Missed        uint64 `stat:"missed" help:"frames lost for want of ring space or in monitor mode (CNTR2)"`
	Overflows     uint64 `stat:"overflows" help:"ring overflows (ISR.OVW)"`
	Interrupts    uint64 `stat:"interrupts" help:"rising edges of the interrupt line"`
	RemoteDMA     uint64 `stat:"remote_dma" help:"bytes moved through the data port"`
	GuestErrors   uint64 `stat:"guest_errors" help:"misuses reported to the guest log"`
	Resets        uint64 `stat:"resets" help:"board resets through the reset port"`
	SpuriousTxEnd uint64 `stat:"spurious_tx_end" help:"TxDone calls with nothing on the wire (a wiring bug)"`
}

// Remote DMA state.
type dmaMode uint8

const (
	dmaIdle dmaMode = iota // never set up, or aborted
	dmaRead
	dmaWrite
)

// NE2000 is the card.
//
// Card memory and the receive ring (256-byte pages; Linux's layout):
//
//	0x4000 ┌──────────────┐ page 0x40 = TPSR
//	       │ TX slot 0, 1 │ 12 pages, loaded by remote-DMA write
//	0x4C00 ├──────────────┤ PSTART ─┐
//	       │ frame        │ ◄─ BNRY+1: next frame the host reads
//	       │ frame        │         │ the ring wraps PSTOP-1 → PSTART,
//	       │ (free)       │ ◄─ CURR │ for the chip's local DMA and for
//	       │ (free)       │         │ remote-DMA reads alike
//	0x8000 └──────────────┘ PSTOP ──┘
//
// Each stored frame starts on a page boundary with a 4-byte header (RSR,
// next page, byte count low, high; the count includes the header and the
// FCS, which is stored). The chip never writes into the BNRY page: a frame
// that would reach it overflows the ring.
type NE2000 struct {
	name  string
	k     *sim.Scheduler
	p     Params
	irq   cpu.IRQ
	guest *memory.GuestLog
	wire  Wire

	prom [PromSize]byte
	ram  [RAMEnd - RAMStart]byte

	// Registers.
	cr                        byte // page, RD field, STA/STP state, TXP while transmitting
	started                   bool
	pstart, pstop, bnry, curr byte
	tpsr                      byte
	tbcr                      uint16
	rsar                      uint16 // written as RSAR, advances as CRDA
	rbcr                      uint16 // remaining remote byte count
	isr                       byte   // bits 0-6; RST is derived
	imr, dcr, tcr, rcr        byte
	rsr, tsr, ncr             byte
	par                       [6]byte
	mar                       [8]byte
	cntr                      [3]byte
	clda                      uint16 // current local DMA address
	rnpp, lnpp                byte
	acu, acl                  byte

	ovwRST   bool // ISR.RST held by a ring overflow
	rxWedged bool // receiver stopped by an overflow until CR.STP

	dma        dmaMode
	dmaErr     bool // a guest error was reported for this remote DMA
	sendPacket bool // the remote read is a send-packet command

	txBusy      bool // TXP set: a chip transmission awaits TxDone
	wireBusy    bool // a frame is on the wire
	txOrphan    bool // the frame on the wire was abandoned by a board reset
	txQueued    bool // a transmission waits for the orphan to leave the wire
	txBuf, txQ  []byte
	ringChecked bool // ring misconfiguration already reported
	irqLevel    bool

	stats Stats
}

// New returns a card named name ("hostA.nic0") with the station address
// p.MAC in its PROM, raising irq (nil: no interrupt line) and reporting
// guest misuse to guest (nil: counted only). p must be valid (see
// Params.Validate). The chip starts stopped, as after power-up. Attach it
// to the network with SetWire.
func New(k *sim.Scheduler, name string, p Params, irq cpu.IRQ, guest *memory.GuestLog) *NE2000 {
	if l, ok := irq.(*cpu.IRQLine); ok && l == nil {
		irq = nil
	}
	n := &NE2000{name: name, k: k, p: p, irq: irq, guest: guest}
	// PROM: bytes 0-5 the address, 14 and 15 the NE2000 signature, each
	// byte doubled because the 16-bit card presents the byte-wide PROM on
	// both halves of the bus (docs/reference/ne2000.md sec. 8; Linux ne.c).
	var rom [PromSize / 2]byte
	copy(rom[:], p.MAC[:])
	rom[14], rom[15] = PromSignature, PromSignature
	for i, b := range rom {
		n.prom[2*i], n.prom[2*i+1] = b, b
	}
	n.cr = CrSTP | CrRD2
	n.dcr = DcrLS
	n.txBuf = make([]byte, 0, p.MaxFrame)
	n.txQ = make([]byte, 0, p.MaxFrame)
	return n
}

// SetWire attaches the card to the network.
func (n *NE2000) SetWire(w Wire) { n.wire = w }

// Name returns the card's name.
func (n *NE2000) Name() string { return n.name }

// Params returns the card's configuration.
func (n *NE2000) Params() Params { return n.p }

// Stats returns the card's counters.
func (n *NE2000) Stats() Stats { return n.stats }

func (n *NE2000) report(format string, args ...any) {
	n.stats.GuestErrors++
	if n.guest != nil {
		n.guest.Report(n.k.Now(), n.name, format, args...)
	}
}

// ---------------------------------------------------------------------------
// Register access

// Read implements memory.Device. Registers are 8 bits wide: a wider access
// to them is split into byte accesses at consecutive offsets, as the ISA
// bus does for a card that does not claim 16-bit cycles there. The data
// port takes 16-bit accesses (see readData).
func (n *NE2000) Read(off uint64, size int) uint64 {
	var v uint64
	switch {
	case off >= RegDataPort && off < dataPortEnd:
		v = n.readData(size)
	case off >= dataPortEnd && off < resetPortEnd:
		n.reset()
	case off < RegDataPort && size > 1:
		for i := range size {
			v |= n.Read(off+uint64(i), 1) << (8 * i)
		}
		return v
	case off < RegDataPort:
		v = uint64(n.readReg(byte(off), false))
	default:
		n.report("read of offset %#x outside the %d-port window", off, Size)
		v = 1<<(8*size) - 1
	}
	n.update()
	return v
}

// Write implements memory.Device.
func (n *NE2000) Write(off uint64, size int, v uint64) {
	switch {
	case off >= RegDataPort && off < dataPortEnd:
		n.writeData(size, v)
	case off >= dataPortEnd && off < resetPortEnd:
		// Ends the reset pulse a read started; nothing to do.
	case off < RegDataPort && size > 1:
		for i := range size {
			n.Write(off+uint64(i), 1, v>>(8*i)&0xFF)
		}
		return
	case off < RegDataPort:
		n.writeReg(byte(off), byte(v))
	default:
		n.report("write of offset %#x outside the %d-port window", off, Size)
	}
	n.update()
}

// bulk moves the leading part of a word-mode string transfer on the data
// port straight between p and packet RAM, a run at a time up to the ring's
// wrap or the byte count, with exactly the effects of the word-by-word
// transfers (advance wraps, counts down and sets RDC). It returns how many
// bytes it moved; the caller does the rest (and every odd case) a unit at
// a time.
func (n *NE2000) bulk(off uint64, width int, p []byte, want dmaMode) int {
	if off != RegDataPort || width != 2 || n.dcr&(DcrWTS|DcrBOS) != DcrWTS || !n.started || n.dma != want || n.dmaErr {
		return 0
	}
	done := 0
	for done+2 <= len(p) && n.rbcr >= 2 {
		a := int(n.rsar)
		if a < RAMStart || a+2 > RAMEnd || a&1 != 0 {
			break
		}
		end := RAMEnd
		if n.pstart < n.pstop && a < int(n.pstop)<<8 {
			end = min(end, int(n.pstop)<<8)
		}
		run := min(len(p)-done, end-a, int(n.rbcr)) &^ 1
		if run == 0 {
			break
		}
		if want == dmaRead {
			copy(p[done:done+run], n.ram[a-RAMStart:])
		} else {
			copy(n.ram[a-RAMStart:], p[done:done+run])
		}
		// advance in one step: it wraps only at PSTOP, where the run ends.
		n.advance(uint16(run))
		done += run
	}
	return done
}

// ReadBlock implements memory.BlockDevice: len(p)/width reads of width
// bytes at off (insw on the data port).
func (n *NE2000) ReadBlock(off uint64, width int, p []byte) {
	if width <= 0 {
		return
	}
	if done := n.bulk(off, width, p, dmaRead); done > 0 {
		p = p[done:]
		n.update()
	}
	for i := 0; i+width <= len(p); i += width {
		v := n.Read(off, width)
		for j := range width {
			p[i+j] = byte(v >> (8 * j))
		}
	}
}

// WriteBlock implements memory.BlockDevice: len(p)/width writes of width
// bytes at off (outsw on the data port).
func (n *NE2000) WriteBlock(off uint64, width int, p []byte) {
	if width <= 0 {
		return
	}
	if done := n.bulk(off, width, p, dmaWrite); done > 0 {
		p = p[done:]
		n.update()
	}
	for i := 0; i+width <= len(p); i += width {
		var v uint64
		for j := range width {
			v |= uint64(p[i+j]) << (8 * j)
		}
		n.Write(off, width, v)
	}
}

func (n *NE2000) page() byte { return n.cr >> 6 }

func (n *NE2000) readISR() byte {
	v := n.isr
	if !n.started || n.ovwRST {
		v |= IsrRST
	}
	return v
}

// readReg reads a register of the selected page. peek reads it for an
// observer: a tally counter is not cleared and nothing is reported.
func (n *NE2000) readReg(off byte, peek bool) byte {
	if off == RegCR {
		return n.cr
	}
	switch n.page() {
	case 0:
		switch off {
		case P0CLDA0:
			return byte(n.clda)
		case P0CLDA1:
			return byte(n.clda >> 8)
		case P0BNRY:
			return n.bnry
		case P0TSR:
			return n.tsr
		case P0NCR:
			return n.ncr
		case P0FIFO:
			return 0
		case P0ISR:
			return n.readISR()
		case P0CRDA0:
			return byte(n.rsar)
		case P0CRDA1:
			return byte(n.rsar >> 8)
		case P0RBCR0, P0RBCR1:
			return 0xFF // reserved (an RTL8029 returns its ID here)
		case P0RSR:
			return n.rsr
		case P0CNTR0, P0CNTR1, P0CNTR2:
			// Reading a tally counter clears it.
			i := off - P0CNTR0
			v := n.cntr[i]
			if !peek {
				n.cntr[i] = 0
			}
			return v
		}
	case 1:
		switch {
		case off >= P1PAR0 && off < P1PAR0+6:
			return n.par[off-P1PAR0]
		case off == P1CURR:
			return n.curr
		default:
			return n.mar[off-P1MAR0]
		}
	case 2:
		switch off {
		case P2PSTART:
			return n.pstart
		case P2PSTOP:
			return n.pstop
		case P2RNPP:
			return n.rnpp
		case P2TPSR:
			return n.tpsr
		case P2LNPP:
			return n.lnpp
		case P2ACU:
			return n.acu
		case P2ACL:
			return n.acl
		case P2RCR:
			return n.rcr
		case P2TCR:
			return n.tcr
		case P2DCR:
			return n.dcr
		case P2IMR:
			return n.imr
		default:
			return 0xFF // reserved
		}
	}
	if !peek {
		n.report("read of register %#x on page 3, which the DP8390 does not have", off)
	}
	return 0xFF
}

// Peek implements memory.Peeker: a register of the selected page as an
// observer sees it, without the side effects of a read. The data and reset
// ports cannot be peeked.
func (n *NE2000) Peek(off uint64) (uint64, bool) {
	if off >= RegDataPort {
		return 0, false
	}
	return uint64(n.readReg(byte(off), true)), true
}

func (n *NE2000) writeReg(off, v byte) {
	if off == RegCR {
		n.writeCR(v)
		return
	}
	switch n.page() {
	case 0:
		switch off {
		case P0PSTART:
			n.pstart, n.ringChecked = v, false
		case P0PSTOP:
			n.pstop, n.ringChecked = v, false
		case P0BNRY:
			// Moving BNRY releases ring pages: the overflow's RST clears
			// "when one or more packets have been removed" (data sheet, ISR).
			n.bnry, n.ringChecked = v, false
			n.ovwRST = false
		case P0TPSR:
			n.tpsr = v
		case P0TBCR0:
			n.tbcr = n.tbcr&0xFF00 | uint16(v)
		case P0TBCR1:
			n.tbcr = n.tbcr&0x00FF | uint16(v)<<8
		case P0ISR:
			n.isr &^= v & isrIRQ // write 1 to clear; RST is read-only
		case P0RSAR0:
			n.rsar = n.rsar&0xFF00 | uint16(v)
		case P0RSAR1:
			n.rsar = n.rsar&0x00FF | uint16(v)<<8
		case P0RBCR0:
			n.rbcr = n.rbcr&0xFF00 | uint16(v)
		case P0RBCR1:
			n.rbcr = n.rbcr&0x00FF | uint16(v)<<8
		case P0RCR:
			n.rcr = v & rcrMask
		case P0TCR:
			n.tcr = v & tcrMask
		case P0DCR:
			if v&DcrLAS != 0 {
				n.report("DCR %#02x sets LAS (32-bit addresses), which an NE2000 does not wire", v)
			}
			n.dcr = v &^ 0x80
		case P0IMR:
			n.imr = v & isrIRQ
		}
	case 1:
		switch {
		case off >= P1PAR0 && off < P1PAR0+6:
			n.par[off-P1PAR0] = v
		case off == P1CURR:
			n.curr, n.ringChecked = v, false
		default:
			n.mar[off-P1MAR0] = v
		}
	case 2:
		switch off {
		case 0x01:
			n.clda = n.clda&0xFF00 | uint16(v)
		case 0x02:
			n.clda = n.clda&0x00FF | uint16(v)<<8
		case P2RNPP:
			n.rnpp = v
		case P2LNPP:
			n.lnpp = v
		case P2ACU:
			n.acu = v
		case P2ACL:
			n.acl = v
		default:
			n.report("write of %#02x to read-only or reserved page-2 register %#x", v, off)
		}
	case 3:
		n.report("write of %#02x to register %#x on page 3, which the DP8390 does not have", v, off)
	}
}

// writeCR carries out a command: page select, start/stop, remote DMA and
// transmit, in that order (so CR = 0x0A both starts the chip and a read).
func (n *NE2000) writeCR(v byte) {
	switch {
	case v&CrSTP != 0:
		n.stop()
	case v&CrSTA != 0:
		n.start()
	}
	state := byte(CrSTA)
	if !n.started {
		state = CrSTP
	}
	n.cr = v&^(CrSTA|CrSTP|CrTXP) | state | n.cr&CrTXP

	switch rd := v & crRD; {
	case rd&CrRD2 != 0:
		n.dma, n.sendPacket = dmaIdle, false
	case rd == RDRead, rd == RDWrite:
		n.startDMA(rd)
	case rd == RDSendPacket:
		n.startSendPacket()
	default:
		n.report("CR %#02x: remote DMA command 000 is not allowed", v)
	}

	if v&CrTXP != 0 {
		n.transmit()
	}
}

// start leaves the reset state. Issuing STA clears ISR.RST, including one
// set by an overflow.
func (n *NE2000) start() {
	n.started = true
	n.ovwRST = false
}

// stop enters the reset state: no frame is received or transmitted after
// it; a transmission already on the wire completes. Stopping also resets
// the receive logic, which is how a driver recovers from an overflow.
func (n *NE2000) stop() {
	n.started = false
	n.rxWedged = false
}

// reset is a board reset through the reset port: the chip stops with CR =
// 0x21, ISR = RST and every interrupt masked; a remote DMA and a
// transmission in progress are abandoned (a frame already on the wire
// still finishes there, but its completion is not reported). Other
// registers keep their values; drivers program them all afterwards.
func (n *NE2000) reset() {
	n.stats.Resets++
	n.stop()
	n.cr = CrSTP | CrRD2
	n.isr, n.imr = 0, 0
	n.ovwRST = false
	n.dma, n.sendPacket = dmaIdle, false
	if n.txBusy {
		n.txBusy = false
		if n.wireBusy {
			n.txOrphan = true
		}
	}
	n.txQueued = false
}

// update drives the interrupt line from ISR and IMR.
func (n *NE2000) update() {
	level := n.isr&n.imr&isrIRQ != 0
	if level == n.irqLevel {
		return
	}
	n.irqLevel = level
	if level {
		n.stats.Interrupts++
	}
	if n.irq != nil {
		n.irq.Set(level)
	}
}

// tally counts one event in tally counter i (0 alignment, 1 CRC, 2
// missed). Counters saturate at 192; ISR.CNT is set while an increment
// leaves the MSB set.
func (n *NE2000) tally(i int) {
	if n.cntr[i] < counterMax {
		n.cntr[i]++
	}
	if n.cntr[i]&0x80 != 0 {
		n.isr |= IsrCNT
	}
}

// ---------------------------------------------------------------------------
// Card memory

// peek reads card address a: PROM, packet RAM, or 0xFF where nothing is
// decoded (ok false).
func (n *NE2000) peek(a uint16) (byte, bool) {
	switch {
	case a < PromSize:
		return n.prom[a], true
	case a >= RAMStart && a < RAMEnd:
		return n.ram[a-RAMStart], true
	}
	return 0xFF, false
}

// poke writes card address a; the PROM and undecoded addresses ignore it
// (ok false).
func (n *NE2000) poke(a uint16, v byte) bool {
	if a >= RAMStart && a < RAMEnd {
		n.ram[a-RAMStart] = v
		return true
	}
	return false
}

// ringOK reports whether PSTART/PSTOP describe a ring in the packet RAM.
func (n *NE2000) ringOK() bool {
	return n.pstart >= FirstPage && n.pstop <= EndPage && n.pstart < n.pstop
}

// ---------------------------------------------------------------------------
// Remote DMA (docs/reference/ne2000.md sec. 7)

func (n *NE2000) startDMA(rd byte) {
	n.dmaErr = false
	n.sendPacket = false
	if !n.started {
		n.reportDMA("remote DMA started while the chip is stopped (the DP8390 needs STA)")
	}
	n.dma = dmaRead
	if rd == RDWrite {
		n.dma = dmaWrite
	}
	if n.dcr&DcrWTS != 0 && n.rsar&1 != 0 {
		n.reportDMA("remote DMA at odd address %#04x in word mode: bit 0 is ignored", n.rsar)
		n.rsar &^= 1
	}
	if n.rbcr == 0 {
		n.isr |= IsrRDC // a zero-length transfer completes at once
	}
}

// startSendPacket is the send-packet command: a remote read of the frame at
// BNRY, its length taken from the frame's header; when it completes BNRY
// moves to the header's next-page pointer (left alone, and reported, if
// that pointer is outside the ring: the header was not a frame's). DCR.AR's
// automatic repetition is not modelled; NE2000 drivers use neither.
func (n *NE2000) startSendPacket() {
	a := uint16(n.bnry) << 8
	next, _ := n.peek(a + 1)
	lo, _ := n.peek(a + 2)
	hi, _ := n.peek(a + 3)
	n.rsar = a
	n.rbcr = uint16(lo) | uint16(hi)<<8
	n.rnpp = next
	n.startDMA(RDRead)
	n.sendPacket = true
}

// reportDMA reports a guest error once per remote DMA set-up, so that a
// block transfer gone wrong is one error, not one per word.
func (n *NE2000) reportDMA(format string, args ...any) {
	if n.dmaErr {
		return
	}
	n.dmaErr = true
	n.report(format, args...)
}

// dmaReady checks that a data-port access in direction want can proceed.
func (n *NE2000) dmaReady(want dmaMode) bool {
	switch {
	case n.dma == dmaIdle:
		n.reportDMA("data port access without a remote DMA set up")
		return false
	case n.dma != want && want == dmaRead:
		n.reportDMA("data port read during a remote write")
		return false
	case n.dma != want:
		n.reportDMA("data port write during a remote read")
		return false
	case n.rbcr == 0:
		n.reportDMA("data port access beyond the remote byte count")
		return false
	}
	return true
}

// advance moves the remote DMA on by w bytes: the address wraps from PSTOP
// to PSTART (so a frame that wraps in the ring reads in one transfer), the
// count runs down and ISR.RDC is set when it reaches 0.
func (n *NE2000) advance(w uint16) {
	n.rsar += w
	if n.pstart < n.pstop && n.rsar == uint16(n.pstop)<<8 {
		n.rsar = uint16(n.pstart) << 8
	}
	if n.rbcr <= w {
		n.stats.RemoteDMA += uint64(n.rbcr)
		n.rbcr = 0
		n.isr |= IsrRDC
		if n.sendPacket {
			n.sendPacket = false
			if n.rnpp >= n.pstart && n.rnpp < n.pstop {
				n.bnry = n.rnpp
				n.ovwRST = false
			} else {
				n.report("send packet: the header's next page %#02x is outside the ring [%#02x, %#02x); BNRY left at %#02x",
					n.rnpp, n.pstart, n.pstop, n.bnry)
			}
		}
		return
	}
	n.rbcr -= w
	n.stats.RemoteDMA += uint64(w)
}

func (n *NE2000) dmaPeek(a uint16) byte {
	v, ok := n.peek(a)
	if !ok {
		n.reportDMA("remote DMA read of card address %#04x, outside the PROM and packet RAM", a)
	}
	return v
}

func (n *NE2000) dmaPoke(a uint16, v byte) {
	if !n.poke(a, v) {
		n.reportDMA("remote DMA write of card address %#04x, outside the packet RAM", a)
	}
}

// readUnit moves one transfer unit (a byte, or a word in word mode) from
// card memory to the data port. Without a usable remote DMA it returns
// what sits at the current address, without advancing ("stale data").
func (n *NE2000) readUnit() uint16 {
	word := n.dcr&DcrWTS != 0
	a := n.rsar
	if !n.dmaReady(dmaRead) {
		if !word {
			v, _ := n.peek(a)
			return uint16(v)
		}
		lo, _ := n.peek(a)
		hi, _ := n.peek(a + 1)
		return uint16(lo) | uint16(hi)<<8
	}
	if !word {
		v := n.dmaPeek(a)
		n.advance(1)
		return uint16(v)
	}
	lo, hi := n.dmaPeek(a), n.dmaPeek(a+1)
	if n.dcr&DcrBOS != 0 {
		lo, hi = hi, lo
	}
	n.advance(2)
	return uint16(lo) | uint16(hi)<<8
}

// writeUnit moves one transfer unit from the data port to card memory;
// without a usable remote DMA the write is ignored.
func (n *NE2000) writeUnit(v uint16) {
	if !n.dmaReady(dmaWrite) {
		return
	}
	a := n.rsar
	if n.dcr&DcrWTS == 0 {
		n.dmaPoke(a, byte(v))
		n.advance(1)
		return
	}
	lo, hi := byte(v), byte(v>>8)
	if n.dcr&DcrBOS != 0 {
		lo, hi = hi, lo
	}
	n.dmaPoke(a, lo)
	n.dmaPoke(a+1, hi)
	n.advance(2)
}

// readData is an access of size bytes to the data port. In word mode each
// 16-bit part of the access is one word transfer, and a byte access moves
// a whole word and returns its low byte (Linux reads an odd frame's last
// byte that way). In byte mode each byte of the access is one byte
// transfer, as the bus splits a wide access for a byte-wide port.
func (n *NE2000) readData(size int) uint64 {
	var v uint64
	if n.dcr&DcrWTS == 0 {
		for i := range size {
			v |= uint64(n.readUnit()&0xFF) << (8 * i)
		}
		return v
	}
	if size == 1 {
		return uint64(n.readUnit() & 0xFF)
	}
	for i := 0; i+1 < size; i += 2 {
		v |= uint64(n.readUnit()) << (8 * i)
	}
	return v
}

func (n *NE2000) writeData(size int, v uint64) {
	if n.dcr&DcrWTS == 0 {
		for i := range size {
			n.writeUnit(uint16(v >> (8 * i) & 0xFF))
		}
		return
	}
	if size == 1 {
		n.writeUnit(uint16(v & 0xFF))
		return
	}
	for i := 0; i+1 < size; i += 2 {
		n.writeUnit(uint16(v >> (8 * i)))
	}
}

// ---------------------------------------------------------------------------
// Transmit (docs/reference/ne2000.md sec. 6)

// transmit carries out CR.TXP: the frame at TPSR/TBCR goes to the wire.
func (n *NE2000) transmit() {
	switch {
	case !n.started:
		n.report("TXP while the chip is stopped: ignored")
		return
	case n.txBusy:
		n.report("TXP while a transmission is in progress: ignored")
		return
	case n.tbcr == 0:
		// The chip has nothing to send; it finishes at once with an
		// underrun rather than leave the driver waiting.
		n.report("TXP with TBCR = 0: nothing to send")
		n.finishTx(TsrFU, IsrTXE)
		return
	}
	start := uint32(n.tpsr) << 8
	end := start + uint32(n.tbcr)
	if start < RAMStart || end > RAMEnd {
		n.report("transmit buffer [%#x, %#x) is not inside the packet RAM [%#x, %#x)", start, end, RAMStart, RAMEnd)
	}
	// The frame as it will leave: padded and with the FCS appended, or
	// exactly as loaded when TCR.CRC inhibits the FCS.
	wireLen := int(n.tbcr)
	if n.tcr&TcrCRC == 0 {
		wireLen = max(wireLen, minFrameNoFCS) + fcsBytes
	}
	if wireLen > int(n.p.MaxFrame) {
		n.report("transmit of %d bytes (%d on the wire): longer than the card's max_frame of %d; aborted", n.tbcr, wireLen, n.p.MaxFrame)
		n.finishTx(TsrABT, IsrTXE)
		return
	}
	buf := n.txQ[:0]
	if !n.wireBusy {
		buf = n.txBuf[:0]
	}
	if start >= RAMStart && end <= RAMEnd {
		buf = append(buf, n.ram[start-RAMStart:end-RAMStart]...)
	} else {
		for a := start; a < end; a++ {
			v, _ := n.peek(uint16(a))
			buf = append(buf, v)
		}
	}
	n.clda = uint16(end)
	if n.tcr&TcrCRC == 0 {
		for len(buf) < minFrameNoFCS {
			buf = append(buf, 0)
		}
		buf = binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
	}
	if n.tcr&tcrLB != 0 {
		n.stats.TxLoopback++
		n.finishTx(TsrPTX, IsrPTX)
		return
	}
	if n.wire == nil {
		// No cable: the frame leaves and no carrier comes back.
		n.stats.TxFrames++
		n.stats.TxBytes += uint64(len(buf))
		n.finishTx(TsrPTX|TsrCRS, IsrPTX)
		return
	}
	n.cr |= CrTXP
	n.txBusy = true
	if n.wireBusy {
		// The wire still carries a frame abandoned by a reset.
		n.txQ, n.txQueued = buf, true
		return
	}
	n.txBuf = buf
	n.send()
}

// send puts txBuf on the wire.
func (n *NE2000) send() {
	n.wireBusy = true
	n.stats.TxFrames++
	n.stats.TxBytes += uint64(len(n.txBuf))
	if err := n.wire.Transmit(n.txBuf); err != nil {
		n.wireBusy = false
		n.stats.TxFrames--
		n.stats.TxBytes -= uint64(len(n.txBuf))
		n.report("transmit of %d bytes refused by the network: %v", len(n.txBuf), err)
		n.finishTx(TsrABT, IsrTXE)
	}
}

// TxDone is called by the network when the transmission Wire.Transmit
// started has ended; the machine wires it to the attachment's OnTxDone.
func (n *NE2000) TxDone(st ethersim.TxStatus) {
	if !n.wireBusy {
		n.stats.SpuriousTxEnd++
		return
	}
	n.wireBusy = false
	n.stats.TxCollisions += uint64(st.Collisions)
	if n.txOrphan {
		n.txOrphan = false
		if n.txQueued {
			n.txQueued = false
			n.txBuf, n.txQ = n.txQ, n.txBuf
			n.send()
			n.update()
		}
		return
	}
	tsr := byte(0)
	if st.Collisions > 0 {
		tsr |= TsrCOL
	}
	n.ncr = byte(min(st.Collisions, 15))
	if st.Aborted {
		n.finishTx(tsr|TsrABT, IsrTXE)
	} else {
		n.finishTx(tsr|TsrPTX, IsrPTX)
	}
	n.update()
}

func (n *NE2000) finishTx(tsr, isr byte) {
	n.txBusy = false
	n.cr &^= CrTXP
	n.tsr = tsr
	n.isr |= isr
	if isr&IsrTXE != 0 {
		n.stats.TxErrors++
	}
}

// ---------------------------------------------------------------------------
// Receive (docs/reference/ne2000.md sec. 5)

// Receive implements ethersim.Station: a frame (FCS included) has arrived.
// The address filter, FCS check and ring store happen now; the receive
// path never fails, every frame not stored is counted.
func (n *NE2000) Receive(frame []byte) {
	n.receive(frame)
	n.update()
}

func (n *NE2000) receive(frame []byte) {
	if !n.started || n.tcr&tcrLB != 0 {
		n.stats.RxOffline++
		return
	}
	if len(frame) < 6 {
		n.stats.RxRunts++
		return
	}
	group, ok := n.accept(frame[:6])
	if !ok {
		n.stats.RxFiltered++
		return
	}
	var rsr byte
	if group {
		rsr |= RsrPHY
	}
	good := len(frame) >= fcsBytes &&
		crc32.ChecksumIEEE(frame[:len(frame)-fcsBytes]) == binary.LittleEndian.Uint32(frame[len(frame)-fcsBytes:])
	if !good {
		n.stats.CRCErrors++
		n.tally(1)
		rsr |= RsrCRC
	}
	if len(frame) < minFrame && n.rcr&RcrAR == 0 {
		n.stats.RxRunts++
		return
	}
	if !good && n.rcr&RcrSEP == 0 {
		n.rsr = rsr
		n.isr |= IsrRXE
		return
	}
	if n.rcr&RcrMON != 0 || n.rxWedged {
		if n.rcr&RcrMON != 0 {
			rsr |= RsrDIS
		}
		n.miss(rsr)
		return
	}
	if !n.checkRing() {
		n.miss(rsr)
		return
	}

	// The next frame starts on the page after the one holding the address
	// just past this frame's last byte: 1 + count/256 pages from CURR on,
	// one more than needed when the count is a multiple of 256. This is
	// the next pointer Linux's sanity check (lib8390.c ei_receive)
	// expects. None of the pages may be the BNRY page.
	ring := int(n.pstop - n.pstart)
	need := 1 + (HeaderSize+len(frame))/PageSize
	bnry := n.bnry
	if bnry == n.pstart-1 {
		bnry = n.pstop - 1
	}
	free := (int(bnry) - int(n.curr) + ring) % ring // pages from CURR up to BNRY
	if need > free {
		if need >= ring && !n.ringChecked {
			n.ringChecked = true
			n.report("frame of %d bytes needs %d pages; the receive ring has only %d", len(frame), need, ring)
		}
		n.stats.Overflows++
		n.isr |= IsrOVW
		n.ovwRST = true
		n.rxWedged = true
		n.miss(rsr)
		return
	}

	next := n.pstart + byte((int(n.curr-n.pstart)+need)%ring)
	if good {
		rsr |= RsrPRX
	}
	count := uint16(HeaderSize + len(frame))
	a := uint16(n.curr) << 8
	a = n.store(a, []byte{rsr, next, byte(count), byte(count >> 8)})
	a = n.store(a, frame)
	n.clda = a
	n.curr, n.lnpp = next, next
	n.rsr = rsr
	if good {
		n.stats.RxFrames++
		n.stats.RxBytes += uint64(len(frame))
		n.isr |= IsrPRX
	} else {
		n.stats.RxErrored++
		n.isr |= IsrRXE
	}
}

// miss counts a frame the chip could not store: CNTR2, RSR.MPA, ISR.RXE.
func (n *NE2000) miss(rsr byte) {
	n.stats.Missed++
	n.tally(2)
	n.rsr = rsr | RsrMPA
	n.isr |= IsrRXE
}

// store copies p into the ring at card address a, wrapping from PSTOP to
// PSTART, and returns the address after it. The ring has been checked.
func (n *NE2000) store(a uint16, p []byte) uint16 {
	stop, start := uint16(n.pstop)<<8, uint16(n.pstart)<<8
	for len(p) > 0 {
		k := copy(n.ram[a-RAMStart:stop-RAMStart], p)
		p = p[k:]
		a += uint16(k)
		if a == stop {
			a = start
		}
	}
	return a
}

// checkRing reports whether the ring registers let the chip store a frame;
// a misconfiguration is reported once until a ring register is written.
func (n *NE2000) checkRing() bool {
	var why string
	inRing := func(p byte) bool { return p >= n.pstart && p < n.pstop }
	switch {
	case !n.ringOK():
		why = "PSTART/PSTOP do not describe a ring inside the packet RAM pages [0x40, 0x80)"
		if n.pstart >= n.pstop {
			why = "PSTART >= PSTOP"
		}
	case !inRing(n.curr):
		why = "CURR is outside the ring"
	case !inRing(n.bnry) && n.bnry != n.pstart-1:
		why = "BNRY is outside the ring"
	default:
		return true
	}
	if !n.ringChecked {
		n.ringChecked = true
		n.report("receive ring misconfigured (PSTART %#02x PSTOP %#02x CURR %#02x BNRY %#02x): %s; frame dropped",
			n.pstart, n.pstop, n.curr, n.bnry, why)
	}
	return false
}

// accept runs the address filter on destination dst. group reports a
// multicast or broadcast destination (RSR.PHY).
func (n *NE2000) accept(dst []byte) (group, ok bool) {
	if dst[0]&1 == 0 {
		return false, n.rcr&RcrPRO != 0 || bytes.Equal(dst, n.par[:])
	}
	if bytes.Equal(dst, broadcast[:]) {
		return true, n.rcr&RcrAB != 0
	}
	if n.rcr&RcrAM == 0 {
		return true, false
	}
	i := hashIndex(dst)
	return true, n.mar[i>>3]&(1<<(i&7)) != 0
}

var broadcast = [6]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// hashIndex is the multicast filter bit of address a: the 6 most
// significant bits of the big-endian Ethernet CRC-32 of a (docs/reference/ne2000.md sec.
// 3; Linux lib8390.c make_mc_bits with ether_crc). That CRC is the
// bit-reversed register of the reflected CRC-32, before the final
// complement.
func hashIndex(a []byte) uint32 {
	return bits.Reverse32(^crc32.ChecksumIEEE(a)) >> 26
}
