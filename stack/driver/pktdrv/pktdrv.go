// Package pktdrv is a DOS packet driver for the NE2000, as the TOP
// measurements used one: a resident program reached by a software
// interrupt (INT 60h) that offers the FTP Software Packet Driver
// Specification (version 1.09) calls a protocol stack needs —
// driver_info, access_type, release_type, send_pkt and get_address — and
// hands received frames to the stack through the receiver upcall the
// stack registered with access_type, called twice per frame: first
// (AX = 0) for a buffer of the frame's length, then (AX = 1) once the
// frame has been copied into it.
//
// It drives the card only through its I/O ports: the National
// Semiconductor initialisation order, transmit by remote-DMA write
// through the data port (16-bit OUTSW over ISA) into the one transmit
// buffer and a transmit command, and an interrupt handler that walks the
// receive ring with remote-DMA reads (INSW) into the upcall's buffer.
// With one transmit buffer, send_pkt first waits until the previous frame
// has left, then loads and starts the next and returns: the send time of
// a frame is the load over ISA plus its time on the wire.
//
// In loopback mode (Params.Loopback) send_pkt never touches the card: it
// copies the frame into the receive path of the handles whose type
// matches (the upcall's buffer, by the driver's REP MOVSW copy), with no
// wire time: the TOP study's packet-driver loopback.
//
// Layer MAC: the study counts the packet driver in the MAC layer. The
// data-port transfers are filed as memory copies.
//
// Simplifications: classes 1 (DIX Ethernet) and 11 (IEEE 802.3 with
// 802.2 headers) only, with type matching on the EtherType or the 802.2
// header; no extended driver functions (multicast lists, receive modes,
// statistics); waiting for the transmitter is a halt until the card's
// transmit interrupt rather than a poll of ISR (the same instant, without
// simulating each poll); a lost transmit interrupt is not timed out.
package pktdrv

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/dos"
	"simkron/stack/driver/dp8390"
	"simkron/stack/header"
)

// Params configures the driver.
type Params struct {
	Loopback    bool     `toml:"loopback" help:"copy sent frames straight to the receive path (the TOP study's packet-driver loopback): no card, no wire"`
	Promiscuous bool     `toml:"promiscuous" help:"receive every frame on the wire"`
	OverrunWait sim.Time `toml:"overrun_wait" help:"busy wait after stopping the chip on a ring overflow (the data sheet asks for at least 1.6 ms)"`
}

// DefaultParams returns the card on the wire.
func DefaultParams() Params { return Params{OverrunWait: 1600 * sim.Microsecond} }

// Validate checks p.
func (p Params) Validate() error {
	if p.OverrunWait < 0 {
		return fmt.Errorf("overrun_wait: %v must not be negative", p.OverrunWait)
	}
	return nil
}

// Interface classes of the Packet Driver Specification (appendix A).
const (
	ClassDIX   = 1
	Class8023  = 11
	AnyType    = 0xFFFF // if_type wildcard
	DriverType = 1      // this driver's if_type within its class
	Version    = 11     // the driver's own version number
)

// Error codes of the specification (returned in DH with the carry set).
type Error uint8

// Packet driver errors.
const (
	ErrBadHandle  Error = 1
	ErrNoClass    Error = 2
	ErrNoType     Error = 3
	ErrNoNumber   Error = 4
	ErrBadType    Error = 5
	ErrNoSpace    Error = 9
	ErrTypeInUse  Error = 10
	ErrBadCommand Error = 11
	ErrCantSend   Error = 12
	ErrBadAddress Error = 14
)

func (e Error) Error() string {
	names := map[Error]string{ErrBadHandle: "BAD_HANDLE", ErrNoClass: "NO_CLASS", ErrNoType: "NO_TYPE", ErrNoNumber: "NO_NUMBER",
		ErrBadType: "BAD_TYPE", ErrNoSpace: "NO_SPACE", ErrTypeInUse: "TYPE_INUSE", ErrBadCommand: "BAD_COMMAND", ErrCantSend: "CANT_SEND", ErrBadAddress: "BAD_ADDRESS"}
	if n, ok := names[e]; ok {
		return "packet driver: " + n
	}
	return fmt.Sprintf("packet driver: error %d", uint8(e))
}

// Handle is what access_type returns.
type Handle uint16

// Receiver is the upcall a protocol registers with access_type. With
// flag 0 it is asked for a buffer of n bytes and returns its address (0:
// drop the frame); with flag 1 the frame is in buf. It runs in the
// driver's interrupt handler (or inside send_pkt in loopback).
type Receiver func(h Handle, flag int, buf memory.Addr, n int) memory.Addr

// Info is what driver_info returns.
type Info struct {
	Version   int
	Class     int
	Type      int
	Number    int
	Name      string
	BasicOnly bool // functionality 1: basic functions only
}

// Costs in instructions per call, estimated from the 8086 code of a
// resident NE2000 packet driver: register accesses and data words are
// charged by the ISA bus, copies by the copy routine.
var (
	defInt       = cpu.Def{Name: "pkt_int", Layer: cpu.LayerMAC, Instructions: 30, CodeBytes: 192, Why: "INT 60h into the driver and IRET: registers saved and restored (8 PUSH and POP: 16), DS loaded (2), dispatch on AH (jump table: 4), the carry flag and DH set for the return (4), return (4)"}
	defInit      = cpu.Def{Name: "pkt_init", Layer: cpu.LayerMAC, Instructions: 400, CodeBytes: 1536, Why: "reset, PROM read, NS8390 initialisation, hook the interrupt (once)"}
	defInfo      = cpu.Def{Name: "pkt_driver_info", Layer: cpu.LayerMAC, Instructions: 12, CodeBytes: 64, Why: "load version, class, type, number, name pointer"}
	defAccess    = cpu.Def{Name: "pkt_access_type", Layer: cpu.LayerMAC, Instructions: 60, CodeBytes: 384, Why: "check class/type/number, compare with the open handles, store the upcall"}
	defRelease   = cpu.Def{Name: "pkt_release_type", Layer: cpu.LayerMAC, Instructions: 25, CodeBytes: 128, Why: "find the handle, clear it"}
	defAddress   = cpu.Def{Name: "pkt_get_address", Layer: cpu.LayerMAC, Instructions: 20, CodeBytes: 96, Why: "check the length, copy the station address"}
	defSend      = cpu.Def{Name: "pkt_send", Layer: cpu.LayerMAC, Instructions: 60, CodeBytes: 384, Why: "send_pkt: the length (4), loopback or card (2), the transmitter busy and the wait (4), IMR masked (OUT: 3), start time (2), pkt_block_out (call: 3), TBCR0, TBCR1, TPSR and CR written (OUTs and their values: 12), busy flag (2), IMR unmasked (3), carry and return (5), registers saved and restored (20)"}
	defBlockOut  = cpu.Def{Name: "pkt_block_out", Layer: cpu.LayerMAC, Instructions: 45, CodeBytes: 256, Why: "remote-DMA write: RBCR0/1, RSAR0/1 and CR written (OUTs: 10), DX, CX, DS:SI (6), REP OUTSW (1; its words charged by the ISA bus), the RDC poll (IN, TEST, loop: 6), RDC acknowledged (OUT: 3), the odd length (7), registers (12)"}
	defISR       = cpu.Def{Name: "pkt_isr", Layer: cpu.LayerMAC, Instructions: 40, CodeBytes: 384, Why: "the card's interrupt: registers and DS (12), CR to page 0 (OUT: 3), EOI and exit (9); per round 16 more: ISR read (IN: 3), its bits dispatched (tests: 8), acknowledged (OUT: 3), loop (2)"}
	defRecv      = cpu.Def{Name: "pkt_recv", Layer: cpu.LayerMAC, Instructions: 80, CodeBytes: 768, Why: "per frame: CURR through page 1 and BNRY (4 port accesses: 12), this page and the ring's wrap (6), ring header and first octets by block-in (set-up: 10), status, next page, count checked (12), pkt_type_match and the two upcalls (calls with registers: 16), BNRY advanced past the frame (OUT and wrap: 8), counted (4), loop (12)"}
	defBlockIn   = cpu.Def{Name: "pkt_block_in", Layer: cpu.LayerMAC, Instructions: 40, CodeBytes: 256, Why: "remote-DMA read: RBCR0/1, RSAR0/1 and CR written (OUTs: 10), DX, CX, ES:DI (6), REP INSW (1; its words charged by the ISA bus), the odd octet (4), RDC acknowledged (OUT: 3), registers (12), return (4)"}
	defTxDone    = cpu.Def{Name: "pkt_tx_done", Layer: cpu.LayerMAC, Instructions: 25, CodeBytes: 128, Why: "TSR read (IN: 3), error test (3), ISR acknowledged (OUT: 3), counted (4), the frame's send time added up (6), busy flag cleared (2), return (4)"}
	defOverrun   = cpu.Def{Name: "pkt_overrun", Layer: cpu.LayerMAC, Instructions: 60, CodeBytes: 384, Why: "the data sheet's ring overflow recovery"}
	defLoop      = cpu.Def{Name: "pkt_loopback", Layer: cpu.LayerMAC, Instructions: 40, CodeBytes: 192, Why: "loopback send_pkt: the frame's first 16 octets peeked (REP MOVSW set-up: 5), pkt_type_match (call: 3), the upcall for a buffer (AX=0, far call with registers: 10), null test (2), pkt_movsw (call: 3), the upcall with the frame (AX=1: 10), counted (4), return (3)"}
	defCounters  = cpu.Def{Name: "pkt_counters", Layer: cpu.LayerMAC, Instructions: 15, CodeBytes: 96, Why: "read and add the tally counters"}
	defTypeMatch = cpu.Def{Name: "pkt_type_match", Layer: cpu.LayerMAC, Instructions: 12, CodeBytes: 96, Why: "per handle: open (3), class and Length/Type (4), the type octets compared (REPE CMPSB set-up: 5)"}
)

// Stats counts what the driver did.
type Stats struct {
	TxFrames       uint64   `stat:"tx_frames" help:"frames sent (send_pkt)"`
	TxBytes        uint64   `stat:"tx_bytes" help:"bytes of those frames"`
	TxErrors       uint64   `stat:"tx_errors" help:"transmissions that ended with an error"`
	TxWaits        uint64   `stat:"tx_waits" help:"send_pkt calls that waited for the previous frame"`
	TxTime         sim.Time `stat:"tx_time_ps" help:"sum over frames of the time from loading the card to transmit done, in picoseconds"`
	TxTimed        uint64   `stat:"tx_timed" help:"transmissions TxTime covers"`
	RxFrames       uint64   `stat:"rx_frames" help:"frames handed to a handle's receiver"`
	RxBytes        uint64   `stat:"rx_bytes" help:"bytes of those frames"`
	RxDropped      uint64   `stat:"rx_dropped" help:"no handle matched, or its upcall gave no buffer"`
	RxErrors       uint64   `stat:"rx_errors" help:"bad ring headers, errored status"`
	Overruns       uint64   `stat:"overruns" help:"receive-ring overflows recovered"`
	CRCErrors      uint64   `stat:"crc_errors" help:"frames with a bad FCS, from the card's tally counter"`
	Missed         uint64   `stat:"missed" help:"frames the card missed, from its tally counter"`
	FrameErrors    uint64   `stat:"frame_errors" help:"frame-alignment errors, from the card's tally counter"`
	LoopbackFrames uint64   `stat:"loopback_frames" help:"frames copied back to the receive path (loopback)"`
	SpuriousIRQs   uint64   `stat:"spurious_irqs" help:"interrupts with nothing for the driver to do"`
	CantSend       uint64   `stat:"cant_send" help:"send_pkt calls refused (CANT_SEND): an upcall may not wait for the wire, or the card failed"`
}

type handle struct {
	open  bool
	class int
	typ   []byte
	recv  Receiver
}

// Driver is the resident driver of one card.
type Driver struct {
	c    *cpu.CPU
	p    Params
	chip dp8390.Chip
	irq  int
	name string
	mac  [6]byte
	copy *dos.Copier

	scratch memory.Addr // 32 bytes: PROM, ring header, frame start
	handles [4]handle
	txBusy  bool
	txStart sim.Time
	txLen   int
	ready   bool
	stats   Stats
	sym     struct {
		intr, init, info, access, release, address, send, blockOut, isr, recv, blockIn, txDone, overrun, loop, counters, match *cpu.Symbol
	}
}

const (
	txPage   = dp8390.CardMemLo
	rxStart  = dp8390.CardMemLo + 6 // one transmit buffer of 6 pages (1536 bytes)
	rxStop   = dp8390.CardMemHi
	peekLen  = 16 // frame octets read first, for type matching
	maxFrame = header.EthernetMaxFrameLen
)

// New prepares the driver of the card at base (in space) on line irq;
// mem is 32 bytes of the resident program's own data. Init starts it.
func New(c *cpu.CPU, syms *cpu.SymbolTable, name string, space memory.Space, base memory.Addr, irq int, mem memory.Addr, p Params) (*Driver, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{c: c, p: p, chip: dp8390.Chip{C: c, Space: space, Base: base}, irq: irq, name: name, scratch: mem}
	syms.DefineAll([]cpu.Binding{
		{&d.sym.intr, defInt}, {&d.sym.init, defInit}, {&d.sym.info, defInfo}, {&d.sym.access, defAccess},
		{&d.sym.release, defRelease}, {&d.sym.address, defAddress}, {&d.sym.send, defSend}, {&d.sym.blockOut, defBlockOut},
		{&d.sym.isr, defISR}, {&d.sym.recv, defRecv}, {&d.sym.blockIn, defBlockIn}, {&d.sym.txDone, defTxDone},
		{&d.sym.overrun, defOverrun}, {&d.sym.loop, defLoop}, {&d.sym.counters, defCounters}, {&d.sym.match, defTypeMatch},
	})
	d.copy = dos.NewCopier(c, syms, "pkt_movsw")
	return d, nil
}

// CopySymbols returns the symbols whose cycles are memory copies: the
// data-port transfers and the loopback copy.
func (d *Driver) CopySymbols() []*cpu.Symbol {
	return []*cpu.Symbol{d.sym.blockOut, d.sym.blockIn, d.copy.Symbol()}
}

// Stats returns the counters.
func (d *Driver) Stats() Stats { return d.stats }

// Ready reports whether Init found and started the card.
func (d *Driver) Ready() bool { return d.ready }

// Loopback reports whether the driver loops frames back.
func (d *Driver) Loopback() bool { return d.p.Loopback }

// call charges the software interrupt into the driver around fn.
func (d *Driver) call(s *cpu.Symbol, fn func()) {
	c := d.c
	c.Enter(d.sym.intr)
	c.Call(s, fn)
	c.Exit(d.sym.intr)
}

// Init is the resident program's start-up: find and start the card and
// hook its interrupt. A missing card is a guest error; the driver then
// stays unready and send_pkt fails.
func (d *Driver) Init() {
	c := d.c
	c.Call(d.sym.init, func() {
		if !d.chip.Reset() {
			c.System().Guest.Report(c.LocalTime(), d.name, "no NE2000 answers at %s %#x", d.chip.Space, uint64(d.chip.Base))
			return
		}
		if !d.readPROM() {
			return
		}
		d.initChip()
		if !d.p.Loopback {
			c.SetHandler(d.irq, d.name, d.interrupt)
		}
		d.ready = true
	})
}

func (d *Driver) readPROM() bool {
	c := d.c
	prom := d.chip.ReadPROM(d.scratch)
	for i := range d.mac {
		d.mac[i] = prom[2*i]
	}
	if prom[28] != 0x57 || prom[30] != 0x57 {
		c.System().Guest.Report(c.LocalTime(), d.name, "PROM signature %#02x %#02x: not an NE2000", prom[28], prom[30])
		return false
	}
	return true
}

// initChip is the National Semiconductor initialisation order
// (docs/reference/ne2000.md sec. 9), starting the chip unless in loopback.
func (d *Driver) initChip() {
	d.chip.Init(txPage, rxStart, rxStop, d.mac)
	d.txBusy = false
	if !d.p.Loopback {
		d.chip.Start(d.p.Promiscuous)
	}
}

// DriverInfo is function 1, driver_info.
func (d *Driver) DriverInfo() Info {
	var info Info
	d.call(d.sym.info, func() {
		info = Info{Version: Version, Class: ClassDIX, Type: DriverType, Number: 0, Name: "NE2000", BasicOnly: true}
	})
	return info
}

// AccessType is function 2, access_type: frames of class whose type
// octets start with typ (an empty typ takes every frame) go to recv. For
// class 1 the type is the EtherType field, for class 11 the 802.2 header
// after the length field.
func (d *Driver) AccessType(class, ifType, number int, typ []byte, recv Receiver) (Handle, error) {
	var h Handle
	var err error
	d.call(d.sym.access, func() {
		switch {
		case class != ClassDIX && class != Class8023:
			err = ErrNoClass
		case ifType != AnyType && ifType != DriverType:
			err = ErrNoType
		case number != 0:
			err = ErrNoNumber
		case recv == nil:
			err = ErrBadType
		}
		if err != nil {
			return
		}
		free := -1
		for i := range d.handles {
			x := &d.handles[i]
			if !x.open {
				if free < 0 {
					free = i
				}
				continue
			}
			if x.class == class && (len(x.typ) == 0 || len(typ) == 0 || prefix(x.typ, typ) || prefix(typ, x.typ)) {
				err = ErrTypeInUse
				return
			}
		}
		if free < 0 {
			err = ErrNoSpace
			return
		}
		d.handles[free] = handle{open: true, class: class, typ: append([]byte(nil), typ...), recv: recv}
		h = Handle(free + 1)
	})
	return h, err
}

func prefix(a, b []byte) bool { return len(a) <= len(b) && string(b[:len(a)]) == string(a) }

// ReleaseType is function 3, release_type.
func (d *Driver) ReleaseType(h Handle) error {
	var err error
	d.call(d.sym.release, func() {
		if h == 0 || int(h) > len(d.handles) || !d.handles[h-1].open {
			err = ErrBadHandle
			return
		}
		d.handles[h-1] = handle{}
	})
	return err
}

// GetAddress is function 6, get_address: the station address is written
// to buf (n bytes of room) and its length returned.
func (d *Driver) GetAddress(h Handle, buf memory.Addr, n int) (int, error) {
	var err error
	d.call(d.sym.address, func() {
		switch {
		case h == 0 || int(h) > len(d.handles) || !d.handles[h-1].open:
			err = ErrBadHandle
		case n < len(d.mac):
			err = ErrNoSpace
		default:
			d.c.Write(buf, d.mac[:])
		}
	})
	if err != nil {
		return 0, err
	}
	return len(d.mac), nil
}

// MAC returns the station address read from the PROM (for the host's
// own bookkeeping; the stack asks with GetAddress).
func (d *Driver) MAC() [6]byte { return d.mac }

// SendPkt is function 4, send_pkt: the n-byte frame at buf (header
// included, no FCS) goes out. It waits for the previous frame to leave
// the card's one transmit buffer, loads this one and starts it.
func (d *Driver) SendPkt(buf memory.Addr, n int) error {
	var err error
	d.call(d.sym.send, func() {
		switch {
		case !d.ready:
			err = ErrCantSend
		case n < 14 || n > maxFrame:
			err = ErrCantSend
		case d.p.Loopback:
			d.loopback(buf, n)
			return
		}
		if err != nil {
			d.stats.CantSend++
			return
		}
		c := d.c
		if d.txBusy {
			if c.InInterrupt() {
				err = ErrCantSend // an upcall may not wait for the wire
				d.stats.CantSend++
				return
			}
			d.stats.TxWaits++
			for d.txBusy {
				c.Halt()
			}
		}
		d.chip.Out(dp8390.RegIMR, 0)
		d.txStart = c.LocalTime()
		count := n + n&1
		d.blockOut(buf, count)
		d.txLen = max(n, dp8390.MinFrame)
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
		d.chip.Out(dp8390.RegTBCR0, byte(d.txLen))
		d.chip.Out(dp8390.RegTBCR1, byte(d.txLen>>8))
		d.chip.Out(dp8390.RegTPSR, txPage)
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrTrans|dp8390.CrStart)
		d.txBusy = true
		d.chip.Out(dp8390.RegIMR, dp8390.IMRAll)
	})
	return err
}

// Busy reports whether a frame is still in the card's transmit buffer.
func (d *Driver) Busy() bool { return d.txBusy }

func (d *Driver) blockOut(src memory.Addr, count int) {
	c := d.c
	c.Enter(d.sym.blockOut)
	defer c.Exit(d.sym.blockOut)
	d.chip.RemoteWrite(src, count, txPage)
}

// loopback delivers the frame at buf to the matching handle's receive
// path by a copy, as send_pkt in loopback mode does.
func (d *Driver) loopback(buf memory.Addr, n int) {
	c := d.c
	c.Enter(d.sym.loop)
	defer c.Exit(d.sym.loop)
	var peek [peekLen]byte
	k := min(n, peekLen)
	c.Read(buf, peek[:k])
	d.stats.TxFrames++
	d.stats.TxBytes += uint64(n)
	d.stats.LoopbackFrames++
	h := d.match(peek[:k])
	if h == 0 {
		d.stats.RxDropped++
		return
	}
	recv := d.handles[h-1].recv
	dst := recv(h, 0, 0, n)
	if dst == 0 {
		d.stats.RxDropped++
		return
	}
	d.copy.Copy(dst, buf, n)
	d.stats.RxFrames++
	d.stats.RxBytes += uint64(n)
	recv(h, 1, dst, n)
}

// match returns the handle that takes a frame starting with head, or 0.
func (d *Driver) match(head []byte) Handle {
	c := d.c
	c.Enter(d.sym.match)
	defer c.Exit(d.sym.match)
	for i := range d.handles {
		x := &d.handles[i]
		if !x.open {
			continue
		}
		c.Exec(defTypeMatch.Instructions)
		off := 12
		if x.class == Class8023 {
			if len(head) < 14 || int(head[12])<<8|int(head[13]) > 1500 {
				continue
			}
			off = 14
		} else if len(head) >= 14 && int(head[12])<<8|int(head[13]) <= 1500 && len(x.typ) > 0 {
			continue // an 802.3 frame has no EtherType to match
		}
		if len(x.typ) == 0 || off+len(x.typ) <= len(head) && string(head[off:off+len(x.typ)]) == string(x.typ) {
			return Handle(i + 1)
		}
	}
	return 0
}

// interrupt is the card's interrupt handler.
func (d *Driver) interrupt() {
	c := d.c
	c.Enter(d.sym.isr)
	defer c.Exit(d.sym.isr)
	d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
	rounds := 0
	for ; rounds < dp8390.MaxIntLoop; rounds++ {
		isr := d.chip.In(dp8390.RegISR)
		if isr&^dp8390.IsrReset == 0 {
			break
		}
		c.Exec(defISR.Instructions / 2)
		if isr&dp8390.IsrOver != 0 {
			d.overrun()
		} else if isr&(dp8390.IsrRx|dp8390.IsrRxErr) != 0 {
			d.receive()
		}
		if isr&(dp8390.IsrTx|dp8390.IsrTxErr) != 0 {
			d.txDone(isr&dp8390.IsrTxErr != 0 && isr&dp8390.IsrTx == 0)
		}
		if isr&dp8390.IsrCounter != 0 {
			c.Call(d.sym.counters, func() {
				d.stats.FrameErrors += uint64(d.chip.In(dp8390.RegCntr0))
				d.stats.CRCErrors += uint64(d.chip.In(dp8390.RegCntr1))
				d.stats.Missed += uint64(d.chip.In(dp8390.RegCntr2))
			})
			d.chip.Out(dp8390.RegISR, dp8390.IsrCounter)
		}
		if isr&dp8390.ISRRDC != 0 {
			d.chip.Out(dp8390.RegISR, dp8390.ISRRDC)
		}
	}
	if rounds == 0 {
		d.stats.SpuriousIRQs++
	}
}

func (d *Driver) txDone(failed bool) {
	c := d.c
	c.Enter(d.sym.txDone)
	defer c.Exit(d.sym.txDone)
	tsr := d.chip.In(dp8390.RegTSR)
	if failed || tsr&dp8390.TsrAbort != 0 {
		d.chip.Out(dp8390.RegISR, dp8390.IsrTxErr)
		d.stats.TxErrors++
	} else {
		d.chip.Out(dp8390.RegISR, dp8390.IsrTx)
		d.stats.TxFrames++
		d.stats.TxBytes += uint64(d.txLen)
	}
	if d.txBusy {
		d.stats.TxTime += c.LocalTime() - d.txStart
		d.stats.TxTimed++
	}
	d.txBusy = false
}

// receive empties the ring.
func (d *Driver) receive() {
	c := d.c
	c.Enter(d.sym.recv)
	defer c.Exit(d.sym.recv)
	// Acknowledge first, then empty the ring: a frame that lands while
	// the ring is being emptied raises PRX again and is not missed (the
	// ack at the end, as in Linux's ei_receive, would clear its request
	// when it came after the last look at CURR).
	d.chip.Out(dp8390.RegISR, dp8390.IsrRx|dp8390.IsrRxErr)
	// Until the ring is empty (at most one frame a page): a bound like
	// Linux's nine frames a call would strand frames whose request the
	// early ack already cleared.
	for range rxStop - rxStart {
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage1|dp8390.CrStart)
		curr := d.chip.In(dp8390.RegCurr)
		d.chip.Out(dp8390.RegCmd, dp8390.CrNoDMA|dp8390.CrPage0|dp8390.CrStart)
		this := d.chip.In(dp8390.RegBnry) + 1
		if this >= rxStop {
			this = rxStart
		}
		if this == curr {
			break
		}
		c.Exec(defRecv.Instructions)
		// The ring header and the frame's first octets, in one read.
		var hdr [dp8390.HdrBytes + peekLen]byte
		d.chip.RemoteRead(d.scratch, len(hdr), int(this)<<8)
		c.Read(d.scratch, hdr[:])
		status, next := hdr[0], hdr[1]
		count := int(hdr[2]) | int(hdr[3])<<8
		n := count - dp8390.HdrBytes - dp8390.FcsBytes // frame without FCS
		switch {
		case n < dp8390.MinFrame || n > maxFrame || next < rxStart || next >= rxStop:
			d.stats.RxErrors++
		case status&dp8390.RsrOK == 0:
			d.stats.RxErrors++
		default:
			d.deliver(this, hdr[dp8390.HdrBytes:], n)
		}
		if next < rxStart || next >= rxStop {
			next = curr // a corrupt header: give the ring back up to CURR
		}
		bnry := next - 1
		if next == rxStart {
			bnry = rxStop - 1
		}
		d.chip.Out(dp8390.RegBnry, bnry)
	}
}

// deliver runs the two upcalls around the copy of the frame out of the
// ring: the octets already read come from the driver's buffer, the rest
// from the card.
func (d *Driver) deliver(page byte, head []byte, n int) {
	h := d.match(head)
	if h == 0 {
		d.stats.RxDropped++
		return
	}
	recv := d.handles[h-1].recv
	dst := recv(h, 0, 0, n)
	if dst == 0 {
		d.stats.RxDropped++
		return
	}
	d.copy.Copy(dst, d.scratch+dp8390.HdrBytes, peekLen)
	d.blockIn(dst+peekLen, n-peekLen, int(page)<<8+dp8390.HdrBytes+peekLen)
	d.stats.RxFrames++
	d.stats.RxBytes += uint64(n)
	recv(h, 1, dst, n)
}

// blockIn reads n octets of packet RAM at card offset off into dst; the
// chip wraps the ring. For an odd n the last word's second octet lands
// one past the frame: the upcall's buffer must have room for it (the MAC
// rounds up).
func (d *Driver) blockIn(dst memory.Addr, n, off int) {
	c := d.c
	c.Enter(d.sym.blockIn)
	defer c.Exit(d.sym.blockIn)
	d.chip.RemoteRead(dst, n, off)
}

func (d *Driver) overrun() {
	c := d.c
	c.Enter(d.sym.overrun)
	defer c.Exit(d.sym.overrun)
	d.stats.Overruns++
	d.chip.Overrun(d.p.OverrunWait, d.receive)
}
