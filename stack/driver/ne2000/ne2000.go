// Package ne2000 is the kernel's driver for NE2000 ISA Ethernet cards, in
// the manner of Linux 2.x's ne.c and lib8390.c: probe and reset, station
// address PROM read, the National Semiconductor initialisation order,
// transmit by remote-DMA write into packet RAM and a transmit command, an
// interrupt handler that walks the receive ring with remote-DMA reads,
// completes transmissions, recovers from ring overflow and reads the tally
// counters. It reaches the card only through its I/O ports, and frame data
// only in simulated memory. Layer DEV; the data-port transfers
// (ne_block_output, ne_block_input) are layer DMA.
//
// The driver can also run in loopback mode, where a transmitted frame is
// copied straight to its own receive path without touching the card (the
// packet driver loopback of the TOP-on-486 measurements), to measure
// protocol processing without the wire.
//
// The MTU is a parameter: 1500 as on Ethernet, or larger when the card
// stands in for an FDDI interface (MTU 4352, with the card's max_frame
// raised to match). The transmit slots and the receive ring are sized for
// it within the card's 16 KiB of packet RAM.
//
// Simplifications: one card per driver instance; no multicast list (the
// hash filter is left open or closed as a whole); a lost transmit
// interrupt is not timed out.
package ne2000

import (
	"fmt"
	"simkron/stack/driver/dp8390"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// Params configures the driver.
type Params struct {
	TxBuffers   int      `toml:"tx_buffers" min:"1" max:"2" help:"transmit slots in packet RAM: 1 waits for each transmission before loading the next frame (DOS packet driver), 2 loads one while the other is sent (Linux ping-pong)"`
	Promiscuous bool     `toml:"promiscuous" help:"receive every frame on the wire"`
	OverrunWait sim.Time `toml:"overrun_wait" help:"busy wait after stopping the chip on a ring overflow (the data sheet asks for at least 1.6 ms; Linux waits 10 ms)"`
	Loopback    bool     `toml:"loopback" help:"copy transmitted frames straight to the receive path, never touching the card"`
	MTU         int      `toml:"mtu" min:"68" max:"5353" help:"largest payload of one frame: 1500 on Ethernet, 4352 to stand in for FDDI. The card's params.max_frame must be at least mtu+18. Each transmit slot takes ceil((mtu+14)/256) pages of the 16 KiB packet RAM and the rest must give a receive ring for two maximum frames: mtu at most 5353 with tx_buffers = 1, 3826 with 2"`
}

// DefaultParams returns one transmit slot, as the packet driver of the
// TOP measurements used, and the Ethernet MTU.
func DefaultParams() Params {
	return Params{TxBuffers: 1, OverrunWait: 1600 * sim.Microsecond, MTU: DefaultMTU}
}

// DefaultMTU is Ethernet's (RFC 894); MinMTU is the least every IP host
// must handle (RFC 791).
const (
	DefaultMTU = 1500
	MinMTU     = 68
)

// Packet RAM layout for an MTU, in Linux's order: the transmit slots
// first, the receive ring from the page after them to the end of the RAM.
//
//	0x40    ┌─────────────┐
//	        │ TX slot 0   │ txPages: ceil((mtu+14)/256) pages each
//	        │ TX slot 1   │ (tx_buffers = 2)
//	rxStart ├─────────────┤ PSTART
//	        │ receive     │ at least two maximum frames (rxFramePages
//	        │ ring        │ each) and the page BNRY holds, which the
//	        │             │ chip never writes
//	0x80    └─────────────┘ PSTOP
//
// With the defaults (MTU 1500, one slot) this is 6 pages of transmit
// buffer and a 58-page ring; with MTU 4352, 18 and 46.

// txPages is the pages of one transmit slot: a maximum frame without FCS
// (the chip appends it).
func txPages(mtu int) int { return (mtu + dp8390.EtherHdr + dp8390.PageSize - 1) / dp8390.PageSize }

// rxFramePages is the ring pages one maximum received frame takes: the
// header, the frame and its FCS, counted as the next-page pointer the
// driver's sanity check expects (1 + count/256, which is one page more
// than needed when the count is a multiple of 256).
func rxFramePages(mtu int) int {
	return 1 + (dp8390.HdrBytes+mtu+dp8390.EtherHdr+dp8390.FcsBytes)/dp8390.PageSize
}

// MaxFrame returns the longest frame the driver sends or accepts, FCS
// included: the MTU, the Ethernet header and the FCS. The card's
// max_frame must be at least this.
func (p Params) MaxFrame() int { return p.MTU + dp8390.EtherHdr + dp8390.FcsBytes }

// Validate checks p; errors start with the TOML key at fault.
func (p Params) Validate() error {
	if p.TxBuffers < 1 || p.TxBuffers > 2 {
		return fmt.Errorf("tx_buffers: %d is not 1 or 2", p.TxBuffers)
	}
	if p.MTU < MinMTU {
		return fmt.Errorf("mtu: %d is below the minimum of %d (RFC 791)", p.MTU, MinMTU)
	}
	slot := txPages(p.MTU)
	ring := max(dp8390.CardMemHi-dp8390.CardMemLo-p.TxBuffers*slot, 0)
	if need := 2*rxFramePages(p.MTU) + 1; ring < need {
		return fmt.Errorf("mtu: %d does not fit the card's 16 KiB of packet RAM with tx_buffers = %d: "+
			"%d transmit slot(s) of %d pages leave a receive ring of %d pages; two %d-byte frames need %d (%d pages each and the page BNRY holds)",
			p.MTU, p.TxBuffers, p.TxBuffers, slot, ring, p.MaxFrame(), need, rxFramePages(p.MTU))
	}
	return nil
}

// Costs of the driver's functions in instructions per call, estimated
// from the C of Linux 2.x's lib8390.c and ne.c (register accesses and bus
// cycles are charged separately, by the bus).
var (
	defInit        = cpu.Def{Name: "ne_probe", Layer: cpu.LayerDEV, Instructions: 400, CodeBytes: 1536, Why: "reset, PROM read, NS8390 initialisation (once)"}
	defStartXmit   = cpu.Def{Name: "ei_start_xmit", Layer: cpu.LayerDEV, Instructions: 120, CodeBytes: 768, Why: "mask the card, pick a slot, load it, trigger if idle, unmask"}
	defTrigger     = cpu.Def{Name: "NS8390_trigger_send", Layer: cpu.LayerDEV, Instructions: 25, CodeBytes: 128, Why: "check TXP, program TBCR/TPSR, start"}
	defBlockOut    = cpu.Def{Name: "ne_block_output", Layer: cpu.LayerDMA, Instructions: 60, CodeBytes: 384, Why: "remote-write set-up, outsw loop, RDC poll"}
	defInterrupt   = cpu.Def{Name: "ei_interrupt", Layer: cpu.LayerDEV, Instructions: 50, CodeBytes: 512, Why: "per round: read ISR, dispatch"}
	defReceive     = cpu.Def{Name: "ei_receive", Layer: cpu.LayerDEV, Instructions: 90, CodeBytes: 1024, Why: "per frame: CURR/BNRY arithmetic, header checks, buffer allocation, hand-off"}
	defGetHdr      = cpu.Def{Name: "ne_get_8390_hdr", Layer: cpu.LayerDEV, Instructions: 35, CodeBytes: 256, Why: "remote read of the 4-byte receive header"}
	defBlockIn     = cpu.Def{Name: "ne_block_input", Layer: cpu.LayerDMA, Instructions: 55, CodeBytes: 384, Why: "remote-read set-up, insw loop, RDC acknowledge"}
	defTxIntr      = cpu.Def{Name: "ei_tx_intr", Layer: cpu.LayerDEV, Instructions: 60, CodeBytes: 512, Why: "read TSR, account, start the other slot, wake the queue"}
	defRxOverrun   = cpu.Def{Name: "ei_rx_overrun", Layer: cpu.LayerDEV, Instructions: 80, CodeBytes: 512, Why: "the data sheet's overflow recovery sequence"}
	defLoopXmit    = cpu.Def{Name: "ne_loopback_xmit", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 192, Why: "allocate a receive buffer, copy the frame into it, queue it"}
	defCounters    = cpu.Def{Name: "ei_get_stats", Layer: cpu.LayerDEV, Instructions: 20, CodeBytes: 128, Why: "read and accumulate the tally counters"}
	defResetDevice = cpu.Def{Name: "ne_reset_8390", Layer: cpu.LayerDEV, Instructions: 30, CodeBytes: 192, Why: "pulse the reset port and wait for ISR.RST"}
)

// Stats counts what the driver did.
type Stats struct {
	TxFrames            uint64   `stat:"tx_frames" help:"frames the card transmitted"`
	TxBytes             uint64   `stat:"tx_bytes" help:"bytes of those frames"`
	TxErrors            uint64   `stat:"tx_errors" help:"transmissions that ended with an error (aborted, FIFO underrun)"`
	TxCollisions        uint64   `stat:"tx_collisions" help:"transmissions that met a collision (TSR.COL)"`
	RxFrames            uint64   `stat:"rx_frames" help:"frames taken from the receive ring"`
	RxBytes             uint64   `stat:"rx_bytes" help:"bytes of those frames"`
	RxErrors            uint64   `stat:"rx_errors" help:"frames dropped: bad ring headers, bad lengths, errored status"`
	RxNoBuffer          uint64   `stat:"rx_no_buffer" help:"frames dropped: no kernel buffer to copy them into"`
	Overruns            uint64   `stat:"overruns" help:"receive-ring overflows recovered (ei_rx_overrun)"`
	CRCErrors           uint64   `stat:"crc_errors" help:"frames with a bad FCS, from the card's tally counter"`
	Missed              uint64   `stat:"missed" help:"frames the card missed for want of ring space, from its tally counter"`
	FrameErrors         uint64   `stat:"frame_errors" help:"frame-alignment errors, from the card's tally counter"`
	TxTime              sim.Time `stat:"tx_time_ps" help:"sum over frames of the time from loading the card to the transmit-done interrupt, in picoseconds"`
	TxTimed             uint64   `stat:"tx_timed" help:"transmissions TxTime covers"`
	LoopbackFrames      uint64   `stat:"loopback_frames" help:"frames looped back to the driver itself (loopback)"`
	ResetTimeouts       uint64   `stat:"reset_timeouts" help:"board resets that did not complete in time"`
	SpuriousInterrupts  uint64   `stat:"spurious_interrupts" help:"interrupts with nothing for the driver to do"`
	InterruptRounds     uint64   `stat:"interrupt_rounds" help:"rounds of the interrupt handler's loop over the status register"`
	RemoteDMAWriteWords uint64   `stat:"remote_dma_write_words" help:"words written to the card through its data port"`
	RemoteDMAReadWords  uint64   `stat:"remote_dma_read_words" help:"words read from the card through its data port"`
	TxTooLong           uint64   `stat:"tx_too_long" help:"frames longer than mtu+14 dropped before loading (a stack bug)"`
}

type slot struct {
	page   byte
	loaded bool
	length int
	start  sim.Time // when loading began, for TxTime
}

// Driver drives one NE2000.
type Driver struct {
	k    *kernel.Kernel
	c    *cpu.CPU
	ns   *netdev.Stack
	qi   int
	p    Params
	chip dp8390.Chip
	irq  int
	name string
	mac  [6]byte

	slots   [2]slot
	txing   int // slot on the wire, or -1
	rxStart byte
	rxStop  byte
	maxRx   int         // longest acceptable frame in the ring, FCS included
	scratch memory.Addr // receive header and PROM, 32 bytes
	pad     memory.Addr // zeroed 60-byte buffer for short frames
	ready   bool
	stats   Stats
	sym     struct{ init, startXmit, trigger, blockOut, interrupt, receive, getHdr, blockIn, txIntr, overrun, loop, counters, reset *cpu.Symbol }
}

// New prepares the driver of the card at base (in space) on line irq and
// registers it with the device layer as name ("eth0"). Init programs the
// card.
func New(k *kernel.Kernel, ns *netdev.Stack, name string, space memory.Space, base memory.Addr, irq int, p Params) (*Driver, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{k: k, c: k.CPU(), ns: ns, p: p, chip: dp8390.Chip{C: k.CPU(), Space: space, Base: base}, irq: irq, name: name, txing: -1}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&d.sym.init, defInit}, {&d.sym.startXmit, defStartXmit}, {&d.sym.trigger, defTrigger},
		{&d.sym.blockOut, defBlockOut}, {&d.sym.interrupt, defInterrupt}, {&d.sym.receive, defReceive},
		{&d.sym.getHdr, defGetHdr}, {&d.sym.blockIn, defBlockIn}, {&d.sym.txIntr, defTxIntr},
		{&d.sym.overrun, defRxOverrun}, {&d.sym.loop, defLoopXmit}, {&d.sym.counters, defCounters},
		{&d.sym.reset, defResetDevice},
	})
	slot := txPages(p.MTU)
	for i := range d.slots {
		d.slots[i].page = dp8390.CardMemLo + byte(i*slot)
	}
	d.rxStart = dp8390.CardMemLo + byte(p.TxBuffers*slot)
	d.rxStop = dp8390.CardMemHi
	d.maxRx = p.MaxFrame()
	d.qi = ns.AddDevice(d)
	return d, nil
}

// Name implements netdev.Device.
func (d *Driver) Name() string { return d.name }

// MAC implements netdev.Device: the address read from the card's PROM.
func (d *Driver) MAC() [6]byte { return d.mac }

// MTU implements netdev.Device: the mtu parameter.
func (d *Driver) MTU() int { return d.p.MTU }

// Queue returns the device's queue index in the device layer.
func (d *Driver) Queue() int { return d.qi }

// Stats returns the driver's counters.
func (d *Driver) Stats() Stats { return d.stats }

// TxTime returns the accumulated time from loading the card to the
// transmit-done interrupt, and how many transmissions it covers.
func (d *Driver) TxTime() (sim.Time, uint64) { return d.stats.TxTime, d.stats.TxTimed }

// SetLoopback switches loopback mode on or off; it takes effect for the
// next frame (set it before Init to leave the card untouched).
func (d *Driver) SetLoopback(on bool) { d.p.Loopback = on }

// Ready reports whether Init found and started the card.
func (d *Driver) Ready() bool { return d.ready }

// Init probes and starts the card. It runs in a thread during boot. A card
// that is missing or does not answer like an NE2000 is reported as a
// guest error and left alone.
func (d *Driver) Init() {
	c := d.c
	c.Enter(d.sym.init)
	defer c.Exit(d.sym.init)
	d.scratch = d.k.Kmalloc(32)
	d.pad = d.k.Kmalloc(dp8390.MinFrame)
	c.Write(d.pad, make([]byte, dp8390.MinFrame))
	if !d.resetCard() {
		d.k.CPU().System().Guest.Report(c.LocalTime(), d.name, "ne2000 at %s 0x%x: no reset acknowledge; card not found", d.chip.Space, uint64(d.chip.Base))
		return
	}
	if !d.readPROM() {
		return
	}
	if d.p.Loopback {
		d.ready = true
		return
	}
	d.initChip(true)
	c.SetHandler(d.irq, d.name, d.interrupt)
	d.ready = true
}

// resetCard pulses the reset port and waits (bounded) for ISR.RST.
func (d *Driver) resetCard() bool {
	c := d.c
	c.Enter(d.sym.reset)
	defer c.Exit(d.sym.reset)
	if d.chip.Reset() {
		return true
	}
	d.stats.ResetTimeouts++
	return false
}

// readPROM reads the station address PROM byte-wide (each byte appears
// twice on a 16-bit card) and checks the NE2000 signature.
func (d *Driver) readPROM() bool {
	c := d.c
	prom := d.chip.ReadPROM(d.scratch)
	for i := range d.mac {
		d.mac[i] = prom[2*i]
	}
	if prom[28] != 0x57 || prom[30] != 0x57 {
		c.System().Guest.Report(c.LocalTime(), d.name, "ne2000 at %s 0x%x: PROM signature %#02x %#02x, not an NE2000", d.chip.Space, uint64(d.chip.Base), prom[28], prom[30])
		return false
	}
	return true
}

// initChip is NS8390_init: the National Semiconductor order (reference
// section 9). start also runs the chip.
func (d *Driver) initChip(start bool) {
	d.chip.Init(d.slots[0].page, d.rxStart, d.rxStop, d.mac)
	d.slots[0].loaded, d.slots[1].loaded = false, false
	d.txing = -1
	if start {
		d.chip.Start(d.p.Promiscuous)
	}
}

// Busy implements netdev.Device: a frame is loaded on the card or on the
// wire.
func (d *Driver) Busy() bool {
	return d.txing >= 0 || d.slots[0].loaded || d.slots[1].loaded
}

// StartXmit implements netdev.Device: it loads the frame into a free slot
// of packet RAM and starts the transmitter if it is idle. The buffer is
// freed once its bytes are on the card.
func (d *Driver) StartXmit(b netdev.Buf) bool {
	if d.p.Loopback {
		return d.loopbackXmit(b)
	}
	if !d.ready {
		d.stats.TxErrors++
		b.Free(d.k)
		return true
	}
	s := -1
	for i := 0; i < d.p.TxBuffers; i++ {
		if !d.slots[i].loaded && d.txing != i {
			s = i
			break
		}
	}
	if s < 0 {
		return false
	}
	if b.Len > d.p.MTU+dp8390.EtherHdr {
		// It would run past its slot into the next one or the ring.
		d.stats.TxTooLong++
		d.stats.TxErrors++
		b.Free(d.k)
		return true
	}
	c := d.c
	c.Enter(d.sym.startXmit)
	defer c.Exit(d.sym.startXmit)
	// Keep the card's interrupts out while its remote DMA is ours.
	d.chip.Out(dp8390.RegIMR, 0)
	sl := &d.slots[s]
	sl.start = c.LocalTime()
	n := b.Len
	if n < dp8390.MinFrame {
		// Pad short frames with zeros (ETH_ZLEN), through a zeroed buffer.
		d.k.Bcopy(d.pad, b.Addr, n)
		d.blockOutput(d.pad, dp8390.MinFrame, sl.page)
		c.Write(d.pad, make([]byte, n)) // zero it again for the next one
		n = dp8390.MinFrame
	} else {
		d.blockOutput(b.Addr, n, sl.page)
	}
	b.Free(d.k)
	sl.loaded = true
	sl.length = n
	if d.txing < 0 {
		d.trigger(s)
	}
	d.chip.Out(dp8390.RegIMR, dp8390.IMRAll)
	return true
}

// blockOutput copies n bytes from memory at src into packet RAM at page
// by remote-DMA write (ne_block_output).
func (d *Driver) blockOutput(src memory.Addr, n int, page byte) {
	c := d.c
	c.Enter(d.sym.blockOut)
	defer c.Exit(d.sym.blockOut)
	count := n + n&1 // word mode moves whole words
	d.chip.RemoteWrite(src, count, page)
	d.stats.RemoteDMAWriteWords += uint64(count / 2)
}

// trigger starts the transmission of slot s (NS8390_trigger_send).
func (d *Driver) trigger(s int) {
	c := d.c
	c.Enter(d.sym.trigger)
	defer c.Exit(d.sym.trigger)
	sl := &d.slots[s]
	d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
	if d.chip.In(dp8390.RegCmd)&dp8390.CrTrans != 0 {
		c.System().Guest.Report(c.LocalTime(), d.name, "trigger_send while the transmitter is busy")
		return
	}
	d.chip.Out(dp8390.RegTBCR0, byte(sl.length))
	d.chip.Out(dp8390.RegTBCR1, byte(sl.length>>8))
	d.chip.Out(dp8390.RegTPSR, sl.page)
	d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrTrans|dp8390.CrStart)
	d.txing = s
}

// interrupt is the card's interrupt handler (ei_interrupt).
func (d *Driver) interrupt() {
	c := d.c
	c.Enter(d.sym.interrupt)
	defer c.Exit(d.sym.interrupt)
	d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
	rounds := 0
	for ; rounds < dp8390.MaxIntLoop; rounds++ {
		isr := d.chip.In(dp8390.RegISR)
		if isr&^dp8390.IsrReset == 0 {
			break
		}
		d.stats.InterruptRounds++
		c.Exec(defInterrupt.Instructions / 4) // the dispatch of one more round
		if isr&dp8390.IsrOver != 0 {
			d.overrun()
		} else if isr&(dp8390.IsrRx|dp8390.IsrRxErr) != 0 {
			d.receive()
		}
		if isr&dp8390.IsrTx != 0 {
			d.txDone(false)
		} else if isr&dp8390.IsrTxErr != 0 {
			d.txDone(true)
		}
		if isr&dp8390.IsrCounter != 0 {
			d.readCounters()
			d.chip.Out(dp8390.RegISR, dp8390.IsrCounter)
		}
		if isr&dp8390.ISRRDC != 0 {
			d.chip.Out(dp8390.RegISR, dp8390.ISRRDC)
		}
	}
	if rounds == 0 {
		d.stats.SpuriousInterrupts++
	}
}

// txDone finishes the transmission on the wire and starts the next loaded
// slot (ei_tx_intr / ei_tx_err).
func (d *Driver) txDone(failed bool) {
	c := d.c
	c.Enter(d.sym.txIntr)
	defer c.Exit(d.sym.txIntr)
	tsr := d.chip.In(dp8390.RegTSR)
	if failed {
		d.chip.Out(dp8390.RegISR, dp8390.IsrTxErr)
		d.stats.TxErrors++
	} else {
		d.chip.Out(dp8390.RegISR, dp8390.IsrTx)
	}
	if tsr&dp8390.TsrCol != 0 {
		d.stats.TxCollisions++
	}
	if d.txing >= 0 {
		sl := &d.slots[d.txing]
		if !failed {
			d.stats.TxFrames++
			d.stats.TxBytes += uint64(sl.length)
		}
		d.stats.TxTime += c.LocalTime() - sl.start
		d.stats.TxTimed++
		sl.loaded = false
		d.txing = -1
	}
	for i := 0; i < d.p.TxBuffers; i++ {
		if d.slots[i].loaded {
			d.trigger(i)
			break
		}
	}
	d.ns.WakeQueue(d.qi)
}

// receive removes frames from the ring (ei_receive).
func (d *Driver) receive() {
	c := d.c
	c.Enter(d.sym.receive)
	defer c.Exit(d.sym.receive)
	for range dp8390.MaxRxLoops {
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage1|dp8390.CrStart)
		curr := d.chip.In(dp8390.RegCurr)
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
		this := d.chip.In(dp8390.RegBnry) + 1
		if this >= d.rxStop {
			this = d.rxStart
		}
		if this == curr {
			break
		}
		status, next, count := d.getHeader(this)
		pktLen := int(count) - dp8390.HdrBytes // frame with its FCS
		plausible := next == this+1+byte((pktLen+dp8390.HdrBytes)>>8) ||
			next == this+1+byte((pktLen+dp8390.HdrBytes)>>8)-(d.rxStop-d.rxStart) ||
			next == this+1 || next == this+1-(d.rxStop-d.rxStart)
		switch {
		case pktLen < dp8390.MinFrame+dp8390.FcsBytes || pktLen > d.maxRx || !plausible:
			d.stats.RxErrors++
		case status&dp8390.RsrOK == 0:
			d.stats.RxErrors++
		default:
			buf := d.k.Kmalloc(pktLen + 1)
			if buf == 0 {
				d.stats.RxNoBuffer++
				break
			}
			d.blockInput(buf, pktLen, int(this)<<8+dp8390.HdrBytes)
			d.stats.RxFrames++
			d.stats.RxBytes += uint64(pktLen - 4)
			d.ns.Rx(netdev.Buf{Addr: buf, Len: pktLen - 4, Dev: d})
		}
		if next < d.rxStart || next >= d.rxStop {
			// A corrupt header: give the whole ring back (Linux resets
			// the boundary to just behind CURR).
			d.stats.RxErrors++
			bnry := curr - 1
			if curr == d.rxStart {
				bnry = d.rxStop - 1
			}
			d.chip.Out(dp8390.RegBnry, bnry)
			break
		}
		bnry := next - 1
		if next == d.rxStart {
			bnry = d.rxStop - 1
		}
		d.chip.Out(dp8390.RegBnry, bnry)
	}
	d.chip.Out(dp8390.RegISR, dp8390.IsrRx|dp8390.IsrRxErr)
}

// getHeader reads the 4-byte receive header at page (ne_get_8390_hdr).
func (d *Driver) getHeader(page byte) (status, next byte, count uint16) {
	c := d.c
	c.Enter(d.sym.getHdr)
	defer c.Exit(d.sym.getHdr)
	d.chip.RemoteRead(d.scratch, dp8390.HdrBytes, int(page)<<8)
	d.stats.RemoteDMAReadWords += dp8390.HdrBytes / 2
	var h [dp8390.HdrBytes]byte
	c.Read(d.scratch, h[:])
	return h[0], h[1], uint16(h[2]) | uint16(h[3])<<8
}

// blockInput reads n bytes of packet RAM at card address off into memory
// at dst by remote-DMA read; the chip wraps the ring by itself
// (ne_block_input).
func (d *Driver) blockInput(dst memory.Addr, n, off int) {
	c := d.c
	c.Enter(d.sym.blockIn)
	defer c.Exit(d.sym.blockIn)
	count := n + n&1
	d.chip.RemoteRead(dst, count, off)
	d.stats.RemoteDMAReadWords += uint64(count / 2)
}

// overrun recovers from a full ring by the data sheet's sequence
// (reference section 10; Linux ei_rx_overrun).
func (d *Driver) overrun() {
	c := d.c
	c.Enter(d.sym.overrun)
	defer c.Exit(d.sym.overrun)
	d.stats.Overruns++
	d.chip.Overrun(d.p.OverrunWait, d.receive)
}

// readCounters reads (and so clears) the tally counters.
func (d *Driver) readCounters() {
	c := d.c
	c.Enter(d.sym.counters)
	defer c.Exit(d.sym.counters)
	d.stats.FrameErrors += uint64(d.chip.In(dp8390.RegCntr0))
	d.stats.CRCErrors += uint64(d.chip.In(dp8390.RegCntr1))
	d.stats.Missed += uint64(d.chip.In(dp8390.RegCntr2))
}

// loopbackXmit copies the frame into a fresh receive buffer and hands it
// to the receive path, as a packet driver in loopback mode does.
func (d *Driver) loopbackXmit(b netdev.Buf) bool {
	c := d.c
	c.Enter(d.sym.loop)
	defer c.Exit(d.sym.loop)
	buf := d.k.Kmalloc(b.Len)
	if buf == 0 {
		d.stats.RxNoBuffer++
		b.Free(d.k)
		return true
	}
	d.k.Bcopy(buf, b.Addr, b.Len)
	b.Free(d.k)
	d.stats.LoopbackFrames++
	d.stats.TxFrames++
	d.stats.TxBytes += uint64(b.Len)
	d.ns.Rx(netdev.Buf{Addr: buf, Len: b.Len, Dev: d})
	return true
}

var _ netdev.Device = (*Driver)(nil)
