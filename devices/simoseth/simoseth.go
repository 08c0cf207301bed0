// Package simoseth models the bus-master Ethernet controller of the
// Linux/SimOS study: a NIC whose DMA engine moves frames between host
// memory and the card's own buffers through descriptor rings, at the
// study's 1200 MB/s (docs/reference/inet-notes.md sec. 8, docs/reference/via.md sec.
// 6), behind memory-mapped registers at SimOS's Ethernet address
// (0xA0E02000, a 2852-byte window). It is hardware: it knows nothing of
// the driver that programs it, reaches host memory only through its DMA
// port (memory.DMAPort, coherent or not as the machine says) and the
// network only through a Wire, and is reached by the network only through
// Receive (ethersim.Station).
//
// The SimOS sources give the NIC's place in the address map and its DMA
// rate, not its registers; the register file and the descriptor format
// (regs.go) are simkron's own, in the manner of the descriptor-ring
// controllers of the period (DEC 21140 "Tulip": an ownership bit per
// descriptor and poll-demand registers; Intel 8254x: one DMA engine
// reading descriptors, data and writing status back).
//
//	       host memory                          card
//	┌───────────────────────┐         ┌──────────────────────────┐
//	│ TX ring  ─► buffers ──┼── DMA ─►│ tx buffer (tx_buffer) ─► wire
//	│ RX ring  ─► buffers ◄─┼── DMA ──│ rx buffer (rx_buffer) ◄─ wire
//	└───────────────────────┘   one   └──────────────────────────┘
//	                            engine
//
// Timing. The DMA engine is one bus master: it does one thing at a time,
// receive work before transmit work, and each transfer — a 16-byte
// descriptor fetch, a buffer, a 4-byte status write-back — takes
// dma_latency plus its bytes at dma_rate. The bytes move when a transfer
// starts (memory.DMAPort's simplification) and the card acts on them when
// the engine's time for them is up:
//
//	transmit  fetch the descriptor at TXINDEX; not OWN: suspend until
//	          TXPOLL. OWN: fetch the rest of the frame's chain, read its
//	          pieces into the tx buffer (waiting while it has no room),
//	          then write each descriptor's status back (OWN clear), raise
//	          IntTx if the last one has IOC, and look at the next.
//	receive   a frame from the wire waits in the rx buffer; the engine
//	          fetches descriptors at RXINDEX until their buffers hold it,
//	          writes the frame (without its FCS) into them, writes their
//	          status back and raises IntRx. A descriptor that is not OWN
//	          means the ring has run out: the frame and every frame after
//	          it are dropped and counted (MISSED, Stats.RxNoDescriptor)
//	          and the receiver suspends, with IntRxNoBuf, until RXPOLL.
//
// The wire is the network's: the tx buffer sends its frames one at a time
// and a frame's space is free when the network calls TxDone. A transmit
// descriptor is handed back when its frame is in the card, before the wire
// has sent it, so the host's view of a send excludes the MAC and the
// physical layer, as the study's measurements do; errors on the wire (an
// abort after 16 collisions) are counted in Stats only.
//
// A driver that misprograms the card — a ring outside memory, descriptors
// with nonsense in them, a register written at the wrong time — gets the
// error in the descriptor's status where the card has one (ERR and a
// reason), IntErr, and a report to the guest log; never a panic.
//
// Simplifications: no multicast filter (group addresses other than
// broadcast are accepted only in promiscuous mode); frames are whole
// bytes and a bad FCS is the only receive error, and such frames are
// dropped, not stored; no link negotiation (the wire's rate is the
// network's); no interrupt moderation; the card pads a short frame itself.
package simoseth

import (
	"encoding/binary"
	"hash/crc32"

	"simkron/cpu"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	"simkron/trace"
)

// Wire is the network side of the card's transmitter: Transmit starts
// sending frame (FCS included) and the network calls TxDone when it has
// ended. An error means the frame was not sent at all. ethersim's
// Attachment satisfies it.
type Wire interface {
	Transmit(frame []byte) error
}

var (
	_ memory.Device    = (*NIC)(nil)
	_ memory.Peeker    = (*NIC)(nil)
	_ ethersim.Station = (*NIC)(nil)
)

// Stats counts the card's events.
type Stats struct {
	TxFrames       uint64   `stat:"tx_frames" help:"frames handed to the wire"`
	TxBytes        uint64   `stat:"tx_bytes" help:"their bytes, FCS included"`
	TxDMAFrames    uint64   `stat:"tx_dma_frames" help:"frames read from host memory into the tx buffer"`
	TxDescErrors   uint64   `stat:"tx_desc_errors" help:"frames refused for their descriptors (ELEN, EDMA, EFMT)"`
	TxWaits        uint64   `stat:"tx_waits" help:"times the transmit DMA found no room in the tx buffer"`
	TxAborts       uint64   `stat:"tx_aborts" help:"frames the wire gave up on (16 collisions) or refused"`
	TxCollisions   uint64   `stat:"tx_collisions" help:"collisions reported by the wire"`
	RxFrames       uint64   `stat:"rx_frames" help:"frames stored in host memory"`
	RxBytes        uint64   `stat:"rx_bytes" help:"their bytes, without the FCS"`
	RxCRCErrors    uint64   `stat:"rx_crc_errors" help:"frames with a bad FCS, dropped"`
	RxRunts        uint64   `stat:"rx_runts" help:"frames under 64 bytes, dropped"`
	RxTooLong      uint64   `stat:"rx_too_long" help:"frames over max_frame, dropped"`
	RxFiltered     uint64   `stat:"rx_filtered" help:"frames for another station, dropped"`
	RxOffline      uint64   `stat:"rx_offline" help:"frames that arrived with the receiver off"`
	RxNoDescriptor uint64   `stat:"rx_no_descriptor" help:"frames dropped because the receive ring had run out"`
	RxOverflow     uint64   `stat:"rx_overflow" help:"frames dropped because the rx buffer was full"`
	RxDescErrors   uint64   `stat:"rx_desc_errors" help:"frames dropped for their descriptors (ELEN, EDMA)"`
	DescFetches    uint64   `stat:"desc_fetches" help:"descriptors read"`
	DMATransfers   uint64   `stat:"dma_transfers" help:"transfers of the DMA engine"`
	DMABytes       uint64   `stat:"dma_bytes" help:"bytes they moved"`
	DMABusy        sim.Time `stat:"dma_busy_ps" help:"time the DMA engine was busy, in picoseconds"`
	Interrupts     uint64   `stat:"interrupts" help:"rising edges of the interrupt line"`
	GuestErrors    uint64   `stat:"guest_errors" help:"misuses reported to the guest log"`
	Resets         uint64   `stat:"resets" help:"card resets through its control register"`
	SpuriousTxEnd  uint64   `stat:"spurious_tx_end" help:"TxDone with nothing on the wire (a wiring bug)"`
}

type jobKind uint8

const (
	jobNone  jobKind = iota
	jobIdle          // the engine worked (fetched) but has nothing to commit
	jobTx            // a transmit frame was read: commit it
	jobRx            // a received frame was written: hand it back
	jobWrite         // status write-backs in progress
)

// descRef is one descriptor of a job: where it is, what it said, and the
// status the card writes back.
type descRef struct {
	addr   memory.Addr
	ctrl   uint32
	buf    uint32
	status uint32 // as fetched
	wb     uint32 // the status the card writes back
}

type job struct {
	kind  jobKind
	descs []descRef
	ok    bool   // transmit: the frame goes to the tx buffer
	frame []byte // transmit: the frame read, without FCS
	ints  uint32 // ISR bits to raise at commit
}

// NIC is the card.
type NIC struct {
	name  string
	k     *sim.Scheduler
	p     Params
	irq   cpu.IRQ
	guest *memory.GuestLog
	dma   *memory.DMAPort
	wire  Wire

	// Registers.
	ctrl, isr, imr   uint32
	txBase, rxBase   uint32
	txCount, rxCount uint32
	txIdx, rxIdx     uint32
	mac              [6]byte
	missed           uint32
	txState, rxState uint32

	txq, rxq frameQueue // card memory: towards the wire, from the wire
	wireBusy bool
	txOrphan bool // the frame on the wire was dropped from txq by a reset

	// DMA engine.
	busy     bool
	job      job
	engineEv *sim.Event
	since    sim.Time // start of the busy period
	// DMA is the card's trace source of the DMA engine's busy periods:
	// it fires true when the engine starts moving data between host
	// memory and the card after being idle, and false when it has
	// nothing more to do (back-to-back transfers are one busy period).
	// A listener only looks.
	DMA trace.Source[bool]
	// shown is the state DMA last fired.
	shown bool

	chainErr bool // an incomplete transmit chain was reported (once per frame)
	irqLevel bool
	desc     [DescSize]byte
	word     [4]byte
	txFrame  []byte
	stats    Stats
}

// New returns a card named name ("hostA.nic0") whose DMA port into sys is
// coherent or not as p says, raising irq (nil: no line) and reporting guest
// misuse to sys's guest log. p must be valid (Params.Validate). The card
// starts reset: both engines stopped, the station address p.MAC. Attach it
// to the network with SetWire.
func New(k *sim.Scheduler, name string, p Params, irq cpu.IRQ, sys *memory.System) *NIC {
	if l, ok := irq.(*cpu.IRQLine); ok && l == nil {
		irq = nil
	}
	n := &NIC{name: name, k: k, p: p, irq: irq, guest: sys.Guest}
	n.dma = sys.NewDMAPort(name, int64(p.DMARate), p.Coherent)
	n.engineEv = sim.NewEventPriority(name+".dma", sim.PriorityDevice, n.engineDone)
	n.reset()
	n.stats.Resets = 0
	return n
}

// SetWire attaches the card to the network.
func (n *NIC) SetWire(w Wire) { n.wire = w }

// Name returns the card's name.
func (n *NIC) Name() string { return n.name }

// Params returns the card's configuration.
func (n *NIC) Params() Params { return n.p }

// Port returns the card's DMA port (for its statistics).
func (n *NIC) Port() *memory.DMAPort { return n.dma }

// Busy reports whether the DMA engine is working.
func (n *NIC) Busy() bool { return n.busy }

// showEngine fires DMA on a change of the engine's state.
func (n *NIC) showEngine() {
	if n.busy == n.shown || !n.DMA.Listened() {
		n.shown = n.busy
		return
	}
	n.shown = n.busy
	n.DMA.Fire(n.busy)
}

// Stats returns the card's counters, DMABusy up to now.
func (n *NIC) Stats() Stats {
	s := n.stats
	if n.busy {
		s.DMABusy += n.k.Now() - n.since
	}
	return s
}

func (n *NIC) report(format string, args ...any) {
	n.stats.GuestErrors++
	if n.guest != nil {
		n.guest.Report(n.k.Now(), n.name, format, args...)
	}
}

// ---------------------------------------------------------------------------
// Registers

// Read implements memory.Device. Registers are 32 bits wide and read
// whole; another width is a guest error and reads 0.
func (n *NIC) Read(off uint64, size int) uint64 {
	if size != 4 || off%4 != 0 {
		n.report("read of %d bytes at offset %#x: registers are 32-bit words", size, off)
		return 0
	}
	v, ok := n.reg(off)
	if !ok {
		n.report("read of reserved offset %#x", off)
		return 0
	}
	if off == RegMissed {
		n.missed = 0 // reading clears
	}
	return uint64(v)
}

// Peek implements memory.Peeker: a register without the side effect of
// reading it (MISSED is not cleared).
func (n *NIC) Peek(off uint64) (uint64, bool) {
	if off%4 != 0 {
		return 0, false
	}
	v, ok := n.reg(off)
	return uint64(v), ok
}

func (n *NIC) reg(off uint64) (uint32, bool) {
	switch off {
	case RegCtrl:
		return n.ctrl, true
	case RegISR:
		return n.isr, true
	case RegIMR:
		return n.imr, true
	case RegTxBase:
		return n.txBase, true
	case RegTxCount:
		return n.txCount, true
	case RegTxPoll, RegRxPoll:
		return 0, true
	case RegRxBase:
		return n.rxBase, true
	case RegRxCount:
		return n.rxCount, true
	case RegTxIndex:
		return n.txIdx, true
	case RegRxIndex:
		return n.rxIdx, true
	case RegMACLo:
		return binary.LittleEndian.Uint32(n.mac[0:4]), true
	case RegMACHi:
		return uint32(binary.LittleEndian.Uint16(n.mac[4:6])), true
	case RegMissed:
		return n.missed, true
	case RegState:
		return n.txState | n.rxState<<8, true
	}
	return 0, false
}

// Write implements memory.Device; every side effect is spelled out per
// register.
func (n *NIC) Write(off uint64, size int, v uint64) {
	if size != 4 || off%4 != 0 {
		n.report("write of %d bytes at offset %#x: registers are 32-bit words", size, off)
		return
	}
	w := uint32(v)
	switch off {
	case RegCtrl:
		n.writeCtrl(w)
	case RegISR:
		n.isr &^= w // write 1 to clear
	case RegIMR:
		n.imr = w & intMask
	case RegTxBase, RegTxCount:
		if n.ctrl&CtrlTxEn != 0 {
			n.report("write of %s while the transmitter is on: ignored", regName(off))
			return
		}
		if off == RegTxBase {
			n.txBase = w
		} else {
			n.txCount = w
		}
		n.txIdx = 0
	case RegRxBase, RegRxCount:
		if n.ctrl&CtrlRxEn != 0 {
			n.report("write of %s while the receiver is on: ignored", regName(off))
			return
		}
		if off == RegRxBase {
			n.rxBase = w
		} else {
			n.rxCount = w
		}
		n.rxIdx = 0
	case RegTxPoll:
		if n.ctrl&CtrlTxEn == 0 {
			n.report("transmit poll demand with the transmitter off: ignored")
			return
		}
		if n.txState == StateSuspended {
			n.txState = StateRunning
		}
		n.kick()
	case RegRxPoll:
		if n.ctrl&CtrlRxEn == 0 {
			n.report("receive poll demand with the receiver off: ignored")
			return
		}
		if n.rxState == StateSuspended {
			n.rxState = StateRunning
		}
		n.kick()
	case RegMACLo:
		binary.LittleEndian.PutUint32(n.mac[0:4], w)
	case RegMACHi:
		binary.LittleEndian.PutUint16(n.mac[4:6], uint16(w))
	case RegTxIndex, RegRxIndex, RegMissed, RegState:
		n.report("write of read-only %s: ignored", regName(off))
	default:
		n.report("write of reserved offset %#x: ignored", off)
	}
	n.update()
}

func regName(off uint64) string { return regNames[off] }

var regNames = map[uint64]string{
	RegCtrl: "CTRL", RegISR: "ISR", RegIMR: "IMR", RegTxBase: "TXBASE", RegTxCount: "TXCOUNT",
	RegTxPoll: "TXPOLL", RegRxBase: "RXBASE", RegRxCount: "RXCOUNT", RegRxPoll: "RXPOLL",
	RegTxIndex: "TXINDEX", RegRxIndex: "RXINDEX", RegMACLo: "MACLO", RegMACHi: "MACHI",
	RegMissed: "MISSED", RegState: "STATE",
}

// ringOK checks a ring's registers when its engine is switched on.
func (n *NIC) ringOK(what string, base, count uint32) bool {
	switch {
	case count == 0 || count > MaxRing:
		n.report("%s ring of %d descriptors: the count must be 1 to %d", what, count, MaxRing)
		return false
	case base%DescSize != 0:
		n.report("%s ring at %#x is not %d-byte aligned", what, base, DescSize)
		return false
	}
	return true
}

func (n *NIC) writeCtrl(w uint32) {
	if w&CtrlReset != 0 {
		n.stats.Resets++
		n.reset()
		return
	}
	old := n.ctrl
	w &= ctrlMask
	if w&^old&CtrlTxEn != 0 && !n.ringOK("transmit", n.txBase, n.txCount) {
		w &^= CtrlTxEn
	}
	if w&^old&CtrlRxEn != 0 && !n.ringOK("receive", n.rxBase, n.rxCount) {
		w &^= CtrlRxEn
	}
	n.ctrl = w
	switch {
	case w&^old&CtrlTxEn != 0:
		n.txState = StateRunning
	case old&^w&CtrlTxEn != 0:
		n.txState = StateStopped
	}
	switch {
	case w&^old&CtrlRxEn != 0:
		n.rxState = StateRunning
	case old&^w&CtrlRxEn != 0:
		n.rxState = StateStopped
		n.stats.RxOffline += uint64(n.rxq.clear())
	}
	n.kick()
}

// reset is CTRL.RESET (and power-up): the engines stop, card memory is
// emptied, every register returns to 0 and the station address to
// Params.MAC. A frame already on the wire still finishes there; its
// completion is not reported.
func (n *NIC) reset() {
	n.k.Cancel(n.engineEv)
	if n.busy {
		n.stats.DMABusy += n.k.Now() - n.since
	}
	n.busy = false
	n.showEngine()
	n.job = job{descs: n.job.descs[:0]}
	n.ctrl, n.isr, n.imr = 0, 0, 0
	n.txBase, n.rxBase, n.txCount, n.rxCount, n.txIdx, n.rxIdx = 0, 0, 0, 0, 0, 0
	n.mac = n.p.MAC
	n.missed = 0
	n.txState, n.rxState = StateStopped, StateStopped
	n.txq.clear()
	n.rxq.clear()
	n.chainErr = false
	if n.wireBusy {
		n.txOrphan = true
	}
	n.update()
}

// update drives the level-triggered interrupt line from ISR and IMR.
func (n *NIC) update() {
	level := n.isr&n.imr != 0
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

// ---------------------------------------------------------------------------
// DMA engine

// cost is the engine's time for one transfer of b bytes.
func (n *NIC) cost(b int) sim.Time {
	n.stats.DMATransfers++
	n.stats.DMABytes += uint64(b)
	return n.p.DMALatency + n.dma.Duration(b)
}

// occupy makes the engine busy for d with job j (already in n.job).
func (n *NIC) occupy(d sim.Time) {
	n.busy = true
	n.since = n.k.Now()
	n.k.Schedule(n.engineEv, n.k.Now()+d)
	n.showEngine()
}

// kick starts the engine on the next piece of work if it is idle: a
// frame waiting in the rx buffer first, then the transmit ring.
func (n *NIC) kick() {
	if n.busy {
		return
	}
	switch {
	case n.rxState == StateRunning && n.rxq.len() > 0:
		n.startRx()
	case n.txState == StateRunning:
		n.startTx()
	}
}

// engineDone is the end of the engine's current job.
func (n *NIC) engineDone() {
	n.busy = false
	n.stats.DMABusy += n.k.Now() - n.since
	switch n.job.kind {
	case jobTx:
		n.commitTx()
	case jobRx:
		n.commitRx()
	case jobWrite:
		// The status words are in memory: now the driver may be told.
		n.isr |= n.job.ints
	}
	if n.busy { // the commit's write-backs keep the engine busy
		return
	}
	n.job.kind = jobNone
	n.kick()
	n.showEngine()
	n.update()
}

// fetch reads the descriptor at index i of the ring at base, adding its
// time to *d. ok is false when the ring lies outside memory (reported by
// the port).
func (n *NIC) fetch(base, i uint32, d *sim.Time) (descRef, bool) {
	a := memory.Addr(base) + memory.Addr(i)*DescSize
	n.stats.DescFetches++
	*d += n.cost(DescSize)
	if _, err := n.dma.Read(a, n.desc[:]); err != nil {
		return descRef{}, false
	}
	return descRef{
		addr:   a,
		status: binary.LittleEndian.Uint32(n.desc[DescStatus:]),
		ctrl:   binary.LittleEndian.Uint32(n.desc[DescControl:]),
		buf:    binary.LittleEndian.Uint32(n.desc[DescBuffer:]),
	}, true
}

// ringFault stops an engine whose ring lies outside memory.
func (n *NIC) ringFault(what string, base, count uint32, d sim.Time) {
	n.report("%s ring [%#x, %#x) lies outside memory: %s stopped", what, base, uint64(base)+uint64(count)*DescSize, what)
	n.isr |= IntErr
	n.job = job{kind: jobIdle, descs: n.job.descs[:0]}
	n.occupy(d)
}

// writeBack writes each descriptor's status word, adding the time to d.
func (n *NIC) writeBack(descs []descRef) sim.Time {
	var d sim.Time
	for _, x := range descs {
		binary.LittleEndian.PutUint32(n.word[:], x.wb)
		d += n.cost(4)
		// The descriptor was read from memory a moment ago, so it lies in
		// range; a failure is reported by the port.
		_, _ = n.dma.Write(x.addr+DescStatus, n.word[:])
	}
	return d
}

// ---------------------------------------------------------------------------
// Transmit

// startTx looks at the transmit ring: a frame whose chain is handed over
// and fits the tx buffer is read in; otherwise the transmitter suspends
// or waits, having spent the fetches' time.
func (n *NIC) startTx() {
	var d sim.Time
	descs := n.job.descs[:0]
	idx := n.txIdx
	first, ok := n.fetch(n.txBase, idx, &d)
	if !ok {
		n.ctrl &^= CtrlTxEn
		n.txState = StateStopped
		n.ringFault("transmit", n.txBase, n.txCount, d)
		return
	}
	if first.status&DescOwn == 0 {
		n.txState = StateSuspended
		n.job = job{kind: jobIdle, descs: descs}
		n.occupy(d)
		return
	}
	descs = append(descs, first)
	fmtErr := first.ctrl&DescFirst == 0
	for !fmtErr && descs[len(descs)-1].ctrl&DescLast == 0 {
		if len(descs) >= maxChain || len(descs) >= int(n.txCount) {
			fmtErr = true
			break
		}
		idx = (idx + 1) % n.txCount
		x, ok := n.fetch(n.txBase, idx, &d)
		if !ok {
			n.ctrl &^= CtrlTxEn
			n.txState = StateStopped
			n.ringFault("transmit", n.txBase, n.txCount, d)
			return
		}
		if x.status&DescOwn == 0 {
			// Half a frame: the driver must hand over the rest before
			// the first. Wait for the next poll demand.
			if !n.chainErr {
				n.chainErr = true
				n.report("transmit frame at descriptor %d: descriptor %d of its chain is not the card's (hand over a frame's first descriptor last)", n.txIdx, idx)
			}
			n.txState = StateSuspended
			n.job = job{kind: jobIdle, descs: descs[:0]}
			n.occupy(d)
			return
		}
		if x.ctrl&DescFirst != 0 {
			fmtErr = true // a new frame began before this one's LAST
		}
		descs = append(descs, x)
	}
	n.chainErr = false
	j := job{kind: jobTx, descs: descs}
	if fmtErr {
		n.report("transmit descriptors %d..%d do not form a FIRST..LAST chain", n.txIdx, (n.txIdx+uint32(len(descs))-1)%n.txCount)
		n.refuseTx(&j, DescEFmt)
		n.occupy(d)
		return
	}
	total := 0
	for _, x := range descs {
		total += int(x.ctrl & DescLenMask)
	}
	if total < etherHdr || total+fcsBytes > int(n.p.MaxFrame) {
		n.report("transmit frame of %d bytes: a frame holds %d to %d bytes before the FCS", total, etherHdr, int(n.p.MaxFrame)-fcsBytes)
		n.refuseTx(&j, DescELen)
		n.occupy(d)
		return
	}
	if need := max(total, minFrameNoFCS) + fcsBytes; n.txq.bytes+need > int(n.p.TxBuffer) {
		n.stats.TxWaits++
		n.txState = StateWaiting
		n.job = job{kind: jobIdle, descs: descs[:0]}
		n.occupy(d)
		return
	}
	frame := n.txFrame[:0]
	for i := range descs {
		x := &descs[i]
		l := int(x.ctrl & DescLenMask)
		x.wb = x.ctrl & (DescFirst | DescLast)
		if l == 0 {
			continue
		}
		start := len(frame)
		frame = append(frame, make([]byte, l)...)
		d += n.cost(l)
		if _, err := n.dma.Read(memory.Addr(x.buf), frame[start:]); err != nil {
			x.wb |= DescEDMA
			j.ok = false
			fmtErr = true
		}
	}
	n.txFrame = frame
	if fmtErr {
		n.refuseTx(&j, 0)
		n.occupy(d)
		return
	}
	j.ok = true
	j.frame = frame
	if descs[len(descs)-1].ctrl&DescIOC != 0 {
		j.ints = IntTx
	}
	n.job = j
	n.occupy(d)
}

// refuseTx makes j hand the frame's descriptors back with ERR and why.
func (n *NIC) refuseTx(j *job, why uint32) {
	for i := range j.descs {
		x := &j.descs[i]
		x.wb = x.wb&DescEDMA | x.ctrl&(DescFirst|DescLast) | DescErr | why
	}
	j.ok = false
	j.ints = IntErr
	n.stats.TxDescErrors++
	n.job = *j
}

// commitTx puts the frame read into the tx buffer and hands the
// descriptors back.
func (n *NIC) commitTx() {
	j := &n.job
	if j.ok {
		f := j.frame
		for len(f) < minFrameNoFCS {
			f = append(f, 0)
		}
		f = binary.LittleEndian.AppendUint32(f, crc32.ChecksumIEEE(f))
		n.txFrame = f[:0]
		n.txq.push(f)
		n.stats.TxDMAFrames++
		n.startWire()
	}
	n.txIdx = advance(n.txIdx, len(j.descs), n.txCount)
	d := n.writeBack(j.descs)
	j.kind = jobWrite
	n.occupy(d)
}

// startWire sends the frame at the head of the tx buffer if the wire is
// free.
func (n *NIC) startWire() {
	for !n.wireBusy && n.txq.len() > 0 {
		f := n.txq.front()
		if n.wire == nil {
			// No cable: the frame leaves and nothing answers.
			n.stats.TxFrames++
			n.stats.TxBytes += uint64(len(f))
			n.txq.pop()
			continue
		}
		n.wireBusy = true
		if err := n.wire.Transmit(f); err != nil {
			n.wireBusy = false
			n.stats.TxAborts++
			n.report("transmit of %d bytes refused by the network: %v", len(f), err)
			n.txq.pop()
			n.spaceFreed()
			continue
		}
		n.stats.TxFrames++
		n.stats.TxBytes += uint64(len(f))
	}
}

// TxDone is called by the network when the transmission Wire.Transmit
// started has ended; the machine wires it to the attachment's OnTxDone.
func (n *NIC) TxDone(st ethersim.TxStatus) {
	if !n.wireBusy {
		n.stats.SpuriousTxEnd++
		return
	}
	n.wireBusy = false
	n.stats.TxCollisions += uint64(st.Collisions)
	if n.txOrphan {
		n.txOrphan = false
		n.startWire()
		return
	}
	if st.Aborted {
		n.stats.TxAborts++
	}
	n.txq.pop()
	n.spaceFreed()
	n.startWire()
	n.update()
}

// spaceFreed resumes a transmitter that waited for tx buffer space.
func (n *NIC) spaceFreed() {
	if n.txState == StateWaiting {
		n.txState = StateRunning
		n.kick()
	}
}

// ---------------------------------------------------------------------------
// Receive

// Receive implements ethersim.Station: a frame (FCS included) has arrived.
// It is filtered and checked now and waits in the rx buffer for the DMA
// engine; the receive path never fails, every frame not kept is counted.
func (n *NIC) Receive(frame []byte) {
	n.receive(frame)
	n.update()
}

func (n *NIC) receive(frame []byte) {
	if n.rxState == StateStopped {
		n.stats.RxOffline++
		return
	}
	if len(frame) < minFrameNoFCS+fcsBytes {
		n.stats.RxRunts++
		return
	}
	if !n.accept(frame[0:6]) {
		n.stats.RxFiltered++
		return
	}
	body := frame[:len(frame)-fcsBytes]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(frame[len(body):]) {
		n.stats.RxCRCErrors++
		return
	}
	if len(frame) > int(n.p.MaxFrame) {
		n.stats.RxTooLong++
		return
	}
	if n.rxState == StateSuspended {
		n.drop(&n.stats.RxNoDescriptor, 1)
		return
	}
	if n.rxq.bytes+len(body) > int(n.p.RxBuffer) {
		n.drop(&n.stats.RxOverflow, 1)
		return
	}
	n.rxq.push(body)
	n.kick()
}

// drop counts k frames lost for want of room in counter c and MISSED.
func (n *NIC) drop(c *uint64, k int) {
	*c += uint64(k)
	n.missed += uint32(k)
}

func (n *NIC) accept(dst []byte) bool {
	switch {
	case [6]byte(dst) == n.mac:
		return true
	case [6]byte(dst) == [6]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}:
		return n.ctrl&(CtrlBcast|CtrlProm) != 0
	}
	return n.ctrl&CtrlProm != 0
}

// startRx stores the frame at the head of the rx buffer through as many
// receive descriptors as it needs.
func (n *NIC) startRx() {
	var d sim.Time
	f := n.rxq.front()
	descs := n.job.descs[:0]
	idx := n.rxIdx
	room := 0
	var why uint32
	for room < len(f) {
		if len(descs) >= int(n.rxCount) {
			why = DescELen // the whole ring cannot hold it
			break
		}
		x, ok := n.fetch(n.rxBase, idx, &d)
		if !ok {
			n.ctrl &^= CtrlRxEn
			n.rxState = StateStopped
			n.stats.RxOffline += uint64(n.rxq.clear())
			n.ringFault("receive", n.rxBase, n.rxCount, d)
			return
		}
		if x.status&DescOwn == 0 {
			// The ring has run out: drop this frame and all that wait,
			// and suspend until the driver returns descriptors.
			n.drop(&n.stats.RxNoDescriptor, n.rxq.clear())
			n.rxState = StateSuspended
			n.isr |= IntRxNoBuf
			n.job = job{kind: jobIdle, descs: descs[:0]}
			n.occupy(d)
			return
		}
		l := int(x.ctrl & DescLenMask)
		if l == 0 {
			why = DescELen
			descs = append(descs, x)
			break
		}
		descs = append(descs, x)
		room += l
		idx = (idx + 1) % n.rxCount
	}
	j := job{kind: jobRx, descs: descs, ints: IntRx}
	if why == 0 {
		off := 0
		for i := range descs {
			x := &descs[i]
			l := min(int(x.ctrl&DescLenMask), len(f)-off)
			d += n.cost(l)
			if _, err := n.dma.Write(memory.Addr(x.buf), f[off:off+l]); err != nil {
				why = DescEDMA
			}
			x.wb = uint32(l)
			off += l
		}
	}
	for i := range descs {
		x := &descs[i]
		if why != 0 {
			x.wb = DescErr | why
		}
		if i == 0 {
			x.wb |= DescFirst
		}
		if i == len(descs)-1 {
			x.wb |= DescLast
		}
	}
	if why != 0 {
		n.report("receive descriptors %d..%d cannot take a frame of %d bytes (%s)", n.rxIdx, (n.rxIdx+uint32(len(descs))-1)%n.rxCount, len(f), descErrName(why))
		j.ints = IntErr
	}
	n.job = j
	n.occupy(d)
}

// advance moves ring index i on by k in a ring of count descriptors (the
// count may have been rewritten while the engine finished a job).
func advance(i uint32, k int, count uint32) uint32 {
	if count == 0 {
		return 0
	}
	return (i + uint32(k)) % count
}

func descErrName(why uint32) string {
	switch why {
	case DescELen:
		return "bad buffer length"
	case DescEDMA:
		return "buffer outside memory"
	}
	return "format"
}

// commitRx hands the frame's descriptors back.
func (n *NIC) commitRx() {
	j := &n.job
	// The receiver may have been switched off meanwhile, emptying the rx
	// buffer; the descriptors written go back all the same.
	if n.rxq.len() > 0 {
		if j.ints == IntRx {
			n.stats.RxFrames++
			n.stats.RxBytes += uint64(len(n.rxq.front()))
		} else {
			n.stats.RxDescErrors++
		}
		n.rxq.pop()
	}
	n.rxIdx = advance(n.rxIdx, len(j.descs), n.rxCount)
	d := n.writeBack(j.descs)
	j.kind = jobWrite
	n.occupy(d)
}
