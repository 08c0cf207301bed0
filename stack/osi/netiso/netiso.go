// Package netiso is the ISO protocol family in the simulated kernel, in
// the manner of 4.4BSD's netiso: the OSI protocol machines of stack/osi
// (LLC type 1, CLNP, TP4 class 4) running in the kernel beside the
// Internet protocols, on the kernel's network interface, with sockets
// for programs. It exists so that TP4 runs on the same kernel as UDP and
// TCP and the protocols are compared on identical machines; the TOP host
// (stack/top) stays the environment of the TOP study's own experiments.
// Layers TP4, CLNS and LLC (the socket calls' entry APPL, as inet's).
//
// # Contract
//
// The family is an osi.Env backed by the kernel: descriptors and data
// blocks are kmalloc'd in simulated memory (copies by the kernel's
// bcopy), timers are kernel timers (their work runs in the timer
// softirq), and received frames come from the device layer's receive
// softirq: 802.3 frames whose type field is a length (netdev's
// EtherType8022), beside Ethernet II IP on the same card. A frame is
// described in place (its data field behind a descriptor, the frame's
// kernel buffer freed when the last descriptor into it is); LLC copies
// each PDU it sends into one contiguous kernel buffer (the one copy of
// the send path), which the device layer queues to the driver.
//
// The protocol machines are one lock domain, as the BSD network code
// under splnet: a system call holds the family while it runs them;
// frames and timer work that arrive meanwhile (the receive softirq runs
// on the way out of an interrupt the call's own device access takes) are
// kept and processed, in order, when the call lets go — Linux's socket
// backlog. Sleeping lets go.
//
// # Over ATM
//
// NewFramed runs the family on a device that frames packets itself
// (netdev.Framer: the ATM card's classical IP interface, a static VC per
// neighbour). RFC 2684 sends a routed ISO PDU over AAL5 as the LLC header
// FE-FE-03 followed by the PDU from its NLPID: there is no MAC sublayer
// and no LLC type 1 entity beneath CLNP (no XID or TEST), and the VC is
// the neighbour. CLNP's subnetwork is then the device itself: a PDU is
// copied into one contiguous kernel buffer (the send path's one copy, as
// LLC's on 802.3) with the device's header room before it, the device's
// Frame writes its link header for netdev.ProtoISO and the neighbour, and
// the device layer queues it; the device delivers received PDUs under
// netdev.ProtoISO from their NLPID, described in place, with the VC's
// neighbour in Buf.Peer. A neighbour's subnetwork address (its SNPA, the
// key of its static route) is the address the device's table knows it by:
// over ATM its IPv4 address, in the first four octets (FramedSNPA). The
// largest NSDU CLNP sends unsegmented is the device's MTU (9180 on ATM,
// RFC 1626), so a DT of an 8 KiB TPDU goes whole.
//
// Programs use sockets (socket.go): Socket, Bind (a TSAP selector),
// Listen, Accept, Connect (to a transport address), SendMsg (bytes of a
// TSDU, EOT ending it: the TSDU goes to TP4 whole), RecvMsg (the next
// TSDU's bytes, EOT when its end is returned), Close. Each is a system
// call charged as inet's are; TP4's part of each (copying user data in
// and out included) is a symbol of layer TP4.
//
// Nothing of the family is in the kernel until it is used: its functions
// are placed in the kernel's text, and its protocol machines made, at
// the first socket call, the first ISO frame, or Define, so that a host
// whose machine file enables it but that never uses it runs exactly as
// one without it.
//
// # Simplifications
//
// An end system on one LAN or one ATM network: CLNP routes are static
// (AddRoute; no ES-IS); one card; no connection-oriented network service; no expedited data
// on sockets (an ED received is counted and dropped), no TP classes but
// 4, no socket options; a listening socket accepts each connection it
// is offered while its queue has room (the CC goes at once) and refuses
// the rest.
package netiso

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/llc"
	"simkron/stack/osi/tp4"
)

// Params configures the family: a machine file's [iso].
type Params struct {
	// NSAP is the host's network address; zero: osi.LocalNSAP of the
	// card's station address.
	NSAP     osi.NSAP `toml:"nsap" help:"the host's NSAP in hex, its selector octet last (empty: 49 0001, the card's station address as the system ID, selector 00; on an ATM card its IPv4 address, then 0000)"`
	Selector int      `toml:"selector" min:"1" max:"255" help:"the NSAP selector of the transport entity (0x21: the one Wireshark decodes COTP at)"`
	// RecvSpace bounds the TSDUs a socket keeps for its program.
	RecvSpace sim.Size    `toml:"recv_space" min:"1KiB" max:"1MiB" help:"octets of complete TSDUs a connected socket keeps before it closes TP4's window (credit 0); reading reopens it"`
	Backlog   int         `toml:"backlog" min:"1" max:"64" help:"connections a listening socket may hold before they are accepted (listen's backlog is at most this)"`
	CLNP      clnp.Params `toml:"clnp"`
	TP4       tp4.Params  `toml:"tp4"`
}

// DefaultParams returns TP4 at selector 0x21 with the TOP study's
// settings but a 1 KiB TPDU, so that each DT travels in one 802.3 frame
// (a larger TPDU is segmented by CLNP), and 64 KiB of receive space.
func DefaultParams() Params {
	t := tp4.DefaultParams()
	t.TPDUSize = sim.KiB
	return Params{Selector: 0x21, RecvSpace: 64 * sim.KiB, Backlog: 5, CLNP: clnp.DefaultParams(), TP4: t}
}

// Validate checks what the bounds cannot.
func (p Params) Validate() error {
	if p.CLNP.NSAP != clnp.DefaultParams().NSAP {
		return fmt.Errorf("clnp.nsap: the host's NSAP is [iso] nsap")
	}
	if !p.NSAP.IsZero() && p.NSAP.Len() < 2 {
		return fmt.Errorf("nsap: %q needs at least a system part and a selector", p.NSAP)
	}
	return nil
}

// Stats counts the family's own events; the protocol machines count
// theirs (Family.LLC, CLNP, TP4).
type Stats struct {
	RxFrames       uint64 `stat:"rx_frames" help:"frames the family received from the device layer"`
	RxShort        uint64 `stat:"rx_short" help:"frames dropped: too short for their header"`
	RxNoMemory     uint64 `stat:"rx_no_memory" help:"frames dropped: no kernel memory for their PDU"`
	TxFrames       uint64 `stat:"tx_frames" help:"frames the family sent"`
	TxNoMemory     uint64 `stat:"tx_no_memory" help:"frames not sent: no kernel buffer"`
	TxQueueFull    uint64 `stat:"tx_queue_full" help:"frames not sent: the device queue full"`
	Deferred       uint64 `stat:"deferred" help:"received frames kept until a call that held the family let go"`
	DeferredTimers uint64 `stat:"deferred_timers" help:"timer expiries kept until a call that held the family let go"`
	Sockets        uint64 `stat:"sockets" help:"ISO sockets made"`
	Accepted       uint64 `stat:"accepted" help:"connections accepted by listening sockets"`
	Refused        uint64 `stat:"refused" help:"connection indications refused: no listening socket, or its backlog full"`
	EDDropped      uint64 `stat:"ed_dropped" help:"expedited data dropped: the sockets do not offer it"`
	SendCalls      uint64 `stat:"send_calls" help:"sendmsg calls"`
	RecvCalls      uint64 `stat:"recv_calls" help:"recvmsg calls"`
	TSDUsSent      uint64 `stat:"tsdus_sent" help:"TSDUs sent"`
	TSDUsReceived  uint64 `stat:"tsdus_received" help:"TSDUs received"`
	WindowsClosed  uint64 `stat:"windows_closed" help:"times a socket closed TP4's window: its receive space full"`
	OctetsSent     uint64 `stat:"octets_sent" help:"TSDU octets sent"`
	OctetsReceived uint64 `stat:"octets_received" help:"TSDU octets received"`
	Copied         uint64 `stat:"copied" help:"octets copied between a program's buffer and the family's"`
}

// Costs of the family's kernel glue, in instructions per call (4.4BSD
// netiso's iso_output/llc paths and tp_usrreq as a model).
var (
	defLLCRcv  = cpu.Def{Name: "iso_llc_rcv", Layer: cpu.LayerLLC, Instructions: 40, CodeBytes: 256, Why: "802.2 receive: read the 802.3 header, check the length, describe the data field in place, call LLC"}
	defLLCXmit = cpu.Def{Name: "iso_llc_xmit", Layer: cpu.LayerLLC, Instructions: 35, CodeBytes: 192, Why: "write the 802.3 header (addresses, length) in front of the PDU, dev_queue_xmit"}
	defTimer   = cpu.Def{Name: "iso_timer", Layer: cpu.LayerTP4, Instructions: 12, CodeBytes: 64, Why: "a family timer's softirq entry: run the time-out, or keep it while a call holds the family"}
	defRelease = cpu.Def{Name: "iso_release", Layer: cpu.LayerTP4, Instructions: 10, CodeBytes: 64, Why: "let go of the family: process the frames and time-outs kept meanwhile"}
	// Over a Framer (RFC 2684 routed ISO PDUs: the LLC header FE-FE-03 is
	// the driver's, no LLC type 1 entity).
	defFramedRcv  = cpu.Def{Name: "iso_framed_rcv", Layer: cpu.LayerLLC, Instructions: 30, CodeBytes: 192, Why: "a routed ISO PDU from the device (its LLC header taken off): describe it in place, the VC's neighbour as its source, call CLNP"}
	defFramedXmit = cpu.Def{Name: "iso_framed_xmit", Layer: cpu.LayerLLC, Instructions: 45, CodeBytes: 320, Why: "get a contiguous kernel buffer with the device's header room, copy the PDU in, have the device write its link header for the neighbour, dev_queue_xmit"}
)

// FramedKeyLen is how many leading octets of a neighbour's SNPA are its
// key in a Framer device's table (an IPv4 address over ATM).
const FramedKeyLen = 4

// FramedSNPA returns the SNPA of the neighbour the device's table knows by
// the IPv4 address ip: the address in the first FramedKeyLen octets.
func FramedSNPA(ip [4]byte) [6]byte { return [6]byte{ip[0], ip[1], ip[2], ip[3]} }

// ownerFrame tags a block header that stands for a received frame's
// kernel buffer; ownerKernel a block kmalloc'd with its data.
const (
	ownerKernel = 0x4B4D
	ownerFrame  = 0x4652
)

// Family is one host's ISO protocol family.
type Family struct {
	k     *kernel.Kernel
	c     *cpu.CPU
	ns    *netdev.Stack
	queue int
	mac   [6]byte
	// framer is the device when it frames packets itself (NewFramed): no
	// 802.3, no LLC entity; mac is then this host's own SNPA.
	framer netdev.Framer
	p      Params
	nsap   osi.NSAP
	ready  bool
	cat    *osi.Catalog
	bufs   *osi.Bufs
	llc    *llc.LLC
	clnp   *clnp.CLNP
	tp     *tp4.TP4
	// routes are the static routes, applied when the machines are made.
	routes []route
	// frames maps the block header of a received frame to its buffer;
	// tx the buffers LLC is writing, by data address.
	frames map[memory.Addr]netdev.Buf
	tx     map[memory.Addr]netdev.Buf
	// owned is set while a call holds the family; backlog and deferred
	// keep what arrived meanwhile.
	owned    bool
	backlog  []netdev.Buf
	deferred []func()
	sockets  []*Socket
	stats    Stats
	sym      struct{ llcRcv, llcXmit, timer, release *cpu.Symbol }
	sys      sysSyms
	hdr      [header.EthernetHeaderLen]byte
	link     []byte // the Framer's link header, as Frame writes it
}

type route struct {
	nsap osi.NSAP
	mac  [6]byte
}

// New makes the family of kernel k on the device of queue in the device
// layer ns, whose station address is mac. It only registers its receive
// handler: the rest is made at first use.
func New(k *kernel.Kernel, ns *netdev.Stack, queue int, mac [6]byte, p Params) (*Family, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	f := &Family{k: k, c: k.CPU(), ns: ns, queue: queue, mac: mac, p: p, cat: osi.NewCatalog(),
		frames: map[memory.Addr]netdev.Buf{}, tx: map[memory.Addr]netdev.Buf{}}
	f.nsap = p.NSAP
	if f.nsap.IsZero() {
		f.nsap = osi.LocalNSAP(mac, 0)
	}
	if err := ns.Register(netdev.EtherType8022, f.receive); err != nil {
		return nil, err
	}
	return f, nil
}

// NewFramed makes the family of kernel k on the Framer device of queue in
// ns (an ATM card's interface): routed ISO PDUs of RFC 2684, without LLC
// type 1. self is the host's own SNPA (FramedSNPA of its address on the
// device); the default NSAP takes it as the system ID.
func NewFramed(k *kernel.Kernel, ns *netdev.Stack, queue int, self [6]byte, p Params) (*Family, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	fr, ok := ns.Device(queue).(netdev.Framer)
	if !ok {
		return nil, fmt.Errorf("device %s does not frame packets itself (no netdev.Framer)", ns.Device(queue).Name())
	}
	f := &Family{k: k, c: k.CPU(), ns: ns, queue: queue, mac: self, framer: fr, p: p, cat: osi.NewCatalog(),
		frames: map[memory.Addr]netdev.Buf{}, tx: map[memory.Addr]netdev.Buf{}, link: make([]byte, fr.HeaderLen())}
	f.nsap = p.NSAP
	if f.nsap.IsZero() {
		f.nsap = osi.LocalNSAP(self, 0)
	}
	if err := ns.Register(netdev.ProtoISO, f.receive); err != nil {
		return nil, err
	}
	return f, nil
}

// Framed reports whether the family runs over a Framer device
// (NewFramed), without LLC type 1.
func (f *Family) Framed() bool { return f.framer != nil }

// NSAP returns the host's network address (selector 00 unless configured
// otherwise).
func (f *Family) NSAP() osi.NSAP { return f.nsap }

// Address returns the transport address of TSAP tsap on this host.
func (f *Family) Address(tsap []byte) tp4.Address {
	return tp4.Address{NSAP: f.nsap.WithSelector(byte(f.p.Selector)), TSAP: tsap}
}

// Params returns the configuration.
func (f *Family) Params() Params { return f.p }

// Stats returns the family's counters.
func (f *Family) Stats() Stats { return f.stats }

// Kernel returns the kernel the family runs in.
func (f *Family) Kernel() *kernel.Kernel { return f.k }

// Catalog returns the cost categories of the family's functions.
func (f *Family) Catalog() *osi.Catalog { return f.cat }

// LLC, CLNP and TP4 return the protocol machines (nil before first use;
// LLC always nil over a Framer).
func (f *Family) LLC() *llc.LLC    { return f.llc }
func (f *Family) CLNP() *clnp.CLNP { return f.clnp }
func (f *Family) TP4() *tp4.TP4    { return f.tp }

// Held returns the received frames and transmit buffers the family holds
// now (for tests of what it gives back).
func (f *Family) Held() (frames, tx int) { return len(f.frames), len(f.tx) }

// AddRoute makes the system of nsap reachable at station address mac (a
// static route, as an end system without ES-IS is configured); over a
// Framer, mac is the neighbour's SNPA (FramedSNPA).
func (f *Family) AddRoute(nsap osi.NSAP, mac [6]byte) {
	f.routes = append(f.routes, route{nsap, mac})
	if f.clnp != nil {
		f.clnp.AddRoute(nsap, mac)
	}
}

// Define places the family's functions in the kernel's text and makes
// its protocol machines, once: at the first socket call or ISO frame, or
// when a measurement needs the symbols before the programs run. It
// charges nothing.
func (f *Family) Define() {
	if f.ready {
		return
	}
	f.ready = true
	syms := f.k.Symbols()
	if f.framer != nil {
		f.sym.llcRcv = syms.Define(defFramedRcv)
		f.sym.llcXmit = syms.Define(defFramedXmit)
	} else {
		f.sym.llcRcv = syms.Define(defLLCRcv)
		f.sym.llcXmit = syms.Define(defLLCXmit)
	}
	f.sym.timer = syms.Define(defTimer)
	f.sym.release = syms.Define(defRelease)
	f.defineSyscalls()
	e := &env{f: f}
	f.bufs = osi.NewBufs(f.c, e.Define, kmem{f})
	var sub clnp.Subnet = subnet{f}
	if f.framer != nil {
		sub = framedSubnet{f}
	} else {
		f.llc = llc.New(e, linkMAC{f})
	}
	cp := f.p.CLNP
	cp.NSAP = f.nsap
	var err error
	if f.clnp, err = clnp.New(e, sub, cp); err != nil {
		panic(fmt.Sprintf("netiso: %s: CLNP: %v (its parameters were validated)", f.k.Name(), err))
	}
	if f.tp, err = tp4.New(e, network{f}, f.p.TP4); err != nil {
		panic(fmt.Sprintf("netiso: %s: TP4: %v (its parameters were validated)", f.k.Name(), err))
	}
	if f.llc != nil {
		if err := f.llc.Register(header.LLCSAPISONet, nsUser{f}); err != nil {
			panic(err)
		}
	}
	if err := f.clnp.Register(byte(f.p.Selector), tpUser{f}); err != nil {
		panic(err)
	}
	for _, r := range f.routes {
		f.clnp.AddRoute(r.nsap, r.mac)
	}
}

// lock takes the family for a system call.
func (f *Family) lock() {
	if f.owned {
		panic(fmt.Sprintf("netiso: %s: the family taken twice", f.k.Name()))
	}
	f.owned = true
}

// unlock processes what arrived while the family was held, then lets go.
func (f *Family) unlock() {
	if len(f.backlog) > 0 || len(f.deferred) > 0 {
		c := f.c
		c.Enter(f.sym.release)
		for len(f.backlog) > 0 || len(f.deferred) > 0 {
			if len(f.backlog) > 0 {
				f.input(kernel.PopFront(&f.backlog))
				continue
			}
			kernel.PopFront(&f.deferred)()
		}
		c.Exit(f.sym.release)
	}
	f.owned = false
}

// receive is the device layer's handler of 802.3 frames (receive
// softirq). It owns b.
func (f *Family) receive(b netdev.Buf) {
	f.Define()
	if f.owned {
		f.stats.Deferred++
		f.backlog = append(f.backlog, b)
		return
	}
	f.owned = true
	f.input(b)
	f.unlock()
}

// input hands one frame to LLC, described in place.
func (f *Family) input(b netdev.Buf) {
	if f.framer != nil {
		f.inputFramed(b)
		return
	}
	c := f.c
	c.Enter(f.sym.llcRcv)
	defer c.Exit(f.sym.llcRcv)
	f.stats.RxFrames++
	if b.Len < header.EthernetHeaderLen {
		f.stats.RxShort++
		b.Free(f.k)
		return
	}
	c.Read(b.Addr, f.hdr[:])
	e := header.Ethernet(f.hdr[:])
	l := int(e.Type())
	if !header.IsLengthField(e.Type()) || header.EthernetHeaderLen+l > b.Len {
		f.stats.RxShort++
		b.Free(f.k)
		return
	}
	if ch := f.wrapFrame(b, b.Addr+header.EthernetHeaderLen, l); ch != 0 {
		f.llc.Input(e.Src(), e.Dst(), ch)
	}
}

// wrapFrame describes the n bytes at data of received frame b in place,
// as a chain: a block header of its own stands for the frame's buffer,
// which is freed when the last descriptor into it is. Out of memory, the
// frame is dropped, counted, and the chain is 0.
func (f *Family) wrapFrame(b netdev.Buf, data memory.Addr, n int) osi.Chain {
	blk := f.k.Kmalloc(osi.BlockHeader)
	if blk == 0 {
		f.stats.RxNoMemory++
		b.Free(f.k)
		return 0
	}
	f.bufs.InitBlock(blk, ownerFrame, n)
	f.frames[blk] = b
	ch := f.bufs.Wrap(osi.Rx, blk, data, n)
	if ch == 0 {
		f.stats.RxNoMemory++
		f.freeBlock(blk)
	}
	return ch
}

// inputFramed hands one routed ISO PDU from a Framer (its data from the
// NLPID) to CLNP, described in place, from the VC's neighbour.
func (f *Family) inputFramed(b netdev.Buf) {
	c := f.c
	c.Enter(f.sym.llcRcv)
	defer c.Exit(f.sym.llcRcv)
	f.stats.RxFrames++
	if b.Len < 1 {
		f.stats.RxShort++
		b.Free(f.k)
		return
	}
	if ch := f.wrapFrame(b, b.Addr, b.Len); ch != 0 {
		f.clnp.Input(b.Peer, ch)
	}
}

// freeBlock returns a block whose use count reached zero.
func (f *Family) freeBlock(blk memory.Addr) {
	if b, ok := f.frames[blk]; ok {
		delete(f.frames, blk)
		b.Free(f.k)
	}
	f.k.Kfree(blk)
}

// env is the family as the protocol machines' osi.Env.
type env struct{ f *Family }

var _ osi.Env = env{}

func (e env) CPU() *cpu.CPU { return e.f.c }

func (e env) Define(d cpu.Def, cat osi.Category) *cpu.Symbol {
	s := e.f.k.Symbols().Define(d)
	e.f.cat.File(s, cat)
	return s
}

func (e env) Cost(name string, instructions int64, why string) int64 {
	return e.f.k.Symbols().Cost(name, instructions, why)
}

func (e env) Bufs() *osi.Bufs { return e.f.bufs }

func (e env) NewTimer(name string, fn func()) osi.Timer {
	t := &timer{f: e.f, fn: fn}
	t.kt = kernel.Timer{Name: "iso." + name, Func: t.fire}
	return t
}

func (e env) Now() sim.Time { return e.f.c.LocalTime() }

func (e env) Name() string { return e.f.k.Name() }

// timer is a protocol machine's timer on the kernel's wheel.
type timer struct {
	f  *Family
	fn func()
	kt kernel.Timer
}

func (t *timer) Start(d sim.Time) { t.f.k.AddTimer(&t.kt, t.f.k.TicksFor(d)) }
func (t *timer) Stop()            { t.f.k.DelTimer(&t.kt) }
func (t *timer) Pending() bool    { return t.kt.Pending() }

// fire runs in the timer softirq: the time-out runs now, or once the
// call holding the family lets go.
func (t *timer) fire() {
	f := t.f
	c := f.c
	c.Enter(f.sym.timer)
	defer c.Exit(f.sym.timer)
	if f.owned {
		f.stats.DeferredTimers++
		f.deferred = append(f.deferred, t.fn)
		return
	}
	f.owned = true
	t.fn()
	f.unlock()
}

// kmem is the PDU memory in the kernel's heap.
type kmem struct{ f *Family }

var _ osi.Mem = kmem{}

func (m kmem) AllocDesc(osi.Dir) memory.Addr { return m.f.k.Kmalloc(osi.DescSize) }
func (m kmem) FreeDesc(a memory.Addr)        { m.f.k.Kfree(a) }

func (m kmem) AllocBlock(_ osi.Dir, n int) memory.Addr {
	blk := m.f.k.Kmalloc(osi.BlockHeader + n)
	if blk != 0 {
		m.f.bufs.InitBlock(blk, ownerKernel, n)
	}
	return blk
}

func (m kmem) FreeBlock(blk memory.Addr)        { m.f.freeBlock(blk) }
func (m kmem) Copy(dst, src memory.Addr, n int) { m.f.k.Bcopy(dst, src, n) }

// linkMAC is the card as LLC's MAC: contiguous kernel buffers with room
// for the 802.3 header, queued to the device layer.
type linkMAC struct{ f *Family }

func (l linkMAC) Address() [6]byte { return l.f.mac }
func (l linkMAC) MaxSDU() int      { return min(l.f.ns.Device(l.f.queue).MTU(), header.IEEE8023MaxLength) }

func (l linkMAC) TxBuffer(n int) (memory.Addr, bool) {
	b, ok := netdev.Alloc(l.f.k, header.EthernetHeaderLen, n)
	if !ok {
		l.f.stats.TxNoMemory++
		return 0, false
	}
	l.f.tx[b.Addr] = b
	return b.Addr, true
}

func (l linkMAC) Send(a memory.Addr, n int, dst [6]byte) {
	f := l.f
	c := f.c
	c.Enter(f.sym.llcXmit)
	defer c.Exit(f.sym.llcXmit)
	b, ok := f.tx[a]
	if !ok {
		panic(fmt.Sprintf("netiso: %s: send of %#x, not a transmit buffer", f.k.Name(), uint64(a)))
	}
	delete(f.tx, a)
	b.Len = n
	b.Push(header.EthernetHeaderLen)
	header.Ethernet(f.hdr[:]).Encode(&header.EthernetFields{Dst: dst, Src: f.mac, Type: uint16(n)})
	c.Write(b.Addr, f.hdr[:])
	if !f.ns.Transmit(f.queue, b) {
		f.stats.TxQueueFull++
		b.Free(f.k)
		return
	}
	f.stats.TxFrames++
}

// subnet is LLC at the ISO network SAP as CLNP's subnetwork.
type subnet struct{ f *Family }

func (s subnet) Address() [6]byte { return s.f.mac }
func (s subnet) MaxSDU() int      { return s.f.llc.MaxSDU() }
func (s subnet) Send(dst [6]byte, pdu osi.Chain) bool {
	return s.f.llc.UnitdataRequest(dst, header.LLCSAPISONet, header.LLCSAPISONet, pdu)
}

// framedSubnet is a Framer device as CLNP's subnetwork: RFC 2684 routed
// ISO PDUs, one contiguous kernel buffer each behind the device's link
// header.
type framedSubnet struct{ f *Family }

func (s framedSubnet) Address() [6]byte { return s.f.mac }
func (s framedSubnet) MaxSDU() int      { return s.f.framer.MTU() }

func (s framedSubnet) Send(dst [6]byte, pdu osi.Chain) bool {
	f := s.f
	c := f.c
	c.Enter(f.sym.llcXmit)
	defer c.Exit(f.sym.llcXmit)
	defer f.bufs.Free(pdu)
	n := f.bufs.Len(pdu)
	hl := len(f.link)
	b, ok := netdev.Alloc(f.k, hl, n)
	if !ok {
		f.stats.TxNoMemory++
		return false
	}
	f.bufs.CopyOut(pdu, b.Addr)
	if !f.framer.Frame(f.link, netdev.ProtoISO, dst[:FramedKeyLen]) {
		// No VC to the neighbour: the device counts it, CLNP counts the
		// refusal.
		b.Free(f.k)
		return false
	}
	b.Push(hl)
	c.Write(b.Addr, f.link)
	if !f.ns.Transmit(f.queue, b) {
		f.stats.TxQueueFull++
		b.Free(f.k)
		return false
	}
	f.stats.TxFrames++
	return true
}

// nsUser is CLNP as LLC's user at the ISO network SAP.
type nsUser struct{ f *Family }

func (u nsUser) DLUnitdataIndication(src, _ [6]byte, _, _ uint8, sdu osi.Chain) {
	u.f.clnp.Input(src, sdu)
}

// tpUser is TP4 as CLNP's user at the transport selector.
type tpUser struct{ f *Family }

func (u tpUser) NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain) { u.f.tp.Input(src, dst, nsdu) }

// network is CLNP as TP4's network service.
type network struct{ f *Family }

func (n network) UnitdataRequest(src, dst osi.NSAP, nsdu osi.Chain) bool {
	return n.f.clnp.UnitdataRequest(src, dst, nsdu)
}
