// Package atmtaxi is the kernel's driver for the Yes V2 TURBOchannel ATM
// interface (devices/atmtaxi), with the two upper sides the seed's and
// the tests use: raw ATM sockets (the MSNL-like path of the
// loop-back test, socket.go) and an IP interface (classical IP over AAL5
// with RFC 2684 LLC/SNAP and a static VC table, clip.go). It reaches the
// board only through its registers and host memory only as simulated
// memory. Layer DEV; the cell transfers (PIO loops, DMA set-up and
// polling) are layer DMA; the socket calls APPL.
//
// Segmentation and reassembly. Raw sockets speak the seed's own SAR, an
// MSNL-like one reconstructed here since the seed only names its checks:
// a PDU is whole cells; the cells of a PDU carry in the GFC field (free
// on a private point-to-point TAXI link) a mark on the first and a
// sequence number modulo 8; the last has the header indication flag (the PT's user-to-user bit), and there
// is no CRC — the seed's measurements had no CRC hardware, and the seed
// names per-cell VCI and sequence checks as why receive is slower than
// transmit. A raw socket may also use AAL5. The IP interface uses AAL5:
// pad and trailer, and the CRC-32 by a table-driven software loop over
// simulated memory, or by the board's CRC assist.
//
// Transfer paths (Params.Tx, Params.Rx): PIO of 13-word cells; DMA mode
// A (whole cells formatted in memory, up to dma_max_bytes a transfer;
// Ultrix's copy from the user formats the block on the way, any other
// sender needs a formatting copy); DMA mode B (the header word by PIO,
// the 48-byte payload by DMA, straight from or into the data's buffer);
// and, on receive, the board's VCI sorter. The driver busy-waits for the
// end of each DMA (polling DMASTAT) and for room in the transmit FIFO, as
// the seed's Unix driver did (it took neither transmit interrupt, since
// the host never filled the link); each DMA runs with interrupts off,
// since transmit and receive share the one DMA engine. While a DMA runs
// the CPU does what work it can without the board, as the hardware allows:
// Ultrix's copy formats the next block of cells while the last one goes
// to the board, a driver's formatting copy fills one half of its block
// buffer while the other half is sent, and a mode-B cell's DMA overlaps
// the next cell's set-up; the CPU's next access to the board waits for the
// DMA's end (the board is the bus's master meanwhile). Received DMA data
// is invalidated in the data cache before the CPU reads it, unless
// cache_invalidate is off; on Wanda an IPC buffer needs no invalidation on
// the receive path, since the pool invalidates what its owner read when
// the buffer comes back (ipcPool.put).
//
// Kernel personalities (Params.Personality) are settings of this driver
// and its socket layer, not separate stacks: Ultrix-like copies between
// user and kernel buffers (uiomove) in the socket calls; Wanda-like
// passes buffers of a pool of IPC buffers between program and driver
// without copying and without changing their addresses.
//
// Simplifications: the CPU's memory accesses and the board's DMA do not
// slow each other down (no contention for memory is modelled); one board
// per driver; a PDU is sent to the FIFO in
// one go by the sending context (no transmit queue of its own beyond
// netdev's); a PDU in progress when another transmit asks (an interrupt's
// softirq) makes that one wait in netdev's queue; an Ultrix mbuf chain is
// one contiguous kernel buffer; the raw socket has no flow control.
package atmtaxi

import (
	"encoding/binary"
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// VC is a virtual channel on the interface's link.
type VC struct {
	VPI uint8
	VCI uint16
}

func (v VC) String() string { return fmt.Sprintf("%d/%d", v.VPI, v.VCI) }

// word returns a header word for a cell on v: GFC gfc, payload type pt.
func (v VC) word(gfc, pt uint8) uint32 {
	return uint32(gfc&0xF)<<28 | uint32(v.VPI)<<20 | uint32(v.VCI)<<4 | uint32(pt&7)<<1
}

// sarKind is how a VC's PDUs are cut into cells.
type sarKind uint8

const (
	sarMSNL sarKind = iota // whole cells, GFC sequence numbers, no CRC
	sarAAL5                // pad, trailer, CRC-32
)

// Costs of the driver's functions, instructions per call, estimated as
// the MIPS code of a simple driver of the time would run them (register
// accesses, their bus time, and every data reference are charged apart).
var (
	defInit    = cpu.Def{Name: "yes_init", Layer: cpu.LayerDEV, Instructions: 300, CodeBytes: 1024, Why: "reset the board, program CSR, allocate tables and buffers (once)"}
	defOutput  = cpu.Def{Name: "yes_output", Layer: cpu.LayerDEV, Instructions: 60, CodeBytes: 768, Why: "per PDU: find the VC, build the header word, read TXSPACE, set up the cell loop"}
	defTxCell  = cpu.Def{Name: "yes_tx_cell", Layer: cpu.LayerDMA, Instructions: 14, CodeBytes: 256, Why: "per cell: header word with sequence number and end flag, room count, loop; then 13 stores to the data port"}
	defTxTail  = cpu.Def{Name: "aal5_tail", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 256, Why: "per AAL5 PDU: copy the last bytes beside pad and trailer, fill in Length (and the CRC)"}
	defDMA     = cpu.Def{Name: "yes_dma", Layer: cpu.LayerDMA, Instructions: 8, CodeBytes: 128, Why: "per DMA: mask interrupts (3), program DMAADDR and DMACTL (the two stores and their operands, 5)"}
	defDMAWait = cpu.Def{Name: "yes_dma_wait", Layer: cpu.LayerDMA, Instructions: 4, CodeBytes: 64, Why: "per DMA: the poll loop's set-up and unmasking interrupts (4); each poll of DMASTAT is yes_dma.poll"}
	defFormat  = cpu.Def{Name: "yes_format", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 256, Why: "per block: set up a copy that puts a header word before every 48 bytes"}
	defIntr    = cpu.Def{Name: "yes_intr", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 512, Why: "read and acknowledge ISR, check overflow, read TOKENS, dispatch"}
	defRxCell  = cpu.Def{Name: "yes_rx_cell", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 384, Why: "per cell: decode the header, VC table lookup, sequence check, buffer offset and length check, end test"}
	defRxXfer  = cpu.Def{Name: "yes_rx_xfer", Layer: cpu.LayerDMA, Instructions: 6, CodeBytes: 128, Why: "per cell: move the 12 payload words (PIO string loads or a mode-B DMA)"}
	defRxPDU   = cpu.Def{Name: "yes_rx_pdu", Layer: cpu.LayerDEV, Instructions: 50, CodeBytes: 512, Why: "per PDU: close the reassembly, check it, hand the buffer up, wake the reader"}
	defInval   = cpu.Def{Name: "yes_cache_inval", Layer: cpu.LayerDEV, Instructions: 15, CodeBytes: 128, Why: "per buffer: isolate the data cache and clear the lines the board wrote (R3000 cache isolation)"}
	defCRC     = cpu.Def{Name: "aal5_crc32", Layer: cpu.LayerDEV, Instructions: 20, CodeBytes: 192, Why: "set-up and return of the table-driven CRC-32 loop"}
	defSortPDU = cpu.Def{Name: "yes_sort_done", Layer: cpu.LayerDEV, Instructions: 45, CodeBytes: 384, Why: "per completion: read DONE, DONELEN, DONEADDR, find the VC, arm a fresh buffer"}
)

// Per-item loop costs, overridable in [costs].
const (
	costCRCByte   = "aal5_crc32.byte"
	costPollIter  = "yes_dma.poll"
	costInvalLine = "yes_cache_inval.line"
	costFmtCell   = "yes_format.cell"
	costSpinIter  = "yes_output.spin"
	costPaceIter  = "yes_output.pace"
)

// Stats counts the driver's events; every dropped PDU has a reason.
type Stats struct {
	TxPDUs       uint64 `stat:"tx_pdus" help:"PDUs sent"`
	TxCells      uint64 `stat:"tx_cells" help:"cells sent"`
	TxBytes      uint64 `stat:"tx_bytes" help:"bytes of the PDUs sent"`
	TxDMAs       uint64 `stat:"tx_dmas" help:"DMA transfers started to send"`
	TxSpins      uint64 `stat:"tx_spins" help:"TXSPACE reads waiting for room"`
	TxDeferred   uint64 `stat:"tx_deferred" help:"IP frames made to wait while a PDU was being sent"`
	TxPaced      uint64 `stat:"tx_paced" help:"cells (or mode-A blocks) held back by their VC's peak cell rate"`
	RxCells      uint64 `stat:"rx_cells" help:"cells taken from the receive FIFO"`
	RxPDUs       uint64 `stat:"rx_pdus" help:"PDUs received whole"`
	RxBytes      uint64 `stat:"rx_bytes" help:"bytes of those PDUs"`
	RxNoVC       uint64 `stat:"rx_no_vc" help:"cells dropped: on a VC nobody opened"`
	RxSeqErrors  uint64 `stat:"rx_seq_errors" help:"PDUs dropped: MSNL sequence error (a cell out of sequence)"`
	RxTooLong    uint64 `stat:"rx_too_long" help:"PDUs dropped: longer than the buffer"`
	RxNoBuffer   uint64 `stat:"rx_no_buffer" help:"PDUs dropped: no buffer"`
	RxBadCRC     uint64 `stat:"rx_bad_crc" help:"PDUs dropped: AAL5 CRC-32 wrong"`
	RxBadLength  uint64 `stat:"rx_bad_length" help:"PDUs dropped: AAL5 length does not fit the cells (or CPI not 0)"`
	RxBadLLC     uint64 `stat:"rx_bad_llc" help:"PDUs dropped on the IP VC: not a routed RFC 2684 header the host speaks"`
	RxBroken     uint64 `stat:"rx_broken" help:"PDUs dropped: cells of them were lost (overrun)"`
	RxSocketFull uint64 `stat:"rx_socket_full" help:"PDUs dropped: the raw socket queue full"`
	Overruns     uint64 `stat:"overruns" help:"receive FIFO overflows seen"`
	LostCells    uint64 `stat:"lost_cells" help:"cells the board counted lost to them"`
	HECErrors    uint64 `stat:"hec_errors" help:"cells the board dropped for header errors"`
	Interrupts   uint64 `stat:"interrupts" help:"interrupt handler runs"`
	SortPDUs     uint64 `stat:"sort_pdus" help:"completions of the VCI sorter taken"`
	RxDMAs       uint64 `stat:"rx_dmas" help:"DMA transfers started to receive"`
	Invalidated  uint64 `stat:"invalidated" help:"bytes invalidated in the cache before reading DMA data"`
}

// vcState is one open VC: its SAR and its reassembly.
type vcState struct {
	vc   VC
	sar  sarKind
	sock *RawSocket // raw VC
	ip   bool       // the IP interface's VC
	peer IP         // the IP VC's neighbour
	// Transmit.
	txSeq int // cells of the PDU being sent so far
	// Reassembly.
	active bool
	buf    memory.Addr
	size   int
	off    int
	rxSeq  uint8
	broken bool
	// sorted is set when the board sorts this VC (Params.Rx == Sort).
	sorted bool
	// Pacing (VCEntry.PCR): the gap between two cells, and when the next
	// may go into the FIFO; gap 0: unpaced.
	gap, nextTx sim.Time
}

// Driver drives one Yes V2.
type Driver struct {
	k     *kernel.Kernel
	c     *cpu.CPU
	sys   *memory.System
	p     Params
	name  string
	space memory.Space
	base  memory.Addr
	irq   int

	csr     uint32
	ready   bool
	vcs     map[uint16]*vcState // by VCI (the VPI is checked on lookup)
	vcTable memory.Addr         // the VC table the per-cell lookup reads: 16 bytes an entry
	crcTab  memory.Addr         // the 1 KiB CRC table
	scratch memory.Addr         // 2 cells: AAL5 tails being sent
	discard memory.Addr         // a cell's payload nobody wants (a DMA may write it)
	block   memory.Addr         // a mode-A block built by a formatting copy
	pool    ipcPool
	iface   *Interface

	// dmaOn is set while a DMA the driver started has not been waited
	// for (dmaStart, dmaWait), dmaWas the interrupt state before it.
	dmaOn, dmaWas bool

	txBusy    bool     // a PDU is being put into the FIFO
	txVC      *vcState // the VC of that PDU
	txRoom    int      // cells known free in the transmit FIFO
	lastProto uint32   // PROTO as last written (header insertion)

	// Per-item instruction counts (SymbolTable.Cost).
	crcByte, pollIter, invalLine, fmtCell, spinIter, paceIter int64

	sym struct {
		init, output, txCell, txTail, dma, dmaWait, format, intr, rxCell, rxXfer, rxPDU, inval, crc, sortPDU *cpu.Symbol
	}
	stats Stats
}

// New prepares the driver of the board at base (in space) on line irq,
// called name ("atm0"). ns, when not nil, is the device layer the IP
// interface registers with (see Interface). Init programs the board.
func New(k *kernel.Kernel, ns *netdev.Stack, name string, space memory.Space, base memory.Addr, irq int, p Params) (*Driver, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{k: k, c: k.CPU(), sys: k.CPU().System(), p: p, name: name, space: space, base: base, irq: irq, vcs: map[uint16]*vcState{}}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&d.sym.init, defInit}, {&d.sym.output, defOutput}, {&d.sym.txCell, defTxCell}, {&d.sym.txTail, defTxTail},
		{&d.sym.dma, defDMA}, {&d.sym.dmaWait, defDMAWait}, {&d.sym.format, defFormat}, {&d.sym.intr, defIntr}, {&d.sym.rxCell, defRxCell},
		{&d.sym.rxXfer, defRxXfer}, {&d.sym.rxPDU, defRxPDU}, {&d.sym.inval, defInval}, {&d.sym.crc, defCRC},
		{&d.sym.sortPDU, defSortPDU},
	})
	d.crcByte = syms.Cost(costCRCByte, 6, "per byte: lbu, xor with the register's top byte, index, lw of the table entry, shift, xor (MSB-first table CRC)")
	d.pollIter = syms.Cost(costPollIter, 4, "per poll of DMASTAT: the load's use, test, branch (the register read's bus time is charged apart)")
	d.invalLine = syms.Cost(costInvalLine, 3, "per cache line: address step, isolated store, branch")
	d.fmtCell = syms.Cost(costFmtCell, 8, "per cell of a formatting copy: store the header word, advance both pointers, count (the words are bcopy's)")
	d.spinIter = syms.Cost(costSpinIter, 4, "per TXSPACE poll while the FIFO is full: test, branch")
	d.paceIter = syms.Cost(costPaceIter, 6, "per poll of the free-running counter while a paced VC waits: load, subtract, compare, branch")
	for _, v := range p.VCs {
		vc := VC{uint8(v.VPI), uint16(v.VCI)}
		vs := &vcState{vc: vc, sar: sarAAL5, ip: true, sorted: p.Rx == Sort}
		if v.PCR > 0 {
			vs.gap = sim.Second / sim.Time(v.PCR)
		}
		d.vcs[vc.VCI] = vs
	}
	if ns != nil {
		d.iface = newInterface(d, ns)
	}
	return d, nil
}

// Name returns the driver's name.
func (d *Driver) Name() string { return d.name }

// Framing is how a VC's PDUs are cut into cells, as an observer of the
// line (a trace) needs to know to see them whole.
type Framing uint8

const (
	// FramingNone: the driver has no such VC open.
	FramingNone Framing = iota
	// FramingAAL5: pad and trailer; the trailer's length says where the
	// PDU began.
	FramingAAL5
	// FramingMSNL: whole cells, the first marked (MSNLFirst); no trailer.
	FramingMSNL
)

// Framing returns how the driver frames vc's PDUs. It only looks: it
// charges nothing.
func (d *Driver) Framing(vc VC) Framing {
	vs := d.vcs[vc.VCI]
	switch {
	case vs == nil || vs.vc.VPI != vc.VPI:
		return FramingNone
	case vs.sar == sarMSNL:
		return FramingMSNL
	}
	return FramingAAL5
}

// MSNLFirst reports whether a cell whose header word is w begins a PDU of
// the MSNL-like SAR (the mark in its GFC field).
func MSNLFirst(w uint32) bool { return uint8(w>>28)&msnlFirst != 0 }

// Stats returns the counters.
func (d *Driver) Stats() Stats { return d.stats }

// IRQ returns the interrupt line the driver takes the board's interrupts
// on.
func (d *Driver) IRQ() int { return d.irq }

// Params returns the parameters.
func (d *Driver) Params() Params { return d.p }

// Interface returns the IP interface, or nil when New had no device
// layer.
func (d *Driver) Interface() *Interface { return d.iface }

// Ready reports whether Init found and started the board.
func (d *Driver) Ready() bool { return d.ready }

// in and out access a register of the board. A DMA the driver started is
// waited for first: the board is the TURBOchannel's master while it runs,
// so the CPU reaches the board again only once it has ended (the CPU's
// own work may overlap it, its accesses to the board may not).
func (d *Driver) in(reg memory.Addr) uint32 {
	if d.dmaOn {
		d.dmaWait()
	}
	return d.rawIn(reg)
}

func (d *Driver) out(reg memory.Addr, v uint32) {
	if d.dmaOn {
		d.dmaWait()
	}
	d.rawOut(reg, v)
}

func (d *Driver) rawIn(reg memory.Addr) uint32 { return uint32(d.c.In(d.space, d.base+reg, 4)) }
func (d *Driver) rawOut(reg memory.Addr, v uint32) {
	d.c.Out(d.space, d.base+reg, 4, uint64(v))
}

// Init resets and starts the board and allocates the driver's tables. It
// runs in a thread during boot.
func (d *Driver) Init() {
	c := d.c
	c.Enter(d.sym.init)
	defer c.Exit(d.sym.init)
	d.vcTable = d.k.Kmalloc(16*1024 + 512) // 1024 VC entries, then the IP table
	d.crcTab = d.k.Kmalloc(1024)
	d.scratch = d.k.Kmalloc(2 * payloadBytes)
	d.discard = d.k.Kmalloc(payloadBytes)
	d.block = d.k.Kmalloc(4096)
	if d.vcTable == 0 || d.crcTab == 0 || d.scratch == 0 || d.discard == 0 || d.block == 0 {
		d.sys.Guest.Report(c.LocalTime(), d.name, "atm: out of kernel memory at init")
		return
	}
	var tab [1024]byte
	for i := range 256 {
		binary.LittleEndian.PutUint32(tab[4*i:], header.AAL5CRCTableEntry(uint8(i)))
	}
	c.Write(d.crcTab, tab[:])
	if d.p.Personality == Wanda {
		d.pool.init(d, d.p.IPCBuffers, d.p.IPCBufferSize)
	}
	d.out(regCSR, csrReset)
	if d.in(regCSR) != 0 {
		d.sys.Guest.Report(c.LocalTime(), d.name, "atm: no Yes V2 at %s %#x: CSR does not read 0 after reset", d.space, uint64(d.base))
		return
	}
	csr := uint32(csrTxEn | csrRxEn | csrOvfInt)
	if d.p.RxInterrupt == IntCell {
		csr |= csrRxIntCell
	} else {
		csr |= csrRxIntFlag
	}
	if d.p.HeaderInsertion {
		csr |= csrHdrInsert
	}
	if d.p.CRCAssist {
		csr |= csrTxCRC | csrRxCRC
	}
	if d.p.Rx == Sort {
		csr |= csrSort | csrSortInt
	}
	d.out(regCSR, csr)
	if got := d.in(regCSR); got != csr {
		d.sys.Guest.Report(c.LocalTime(), d.name, "atm: CSR reads %#x after writing %#x: an assist asked for is not fitted", got, csr)
	}
	d.csr = csr
	c.SetHandler(d.irq, d.name, d.interrupt)
	d.ready = true
	for _, vci := range d.sortedVCIs() {
		if vs := d.vcs[vci]; vs.sorted {
			d.armSort(vs, true)
		}
	}
}

// sortedVCIs returns the open VCIs in order (so that set-up order never
// depends on map iteration).
func (d *Driver) sortedVCIs() []uint16 {
	out := make([]uint16, 0, len(d.vcs))
	for v := range d.vcs {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// lookup is the per-cell VC table lookup: a load of the VCI's entry.
func (d *Driver) lookup(word uint32) *vcState {
	vci := uint16(word >> 4)
	d.c.Reference(d.vcTable+memory.Addr(vci&1023)*16, memory.Read)
	vs := d.vcs[vci]
	if vs == nil || vs.vc.VPI != uint8(word>>20) {
		return nil
	}
	return vs
}

// ---- Transmit ----

// transmit puts the PDU of n bytes at src (a raw PDU of whole cells, or
// an AAL5 CPCS-SDU) into the FIFO on vs, by the configured path, and
// returns when its last cell is in the FIFO. user, when not 0, is the
// program's buffer holding a raw PDU that Ultrix's copy-in formats into
// src, the kernel's buffer, as it goes to the board by mode A
// (formatBlocks). It reports false when another transmit is in progress.
func (d *Driver) transmit(vs *vcState, src memory.Addr, n int, user memory.Addr) bool {
	if d.txBusy {
		return false
	}
	c := d.c
	d.txBusy, d.txVC = true, vs
	c.Enter(d.sym.output)
	defer func() {
		if d.dmaOn {
			d.dmaWait() // the PDU's last DMA: its buffer is the caller's again
		}
		c.Exit(d.sym.output)
		d.txBusy, d.txVC = false, nil
		if d.iface != nil {
			d.iface.txFree()
		}
	}()
	d.txRoom = int(d.in(regTxSpace))
	d.stats.TxPDUs++
	d.stats.TxBytes += uint64(n)
	if vs.sar == sarMSNL {
		cells := n / payloadBytes
		switch {
		case d.p.Tx == DMAA && user != 0:
			d.formatBlocks(vs, src, user, cells)
		case d.p.Tx == DMAA:
			d.formatAndSend(vs, src, cells, true)
		default:
			for i := range cells {
				d.cell(vs, vs.word(i == cells-1), src+memory.Addr(i*payloadBytes))
			}
		}
		return true
	}
	// AAL5: the whole cells straight from src, the tail (the last bytes,
	// pad and trailer: one or two cells) built in scratch.
	full := n / payloadBytes
	tail := header.AAL5PDULen(n) - full*payloadBytes
	crc := uint32(header.AAL5CRCInit)
	if !d.p.CRCAssist {
		crc = d.crc32(src, full*payloadBytes, crc)
	}
	d.buildTail(src+memory.Addr(full*payloadBytes), n-full*payloadBytes, tail, n, crc)
	cells := full + tail/payloadBytes
	switch {
	case d.p.Tx == DMAA && d.p.HeaderInsertion:
		d.out(regProto, vs.vc.word(0, 0))
		d.lastProto = vs.vc.word(0, 0)
		d.dmaBlocks(src, full, payloadBytes, false)
		d.dmaBlocks(d.scratch, tail/payloadBytes, payloadBytes, true)
	case d.p.Tx == DMAA:
		d.formatAndSend(vs, src, full, false)
		d.formatAndSend(vs, d.scratch, tail/payloadBytes, true)
	default:
		for i := range cells {
			at := src + memory.Addr(i*payloadBytes)
			if i >= full {
				at = d.scratch + memory.Addr((i-full)*payloadBytes)
			}
			d.cell(vs, vs.vc.word(0, pt(i == cells-1)), at)
		}
	}
	return true
}

func pt(last bool) uint8 {
	if last {
		return ptAUU
	}
	return 0
}

// The MSNL-like SAR's use of the GFC field: the first cell of a PDU is
// marked, and the cells are numbered modulo 8.
const (
	msnlFirst = 0x8
	msnlSeq   = 0x7
)

// word returns the MSNL header word of vs's next cell and advances its
// sequence number: a PDU's cells are numbered 0, 1, ... 7, 0, ... from
// its first, which carries msnlFirst.
func (vs *vcState) word(last bool) uint32 {
	gfc := uint8(vs.txSeq) & msnlSeq
	if vs.txSeq == 0 {
		gfc |= msnlFirst
	}
	w := vs.vc.word(gfc, pt(last))
	vs.txSeq++
	if last {
		vs.txSeq = 0
	}
	return w
}

// pace holds the next cells of a paced VC back until its peak cell rate
// allows them, spinning on a free-running counter as a driver without a
// pacing board must (the seed's board has no pacer; its driver already
// busy-waits for FIFO room). The counter is read as the core's clock:
// a simplification that charges the poll loop's instructions but no bus
// read for the counter. A block of cells counts as that many cells, so
// mode A sends bursts of up to a block at the line's rate.
func (d *Driver) pace(cells int) {
	vs := d.txVC
	if vs == nil || vs.gap == 0 {
		return
	}
	c := d.c
	if c.LocalTime() < vs.nextTx {
		d.stats.TxPaced++
		for c.LocalTime() < vs.nextTx {
			c.Exec(max(d.paceIter, 1))
		}
	}
	vs.nextTx = c.LocalTime() + sim.Time(cells)*vs.gap
}

// room waits, spinning on TXSPACE, until the FIFO has room for a cell;
// a paced VC's cells first wait for their turn (pace).
func (d *Driver) room(cells int) {
	d.pace(cells)
	for d.txRoom < cells {
		d.stats.TxSpins++
		d.c.Exec(d.spinIter)
		d.txRoom = int(d.in(regTxSpace))
	}
}

// cell sends one cell with header word w and the 48 payload bytes at
// src by PIO (13 words; 12 with header insertion) or mode B.
func (d *Driver) cell(vs *vcState, w uint32, src memory.Addr) {
	c := d.c
	c.Enter(d.sym.txCell)
	d.room(1)
	switch {
	case d.p.HeaderInsertion:
		if w != d.lastProto { // the VC changed, or the last cell's flag
			d.out(regProto, w)
			d.lastProto = w
		}
		d.pioOut(src)
	case d.p.Tx == DMAB:
		// The header word by PIO, then the payload's DMA, which the
		// next cell's set-up (its header word, the loop) overlaps; its
		// header waits for the DMA's end.
		d.out(regTxFIFO, w)
		d.dmaStart(src, payloadBytes, dmaModeB, false)
	default:
		d.out(regTxFIFO, w)
		d.pioOut(src)
	}
	d.txRoom--
	d.stats.TxCells++
	c.Exit(d.sym.txCell)
}

// pioOut writes the 12 payload words at src to the transmit data port:
// a load and a store to the board per word, each store seen by the board
// when the CPU makes it, so that the cell is complete when its last word
// is written.
func (d *Driver) pioOut(src memory.Addr) {
	c := d.c
	var w [4]byte
	for i := range payloadBytes / 4 {
		c.Read(src+memory.Addr(4*i), w[:])
		d.out(regTxFIFO, binary.LittleEndian.Uint32(w[:]))
	}
}

// pioIn reads the 12 payload words of the head cell from the receive data
// port into dst: a load from the board and a store per word.
func (d *Driver) pioIn(dst memory.Addr) {
	c := d.c
	var w [4]byte
	for i := range payloadBytes / 4 {
		binary.LittleEndian.PutUint32(w[:], d.in(regRxFIFO))
		c.Write(dst+memory.Addr(4*i), w[:])
	}
}

// dmaStart programs one transfer of n bytes at a with the control bits
// ctl: a write of DMAADDR and one of DMACTL, each a bus cycle to the
// board. Interrupts stay off until dmaWait (transmit and receive share the
// one DMA engine, and an interrupt's handler would start another); the
// CPU may do other work meanwhile, but reaches the board only after
// dmaWait.
func (d *Driver) dmaStart(a memory.Addr, n int, ctl uint32, rx bool) {
	if d.dmaOn {
		d.dmaWait()
	}
	c := d.c
	c.Enter(d.sym.dma)
	defer c.Exit(d.sym.dma)
	if !rx && d.p.CacheFlush {
		c.Charge(d.sys.Flush(a, uint64(n)))
	}
	d.dmaWas = c.DisableInterrupts()
	d.rawOut(regDMAAddr, uint32(a))
	if rx {
		ctl |= dmaDirRx
		d.stats.RxDMAs++
	} else {
		d.stats.TxDMAs++
	}
	d.rawOut(regDMACtl, dmaGo|ctl|uint32(n))
	d.dmaOn = true
}

// dmaWait spins on DMASTAT until the transfer dmaStart began has ended,
// then lets interrupts in again. It reports whether it ended without
// error.
func (d *Driver) dmaWait() bool {
	c := d.c
	c.Enter(d.sym.dmaWait)
	defer c.Exit(d.sym.dmaWait)
	d.dmaOn = false
	var st uint32
	for {
		st = d.rawIn(regDMAStat)
		c.Exec(d.pollIter)
		if st&dmaBusy == 0 {
			break
		}
	}
	c.RestoreInterrupts(d.dmaWas)
	return st&dmaError == 0
}

// dmaBlocks sends cells of stride bytes (52: whole cells; 48: payloads
// with header insertion) from a in transfers of at most dma_max_bytes;
// eop marks the last cell of the last transfer as the PDU's end.
func (d *Driver) dmaBlocks(a memory.Addr, cells, stride int, eop bool) {
	per := int(d.p.DMAMaxBytes) / stride
	for cells > 0 {
		k := min(cells, per)
		d.room(k)
		ctl := uint32(0)
		if eop && k == cells {
			ctl = dmaEOP
		}
		d.dmaStart(a, k*stride, ctl, false)
		d.txRoom -= k
		d.stats.TxCells += uint64(k)
		a += memory.Addr(k * stride)
		cells -= k
	}
}

// formatAndSend copies cells payloads from src into the driver's block
// buffer with a header word before each, and sends the blocks by mode-A
// DMA: the copy Wanda (no copy-in) or an IP datagram needs for mode A.
// The block buffer has room for two transfers: the CPU formats the next
// block in one half while the board's DMA reads the last one from the
// other. ends says the last of these cells ends the PDU.
func (d *Driver) formatAndSend(vs *vcState, src memory.Addr, cells int, ends bool) {
	per := int(d.p.DMAMaxBytes) / cellBytes
	half := memory.Addr(per * cellBytes)
	for done, i := 0, 0; done < cells; i++ {
		k := min(cells-done, per)
		buf := d.block + memory.Addr(i%2)*half
		d.formatCopy(buf, src+memory.Addr(done*payloadBytes), k, func(i int) uint32 {
			last := done+i == cells-1
			if vs.sar == sarMSNL {
				return vs.word(last)
			}
			return vs.vc.word(0, pt(ends && last))
		})
		d.room(k)
		d.dmaStart(buf, k*cellBytes, 0, false)
		d.txRoom -= k
		d.stats.TxCells += uint64(k)
		done += k
	}
}

// formatBlocks is Ultrix's mode-A send: the copy from the program's
// buffer (uiomove) puts a header word before every 48 bytes into the
// kernel buffer kbuf, a block of up to a DMA transfer at a time, and each
// block goes to the board by DMA while the CPU copies the next.
func (d *Driver) formatBlocks(vs *vcState, kbuf, user memory.Addr, cells int) {
	per := int(d.p.DMAMaxBytes) / cellBytes
	for done := 0; done < cells; {
		k := min(cells-done, per)
		blk := kbuf + memory.Addr(done*cellBytes)
		d.formatCopy(blk, user+memory.Addr(done*payloadBytes), k, func(i int) uint32 {
			return vs.word(done+i == cells-1)
		})
		d.room(k)
		d.dmaStart(blk, k*cellBytes, 0, false)
		d.txRoom -= k
		d.stats.TxCells += uint64(k)
		done += k
	}
}

// formatCopy copies cells payloads from src to dst, 52 bytes apart, each
// after its header word hdr(i): the copy Ultrix's uiomove makes into a
// mode-A block, and a driver's formatting copy.
func (d *Driver) formatCopy(dst, src memory.Addr, cells int, hdr func(i int) uint32) {
	c := d.c
	c.Enter(d.sym.format)
	defer c.Exit(d.sym.format)
	var w [4]byte
	for i := range cells {
		binary.LittleEndian.PutUint32(w[:], hdr(i))
		at := dst + memory.Addr(i*cellBytes)
		c.Write(at, w[:])
		d.k.Bcopy(at+4, src+memory.Addr(i*payloadBytes), payloadBytes)
		c.Exec(d.fmtCell)
	}
}

// buildTail writes the AAL5 tail into scratch: the last rest bytes of the
// SDU from src, zero pad, and the trailer for an SDU of n bytes, tail
// bytes in all (48 or 96). crc is the register over the SDU so far; the
// CRC field is filled in unless the board's assist does it.
func (d *Driver) buildTail(src memory.Addr, rest, tail, n int, crc uint32) {
	c := d.c
	c.Enter(d.sym.txTail)
	defer c.Exit(d.sym.txTail)
	if rest > 0 {
		d.k.Bcopy(d.scratch, src, rest)
	}
	var t [2 * payloadBytes]byte
	pdu := t[:tail]
	tr := pdu[tail-header.AAL5TrailerLen:]
	binary.BigEndian.PutUint16(tr[2:], uint16(n))
	c.Write(d.scratch+memory.Addr(rest), pdu[rest:tail-4])
	if !d.p.CRCAssist {
		crc = d.crc32(d.scratch, tail-4, crc)
		binary.BigEndian.PutUint32(tr[4:], ^crc)
	}
	c.Write(d.scratch+memory.Addr(tail-4), tr[4:])
}

// crc32 runs the table-driven CRC-32 register over n bytes of simulated
// memory at a: a load per word of the data, a load of the table entry
// per byte, and the loop's instructions.
func (d *Driver) crc32(a memory.Addr, n int, crc uint32) uint32 {
	if n <= 0 {
		return crc
	}
	c := d.c
	c.Enter(d.sym.crc)
	defer c.Exit(d.sym.crc)
	err := d.sys.Phys.Chunks(a, uint64(n), false, func(b []byte) {
		for _, x := range b {
			i := byte(crc>>24) ^ x
			c.Reference(d.crcTab+memory.Addr(i)*4, memory.Read)
			crc = crc<<8 ^ header.AAL5CRCTableEntry(i)
		}
	})
	if err != nil {
		d.sys.Guest.Report(c.LocalTime(), d.name, "aal5_crc32: %v", err)
	}
	c.ReferenceRange(a, uint64(n), memory.Read)
	c.Exec(int64(n) * d.crcByte)
	return crc
}

// ---- Receive ----

// interrupt is the board's interrupt handler.
func (d *Driver) interrupt() {
	c := d.c
	c.Enter(d.sym.intr)
	defer c.Exit(d.sym.intr)
	d.stats.Interrupts++
	isr := d.in(regISR)
	d.out(regISR, isr)
	if isr&isrRxOvf != 0 {
		d.overrun()
	}
	if isr&isrSortDone != 0 {
		d.sortDone()
	}
	for {
		n := int(d.in(regTokens))
		if n == 0 {
			break
		}
		for range n {
			d.rxCell()
		}
	}
	if d.dmaOn {
		d.dmaWait()
	}
}

// overrun handles a receive FIFO overflow: the cells lost are counted,
// and every PDU being reassembled lost some of them, so each is dropped
// when it ends (its next cells go to waste; the one after starts
// cleanly).
func (d *Driver) overrun() {
	d.stats.Overruns++
	d.stats.LostCells += uint64(d.in(regOverflow))
	for _, vci := range d.sortedVCIs() {
		if vs := d.vcs[vci]; vs.active {
			vs.broken = true
		}
	}
}

// rxCell takes the head cell of the receive FIFO.
func (d *Driver) rxCell() {
	c := d.c
	c.Enter(d.sym.rxCell)
	defer c.Exit(d.sym.rxCell)
	d.stats.RxCells++
	w := d.in(regRxFIFO)
	vs := d.lookup(w)
	if vs == nil || vs.sorted {
		d.stats.RxNoVC++
		d.pioIn(d.discard)
		return
	}
	last := w>>1&5 == ptAUU // user data (PT bit 2 clear) with the flag
	if !vs.active {
		vs.active, vs.off, vs.rxSeq, vs.broken = true, 0, 0, false
		vs.buf, vs.size = d.rxBuffer(vs)
		if vs.buf == 0 {
			d.stats.RxNoBuffer++
			vs.broken = true
		}
	}
	// Reassembly state: a load and a store of the VC's entry.
	c.Reference(d.vcTable+memory.Addr(vs.vc.VCI&1023)*16+4, memory.Read)
	c.Reference(d.vcTable+memory.Addr(vs.vc.VCI&1023)*16+4, memory.Write)
	if vs.sar == sarMSNL {
		gfc := uint8(w >> 28)
		switch {
		case gfc&msnlFirst != 0 && vs.off > 0:
			// A PDU's first cell while another was being reassembled: the
			// other lost its end (an overrun). Drop it and start afresh.
			d.stats.RxSeqErrors++
			d.complete(vs, 0, true)
			vs.active, vs.off, vs.rxSeq, vs.broken = true, 0, 0, false
			vs.buf, vs.size = d.rxBuffer(vs)
			if vs.buf == 0 {
				d.stats.RxNoBuffer++
				vs.broken = true
			}
		case vs.broken:
		case vs.off == 0 && gfc&msnlFirst == 0, gfc&msnlSeq != vs.rxSeq:
			// The PDU's first cell is missing, or one in the middle.
			d.stats.RxSeqErrors++
			vs.broken = true
		}
	}
	vs.rxSeq = (vs.rxSeq + 1) & msnlSeq
	if !vs.broken && vs.off+payloadBytes > vs.size {
		d.stats.RxTooLong++
		vs.broken = true
	}
	dst := d.discard
	if !vs.broken {
		dst = vs.buf + memory.Addr(vs.off)
	}
	d.rxXfer(dst)
	vs.off += payloadBytes
	if last {
		var st uint32
		if d.p.CRCAssist && vs.sar == sarAAL5 {
			st = d.in(regRxCRC)
		}
		d.complete(vs, st, false)
	}
}

// rxXfer moves the head cell's payload to dst: PIO string loads, or a
// mode-B DMA.
func (d *Driver) rxXfer(dst memory.Addr) {
	c := d.c
	c.Enter(d.sym.rxXfer)
	defer c.Exit(d.sym.rxXfer)
	if d.p.Rx == DMAB {
		// The payload's DMA; the cell's bookkeeping overlaps it, the
		// next access to the board waits for its end.
		d.dmaStart(dst, payloadBytes, dmaModeB, true)
		return
	}
	d.pioIn(dst)
}

// rxBuffer returns a reassembly buffer for vs: an IPC buffer for a raw VC
// on Wanda, a kernel buffer otherwise (netdev frees IP buffers with
// kfree).
func (d *Driver) rxBuffer(vs *vcState) (memory.Addr, int) {
	if vs.ip {
		n := header.AAL5PDULen(d.p.MTU + header.RFC2684SNAPLen)
		return d.k.Kmalloc(n), n
	}
	n := d.p.RawMaxCells * payloadBytes
	if d.p.Personality == Wanda {
		return d.pool.get(), n
	}
	return d.k.Kmalloc(n), n
}

// freeBuffer gives a reassembly buffer back.
func (d *Driver) freeBuffer(vs *vcState, a memory.Addr) {
	if !vs.ip && d.p.Personality == Wanda {
		d.pool.put(a)
		return
	}
	d.k.Kfree(a)
}

// complete ends the PDU vs has reassembled; st is the RX CRC assist's
// verdict (0 without it); drop says the PDU is cut short and goes.
func (d *Driver) complete(vs *vcState, st uint32, drop bool) {
	c := d.c
	c.Enter(d.sym.rxPDU)
	defer c.Exit(d.sym.rxPDU)
	if d.dmaOn {
		d.dmaWait() // the last cell's payload must be in memory
	}
	buf, n := vs.buf, vs.off
	vs.active = false
	if vs.broken || drop {
		d.stats.RxBroken++
		if buf != 0 {
			// The board may have written part of it: the allocator reads
			// and writes free blocks, so drop the stale lines first.
			if d.p.Rx == DMAB {
				d.invalidate(buf, min(n, vs.size))
			}
			d.freeBuffer(vs, buf)
		}
		return
	}
	if d.p.Rx == DMAB {
		d.visible(vs, buf, n)
	}
	d.deliver(vs, buf, n, st, false)
}

// deliver checks a reassembled PDU of n bytes at buf and hands it up. st
// is the CRC assist's RXCRC word, or a DONE word when sorted is set.
func (d *Driver) deliver(vs *vcState, buf memory.Addr, n int, st uint32, sorted bool) {
	if vs.sar == sarAAL5 {
		sdu, ok := d.checkAAL5(buf, n, st, sorted)
		if !ok {
			d.freeBuffer(vs, buf)
			return
		}
		n = sdu
	}
	d.stats.RxPDUs++
	d.stats.RxBytes += uint64(n)
	switch {
	case vs.sock != nil:
		vs.sock.arrive(buf, n)
	case vs.ip && d.iface != nil:
		d.iface.receive(vs, buf, n)
	default:
		d.freeBuffer(vs, buf)
	}
}

// checkAAL5 checks the trailer (a load of its 8 bytes) and the CRC (the
// assist's verdict, or the software loop) of the PDU of n bytes at buf
// and returns the SDU length.
func (d *Driver) checkAAL5(buf memory.Addr, n int, st uint32, sorted bool) (int, bool) {
	c := d.c
	if n < payloadBytes {
		d.stats.RxBadLength++
		return 0, false
	}
	var tr [header.AAL5TrailerLen]byte
	c.Read(buf+memory.Addr(n-len(tr)), tr[:])
	sdu := int(binary.BigEndian.Uint16(tr[2:]))
	lenOK := sdu > 0 && tr[1] == 0 && header.AAL5PDULen(sdu) == n
	var crcOK bool
	switch {
	case d.p.CRCAssist && sorted:
		crcOK, lenOK = st&doneCRCGood != 0, lenOK && st&doneLenGood != 0
	case d.p.CRCAssist:
		crcOK = st&rxCRCEnd != 0 && st&rxCRCGood != 0
	default:
		crcOK = d.crc32(buf, n, header.AAL5CRCInit) == header.AAL5CRCResidue
	}
	switch {
	case !crcOK:
		d.stats.RxBadCRC++
		return 0, false
	case !lenOK:
		d.stats.RxBadLength++
		return 0, false
	}
	return sdu, true
}

// visible makes the n bytes the board wrote at buf by DMA visible to the
// CPU, whose caches do not snoop: by invalidating their lines now, or, for
// an IPC buffer of Wanda's pool, by nothing. An IPC buffer keeps its
// address as it passes between owners, and the pool invalidates the lines
// its owner may have read when it is given back (ipcPool.put), so that a
// buffer the driver takes from the pool holds no line of the cache: the
// seed's Wanda overcomes the cache/memory consistency problem on receive
// by the way its IPC buffers are used (docs/reference/atm-taxi.md sec. 5).
func (d *Driver) visible(vs *vcState, buf memory.Addr, n int) {
	if !vs.ip && d.p.Personality == Wanda {
		d.pool.filled(buf, n)
		return
	}
	d.invalidate(buf, n)
}

// invalidate drops the data cache's lines over [a, a+n) before the CPU
// reads what the board wrote there (non-coherent DMA).
func (d *Driver) invalidate(a memory.Addr, n int) {
	if !d.p.CacheInvalidate || n <= 0 {
		return
	}
	c := d.c
	c.Enter(d.sym.inval)
	defer c.Exit(d.sym.inval)
	h := d.sys.Cache
	line := int(h.L1D().Params().Line)
	lines := (int(a)%line + n + line - 1) / line
	c.Exec(int64(lines) * d.invalLine)
	c.Charge(d.sys.Invalidate(a, uint64(n)))
	d.stats.Invalidated += uint64(n)
}

// ---- VCI sorting ----

// sortBuffers is how many buffers the driver keeps armed per sorted VC.
const sortBuffers = 4

// armSort gives the board fresh buffers for a sorted VC: all of them at
// first, one for each completion that used one later.
func (d *Driver) armSort(vs *vcState, first bool) {
	d.out(regVCSel, uint32(vs.vc.VCI))
	if first {
		d.out(regVCCtl, vcSortOn)
	}
	count := 1
	if first {
		count = sortBuffers
	}
	for i := range count {
		b, n := d.rxBuffer(vs)
		if b == 0 {
			d.stats.RxNoBuffer++
			return
		}
		if i == 0 {
			d.out(regVCSize, uint32(n))
		}
		d.out(regVCBuf, uint32(b))
	}
}

// sortDone takes the sorter's completions.
func (d *Driver) sortDone() {
	c := d.c
	for {
		c.Enter(d.sym.sortPDU)
		w := d.in(regDone)
		if w&doneValid == 0 {
			c.Exit(d.sym.sortPDU)
			return
		}
		n := int(d.in(regDoneLen))
		buf := memory.Addr(d.in(regDoneAddr))
		d.stats.SortPDUs++
		vs := d.vcs[uint16(w&0xFFFF)]
		switch {
		case vs == nil || !vs.sorted:
			d.stats.RxNoVC++
		case buf == 0: // nothing stored: the board lost the PDU's cells
			d.stats.RxBroken++
		default:
			d.armSort(vs, false)
			d.visible(vs, buf, n)
			switch {
			case w&doneLost != 0:
				d.stats.RxBroken++
				d.freeBuffer(vs, buf)
			case w&doneOverrun != 0:
				d.stats.RxTooLong++
				d.freeBuffer(vs, buf)
			default:
				d.deliver(vs, buf, n, w, true)
			}
		}
		c.Exit(d.sym.sortPDU)
	}
}

// ---- Wanda's IPC buffers ----

// ipcPool is Wanda's pool of IPC buffers: fixed buffers that keep their
// addresses as ownership passes between programs and the driver. Its free
// list is a table in kernel memory (the buffers themselves are not
// touched while free), and a buffer the board filled by DMA has the lines
// its owner may have cached invalidated when it comes back, so that no
// free buffer has a line in the cache.
type ipcPool struct {
	d     *Driver
	size  int
	free  []memory.Addr
	all   map[memory.Addr]bool
	dma   map[memory.Addr]int // bytes the board wrote into a buffer now owned by a program
	table memory.Addr         // the free list: a word per buffer
	sym   *cpu.Symbol
}

var defIPC = cpu.Def{Name: "wanda_ipc_buffer", Layer: cpu.LayerKERN, Instructions: 12, CodeBytes: 96, Why: "pop or push the pool's free list"}

func (p *ipcPool) init(d *Driver, n, size int) {
	p.d, p.size, p.all, p.dma = d, size, map[memory.Addr]bool{}, map[memory.Addr]int{}
	p.sym = d.k.Symbols().Define(defIPC)
	p.table = d.k.Kmalloc(4 * n)
	for range n {
		if b := d.k.Kmalloc(size); b != 0 {
			p.free = append(p.free, b)
			p.all[b] = true
		}
	}
	// The allocator read its bookkeeping beside the buffers: none of
	// their lines may stay in the cache.
	for _, b := range p.free {
		d.c.Charge(d.sys.Invalidate(b, uint64(size)))
	}
}

func (p *ipcPool) get() memory.Addr {
	c := p.d.c
	c.Enter(p.sym)
	defer c.Exit(p.sym)
	if len(p.free) == 0 {
		return 0
	}
	b := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	c.Reference(p.table+memory.Addr(4*len(p.free)), memory.Read)
	return b
}

// filled notes that the board wrote n bytes into b by DMA, which now goes
// to a program.
func (p *ipcPool) filled(b memory.Addr, n int) {
	if p.all[b] {
		p.dma[b] = max(p.dma[b], n)
	}
}

func (p *ipcPool) put(b memory.Addr) {
	c := p.d.c
	c.Enter(p.sym)
	defer c.Exit(p.sym)
	if !p.all[b] || slices.Contains(p.free, b) {
		p.d.sys.Guest.Report(c.LocalTime(), p.d.name, "IPC buffer %#x released twice or not from the pool", uint64(b))
		return
	}
	if n := p.dma[b]; n > 0 {
		// The owner may have read what the board wrote: its lines go
		// before the board writes the buffer again.
		delete(p.dma, b)
		p.d.invalidate(b, n)
	}
	c.Reference(p.table+memory.Addr(4*len(p.free)), memory.Write)
	p.free = append(p.free, b)
}
