// Package atmtaxi models the Olivetti Research "Yes V2" TURBOchannel ATM
// interface at register level (docs/reference/atm-taxi.md sec. 4): a
// transmit and a receive cell FIFO of 76 cells between the host and a
// 100 Mbit/s TAXI line, a token FIFO counting completely received cells,
// programmed I/O of 13-word cells (the interface makes the HEC), DMA in
// both directions in the seed's modes A (whole cells pre-formatted in
// memory) and B (the header word by PIO, then a 48-byte payload DMA) of
// up to 2 KiB a transfer, receive interrupts per cell or on the header
// indication flag, transmit interrupts on a FIFO less than half full and
// at the end of a DMA, and counted overflows. The seed's proposed
// hardware assists (sec. 6) are optional, each fitted by a parameter:
// header insertion from a prototype header register, AAL5 CRC-32
// generation and checking, and sorting received cells by VCI straight
// into host buffers. The register map is in regs.go.
//
// It is hardware: it knows nothing of the driver. The host reaches it
// through its registers (memory.Device) and host memory through two DMA
// ports of the memory system; the line is an atmnet.End, and the device
// is that end's Receiver.
//
// Timing. Register accesses act at the kernel's time; their bus cost is
// the CPU's. A complete cell in the transmit FIFO leaves for the line as
// soon as the line is free (one per slot). A cell from the line is
// checked (HEC) and stored when its last bit arrives. A DMA takes
// dma_latency plus its bytes at the direction's rate; a transmit DMA
// feeds each cell into the FIFO when its last word has crossed, a receive
// DMA removes its cells from the FIFO at the start and ends with
// ISR.DMADONE.
//
// Simplifications, each a modelling choice: the receive FIFO holds whole
// cells (the HEC checked and stripped, the header word kept); a DMA moves
// the memory bytes at its start (memory.DMAPort) and the cells' timing is
// modelled apart; the transmit FIFO's capacity counts a partly written
// cell as a whole one; the RX CRC assist keeps one running context per
// entry of a direct-mapped table (2^vci_bits entries), and a VC whose
// entry another VC takes mid-PDU is reported as lost rather than swapped
// out (the seed's "context swap" is left to software); the sorter holds
// up to 32 completions and four armed buffers per VC; a host DMA started
// while the sorter moves a cell waits for that cell (the engine serves
// the host next).
package atmtaxi

import (
	"encoding/binary"

	"simkron/card"
	"simkron/cpu"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/sim"
	"simkron/trace"
)

var (
	_ memory.Device      = (*Device)(nil)
	_ memory.BlockDevice = (*Device)(nil)
	_ memory.Peeker      = (*Device)(nil)
	_ atmnet.Receiver    = (*Device)(nil)
)

// Stats counts the interface's events.
type Stats struct {
	TxCells      uint64   `stat:"tx_cells" help:"cells sent to the line"`
	TxPIOWords   uint64   `stat:"tx_pio_words" help:"words written to the transmit data port"`
	TxOverflow   uint64   `stat:"tx_overflow" help:"words written while the transmit FIFO was full (dropped)"`
	RxCells      uint64   `stat:"rx_cells" help:"cells stored in the receive FIFO"`
	RxPIOWords   uint64   `stat:"rx_pio_words" help:"words read from the receive data port"`
	RxOverflow   uint64   `stat:"rx_overflow" help:"cells lost: receive FIFO full"`
	RxBadHEC     uint64   `stat:"rx_bad_hec" help:"cells dropped: header error"`
	RxCorrected  uint64   `stat:"rx_corrected" help:"single-bit header errors corrected (hec_correct)"`
	RxDisabled   uint64   `stat:"rx_disabled" help:"cells that arrived with the receiver off"`
	RxUnderrun   uint64   `stat:"rx_underrun" help:"reads of an empty receive FIFO"`
	DMATransfers uint64   `stat:"dma_transfers" help:"DMAs that ran"`
	DMABytes     uint64   `stat:"dma_bytes" help:"bytes the DMAs moved"`
	DMABusy      sim.Time `stat:"dma_busy_ps" help:"summed DMA durations (latency and transfer), in picoseconds"`
	DMAReadBusy  sim.Time `stat:"dma_read_busy_ps" help:"of them, transfers memory to interface, in picoseconds"`
	DMAWriteBusy sim.Time `stat:"dma_write_busy_ps" help:"of them, transfers interface to memory (the sorter's too), in picoseconds"`
	DMAErrors    uint64   `stat:"dma_errors" help:"DMAs refused: a bad length or address"`
	Interrupts   uint64   `stat:"interrupts" help:"rising edges of the interrupt line"`
	TxCRCPDUs    uint64   `stat:"tx_crc_pdus" help:"PDUs whose CRC-32 the TX assist filled in"`
	RxCRCPDUs    uint64   `stat:"rx_crc_pdus" help:"PDUs the RX assist checked"`
	RxCRCLost    uint64   `stat:"rx_crc_lost" help:"PDUs whose context another VC took mid-PDU"`
	SortCells    uint64   `stat:"sort_cells" help:"cells sorted into host buffers"`
	SortPDUs     uint64   `stat:"sort_pdus" help:"completions posted"`
	SortNoBuffer uint64   `stat:"sort_no_buffer" help:"cells dropped: no buffer armed for the VC"`
	SortOverrun  uint64   `stat:"sort_overrun" help:"PDUs cut short: buffer too small"`
	SortDoneFull uint64   `stat:"sort_done_full" help:"completions lost: the DONE FIFO full"`
	GuestErrors  uint64   `stat:"guest_errors" help:"misuses reported to the guest log"`
}

// rxEntry is one cell in the receive FIFO: its header word, its payload
// words, and the RX CRC assist's verdict on the PDU it ends.
type rxEntry struct {
	words  [cellWords]uint32
	status uint32
}

// rxCtx is one entry of the receive context table: the RX CRC assist's
// running state and the sorter's buffers for one VC.
type rxCtx struct {
	vci   uint16
	inUse bool // a PDU is in progress under vci
	crc   uint32
	cells int
	// Sorter state.
	sort    bool
	bufs    [vcBuffers]sortBuf // armed buffers, the current first
	nbufs   int
	size    uint32 // VCSIZE for the buffer armed next
	off     uint32
	broken  bool // cells of this PDU were dropped
	overrun bool
}

type sortBuf struct{ addr, size uint32 }

type done struct{ word, len, addr uint32 }

// txCell is a cell a transmit DMA delivers into the FIFO at a time, its
// first word having crossed at begin.
type txCell struct {
	begin, at sim.Time
	cell      atmnet.Cell
}

// Device is one Yes V2.
type Device struct {
	name  string
	k     *sim.Scheduler
	p     Params
	irq   cpu.IRQ
	guest *memory.GuestLog
	rd    *memory.DMAPort // memory → interface
	wr    *memory.DMAPort // interface → memory
	line  *atmnet.End

	csr, isr, proto   uint32
	dmaAddr, dmaCtl   uint32
	dmaBusy, dmaError bool
	rxcrc             uint32
	irqLevel          bool

	// Transmit FIFO: complete cells, and the one being written by PIO.
	tx       []atmnet.Cell // ring
	txHead   int
	txLen    int
	txPart   [cellWords]uint32
	txWords  int // words of txPart written (1 in mode B: the header waits for its payload DMA)
	txCRC    uint32
	txCRCVC  uint32 // label (VPI/VCI bits) of the PDU the TX assist is running over
	txCRCRun bool
	txDMA    []txCell // cells a transmit DMA is still delivering
	txDMAEv  *sim.Event

	// Receive FIFO.
	rx       []rxEntry // ring
	rxHead   int
	rxLen    int
	rxWord   int // words of the head cell read by PIO
	flags    int // flagged cells in the FIFO
	overflow uint32
	hecErr   uint32

	ctx      []rxCtx
	vcSel    uint32
	sortQ    []atmnet.Cell // cells waiting for the sorter's DMA
	dones    []done
	lastDone done

	dmaEnd  *sim.Event
	dmaSort bool // the running DMA is the sorter's
	// A host DMA started while the sorter's DMA of a cell runs waits for
	// it: the engine serves the host's request next.
	hostWait          bool
	hostCtl, hostAddr uint32
	sortCell          atmnet.Cell
	buf               []byte

	// FIFO is the interface's trace source of the cells crossing
	// between the host and the FIFOs: a cell entering the transmit FIFO
	// (Tx; its first word written by PIO or carried by DMA at Begin,
	// complete in the FIFO at End) or leaving the receive FIFO (its
	// first word read, or its DMA begun, at Begin; its last word read,
	// or its payload in memory, at End), with its VCI; cells the VCI
	// sorter moves into host memory count as leaving the receive FIFO.
	// It is what an oscilloscope on the FIFOs' strobes shows. A listener
	// only looks.
	FIFO trace.Source[card.FIFOCell]
	// Line is the interface's trace source of the cells it puts on its
	// line, fired as each one's first bit leaves (the moment the line's
	// End.Send takes it), its HEC made. The cell is valid only during the
	// call. A listener only looks.
	Line trace.Source[*atmnet.Cell]
	// When the cell being written by PIO began and the head cell's first
	// word was read.
	txBegin, rxBegin sim.Time

	stats Stats
}

// New returns an interface named name ("hostA.atm0") raising irq (nil:
// none), reporting guest misuse to the memory system's guest log and
// reaching host memory through two DMA ports of sys made from p. p must
// be valid (Params.Validate). It starts reset: both FIFOs empty,
// transmitter and receiver off. Attach the line with SetLine.
func New(k *sim.Scheduler, name string, p Params, irq cpu.IRQ, sys *memory.System) *Device {
	if l, ok := irq.(*cpu.IRQLine); ok && l == nil {
		irq = nil
	}
	d := &Device{name: name, k: k, p: p, irq: irq, guest: sys.Guest}
	d.rd = sys.NewDMAPort(name+".rd", int64(p.DMAReadRate/8), p.DMACoherent)
	d.wr = sys.NewDMAPort(name+".wr", int64(p.DMAWriteRate/8), p.DMACoherent)
	d.tx = make([]atmnet.Cell, p.TxFIFOCells)
	d.rx = make([]rxEntry, p.RxFIFOCells)
	d.ctx = make([]rxCtx, 1<<p.VCIBits)
	d.txDMAEv = sim.NewEventPriority(name+".txdma", sim.PriorityDevice, d.txDMADeliver)
	d.dmaEnd = sim.NewEventPriority(name+".dmaend", sim.PriorityDevice, d.dmaDone)
	d.buf = make([]byte, p.DMAMaxBytes)
	return d
}

// showFIFO fires FIFO: a cell crossed.
func (d *Device) showFIFO(tx bool, vci uint16, begin, end sim.Time) {
	d.FIFO.Fire(card.FIFOCell{Tx: tx, VCI: vci, Begin: begin, End: end})
}

// SetLine attaches the interface to a line end: cells go out through it
// and come in from it.
func (d *Device) SetLine(e *atmnet.End) {
	d.line = e
	e.SetReceiver(d)
	e.OnTxDone = d.kickTx
}

// Name implements memory.Device.
func (d *Device) Name() string { return d.name }

// Params returns the parameters.
func (d *Device) Params() Params { return d.p }

// Stats returns the counters.
func (d *Device) Stats() Stats { return d.stats }

// DMAPorts returns the read (memory → interface) and write ports.
func (d *Device) DMAPorts() (rd, wr *memory.DMAPort) { return d.rd, d.wr }

func (d *Device) report(format string, args ...any) {
	d.stats.GuestErrors++
	d.guest.Report(d.k.Now(), d.name, format, args...)
}

// Read implements memory.Device: 32-bit accesses only.
func (d *Device) Read(off uint64, size int) uint64 {
	if size != 4 || off&3 != 0 {
		d.report("read of %d bytes at %#x: the interface answers only aligned 32-bit reads", size, off)
		return 1<<(8*size) - 1
	}
	v := d.readReg(off, false)
	d.update()
	return uint64(v)
}

// Peek implements memory.Peeker: registers without side effects (the data
// ports and the read-to-clear counters have none to offer).
func (d *Device) Peek(off uint64) (uint64, bool) {
	if off >= RegTxFIFO || off == RegDone || off == RegOverflow || off == RegHECErr {
		return 0, false
	}
	return uint64(d.readReg(off, true)), true
}

func (d *Device) readReg(off uint64, peek bool) uint32 {
	switch off {
	case RegCSR:
		return d.csr
	case RegISR:
		return d.isr
	case RegTxSpace:
		n := d.p.TxFIFOCells - d.txLen - len(d.txDMA)
		if d.txWords > 0 {
			n--
		}
		return uint32(max(n, 0))
	case RegTokens:
		return uint32(d.rxLen)
	case RegFlags:
		return uint32(d.flags)
	case RegOverflow:
		v := d.overflow
		d.overflow = 0
		return v
	case RegHECErr:
		v := d.hecErr
		d.hecErr = 0
		return v
	case RegProto:
		return d.proto
	case RegDMAAddr:
		return d.dmaAddr
	case RegDMACtl:
		return d.dmaCtl
	case RegDMAStat:
		var v uint32
		if d.dmaBusy && !d.dmaSort || d.hostWait {
			v |= DMABusy
		}
		if d.dmaError {
			v |= DMAError
		}
		return v
	case RegRxCRC:
		return d.rxcrc
	case RegVCSel:
		return d.vcSel
	case RegVCCtl:
		if d.selCtx().sort {
			return VCSortOn
		}
		return 0
	case RegVCSize:
		return d.selCtx().size
	case RegVCBuf:
		c := d.selCtx()
		if c.nbufs == 0 {
			return 0
		}
		return c.bufs[0].addr
	case RegDone:
		if len(d.dones) == 0 {
			d.lastDone = done{}
			return 0
		}
		d.lastDone = d.dones[0]
		d.dones = d.dones[1:]
		return d.lastDone.word
	case RegDoneLen:
		return d.lastDone.len
	case RegDoneAddr:
		return d.lastDone.addr
	case RegRxFIFO:
		if peek {
			return 0
		}
		return d.popWord()
	case RegTxFIFO:
		d.report("read of the write-only transmit data port")
		return 0xFFFFFFFF
	}
	if !peek {
		d.report("read of %#x: no register there", off)
	}
	return 0xFFFFFFFF
}

// Write implements memory.Device.
func (d *Device) Write(off uint64, size int, v uint64) {
	if size != 4 || off&3 != 0 {
		d.report("write of %d bytes at %#x: the interface takes only aligned 32-bit writes", size, off)
		return
	}
	d.writeReg(off, uint32(v))
	d.update()
}

func (d *Device) writeReg(off uint64, v uint32) {
	switch off {
	case RegCSR:
		d.writeCSR(v)
	case RegISR:
		d.isr &^= v & isrMask
	case RegProto:
		d.proto = v
	case RegDMAAddr:
		d.dmaAddr = v
	case RegDMACtl:
		d.dmaCtl = v
		if v&DMAGo != 0 {
			d.startDMA(v)
		}
	case RegVCSel:
		d.vcSel = v & 0xFFFF
	case RegVCCtl:
		c := d.selCtx()
		on := v&VCSortOn != 0
		if on && !d.p.VCISort {
			d.report("VCCTL: VCI sorting is not fitted (params.vci_sort)")
			on = false
		}
		if c.sort && !on {
			c.nbufs, c.off, c.broken, c.overrun = 0, 0, false, false
		}
		c.sort = on
		c.vci = uint16(d.vcSel)
	case RegVCSize:
		d.selCtx().size = v
	case RegVCBuf:
		c := d.selCtx()
		if c.nbufs == vcBuffers {
			d.report("VCBUF for VCI %d: %d buffers already armed", d.vcSel, vcBuffers)
			return
		}
		if c.size < payloadBytes {
			d.report("VCBUF for VCI %d: VCSIZE %d is less than one cell's payload", d.vcSel, c.size)
			return
		}
		c.bufs[c.nbufs] = sortBuf{addr: v, size: c.size}
		c.nbufs++
	case RegTxFIFO:
		d.pushWord(v)
	case RegTokens, RegTxSpace, RegFlags, RegOverflow, RegHECErr, RegDMAStat, RegRxCRC, RegDone, RegDoneLen, RegDoneAddr, RegRxFIFO:
		d.report("write of %#x to read-only register %#x", v, off)
	default:
		d.report("write of %#x to %#x: no register there", v, off)
	}
}

func (d *Device) writeCSR(v uint32) {
	if v&CsrReset != 0 {
		d.reset()
		return
	}
	fitted := uint32(0)
	if d.p.HeaderInsertion {
		fitted |= CsrHdrInsert
	}
	if d.p.AAL5CRC {
		fitted |= CsrTxCRC | CsrRxCRC
	}
	if d.p.VCISort {
		fitted |= CsrSort
	}
	if miss := v & csrAssists &^ fitted; miss != 0 {
		d.report("CSR %#x enables assists %#x that are not fitted", v, miss)
		v &^= miss
	}
	if (v^d.csr)&CsrHdrInsert != 0 && d.txWords > 0 {
		d.report("CSR: header insertion switched with a cell half written; the partial cell is dropped")
		d.txWords = 0
	}
	d.csr = v & csrMask
	d.kickTx()
}

// reset empties everything, as CSR.RESET does.
func (d *Device) reset() {
	d.csr, d.isr, d.proto, d.rxcrc = 0, 0, 0, 0
	d.txHead, d.txLen, d.txWords, d.txCRCRun = 0, 0, 0, false
	d.txDMA = d.txDMA[:0]
	d.k.Cancel(d.txDMAEv)
	d.rxHead, d.rxLen, d.rxWord, d.flags = 0, 0, 0, 0
	d.overflow, d.hecErr = 0, 0
	clear(d.ctx)
	d.sortQ = d.sortQ[:0]
	d.dones = d.dones[:0]
	d.lastDone = done{}
	d.dmaBusy, d.dmaError, d.dmaSort, d.hostWait = false, false, false, false
	d.k.Cancel(d.dmaEnd)
}

// update drives the interrupt line from ISR and the CSR enables.
func (d *Device) update() {
	var en uint32
	if d.csr&CsrRxIntCell != 0 {
		en |= IsrRxCell
	}
	if d.csr&CsrRxIntFlag != 0 {
		en |= IsrRxFlag
	}
	if d.csr&CsrTxIntHalf != 0 {
		en |= IsrTxHalf
	}
	if d.csr&CsrDMAInt != 0 {
		en |= IsrDMADone | IsrDMAErr
	}
	if d.csr&CsrOvfInt != 0 {
		en |= IsrRxOvf
	}
	if d.csr&CsrSortInt != 0 {
		en |= IsrSortDone
	}
	level := d.isr&en != 0
	if level == d.irqLevel {
		return
	}
	d.irqLevel = level
	if level {
		d.stats.Interrupts++
	}
	if d.irq != nil {
		d.irq.Set(level)
	}
}

// selCtx returns the context entry of VCSEL.
func (d *Device) selCtx() *rxCtx { return &d.ctx[int(d.vcSel)&(len(d.ctx)-1)] }

// ---- Transmit ----

// pushWord takes one word written to the transmit data port.
func (d *Device) pushWord(v uint32) {
	d.stats.TxPIOWords++
	ins := d.csr&CsrHdrInsert != 0
	if d.txWords == 0 && d.txLen+len(d.txDMA) >= d.p.TxFIFOCells {
		d.stats.TxOverflow++
		d.report("write to the transmit data port with the FIFO full (%d cells): word dropped", d.p.TxFIFOCells)
		return
	}
	if d.txWords == 0 {
		d.txBegin = d.k.Now()
	}
	if ins && d.txWords == 0 {
		d.txPart[0] = d.proto
		d.txWords = 1
	}
	d.txPart[d.txWords] = v
	d.txWords++
	if d.txWords == cellWords {
		d.txWords = 0
		var c atmnet.Cell
		d.fill(&c, &d.txPart)
		if d.FIFO.Listened() {
			d.showFIFO(true, c.VCI(), d.txBegin, d.k.Now())
		}
		d.enqueueTx(&c)
	}
}

// fill builds a wire cell from a header word and 12 payload words (each
// sent least significant byte first); the HEC is made at sending.
func (d *Device) fill(c *atmnet.Cell, w *[cellWords]uint32) {
	binary.BigEndian.PutUint32(c[0:], w[0])
	for i := 1; i < cellWords; i++ {
		binary.LittleEndian.PutUint32(c[atmnet.HeaderSize+4*(i-1):], w[i])
	}
}

// enqueueTx puts a complete cell in the transmit FIFO, after the TX CRC
// assist.
func (d *Device) enqueueTx(c *atmnet.Cell) {
	if d.csr&CsrTxCRC != 0 {
		d.txCRCCell(c)
	}
	if d.txLen == len(d.tx) {
		// Callers check room first; a DMA delivering into a FIFO that PIO
		// filled meanwhile lands here.
		d.stats.TxOverflow++
		d.report("transmit FIFO overflow: a cell is dropped")
		return
	}
	d.tx[(d.txHead+d.txLen)%len(d.tx)] = *c
	d.txLen++
	d.kickTx()
}

// txCRCCell runs the TX CRC assist over a cell: the running CRC of the
// PDU covers every payload byte; in the cell that ends the PDU the last
// four bytes are replaced by the CRC.
func (d *Device) txCRCCell(c *atmnet.Cell) {
	label := c.Word() & 0x0FFFFFF0
	if !d.txCRCRun {
		d.txCRCRun, d.txCRC, d.txCRCVC = true, atmnet.CRC32Init, label
	} else if label != d.txCRCVC {
		d.report("TX CRC assist: a cell of VC %v interleaved into a PDU of another VC; the CRC restarts", c.VC())
		d.txCRC, d.txCRCVC = atmnet.CRC32Init, label
	}
	p := c[atmnet.HeaderSize:]
	if !c.EndOfPDU() {
		d.txCRC = atmnet.CRC32Update(d.txCRC, p)
		return
	}
	d.txCRC = atmnet.CRC32Update(d.txCRC, p[:atmnet.PayloadSize-4])
	binary.BigEndian.PutUint32(p[atmnet.PayloadSize-4:], ^d.txCRC)
	d.txCRCRun = false
	d.stats.TxCRCPDUs++
}

// kickTx sends the head cell if the transmitter is on and the line free;
// it is also the line's OnTxDone.
func (d *Device) kickTx() {
	if d.csr&CsrTxEn == 0 || d.txLen == 0 || d.line == nil || d.line.Busy() {
		return
	}
	half := d.p.TxFIFOCells / 2
	c := &d.tx[d.txHead]
	c[4] = atmnet.HEC(c[:4])
	if d.Line.Listened() {
		d.Line.Fire(c)
	}
	if err := d.line.Send(c); err != nil {
		panic("atmtaxi: " + d.name + ": line refused a cell while idle: " + err.Error())
	}
	d.txHead = (d.txHead + 1) % len(d.tx)
	d.txLen--
	d.stats.TxCells++
	if d.txLen+len(d.txDMA) == half-1 {
		d.isr |= IsrTxHalf
	}
	d.update()
}

// ---- Receive ----

// ReceiveCell implements atmnet.Receiver: a cell's last bit has arrived.
func (d *Device) ReceiveCell(c *atmnet.Cell) {
	defer d.update()
	if d.csr&CsrRxEn == 0 {
		d.stats.RxDisabled++
		return
	}
	if !c.HECOK() {
		if !d.p.HECCorrect || !c.CorrectHEC() {
			d.stats.RxBadHEC++
			d.hecErr++
			return
		}
		d.stats.RxCorrected++
	}
	if d.csr&CsrSort != 0 {
		if x := &d.ctx[int(c.VCI())&(len(d.ctx)-1)]; x.sort && x.vci == c.VCI() {
			d.sortArrive(c, x)
			return
		}
	}
	if d.rxLen+len(d.sortQ) >= d.p.RxFIFOCells {
		d.stats.RxOverflow++
		d.overflow++
		d.isr |= IsrRxOvf
		return
	}
	e := &d.rx[(d.rxHead+d.rxLen)%len(d.rx)]
	e.words[0] = c.Word()
	for i := range payloadWords {
		e.words[1+i] = binary.LittleEndian.Uint32(c[atmnet.HeaderSize+4*i:])
	}
	e.status = 0
	if d.csr&CsrRxCRC != 0 {
		e.status = d.rxCRCCell(c)
	}
	d.rxLen++
	d.stats.RxCells++
	d.isr |= IsrRxCell
	if c.EndOfPDU() {
		d.flags++
		d.isr |= IsrRxFlag
	}
}

// rxCRCCell runs the RX CRC assist's context for c's VC over it and
// returns the RXCRC word for it.
func (d *Device) rxCRCCell(c *atmnet.Cell) uint32 {
	x := &d.ctx[int(c.VCI())&(len(d.ctx)-1)]
	lost := false
	if x.inUse && x.vci != c.VCI() {
		lost = true // the entry held another VC's PDU: it is gone
		d.stats.RxCRCLost++
	}
	if !x.inUse || x.vci != c.VCI() {
		x.inUse, x.vci, x.crc, x.cells = true, c.VCI(), atmnet.CRC32Init, 0
	}
	x.crc = atmnet.CRC32Update(x.crc, c[atmnet.HeaderSize:])
	x.cells++
	if !c.EndOfPDU() {
		return 0
	}
	d.stats.RxCRCPDUs++
	st := d.aal5Status(x.crc, c[atmnet.HeaderSize:], x.cells)
	if lost {
		st |= RxCRCLost
	}
	x.inUse = false
	return st
}

// aal5Status checks the CRC residue and the Length of a PDU of cells
// cells whose last payload is last.
func (d *Device) aal5Status(crc uint32, last []byte, cells int) uint32 {
	st := uint32(RxCRCEnd) | uint32(min(cells, 0xFFFF))<<RxCRCCellsOff
	if crc == atmnet.CRC32Residue {
		st |= RxCRCGood
	}
	n := int(binary.BigEndian.Uint16(last[atmnet.PayloadSize-6:]))
	if n > 0 && last[atmnet.PayloadSize-7] == 0 && (n+8+atmnet.PayloadSize-1)/atmnet.PayloadSize == cells {
		st |= RxCRCLenGood
	}
	return st
}

// popWord reads the next word of the receive FIFO's head cell.
func (d *Device) popWord() uint32 {
	if d.rxLen == 0 {
		d.stats.RxUnderrun++
		d.report("read of the empty receive FIFO")
		return 0xFFFFFFFF
	}
	d.stats.RxPIOWords++
	e := &d.rx[d.rxHead]
	if d.rxWord == 0 {
		d.rxBegin = d.k.Now()
	}
	v := e.words[d.rxWord]
	d.rxWord++
	if d.rxWord == cellWords {
		d.popCell(d.rxBegin, d.k.Now())
	}
	return v
}

// popCell removes the head cell of the receive FIFO, which crossed to the
// host from begin to end.
func (d *Device) popCell(begin, end sim.Time) {
	e := &d.rx[d.rxHead]
	if d.FIFO.Listened() {
		d.showFIFO(false, uint16(e.words[0]>>4), begin, end)
	}
	if e.words[0]&0xA == 2 { // user data (PT bit 3 clear) with the AUU bit: PT 001 or 011
		d.flags--
	}
	d.rxcrc = e.status
	d.rxHead = (d.rxHead + 1) % len(d.rx)
	d.rxLen--
	d.rxWord = 0
}

// ReadBlock implements memory.BlockDevice for string reads of the
// receive data port.
func (d *Device) ReadBlock(off uint64, width int, p []byte) {
	for i := 0; i+width <= len(p); i += width {
		v := d.Read(off, width)
		for j := range width {
			p[i+j] = byte(v >> (8 * j))
		}
	}
}

// WriteBlock implements memory.BlockDevice for string writes of the
// transmit data port.
func (d *Device) WriteBlock(off uint64, width int, p []byte) {
	for i := 0; i+width <= len(p); i += width {
		var v uint64
		for j := range width {
			v |= uint64(p[i+j]) << (8 * j)
		}
		d.Write(off, width, v)
	}
}

// ---- DMA ----

func (d *Device) dmaRefuse(format string, args ...any) {
	d.stats.DMAErrors++
	d.dmaError = true
	d.isr |= IsrDMAErr
	d.report(format, args...)
}

// startDMA begins the host-programmed transfer DMACTL describes.
func (d *Device) startDMA(v uint32) {
	n := int(v & DMACountMask)
	rx, modeB, eop := v&DMADirRx != 0, v&DMAModeB != 0, v&DMAEOP != 0
	ins := d.csr&CsrHdrInsert != 0
	switch {
	case d.dmaBusy && d.dmaSort && !d.hostWait:
		d.hostWait, d.hostCtl, d.hostAddr = true, v, d.dmaAddr
		return
	case d.dmaBusy || d.hostWait:
		d.dmaRefuse("DMA started while one is running")
		return
	case n == 0 || n > int(d.p.DMAMaxBytes):
		d.dmaRefuse("DMA of %d bytes: the limit is %v", n, d.p.DMAMaxBytes)
		return
	case d.dmaAddr&3 != 0:
		d.dmaRefuse("DMA address %#x is not word aligned", d.dmaAddr)
		return
	}
	d.dmaError = false
	if rx {
		d.startRxDMA(n, modeB)
		return
	}
	// Transmit: how the bytes make cells.
	var cells int
	switch {
	case ins:
		if n%payloadBytes != 0 || d.txWords != 0 {
			d.dmaRefuse("transmit DMA with header insertion: %d bytes is not a whole number of 48-byte payloads, or a PIO cell is half written", n)
			return
		}
		cells = n / payloadBytes
	case modeB:
		if n != payloadBytes || d.txWords != 1 {
			d.dmaRefuse("mode-B transmit DMA of %d bytes: want 48 bytes after just the header word written by PIO (%d words written)", n, d.txWords)
			return
		}
		cells = 1
	default:
		if n%cellBytes != 0 || d.txWords != 0 {
			d.dmaRefuse("mode-A transmit DMA of %d bytes: not a whole number of 52-byte cells, or a PIO cell is half written", n)
			return
		}
		cells = n / cellBytes
	}
	room := d.p.TxFIFOCells - d.txLen - len(d.txDMA)
	if cells > room {
		d.dmaRefuse("transmit DMA of %d cells with room for %d in the FIFO", cells, room)
		return
	}
	buf := d.buf[:n]
	dur, err := d.rd.Read(memory.Addr(d.dmaAddr), buf)
	if err != nil {
		d.dmaRefuse("transmit DMA: %v", err)
		return
	}
	d.stats.DMATransfers++
	d.stats.DMABytes += uint64(n)
	start := d.k.Now() + d.p.DMALatency
	per := n / cells
	for i := range cells {
		var w [cellWords]uint32
		src := buf[i*per : (i+1)*per]
		j := 0
		switch {
		case ins:
			w[0] = d.proto
			if eop && i == cells-1 {
				w[0] |= 2 // the AUU bit of PT
			} else if eop {
				w[0] &^= 2
			}
		case modeB:
			w[0] = d.txPart[0]
		default:
			w[0] = binary.LittleEndian.Uint32(src)
			j = 4
		}
		for k := 1; k < cellWords; k++ {
			w[k] = binary.LittleEndian.Uint32(src[j+4*(k-1):])
		}
		var c atmnet.Cell
		d.fill(&c, &w)
		begin := start + d.rd.Duration(i*per)
		if modeB {
			begin = d.txBegin // its header word, written by PIO
		}
		d.txDMA = append(d.txDMA, txCell{begin: begin, at: start + d.rd.Duration((i+1)*per), cell: c})
	}
	if modeB && !ins {
		d.txWords = 0
	}
	d.dmaBusy, d.dmaSort = true, false
	total := d.p.DMALatency + dur
	d.stats.DMABusy += total
	d.stats.DMAReadBusy += total
	d.k.ScheduleAfter(d.dmaEnd, total)
	if !d.txDMAEv.Scheduled() {
		d.k.Schedule(d.txDMAEv, d.txDMA[0].at)
	}
}

// txDMADeliver moves the cells whose words have crossed into the FIFO.
func (d *Device) txDMADeliver() {
	now := d.k.Now()
	i := 0
	for ; i < len(d.txDMA) && d.txDMA[i].at <= now; i++ {
		c := d.txDMA[i].cell
		if d.FIFO.Listened() {
			d.showFIFO(true, c.VCI(), d.txDMA[i].begin, d.txDMA[i].at)
		}
		d.enqueueTx(&c)
	}
	d.txDMA = append(d.txDMA[:0], d.txDMA[i:]...)
	if len(d.txDMA) > 0 {
		d.k.Schedule(d.txDMAEv, d.txDMA[0].at)
	}
	d.update()
}

// startRxDMA moves receive FIFO cells into memory: mode A whole 52-byte
// cells, mode B the payload of the head cell whose header word PIO read.
func (d *Device) startRxDMA(n int, modeB bool) {
	var out []byte
	switch {
	case modeB:
		if n != payloadBytes || d.rxLen == 0 || d.rxWord != 1 {
			d.dmaRefuse("mode-B receive DMA of %d bytes: want 48 bytes of the head cell after its header word was read by PIO (cells %d, words read %d)", n, d.rxLen, d.rxWord)
			return
		}
		out = d.buf[:payloadBytes]
		e := &d.rx[d.rxHead]
		for i := range payloadWords {
			binary.LittleEndian.PutUint32(out[4*i:], e.words[1+i])
		}
		d.popCell(d.rxBegin, d.k.Now()+d.p.DMALatency+d.wr.Duration(payloadBytes))
	default:
		cells := n / cellBytes
		if n%cellBytes != 0 || d.rxWord != 0 || cells > d.rxLen {
			d.dmaRefuse("mode-A receive DMA of %d bytes: want whole 52-byte cells of the %d in the FIFO, none begun by PIO", n, d.rxLen)
			return
		}
		out = d.buf[:n]
		start := d.k.Now() + d.p.DMALatency
		for c := range cells {
			e := &d.rx[d.rxHead]
			for i, w := range e.words {
				binary.LittleEndian.PutUint32(out[c*cellBytes+4*i:], w)
			}
			d.popCell(start+d.wr.Duration(c*cellBytes), start+d.wr.Duration((c+1)*cellBytes))
		}
	}
	dur, err := d.wr.Write(memory.Addr(d.dmaAddr), out)
	if err != nil {
		d.dmaRefuse("receive DMA: %v", err)
		return
	}
	d.stats.DMATransfers++
	d.stats.DMABytes += uint64(len(out))
	d.dmaBusy, d.dmaSort = true, false
	total := d.p.DMALatency + dur
	d.stats.DMABusy += total
	d.stats.DMAWriteBusy += total
	d.k.ScheduleAfter(d.dmaEnd, total)
}

// dmaDone ends the running transfer.
func (d *Device) dmaDone() {
	d.dmaBusy = false
	if d.dmaSort {
		d.dmaSort = false
		d.sortDone()
	} else {
		d.isr |= IsrDMADone
	}
	if d.hostWait {
		d.hostWait = false
		d.dmaAddr = d.hostAddr // the address the host gave with its start
		d.startDMA(d.hostCtl)
	}
	d.sortNext()
	d.update()
}

// ---- VCI sorting ----

// sortArrive queues a cell of a sorted VC for the sorter's DMA.
func (d *Device) sortArrive(c *atmnet.Cell, x *rxCtx) {
	if d.rxLen+len(d.sortQ) >= d.p.RxFIFOCells {
		d.stats.RxOverflow++
		d.overflow++
		d.isr |= IsrRxOvf
		x.broken = true
		if c.EndOfPDU() {
			d.sortFinish(x)
		}
		return
	}
	d.sortQ = append(d.sortQ, *c)
	d.stats.RxCells++
	d.sortNext()
}

// sortNext starts the sorter's DMA of the next queued cell when the
// engine is free.
func (d *Device) sortNext() {
	for !d.dmaBusy && len(d.sortQ) > 0 {
		c := d.sortQ[0]
		d.sortQ = append(d.sortQ[:0], d.sortQ[1:]...)
		x := &d.ctx[int(c.VCI())&(len(d.ctx)-1)]
		if d.csr&CsrRxCRC != 0 {
			if x.off == 0 && !x.broken {
				x.crc, x.cells = atmnet.CRC32Init, 0
			}
			x.crc = atmnet.CRC32Update(x.crc, c[atmnet.HeaderSize:])
		}
		x.cells++
		if x.nbufs == 0 || x.broken || x.overrun {
			if x.nbufs == 0 {
				d.stats.SortNoBuffer++
				x.broken = true
			}
			if c.EndOfPDU() {
				d.sortFinish(x)
			}
			continue
		}
		b := x.bufs[0]
		if x.off+payloadBytes > b.size {
			x.overrun = true
			if c.EndOfPDU() {
				d.sortFinish(x)
			}
			continue
		}
		dur, err := d.wr.Write(memory.Addr(b.addr+x.off), c[atmnet.HeaderSize:])
		if err != nil {
			d.stats.DMAErrors++
			d.isr |= IsrDMAErr
			x.broken = true
			continue
		}
		x.off += payloadBytes
		d.stats.SortCells++
		d.stats.DMABytes += payloadBytes
		d.sortCell = c
		d.dmaBusy, d.dmaSort = true, true
		total := d.p.DMALatency + dur
		if d.FIFO.Listened() {
			d.showFIFO(false, c.VCI(), d.k.Now(), d.k.Now()+total)
		}
		d.stats.DMABusy += total
		d.stats.DMAWriteBusy += total
		d.k.ScheduleAfter(d.dmaEnd, total)
	}
}

// sortDone runs when a sorted cell's payload is in memory.
func (d *Device) sortDone() {
	c := &d.sortCell
	if c.EndOfPDU() {
		d.sortFinish(&d.ctx[int(c.VCI())&(len(d.ctx)-1)])
	}
}

// sortFinish posts the completion of the PDU a context holds: the
// buffer it filled (the VC moves on to its next one), or none when its
// first cell already found no buffer or no room; DoneLost when cells of
// it were lost on the way.
func (d *Device) sortFinish(x *rxCtx) {
	defer func() { x.off, x.broken, x.overrun, x.cells = 0, false, false, 0 }()
	w := uint32(DoneValid) | uint32(x.vci)
	var addr uint32
	n := x.off
	if x.nbufs > 0 && x.off > 0 {
		addr = x.bufs[0].addr
		copy(x.bufs[:], x.bufs[1:])
		x.nbufs--
	} else {
		n = 0
	}
	if x.broken {
		w |= DoneLost
	}
	if x.overrun {
		w |= DoneOverrun
		d.stats.SortOverrun++
	}
	if d.csr&CsrRxCRC != 0 && !x.broken && !x.overrun {
		st := d.aal5Status(x.crc, d.sortCell[atmnet.HeaderSize:], x.cells)
		if st&RxCRCGood != 0 {
			w |= DoneCRCGood
		}
		if st&RxCRCLenGood != 0 {
			w |= DoneLenGood
		}
	}
	if len(d.dones) == doneDepth {
		d.stats.SortDoneFull++
		return
	}
	d.dones = append(d.dones, done{word: w, len: n, addr: addr})
	d.stats.SortPDUs++
	d.isr |= IsrSortDone
}
