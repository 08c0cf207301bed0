// Package simoseth is the kernel's driver for the bus-master Ethernet NIC
// of the Linux/SimOS study (devices/simoseth), in the manner of a Linux
// 2.x descriptor-ring driver (tulip.c): rings of descriptors in memory,
// one frame per transmit descriptor handed to the card with its OWN bit
// and a poll demand, transmit buffers freed when the card hands their
// descriptors back, an interrupt handler that walks the receive ring,
// passes each frame up (netif_rx) and gives the descriptor a fresh buffer,
// and restarts a receiver that ran out of descriptors. It reaches the
// card only through its memory-mapped registers and memory, and plugs
// into the device layer (stack/netdev), so the Internet protocols run over
// it unchanged. Layer DEV.
//
// Besides netdev's one-buffer transmit it offers a gather transmit
// (StartXmitFrags): a frame of several pieces anywhere in memory, one
// descriptor each, with a callback when the card has read them — the
// zero-copy send of M-VIA's device drivers (stack/via). Its cycles take
// the caller's layer: the study counts that DMA set-up in M-VIA's TRANS.
// And a direct receive (SetDirectRx): the frames of one EtherType go from
// the receive interrupt straight to a handler registered for it — M-VIA's
// device drivers hand the agent its frames so (docs/reference/via.md
// sec. 4: NIC interrupt, then the agent's demultiplexing and the copy into
// the posted buffer), not through netif_rx and the receive softirq — and
// the ring buffer, whose bytes the handler has copied out, goes back to
// the card without a replacement being allocated. The driver reads every
// frame's type field for that, as eth_type_trans does in a Linux driver.
//
// Coherence, as on Linux for MIPS: when the platform's DMA does not snoop
// the caches (coherent = false) the descriptor rings must live in an
// uncached region (dma_base, dma_size: what dma_alloc_coherent returns
// there, kseg1 memory), and frame buffers are streamed: written back
// before the card reads them, invalidated before the CPU reads what the
// card wrote. With uncached_buffers the frame buffers too live in the
// uncached region and frames are copied between them and kernel buffers,
// as the Linux/SimOS study's driver had to do (DMA buffers allocated
// through SimOS's device registry as uncached memory).
//
// Simplifications: one card per driver instance; every transmit frame
// asks for an interrupt (no interrupt mitigation); a receive buffer holds
// a whole frame of the MTU, so frames never span descriptors; no
// multicast list (promiscuous or not); a lost interrupt is not timed out.
package simoseth

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// Params configures the driver.
type Params struct {
	TxRing          int      `toml:"tx_ring" min:"2" max:"4096" help:"transmit descriptors (Linux 2.2 tulip: 16)"`
	RxRing          int      `toml:"rx_ring" min:"2" max:"4096" help:"receive descriptors, each with a buffer of one maximum frame (Linux 2.2 tulip: 32)"`
	MTU             int      `toml:"mtu" min:"68" max:"9000" help:"largest payload of one frame: 1500 on Ethernet; the card's max_frame must be at least mtu+18"`
	Coherent        bool     `toml:"coherent" help:"the platform's DMA snoops the caches; false: the rings go in the uncached region (dma_base) and frame buffers are flushed before the card reads them and invalidated before the CPU reads them. Must match the card's params.coherent"`
	DMABase         uint64   `toml:"dma_base" help:"physical address of an uncached region of the machine ([[uncached]]) for the descriptor rings (0: the rings are kmalloc'd, cached)"`
	DMASize         sim.Size `toml:"dma_size" help:"length of the uncached region at dma_base"`
	UncachedBuffers bool     `toml:"uncached_buffers" help:"frame buffers in the uncached region too: frames are copied between them and kernel buffers (the Linux/SimOS study's arrangement)"`
	Promiscuous     bool     `toml:"promiscuous" help:"receive every frame on the wire"`
}

// DefaultParams returns Linux 2.2 tulip's ring sizes, the Ethernet MTU
// and a coherent platform.
func DefaultParams() Params {
	return Params{TxRing: 16, RxRing: 32, MTU: 1500, Coherent: true}
}

// MaxFrame returns the longest frame the driver sends, FCS included.
func (p Params) MaxFrame() int { return p.MTU + header.EthernetOverhead }

// bufSize is one receive buffer: a frame of the MTU without FCS, rounded
// to 32 bytes (1536 for MTU 1500, Linux's PKT_BUF_SZ).
func (p Params) bufSize() int { return (p.MTU + etherHdr + 31) &^ 31 }

// regionNeed is the bytes of uncached region the driver uses.
func (p Params) regionNeed() uint64 {
	n := uint64(p.TxRing+p.RxRing)*descSize + 32
	if p.UncachedBuffers {
		n += uint64(p.TxRing+p.RxRing) * uint64(p.bufSize())
	}
	return n
}

// Validate checks p; errors start with the TOML key at fault.
func (p Params) Validate() error {
	switch {
	case p.TxRing < 2 || p.TxRing > 4096:
		return fmt.Errorf("tx_ring: %d must be 2 to 4096", p.TxRing)
	case p.RxRing < 2 || p.RxRing > 4096:
		return fmt.Errorf("rx_ring: %d must be 2 to 4096", p.RxRing)
	case p.MTU < 68 || p.MTU > 9000:
		return fmt.Errorf("mtu: %d must be 68 to 9000", p.MTU)
	case !p.Coherent && p.DMABase == 0:
		return fmt.Errorf("coherent: without coherent DMA the descriptor rings need an uncached region: set dma_base and dma_size")
	case p.UncachedBuffers && p.DMABase == 0:
		return fmt.Errorf("uncached_buffers: needs an uncached region: set dma_base and dma_size")
	case p.DMABase != 0 && uint64(p.DMASize) < p.regionNeed():
		return fmt.Errorf("dma_size: %v is less than the %d bytes the rings%s need", p.DMASize, p.regionNeed(),
			map[bool]string{true: " and buffers", false: ""}[p.UncachedBuffers])
	}
	return nil
}

// Costs of the driver's functions in instructions per call, estimated
// from the C of Linux 2.2's tulip.c (register accesses, copies and cache
// maintenance are charged separately as they happen).
var (
	defOpen      = cpu.Def{Name: "simoseth_open", Layer: cpu.LayerDEV, Instructions: 400, CodeBytes: 1536, Why: "reset, read the station address, allocate and fill the rings, program the card (once)"}
	defStartXmit = cpu.Def{Name: "simoseth_start_xmit", Layer: cpu.LayerDEV, Instructions: 60, CodeBytes: 512, Why: "check for a free descriptor, fill buffer and length, remember the buffer, set OWN, poll demand"}
	defXmitFrags = cpu.Def{Name: "simoseth_xmit_frags", Layer: cpu.LayerInherit, Instructions: 40, CodeBytes: 512, Why: "count free descriptors, remember the completion, poll demand; the caller's layer (M-VIA's DMA set-up)"}
	defInterrupt = cpu.Def{Name: "simoseth_interrupt", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 512, Why: "per round: read and acknowledge ISR, dispatch"}
	defRx        = cpu.Def{Name: "simoseth_rx", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 1024, Why: "ring walk set-up and the final poll demand"}
	defTxClean   = cpu.Def{Name: "simoseth_tx_clean", Layer: cpu.LayerDEV, Instructions: 25, CodeBytes: 512, Why: "walk the handed-back transmit descriptors, wake the queue"}
	defCacheWB   = cpu.Def{Name: "dma_cache_wback_inv", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 128, Why: "loop set-up of the cache-op loop (the cache charges each line)"}
	defCacheInv  = cpu.Def{Name: "dma_cache_inv", Layer: cpu.LayerInherit, Instructions: 12, CodeBytes: 128, Why: "loop set-up of the cache-op loop (the cache charges each line)"}
)

// Per-item costs inside the functions, overridable like a function's.
const (
	costRxFrame  = "simoseth_rx.frame"
	costTxDesc   = "simoseth_tx_clean.desc"
	costFragDesc = "simoseth_xmit_frags.desc"
)

// Stats counts what the driver did.
type Stats struct {
	TxFrames        uint64 `stat:"tx_frames" help:"frames handed to the card to send"`
	TxBytes         uint64 `stat:"tx_bytes" help:"bytes of those frames"`
	TxErrors        uint64 `stat:"tx_errors" help:"descriptors the card handed back with ERR, frames refused"`
	TxBusy          uint64 `stat:"tx_busy" help:"transmits refused for want of descriptors"`
	RxFrames        uint64 `stat:"rx_frames" help:"frames taken from the receive ring"`
	RxBytes         uint64 `stat:"rx_bytes" help:"bytes of those frames"`
	RxErrors        uint64 `stat:"rx_errors" help:"descriptors handed back with ERR or an unexpected shape"`
	RxNoBuffer      uint64 `stat:"rx_no_buffer" help:"frames dropped: no kernel buffer to replace or copy into"`
	RxDirect        uint64 `stat:"rx_direct" help:"frames handed to the direct handler in the interrupt (of RxFrames)"`
	RxRestarts      uint64 `stat:"rx_restarts" help:"receive poll demands after the ring had run out"`
	Missed          uint64 `stat:"missed" help:"the card's MISSED counter, accumulated"`
	Interrupts      uint64 `stat:"interrupts" help:"interrupt handler runs"`
	InterruptRounds uint64 `stat:"interrupt_rounds" help:"rounds of the interrupt handler over the status register"`
	Spurious        uint64 `stat:"spurious" help:"interrupts with nothing for the driver to do"`
}

// txSlot is what the driver remembers of a transmit descriptor.
type txSlot struct {
	buf    netdev.Buf // freed when the card hands the descriptor back (Addr 0: none)
	done   func()     // gather transmit: called then
	bounce memory.Addr
	length int
}

// Driver drives one card.
type Driver struct {
	k    *kernel.Kernel
	c    *cpu.CPU
	sys  *memory.System
	ns   *netdev.Stack
	qi   int
	p    Params
	base memory.Addr
	irq  int
	name string
	mac  [6]byte

	txRing, rxRing   memory.Addr
	tx               []txSlot
	txCur, txDirty   int // next descriptor to fill, oldest handed to the card
	txPending        int
	rxBuf            []memory.Addr
	rxCur            int
	region, regionTo memory.Addr // uncached bump allocation
	ready            bool
	stats            Stats
	word             [4]byte
	desc             [descSize]byte
	costRx, costTx   int64
	costFrag         int64
	// direct is the handler of frames of EtherType directType taken in
	// the interrupt (SetDirectRx); nil: every frame goes to netif_rx.
	direct     func(b netdev.Buf)
	directType uint16
	hdr        [etherHdr]byte
	sym        struct{ open, startXmit, xmitFrags, interrupt, rx, txClean, cacheWB, cacheInv *cpu.Symbol }
}

// New prepares the driver of the card whose registers are memory-mapped
// at base, on line irq, and registers it with the device layer as name
// ("eth0"). Init programs the card.
func New(k *kernel.Kernel, ns *netdev.Stack, name string, base memory.Addr, irq int, p Params) (*Driver, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{k: k, c: k.CPU(), sys: k.CPU().System(), ns: ns, p: p, base: base, irq: irq, name: name}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&d.sym.open, defOpen}, {&d.sym.startXmit, defStartXmit}, {&d.sym.xmitFrags, defXmitFrags},
		{&d.sym.interrupt, defInterrupt}, {&d.sym.rx, defRx}, {&d.sym.txClean, defTxClean},
		{&d.sym.cacheWB, defCacheWB}, {&d.sym.cacheInv, defCacheInv},
	})
	d.costRx = syms.Cost(costRxFrame, 70, "per frame: read the status, allocate a replacement buffer, hand the frame up, return the descriptor (tulip_rx)")
	d.costTx = syms.Cost(costTxDesc, 20, "per handed-back descriptor: read the status, account, free the buffer (tulip_interrupt's transmit loop)")
	d.costFrag = syms.Cost(costFragDesc, 15, "per piece: fill buffer, length and flags of one descriptor")
	d.qi = ns.AddDevice(d)
	return d, nil
}

// Name implements netdev.Device.
func (d *Driver) Name() string { return d.name }

// MAC implements netdev.Device: the address read from the card.
func (d *Driver) MAC() [6]byte { return d.mac }

// MTU implements netdev.Device.
func (d *Driver) MTU() int { return d.p.MTU }

// Queue returns the device's queue index in the device layer.
func (d *Driver) Queue() int { return d.qi }

// Stats returns the driver's counters.
func (d *Driver) Stats() Stats { return d.stats }

// SetDirectRx makes the driver hand every received frame of etherType to
// fn from its interrupt handler, instead of to netif_rx: fn runs in the
// interrupt, reads the frame where the card put it and does not own b
// (the driver gives the buffer back to the card when fn returns). One
// EtherType at most; a later call replaces the earlier.
func (d *Driver) SetDirectRx(etherType uint16, fn func(b netdev.Buf)) {
	d.direct, d.directType = fn, etherType
}

// Ready reports whether Init started the card.
func (d *Driver) Ready() bool { return d.ready }

// Busy implements netdev.Device: descriptors are with the card.
func (d *Driver) Busy() bool { return d.txPending > 0 }

// TxDMAPending implements netdev.DMADevice: a transmit descriptor is with
// the card until it has read the frame and the interrupt handler has taken
// the descriptor back (a descriptor is handed back when its frame is in
// the card, before the wire sends it).
func (d *Driver) TxDMAPending() bool { return d.txPending > 0 }

func (d *Driver) in(reg memory.Addr) uint32 {
	return uint32(d.c.In(memory.SpaceMem, d.base+reg, 4))
}

func (d *Driver) out(reg memory.Addr, v uint32) {
	d.c.Out(memory.SpaceMem, d.base+reg, 4, uint64(v))
}

// dmaAlloc returns n bytes of DMA memory aligned to align: from the
// uncached region when there is one and uncached (the rings, or buffers
// with uncached_buffers), otherwise kmalloc'd. It returns 0 when there
// is none.
func (d *Driver) dmaAlloc(n int, uncached bool) memory.Addr {
	if !uncached {
		return d.k.Kmalloc(n)
	}
	a := (d.region + 31) &^ 31
	if a+memory.Addr(n) > d.regionTo {
		return 0
	}
	d.region = a + memory.Addr(n)
	return a
}

// Init resets and starts the card; it runs in a thread during boot. A
// card that does not come out of reset, or memory that cannot be had, is
// reported as a guest error and the card left alone.
func (d *Driver) Init() {
	c := d.c
	c.Enter(d.sym.open)
	defer c.Exit(d.sym.open)
	d.region, d.regionTo = memory.Addr(d.p.DMABase), memory.Addr(d.p.DMABase)+memory.Addr(d.p.DMASize)
	d.out(regCtrl, ctrlReset)
	if d.in(regCtrl) != 0 {
		d.sys.Guest.Report(c.LocalTime(), d.name, "card at %#x does not come out of reset", uint64(d.base))
		return
	}
	lo, hi := d.in(regMACLo), d.in(regMACHi)
	d.mac = [6]byte{byte(lo), byte(lo >> 8), byte(lo >> 16), byte(lo >> 24), byte(hi), byte(hi >> 8)}
	ringsUncached := d.p.DMABase != 0
	d.txRing = d.dmaAlloc(d.p.TxRing*descSize, ringsUncached)
	d.rxRing = d.dmaAlloc(d.p.RxRing*descSize, ringsUncached)
	if d.txRing == 0 || d.rxRing == 0 {
		d.sys.Guest.Report(c.LocalTime(), d.name, "no memory for the descriptor rings")
		return
	}
	d.tx = make([]txSlot, d.p.TxRing)
	c.Write(d.txRing, make([]byte, d.p.TxRing*descSize))
	if d.p.UncachedBuffers {
		for i := range d.tx {
			if d.tx[i].bounce = d.dmaAlloc(d.p.bufSize(), true); d.tx[i].bounce == 0 {
				d.sys.Guest.Report(c.LocalTime(), d.name, "no uncached memory for the transmit buffers")
				return
			}
		}
	}
	d.rxBuf = make([]memory.Addr, d.p.RxRing)
	for i := range d.rxBuf {
		b := d.dmaAlloc(d.p.bufSize(), d.p.UncachedBuffers)
		if b == 0 {
			d.sys.Guest.Report(c.LocalTime(), d.name, "no memory for the receive buffers")
			return
		}
		d.rxBuf[i] = b
		d.giveRx(i, b)
	}
	d.out(regTxBase, uint32(d.txRing))
	d.out(regTxCount, uint32(d.p.TxRing))
	d.out(regRxBase, uint32(d.rxRing))
	d.out(regRxCount, uint32(d.p.RxRing))
	d.out(regISR, intAll)
	d.out(regIMR, intAll)
	c.SetHandler(d.irq, d.name, d.interrupt)
	ctrl := uint32(ctrlTxEn | ctrlRxEn | ctrlBcast)
	if d.p.Promiscuous {
		ctrl |= ctrlProm
	}
	d.out(regCtrl, ctrl)
	d.ready = true
}

// streamed reports whether frame buffers need cache maintenance.
func (d *Driver) streamed() bool { return !d.p.Coherent && !d.p.UncachedBuffers }

// writeBack makes n bytes at a visible to the card (dma_cache_wback_inv).
func (d *Driver) writeBack(a memory.Addr, n int) {
	c := d.c
	c.Enter(d.sym.cacheWB)
	c.Charge(d.sys.Flush(a, uint64(n)))
	c.Exit(d.sym.cacheWB)
}

// invalidate drops cached copies of n bytes at a (dma_cache_inv).
func (d *Driver) invalidate(a memory.Addr, n int) {
	c := d.c
	c.Enter(d.sym.cacheInv)
	c.Charge(d.sys.Invalidate(a, uint64(n)))
	c.Exit(d.sym.cacheInv)
}

// putDesc writes a descriptor's control and buffer words, then its status
// (the OWN bit last, as the card requires).
func (d *Driver) putDesc(a memory.Addr, ctrl, buf, status uint32) {
	put32(d.desc[0:4], ctrl)
	put32(d.desc[4:8], buf)
	d.c.Write(a+descControl, d.desc[0:8])
	d.putStatus(a, status)
}

func (d *Driver) putStatus(a memory.Addr, status uint32) {
	if status&descOwn != 0 {
		// Handing a descriptor to the card is seen by the card: the core
		// catches up first, so that the card cannot act on it before the
		// work that filled it is done (the core charges ahead of the event
		// clock, and the card polls the ring when it ends a job).
		d.c.Sync()
	}
	put32(d.word[:], status)
	d.c.Write(a+descStatus, d.word[:])
}

func (d *Driver) status(a memory.Addr) uint32 {
	d.c.Read(a+descStatus, d.word[:])
	return uint32(d.word[0]) | uint32(d.word[1])<<8 | uint32(d.word[2])<<16 | uint32(d.word[3])<<24
}

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// giveRx hands receive descriptor i to the card with buffer b.
func (d *Driver) giveRx(i int, b memory.Addr) {
	if d.streamed() {
		// The card will write there: no dirty line may be written back
		// over its data later (dma_map_single for the device).
		d.invalidate(b, d.p.bufSize())
	}
	d.putDesc(d.rxRing+memory.Addr(i*descSize), uint32(d.p.bufSize()), uint32(b), descOwn)
}

// StartXmit implements netdev.Device: the frame goes into the next
// transmit descriptor. The buffer is freed when the card hands the
// descriptor back (at once, when it is copied to an uncached buffer).
func (d *Driver) StartXmit(b netdev.Buf) bool {
	if !d.ready {
		d.stats.TxErrors++
		b.Free(d.k)
		return true
	}
	if d.txPending == d.p.TxRing {
		d.stats.TxBusy++
		return false
	}
	if b.Len > d.p.MTU+etherHdr || b.Len < etherHdr {
		d.stats.TxErrors++
		b.Free(d.k)
		return true
	}
	c := d.c
	c.Enter(d.sym.startXmit)
	defer c.Exit(d.sym.startXmit)
	i := d.txCur
	s := &d.tx[i]
	addr := b.Addr
	if d.p.UncachedBuffers {
		d.k.Bcopy(s.bounce, b.Addr, b.Len)
		b.Free(d.k)
		addr = s.bounce
	} else {
		if d.streamed() {
			d.writeBack(b.Addr, b.Len)
		}
		s.buf = b
	}
	s.length = b.Len
	d.putDesc(d.txRing+memory.Addr(i*descSize), descFirst|descLast|descIOC|uint32(b.Len), uint32(addr), descOwn)
	d.txCur = (i + 1) % d.p.TxRing
	d.txPending++
	d.out(regTxPoll, 1)
	return true
}

// StartXmitFrags sends one frame made of the pieces frags (Ethernet header
// first), each anywhere in memory, without copying them: one transmit
// descriptor per piece. done, if not nil, runs when the card has read
// them all (from the interrupt handler; at once when the pieces are copied
// to an uncached buffer). It returns false, taking nothing, when the ring
// lacks descriptors; the caller retries after the next transmit
// interrupt (netdev's DrainQueue is woken then). The frame's length must
// lie between 14 and mtu+14 bytes: the caller fragments.
func (d *Driver) StartXmitFrags(frags []netdev.Buf, done func()) bool {
	total := 0
	pieces := 0
	for _, f := range frags {
		total += f.Len
		if f.Len > 0 {
			pieces++
		}
	}
	if total > d.p.MTU+etherHdr || total < etherHdr {
		panic(fmt.Sprintf("simoseth: %s: gather transmit of %d bytes in %d pieces: a frame holds 14 to %d", d.name, total, len(frags), d.p.MTU+etherHdr))
	}
	need := pieces
	if d.p.UncachedBuffers {
		need = 1
	}
	if !d.ready || d.p.TxRing-d.txPending < need {
		d.stats.TxBusy++
		return false
	}
	c := d.c
	c.Enter(d.sym.xmitFrags)
	defer c.Exit(d.sym.xmitFrags)
	first := d.txCur
	if d.p.UncachedBuffers {
		s := &d.tx[first]
		at := s.bounce
		for _, f := range frags {
			d.k.Bcopy(at, f.Addr, f.Len)
			at += memory.Addr(f.Len)
		}
		s.length = total
		c.Exec(d.costFrag)
		d.putDesc(d.txRing+memory.Addr(first*descSize), descFirst|descLast|descIOC|uint32(total), uint32(s.bounce), descOwn)
		d.txCur = (first + 1) % d.p.TxRing
		d.txPending++
		if done != nil {
			done()
		}
		d.out(regTxPoll, 1)
		return true
	}
	// Fill every descriptor but hand the first over last, so that the
	// card never sees half a frame.
	k := 0
	for _, f := range frags {
		if f.Len == 0 {
			continue
		}
		c.Exec(d.costFrag)
		if d.streamed() {
			d.writeBack(f.Addr, f.Len)
		}
		i := (first + k) % d.p.TxRing
		ctrl := uint32(f.Len)
		if k == 0 {
			ctrl |= descFirst
		}
		if k == pieces-1 {
			ctrl |= descLast | descIOC
			d.tx[i].done = done
			d.tx[i].length = total
		}
		a := d.txRing + memory.Addr(i*descSize)
		if k == 0 {
			put32(d.desc[0:4], ctrl)
			put32(d.desc[4:8], uint32(f.Addr))
			c.Write(a+descControl, d.desc[0:8])
		} else {
			d.putDesc(a, ctrl, uint32(f.Addr), descOwn)
		}
		k++
	}
	d.putStatus(d.txRing+memory.Addr(first*descSize), descOwn)
	d.txCur = (first + pieces) % d.p.TxRing
	d.txPending += pieces
	d.out(regTxPoll, 1)
	return true
}

// interrupt is the card's interrupt handler.
func (d *Driver) interrupt() {
	c := d.c
	c.Enter(d.sym.interrupt)
	defer c.Exit(d.sym.interrupt)
	d.stats.Interrupts++
	rounds := 0
	for ; rounds < 16; rounds++ {
		isr := d.in(regISR)
		if isr&intAll == 0 {
			break
		}
		d.out(regISR, isr)
		d.stats.InterruptRounds++
		if rounds > 0 {
			c.Exec(defInterrupt.Instructions / 2) // the dispatch of one more round
		}
		if isr&(intRx|intRxNoBuf|intErr) != 0 {
			d.rx(isr&intRxNoBuf != 0)
		}
		if isr&(intTx|intErr) != 0 {
			d.txClean()
		}
	}
	if rounds == 0 {
		d.stats.Spurious++
	}
}

// rx walks the receive ring from the driver's index up to the first
// descriptor the card still owns; restart asks the card to look at the
// ring again (it had run out).
func (d *Driver) rx(restart bool) {
	c := d.c
	c.Enter(d.sym.rx)
	defer c.Exit(d.sym.rx)
	for range d.p.RxRing {
		i := d.rxCur
		a := d.rxRing + memory.Addr(i*descSize)
		st := d.status(a)
		if st&descOwn != 0 {
			break
		}
		c.Exec(d.costRx)
		old := d.rxBuf[i]
		n := int(st & descLenMask)
		dropped := false // the frame's cached lines invalidated already
		switch {
		case st&descErr != 0 || st&(descFirst|descLast) != descFirst|descLast || n < etherHdr || n > d.p.bufSize():
			d.stats.RxErrors++
		case d.takeDirect(old, n, &dropped):
			// Handled in the interrupt: the buffer goes back as it is.
		case d.p.UncachedBuffers:
			nb := d.k.Kmalloc(n)
			if nb == 0 {
				d.stats.RxNoBuffer++
				break
			}
			d.k.Bcopy(nb, old, n)
			d.up(nb, n)
		default:
			nb := d.k.Kmalloc(d.p.bufSize())
			if nb == 0 {
				d.stats.RxNoBuffer++ // the frame is dropped, the buffer reused
				break
			}
			if d.streamed() && !dropped {
				d.invalidate(old, n)
			}
			d.rxBuf[i] = nb
			d.up(old, n)
		}
		d.giveRx(i, d.rxBuf[i])
		d.rxCur = (i + 1) % d.p.RxRing
	}
	if restart {
		d.stats.RxRestarts++
		d.stats.Missed += uint64(d.in(regMissed))
		d.out(regRxPoll, 1)
	}
}

// takeDirect gives the frame of n bytes in ring buffer b to the direct
// handler when one is set and the frame is of its EtherType, and reports
// whether it did. The type field is read as eth_type_trans reads it: the
// first look at what the card wrote, after its cached lines are dropped
// on a non-coherent platform (dropped says so to the caller).
func (d *Driver) takeDirect(b memory.Addr, n int, dropped *bool) bool {
	if d.direct == nil {
		return false
	}
	if d.streamed() {
		d.invalidate(b, n)
		*dropped = true
	}
	d.c.Read(b, d.hdr[:])
	if uint16(d.hdr[12])<<8|uint16(d.hdr[13]) != d.directType {
		return false
	}
	d.stats.RxFrames++
	d.stats.RxBytes += uint64(n)
	d.stats.RxDirect++
	d.direct(netdev.Buf{Addr: b, Len: n, Dev: d})
	return true
}

func (d *Driver) up(b memory.Addr, n int) {
	d.stats.RxFrames++
	d.stats.RxBytes += uint64(n)
	d.ns.Rx(netdev.Buf{Addr: b, Len: n, Dev: d})
}

// txClean takes back the transmit descriptors the card has finished
// with, frees their buffers, runs gather completions and wakes the queue.
func (d *Driver) txClean() {
	c := d.c
	c.Enter(d.sym.txClean)
	defer c.Exit(d.sym.txClean)
	freed := 0
	for d.txPending > 0 {
		i := d.txDirty
		st := d.status(d.txRing + memory.Addr(i*descSize))
		if st&descOwn != 0 {
			break
		}
		c.Exec(d.costTx)
		s := &d.tx[i]
		switch {
		case st&descErr != 0:
			d.stats.TxErrors++
		case st&descLast != 0:
			d.stats.TxFrames++
			d.stats.TxBytes += uint64(s.length)
		}
		if s.buf.Addr != 0 {
			s.buf.Free(d.k)
			s.buf = netdev.Buf{}
		}
		if s.done != nil {
			done := s.done
			s.done = nil
			done()
		}
		d.txDirty = (i + 1) % d.p.TxRing
		d.txPending--
		freed++
	}
	if freed > 0 {
		d.ns.WakeQueue(d.qi)
	}
}

var _ netdev.DMADevice = (*Driver)(nil)
