package atmtaxi_test

// The interface model driven register by register, without a CPU: the
// tests write and read registers at chosen simulated times, with the
// transmitter cabled to the receiver (a loop-back) or to a test end.

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/card"
	"simkron/devices/atmtaxi"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
)

// irqRec records the interrupt line.
type irqRec struct {
	level bool
	rises int
}

func (r *irqRec) Set(on bool) {
	if on && !r.level {
		r.rises++
	}
	r.level = on
}

type rig struct {
	k    *sim.Scheduler
	sys  *memory.System
	dev  *atmtaxi.Device
	irq  *irqRec
	loop *atmnet.Link
}

// newRig builds an interface on a 4 MiB host with a write-through cache,
// its line looped back to itself.
func newRig(t *testing.T, p atmtaxi.Params) *rig {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 4 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 1, WritePolicy: memory.WriteThrough}
	h, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 10, MemWriteLatency: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{k: k, sys: memory.NewSystem(k, "h", memory.NewPhys(4*sim.MiB), h), irq: &irqRec{}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r.dev = atmtaxi.New(k, "h.atm0", p, r.irq, r.sys)
	lp := atmnet.DefaultLinkParams()
	lp.Propagation = 5 * sim.Nanosecond
	if r.loop, err = atmnet.New(k).NewLoopback("lo0", lp); err != nil {
		t.Fatal(err)
	}
	r.dev.SetLine(r.loop.A())
	return r
}

func (r *rig) w(off uint64, v uint32) { r.dev.Write(off, 4, uint64(v)) }
func (r *rig) rd(off uint64) uint32   { return uint32(r.dev.Read(off, 4)) }

// at runs the simulation up to t.
func (r *rig) at(t sim.Time) { r.k.RunUntil(t) }

// words returns the 13 words of a cell on vc with payload bytes from
// seed; pt sets the payload type.
func words(vc atmnet.VC, pt uint8, seed byte) [13]uint32 {
	var w [13]uint32
	w[0] = vc.Word(pt)
	for i := 1; i < 13; i++ {
		b := byte(int(seed) + 4*i)
		w[i] = uint32(b) | uint32(b+1)<<8 | uint32(b+2)<<16 | uint32(b+3)<<24
	}
	return w
}

func (r *rig) pioCell(w [13]uint32) {
	for _, v := range w {
		r.w(atmtaxi.RegTxFIFO, v)
	}
}

func (r *rig) readCell() [13]uint32 {
	var w [13]uint32
	for i := range w {
		w[i] = r.rd(atmtaxi.RegRxFIFO)
	}
	return w
}

func (r *rig) noGuestErrors(t *testing.T) {
	t.Helper()
	if n := r.sys.Guest.Count(); n != 0 {
		t.Errorf("%d guest errors, first: %v", n, r.sys.Guest.Records()[0])
	}
}

func TestPIOLoopback(t *testing.T) {
	r := newRig(t, atmtaxi.DefaultParams())
	var wire []atmnet.Cell
	tap := &wireRec{}
	r.loop.Network().Trace.Connect(tap.rec)
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn)
	vc := atmnet.VC{VPI: 1, VCI: 100}
	sent := [][13]uint32{words(vc, 0, 1), words(vc, 0, 2), words(vc, 1, 3)}
	for _, w := range sent {
		r.pioCell(w)
	}
	if got := r.rd(atmtaxi.RegTxSpace); got != 76-2 { // the first already left for the line
		t.Errorf("TXSPACE %d after three cells, want 74", got)
	}
	r.at(100 * sim.Microsecond)
	wire = tap.tx
	if len(wire) != 3 {
		t.Fatalf("%d cells on the wire, want 3", len(wire))
	}
	for i, c := range wire {
		// The header word big-endian with its HEC, the payload words least
		// significant byte first.
		if c.Word() != sent[i][0] || !c.HECOK() {
			t.Errorf("cell %d header % x (HEC ok %v), want word %#08x", i, c[:5], c.HECOK(), sent[i][0])
		}
		if binary.LittleEndian.Uint32(c[5:]) != sent[i][1] || binary.LittleEndian.Uint32(c[49:]) != sent[i][12] {
			t.Errorf("cell %d payload byte order", i)
		}
	}
	if got := r.rd(atmtaxi.RegTokens); got != 3 {
		t.Fatalf("TOKENS %d, want 3", got)
	}
	if got := r.rd(atmtaxi.RegFlags); got != 1 {
		t.Errorf("FLAGS %d, want 1", got)
	}
	var got [][13]uint32
	for range 3 {
		got = append(got, r.readCell())
	}
	if d := cmp.Diff(sent, got); d != "" {
		t.Errorf("cells read back (-sent +read):\n%s", d)
	}
	if r.rd(atmtaxi.RegTokens) != 0 || r.rd(atmtaxi.RegFlags) != 0 {
		t.Error("FIFO not empty after reading every cell")
	}
	r.noGuestErrors(t)
	r.rd(atmtaxi.RegRxFIFO)
	if r.sys.Guest.Count() != 1 || r.dev.Stats().RxUnderrun != 1 {
		t.Error("reading the empty FIFO is not a guest error")
	}
}

type wireRec struct{ tx, rx []atmnet.Cell }

func (w *wireRec) rec(x atmnet.TraceRecord) {
	switch x.Kind {
	case atmnet.TraceTx:
		w.tx = append(w.tx, *x.Cell)
	case atmnet.TraceRx:
		w.rx = append(w.rx, *x.Cell)
	}
}

// The line takes one cell a slot: 76 cells written at once leave in 76
// slots, and the FIFO refuses a 77th while full.
func TestFIFOsAndOverflow(t *testing.T) {
	r := newRig(t, atmtaxi.DefaultParams())
	vc := atmnet.VC{VCI: 40}
	for i := range 77 {
		r.pioCell(words(vc, 0, byte(i)))
	}
	if s := r.dev.Stats(); s.TxOverflow != 13 || r.rd(atmtaxi.RegTxSpace) != 0 {
		t.Errorf("TxOverflow %d words (want the 77th cell's 13), TXSPACE %d", s.TxOverflow, r.rd(atmtaxi.RegTxSpace))
	}
	if r.sys.Guest.Count() != 13 {
		t.Errorf("%d guest errors, want 13", r.sys.Guest.Count())
	}
	// Receiver on, transmitter on: 76 cells arrive; the FIFO holds them.
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrOvfInt)
	slot := atmnet.DefaultLinkParams().SlotTime()
	r.at(75 * slot)
	if r.rd(atmtaxi.RegTokens) != 75 {
		t.Errorf("after 75 slots %d cells received, want 75 (the last still on the wire)", r.rd(atmtaxi.RegTokens))
	}
	r.at(sim.Millisecond)
	if r.rd(atmtaxi.RegTokens) != 76 || r.dev.Stats().TxCells != 76 {
		t.Fatalf("TOKENS %d, sent %d", r.rd(atmtaxi.RegTokens), r.dev.Stats().TxCells)
	}
	// Two more cells: the receive FIFO is full, both are lost and counted.
	r.pioCell(words(vc, 0, 200))
	r.pioCell(words(vc, 1, 201))
	r.at(2 * sim.Millisecond)
	if ov := r.rd(atmtaxi.RegOverflow); ov != 2 || r.dev.Stats().RxOverflow != 2 || r.rd(atmtaxi.RegOverflow) != 0 {
		t.Errorf("OVERFLOW %d (stats %d), want 2 and cleared on read", ov, r.dev.Stats().RxOverflow)
	}
	if r.rd(atmtaxi.RegISR)&atmtaxi.IsrRxOvf == 0 || !r.irq.level {
		t.Error("overflow did not interrupt")
	}
	// Recovery: drain one cell, the next arrives.
	r.w(atmtaxi.RegISR, atmtaxi.IsrRxOvf)
	r.readCell()
	r.pioCell(words(vc, 0, 202))
	r.at(3 * sim.Millisecond)
	if r.rd(atmtaxi.RegTokens) != 76 || r.rd(atmtaxi.RegOverflow) != 0 {
		t.Errorf("after draining one: TOKENS %d", r.rd(atmtaxi.RegTokens))
	}
}

// Per-cell interrupts rise with the first cell; flag interrupts only with
// the cell that carries the header indication flag.
func TestRxInterruptModes(t *testing.T) {
	for _, tt := range []struct {
		name string
		csr  uint32
		want []bool // line level after each cell of a 3-cell PDU
	}{
		{"per cell", atmtaxi.CsrRxIntCell, []bool{true, true, true}},
		{"header flag", atmtaxi.CsrRxIntFlag, []bool{false, false, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, atmtaxi.DefaultParams())
			r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|tt.csr)
			vc := atmnet.VC{VCI: 50}
			slot := atmnet.DefaultLinkParams().SlotTime()
			var got []bool
			for i := range 3 {
				pt := uint8(0)
				if i == 2 {
					pt = 1
				}
				r.pioCell(words(vc, pt, byte(i)))
				r.at(r.k.Now() + slot + sim.Microsecond)
				got = append(got, r.irq.level)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("line after each cell (-want +got):\n%s", d)
			}
			if r.irq.rises != 1 {
				t.Errorf("%d rising edges, want 1", r.irq.rises)
			}
			r.w(atmtaxi.RegISR, 0xFF)
			if r.irq.level {
				t.Error("writing ISR did not clear the interrupt")
			}
		})
	}
}

// The transmit FIFO interrupts when it falls below half full.
func TestTxHalfInterrupt(t *testing.T) {
	r := newRig(t, atmtaxi.DefaultParams())
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxIntHalf)
	for i := range 60 {
		r.pioCell(words(atmnet.VC{VCI: 40}, 0, byte(i)))
	}
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxIntHalf|atmtaxi.CsrTxEn)
	slot := atmnet.DefaultLinkParams().SlotTime()
	// 60 cells; below 38 after 23 have left: the 23rd leaves at 22 slots.
	r.at(22*slot - sim.Nanosecond)
	if r.irq.level {
		t.Errorf("interrupt with %d cells left", 76-int(r.rd(atmtaxi.RegTxSpace)))
	}
	r.at(22*slot + sim.Nanosecond)
	if !r.irq.level || r.rd(atmtaxi.RegISR)&atmtaxi.IsrTxHalf == 0 || 76-r.rd(atmtaxi.RegTxSpace) != 37 {
		t.Errorf("no half-empty interrupt with %d cells left", 76-r.rd(atmtaxi.RegTxSpace))
	}
}

// Mode A: a block of 52-byte cells from memory; the cells reach the FIFO
// as their words cross, the transfer takes the latency plus its bytes at
// the read rate, and the 2 KiB limit holds 39 cells.
func TestDMAModeA(t *testing.T) {
	p := atmtaxi.DefaultParams()
	r := newRig(t, p)
	if p.MaxCellsPerDMA() != 39 {
		t.Errorf("MaxCellsPerDMA %d, want 39", p.MaxCellsPerDMA())
	}
	vc := atmnet.VC{VCI: 60}
	const base = 0x10000
	var sent [][13]uint32
	blk := make([]byte, 39*52)
	for i := range 39 {
		pt := uint8(0)
		if i == 38 {
			pt = 1
		}
		w := words(vc, pt, byte(i))
		sent = append(sent, w)
		for j, v := range w {
			binary.LittleEndian.PutUint32(blk[i*52+4*j:], v)
		}
	}
	if err := r.sys.Phys.Write(base, blk); err != nil {
		t.Fatal(err)
	}
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrDMAInt)
	r.w(atmtaxi.RegDMAAddr, base)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|uint32(len(blk)))
	if r.rd(atmtaxi.RegDMAStat)&atmtaxi.DMABusy == 0 {
		t.Error("DMA not busy after starting")
	}
	rd, _ := r.dev.DMAPorts()
	want := p.DMALatency + rd.Duration(len(blk))
	r.at(want - sim.Nanosecond)
	if r.irq.level {
		t.Error("end of DMA before its time")
	}
	r.at(want)
	if !r.irq.level || r.rd(atmtaxi.RegISR)&atmtaxi.IsrDMADone == 0 || r.rd(atmtaxi.RegDMAStat) != 0 {
		t.Errorf("at %v: no end-of-DMA interrupt", want)
	}
	// 2028 bytes at 139.08 Mbit/s plus 320 ns: 116.65 us + 0.32 us.
	if want < 116970*sim.Nanosecond || want > 116975*sim.Nanosecond {
		t.Errorf("39-cell DMA takes %v", want)
	}
	r.at(5 * sim.Millisecond)
	var got [][13]uint32
	for range 39 {
		got = append(got, r.readCell())
	}
	if d := cmp.Diff(sent, got); d != "" {
		t.Errorf("cells through DMA and the loop-back (-sent +got):\n%s", d)
	}
	r.noGuestErrors(t)
	// 40 cells exceed 2 KiB: refused, a guest error, DMASTAT.ERROR.
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|40*52)
	if r.rd(atmtaxi.RegDMAStat)&atmtaxi.DMAError == 0 || r.sys.Guest.Count() != 1 {
		t.Error("a 40-cell DMA was not refused")
	}
	// Out of memory: the DMA port refuses and reports.
	r.w(atmtaxi.RegDMAAddr, 0x7FFFF0)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|52)
	if r.rd(atmtaxi.RegDMAStat)&atmtaxi.DMAError == 0 || r.dev.Stats().DMAErrors != 2 {
		t.Errorf("DMA outside memory: DMAErrors %d", r.dev.Stats().DMAErrors)
	}
}

// Mode B: the header word by PIO, the payload by a 48-byte DMA, in both
// directions; the receive DMA writes memory under a cached copy, which a
// read without invalidation reports as stale.
func TestDMAModeB(t *testing.T) {
	r := newRig(t, atmtaxi.DefaultParams())
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn)
	vc := atmnet.VC{VCI: 70}
	const src, dst = 0x20000, 0x30000
	w := words(vc, 1, 9)
	pay := make([]byte, 48)
	for i := range 12 {
		binary.LittleEndian.PutUint32(pay[4*i:], w[1+i])
	}
	r.sys.Phys.Write(src, pay)
	r.w(atmtaxi.RegTxFIFO, w[0])
	r.w(atmtaxi.RegDMAAddr, src)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|atmtaxi.DMAModeB|48)
	r.at(sim.Millisecond)
	if r.rd(atmtaxi.RegTokens) != 1 {
		t.Fatal("the mode-B cell did not arrive")
	}
	// The receive side: the CPU caches the destination, then reads the
	// header by PIO and has the payload moved by DMA.
	r.sys.Cache.Access(dst, memory.Read)
	if hdr := r.rd(atmtaxi.RegRxFIFO); hdr != w[0] {
		t.Errorf("header word %#08x, want %#08x", hdr, w[0])
	}
	r.w(atmtaxi.RegDMAAddr, dst)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|atmtaxi.DMADirRx|atmtaxi.DMAModeB|48)
	if r.rd(atmtaxi.RegTokens) != 0 {
		t.Error("the cell is still in the FIFO after its payload DMA")
	}
	r.at(2 * sim.Millisecond)
	got := make([]byte, 48)
	r.sys.Phys.Read(dst, got)
	if d := cmp.Diff(pay, got); d != "" {
		t.Errorf("payload in memory (-want +got):\n%s", d)
	}
	r.noGuestErrors(t)
	r.sys.Cache.Access(dst, memory.Read) // the driver forgot to invalidate
	if n := r.sys.Guest.Count(); n != 1 || !strings.Contains(r.sys.Guest.Records()[0].Msg, "stale") {
		t.Errorf("a read of the stale cached line: %d guest errors %v", n, r.sys.Guest.Records())
	}
	// Mode B without a header first is refused.
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|atmtaxi.DMAModeB|48)
	if r.rd(atmtaxi.RegDMAStat)&atmtaxi.DMAError == 0 {
		t.Error("mode-B DMA without a header word accepted")
	}
}

// pduWords returns the 12-word payloads of an AAL5 PDU of n payload bytes;
// crc false leaves the CRC field zero (for the TX assist to fill).
func pduPayloads(n int, crc bool) [][12]uint32 {
	sdu := make([]byte, n)
	for i := range sdu {
		sdu[i] = byte(i*13 + 1)
	}
	pdu := header.AAL5(make([]byte, header.AAL5PDULen(n)))
	copy(pdu, sdu)
	pdu.Encode(&header.AAL5Fields{Length: uint16(n)})
	if !crc {
		clear(pdu[len(pdu)-4:])
	}
	var out [][12]uint32
	for off := 0; off < len(pdu); off += 48 {
		var w [12]uint32
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(pdu[off+4*i:])
		}
		out = append(out, w)
	}
	return out
}

// Header insertion and the CRC assists: the host writes only payload
// words (the CRC field left zero), PROTO supplies the header, the last
// cell's header gets the AUU bit from PROTO, the TX assist fills the CRC,
// and the RX assist checks each PDU; a damaged PDU is reported bad.
func TestAssists(t *testing.T) {
	p := atmtaxi.DefaultParams()
	p.HeaderInsertion, p.AAL5CRC = true, true
	r := newRig(t, p)
	tap := &wireRec{}
	r.loop.Network().Trace.Connect(tap.rec)
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrHdrInsert|atmtaxi.CsrTxCRC|atmtaxi.CsrRxCRC)
	vc := atmnet.VC{VPI: 2, VCI: 77}
	cells := pduPayloads(200, false)
	for i, c := range cells {
		pt := uint8(0)
		if i == len(cells)-1 {
			pt = 1
		}
		r.w(atmtaxi.RegProto, vc.Word(pt))
		for _, v := range c {
			r.w(atmtaxi.RegTxFIFO, v)
		}
	}
	r.at(sim.Millisecond)
	if len(tap.tx) != len(cells) {
		t.Fatalf("%d cells sent, want %d", len(tap.tx), len(cells))
	}
	pdu := make([]byte, 0, 48*len(cells))
	for _, c := range tap.tx {
		if c.VC() != vc {
			t.Errorf("inserted header on VC %v", c.VC())
		}
		pdu = append(pdu, c[5:]...)
	}
	if a := header.AAL5(pdu); !a.IsCRCValid() || !a.IsLengthValid() {
		t.Errorf("the TX assist's PDU: CRC valid %v length valid %v", a.IsCRCValid(), a.IsLengthValid())
	}
	for range cells {
		r.readCell()
	}
	st := r.rd(atmtaxi.RegRxCRC)
	want := uint32(atmtaxi.RxCRCEnd|atmtaxi.RxCRCGood|atmtaxi.RxCRCLenGood) | uint32(len(cells))<<atmtaxi.RxCRCCellsOff
	if st != want {
		t.Errorf("RXCRC %#x, want %#x", st, want)
	}
	// The same PDU with a flipped payload bit, sent by PIO with the TX
	// CRC off (the CRC of the good PDU): the RX assist reports it bad.
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrRxCRC)
	good := pduPayloads(200, true)
	good[1][3] ^= 0x100
	for i, c := range good {
		pt := uint8(0)
		if i == len(good)-1 {
			pt = 1
		}
		r.w(atmtaxi.RegTxFIFO, vc.Word(pt))
		for _, v := range c {
			r.w(atmtaxi.RegTxFIFO, v)
		}
	}
	r.at(2 * sim.Millisecond)
	for range good {
		r.readCell()
	}
	if st := r.rd(atmtaxi.RegRxCRC); st&atmtaxi.RxCRCGood != 0 || st&atmtaxi.RxCRCLenGood == 0 || st&atmtaxi.RxCRCEnd == 0 {
		t.Errorf("RXCRC %#x for a damaged PDU", st)
	}
	r.noGuestErrors(t)
	// DMA with header insertion: 48-byte payloads, the EOP bit marks the
	// last; the TX CRC fills its CRC.
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrHdrInsert|atmtaxi.CsrTxCRC|atmtaxi.CsrRxCRC)
	blk := make([]byte, 0, 48*len(cells))
	for _, c := range pduPayloads(200, false) {
		for _, v := range c {
			blk = binary.LittleEndian.AppendUint32(blk, v)
		}
	}
	r.sys.Phys.Write(0x40000, blk)
	r.w(atmtaxi.RegProto, vc.Word(0))
	r.w(atmtaxi.RegDMAAddr, 0x40000)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|atmtaxi.DMAEOP|uint32(len(blk)))
	r.at(3 * sim.Millisecond)
	for range cells {
		r.readCell()
	}
	if st := r.rd(atmtaxi.RegRxCRC); st != want {
		t.Errorf("RXCRC %#x after the DMA with insertion, want %#x", st, want)
	}
	r.noGuestErrors(t)
}

// An assist that is not fitted cannot be switched on.
func TestAssistNotFitted(t *testing.T) {
	r := newRig(t, atmtaxi.DefaultParams())
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrHdrInsert|atmtaxi.CsrSort)
	if got := r.rd(atmtaxi.RegCSR); got != atmtaxi.CsrTxEn || r.sys.Guest.Count() != 1 {
		t.Errorf("CSR %#x with %d guest errors, want TxEn only and one", got, r.sys.Guest.Count())
	}
}

// VCI sorting: the cells of two PDUs interleaved cell by cell on two VCs
// go straight into each VC's buffer; one completion each, CRC checked.
func TestVCISort(t *testing.T) {
	p := atmtaxi.DefaultParams()
	p.VCISort, p.AAL5CRC = true, true
	r := newRig(t, p)
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn|atmtaxi.CsrSort|atmtaxi.CsrRxCRC|atmtaxi.CsrSortInt)
	vcs := []atmnet.VC{{VCI: 100}, {VCI: 101}}
	bufs := []uint32{0x50000, 0x58000}
	for i, vc := range vcs {
		r.w(atmtaxi.RegVCSel, uint32(vc.VCI))
		r.w(atmtaxi.RegVCCtl, atmtaxi.VCSortOn)
		r.w(atmtaxi.RegVCSize, 4096)
		r.w(atmtaxi.RegVCBuf, bufs[i])
	}
	a, b := pduPayloads(300, true), pduPayloads(150, true)
	for i := range max(len(a), len(b)) {
		for j, pdu := range [][][12]uint32{a, b} {
			if i >= len(pdu) {
				continue
			}
			pt := uint8(0)
			if i == len(pdu)-1 {
				pt = 1
			}
			r.w(atmtaxi.RegTxFIFO, vcs[j].Word(pt))
			for _, v := range pdu[i] {
				r.w(atmtaxi.RegTxFIFO, v)
			}
		}
	}
	// A cell of an unsorted VC still goes to the FIFO.
	r.pioCell(words(atmnet.VC{VCI: 5}, 1, 0))
	r.at(sim.Millisecond)
	if !r.irq.level {
		t.Error("no completion interrupt")
	}
	type completion struct {
		Word, Len, Addr uint32
	}
	var got []completion
	for {
		w := r.rd(atmtaxi.RegDone)
		if w == 0 {
			break
		}
		got = append(got, completion{w, r.rd(atmtaxi.RegDoneLen), r.rd(atmtaxi.RegDoneAddr)})
	}
	ok := uint32(atmtaxi.DoneValid | atmtaxi.DoneCRCGood | atmtaxi.DoneLenGood)
	want := []completion{{ok | 101, uint32(48 * len(b)), bufs[1]}, {ok | 100, uint32(48 * len(a)), bufs[0]}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("completions (-want +got):\n%s", d)
	}
	for i, pdu := range [][][12]uint32{a, b} {
		mem := make([]byte, 48*len(pdu))
		r.sys.Phys.Read(memory.Addr(bufs[i]), mem)
		if !header.AAL5(mem).IsCRCValid() {
			t.Errorf("VC %d: the PDU in memory is not intact", i)
		}
	}
	if r.rd(atmtaxi.RegTokens) != 1 || r.dev.Stats().SortCells != uint64(len(a)+len(b)) {
		t.Errorf("TOKENS %d, sorted %d cells", r.rd(atmtaxi.RegTokens), r.dev.Stats().SortCells)
	}
	// No buffer armed any more: the next PDU's cells are dropped, counted,
	// and a completion without a buffer says so.
	r.pioCell(words(vcs[0], 1, 0))
	r.at(2 * sim.Millisecond)
	if w := r.rd(atmtaxi.RegDone); r.dev.Stats().SortNoBuffer != 1 || w != atmtaxi.DoneValid|atmtaxi.DoneLost|100 || r.rd(atmtaxi.RegDoneAddr) != 0 {
		t.Errorf("SortNoBuffer %d, DONE %#x", r.dev.Stats().SortNoBuffer, w)
	}
	r.noGuestErrors(t)
}

// A header error drops the cell and is counted; with hec_correct a
// single-bit error is corrected.
func TestHECOnReceive(t *testing.T) {
	for _, correct := range []bool{false, true} {
		p := atmtaxi.DefaultParams()
		p.HECCorrect = correct
		r := newRig(t, p)
		r.w(atmtaxi.RegCSR, atmtaxi.CsrRxEn)
		var c atmnet.Cell
		c.SetWord(atmnet.VC{VCI: 33}.Word(1))
		c[2] ^= 0x04
		r.dev.ReceiveCell(&c)
		tokens, bad := r.rd(atmtaxi.RegTokens), r.rd(atmtaxi.RegHECErr)
		if correct && (tokens != 1 || bad != 0 || r.dev.Stats().RxCorrected != 1) || !correct && (tokens != 0 || bad != 1) {
			t.Errorf("hec_correct %v: TOKENS %d HECERR %d", correct, tokens, bad)
		}
	}
}

// Misprogramming never panics: every register at every width with
// arbitrary values, then the interface still works.
func FuzzRegisters(f *testing.F) {
	f.Add([]byte{0x24, 0x80, 0, 0, 0x34, 0x00, 0x01, 0x00, 0x00, 0x01})
	f.Add([]byte{0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00})
	f.Fuzz(func(t *testing.T, ops []byte) {
		p := atmtaxi.DefaultParams()
		p.HeaderInsertion, p.AAL5CRC, p.VCISort = true, true, true
		r := newRig(t, p)
		for len(ops) >= 6 {
			off := uint64(ops[0]) << 2 & (atmtaxi.Size - 1)
			if ops[1]&0x80 != 0 {
				off = atmtaxi.RegTxFIFO
			} else if ops[1]&0x40 != 0 {
				off = atmtaxi.RegRxFIFO
			}
			v := binary.LittleEndian.Uint32(ops[2:])
			size := []int{1, 2, 4, 4}[ops[1]&3]
			if ops[1]&4 != 0 {
				r.dev.Read(off, size)
			} else {
				r.dev.Write(off, size, uint64(v))
			}
			r.at(r.k.Now() + sim.Time(ops[1]&0x38)*sim.Microsecond)
			ops = ops[6:]
		}
		r.at(r.k.Now() + sim.Millisecond)
		r.w(atmtaxi.RegCSR, atmtaxi.CsrReset)
		r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn)
		r.pioCell(words(atmnet.VC{VCI: 40}, 1, 1))
		r.at(r.k.Now() + sim.Millisecond)
		if r.rd(atmtaxi.RegTokens) != 1 {
			t.Fatalf("after reset the interface does not loop a cell back: TOKENS %d", r.rd(atmtaxi.RegTokens))
		}
	})
}

// fifoRec records what the FIFO trace source fires.
type fifoRec struct {
	tx         bool
	vci        uint16
	begin, end sim.Time
}

// The FIFO trace source fires each cell crossing between host and FIFO when it
// does: by PIO from its first word to its last (transmit and receive), by
// mode-A DMA over the transfer's share of it, by mode B from the header
// word written or read by PIO to the payload's DMA ending.
func TestFIFOTrace(t *testing.T) {
	p := atmtaxi.DefaultParams()
	r := newRig(t, p)
	var got []fifoRec
	r.dev.FIFO.Connect(func(c card.FIFOCell) { got = append(got, fifoRec{c.Tx, c.VCI, c.Begin, c.End}) })
	r.w(atmtaxi.RegCSR, atmtaxi.CsrTxEn|atmtaxi.CsrRxEn)
	vc := atmnet.VC{VCI: 80}
	w := words(vc, 1, 3)
	// PIO transmit: the words at 1, 2, ... 13 us.
	for i, v := range w {
		r.at(sim.Time(i+1) * sim.Microsecond)
		r.w(atmtaxi.RegTxFIFO, v)
	}
	// PIO receive of it, a word a microsecond from 100 us.
	r.at(100 * sim.Microsecond)
	for i := range 13 {
		r.at(sim.Time(100+i) * sim.Microsecond)
		r.rd(atmtaxi.RegRxFIFO)
	}
	// Mode-A transmit of two cells from memory at 200 us.
	const base = 0x10000
	blk := make([]byte, 2*52)
	for c := range 2 {
		for j, v := range words(vc, uint8(c), byte(c)) {
			binary.LittleEndian.PutUint32(blk[c*52+4*j:], v)
		}
	}
	r.sys.Phys.Write(base, blk)
	r.at(200 * sim.Microsecond)
	r.w(atmtaxi.RegDMAAddr, base)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|uint32(len(blk)))
	// Mode-B receive of the first of them at 300 us: header by PIO at
	// 300 us, the payload's DMA at 301 us.
	r.at(300 * sim.Microsecond)
	r.rd(atmtaxi.RegRxFIFO)
	r.at(301 * sim.Microsecond)
	r.w(atmtaxi.RegDMAAddr, 0x20000)
	r.w(atmtaxi.RegDMACtl, atmtaxi.DMAGo|atmtaxi.DMADirRx|atmtaxi.DMAModeB|48)
	r.at(400 * sim.Microsecond)
	rd, wr := r.dev.DMAPorts()
	a := 200*sim.Microsecond + p.DMALatency
	want := []fifoRec{
		{true, 80, 1 * sim.Microsecond, 13 * sim.Microsecond},
		{false, 80, 100 * sim.Microsecond, 112 * sim.Microsecond},
		{true, 80, a, a + rd.Duration(52)},
		{true, 80, a + rd.Duration(52), a + rd.Duration(104)},
		{false, 80, 300 * sim.Microsecond, 301*sim.Microsecond + p.DMALatency + wr.Duration(48)},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(fifoRec{})); d != "" {
		t.Errorf("FIFO crossings (-want +got):\n%s", d)
	}
	r.noGuestErrors(t)
}
