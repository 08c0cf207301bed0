package atmtaxi

import (
	"encoding/binary"

	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/netdev"
)

// The IP interface: classical IP over AAL5 (RFC 2225 without ATMARP,
// RFC 1626's MTU of 9180) with RFC 2684 LLC encapsulation and a static
// table of one bidirectional VC per neighbour (Params.VCs). It is a
// netdev.Framer: IP asks it to frame each datagram for its next hop, and
// the frame handed back to StartXmit starts with a 4-byte VC tag (the
// label of the VC, as a header word; bit 0 set for an ISO PDU), then the
// LLC header:
//
//	Addr       +4                 +12
//	│ VC tag   │ AA AA 03 00 00 00 08 00 │ IPv4 datagram ...
//
// An ISO PDU (ProtoISO) has its 3-byte LLC header at +9 instead, the
// five bytes between unused. StartXmit sends the LLC header and what
// follows as one AAL5 CPCS-SDU. On receive the PDU's LLC header says
// what it carries: SNAP with OUI 00-00-00 gives the EtherType, FE-FE-03
// the ISO seam (the VC's neighbour's address in Buf.Peer, since there is
// no link source address: the VC is the neighbour); anything else is
// dropped and counted.

// ProtoISO is the pseudo-EtherType (Buf.Proto) under which routed ISO
// PDUs (RFC 2684 LLC FE-FE-03) are handed to netdev, their data starting
// at the NLPID; an OSI network layer that registers for it receives
// CLNP over AAL5, and framing a packet with it sends one.
const ProtoISO = netdev.ProtoISO

// Interface is the driver's IP side: a netdev device.
type Interface struct {
	d       *Driver
	ns      *netdev.Stack
	qi      int
	stopped bool
	byIP    []ipVC // in the order of Params.VCs
	sym     struct{ resolve, xmit, input *cpu.Symbol }
	stats   InterfaceStats
}

// InterfaceStats counts the IP side.
type InterfaceStats struct {
	TxFrames uint64 `stat:"tx_frames" help:"IP datagrams sent over a VC"`
	RxFrames uint64 `stat:"rx_frames" help:"IP datagrams received"`
	NoVC     uint64 `stat:"no_vc" help:"datagrams not sent: a next hop the VC table lacks"`
	TxDrops  uint64 `stat:"tx_drops" help:"datagrams dropped: driver not ready, bad tag"`
}

type ipVC struct {
	ip IP
	vs *vcState
}

const (
	vcTagLen = 4
	isoFlag  = 1 // bit 0 of the tag
	hdrLen   = vcTagLen + header.RFC2684SNAPLen
)

var (
	defResolve = cpu.Def{Name: "clip_resolve", Layer: cpu.LayerInherit, Instructions: 25, CodeBytes: 192, Why: "look the next hop up in the static VC table, write the VC tag and the LLC header (the layer of the protocol that asks: IP's, or the ISO family's LLC for a routed ISO PDU)"}
	defXmit    = cpu.Def{Name: "clip_start_xmit", Layer: cpu.LayerDEV, Instructions: 40, CodeBytes: 256, Why: "read the VC tag, find the VC, hand the SDU to the SAR, free the buffer"}
	defInput   = cpu.Def{Name: "clip_input", Layer: cpu.LayerDEV, Instructions: 35, CodeBytes: 256, Why: "read the LLC header, pick the protocol, strip the header, queue to the backlog"}
)

var _ netdev.Framer = (*Interface)(nil)

func newInterface(d *Driver, ns *netdev.Stack) *Interface {
	f := &Interface{d: d, ns: ns}
	syms := d.k.Symbols()
	f.sym.resolve = syms.Define(defResolve)
	f.sym.xmit = syms.Define(defXmit)
	f.sym.input = syms.Define(defInput)
	for _, v := range d.p.VCs {
		vs := d.vcs[uint16(v.VCI)]
		vs.peer = v.IP
		f.byIP = append(f.byIP, ipVC{ip: v.IP, vs: vs})
	}
	f.qi = ns.AddDevice(f)
	return f
}

// Name implements netdev.Device.
func (f *Interface) Name() string { return f.d.name }

// MAC implements netdev.Device: ATM has no MAC address.
func (f *Interface) MAC() [6]byte { return [6]byte{} }

// MTU implements netdev.Device.
func (f *Interface) MTU() int { return f.d.p.MTU }

// Busy implements netdev.Device: a frame is on its way out only while it
// is being put into the FIFO.
func (f *Interface) Busy() bool { return f.d.txBusy }

// Queue returns the interface's queue index in the device layer.
func (f *Interface) Queue() int { return f.qi }

// Stats returns the counters.
func (f *Interface) Stats() InterfaceStats { return f.stats }

// HeaderLen implements netdev.Framer.
func (f *Interface) HeaderLen() int { return hdrLen }

// Frame implements netdev.Framer: the VC tag and the LLC header for next.
func (f *Interface) Frame(hdr []byte, etherType uint16, next []byte) bool {
	c := f.d.c
	c.Enter(f.sym.resolve)
	defer c.Exit(f.sym.resolve)
	var vs *vcState
	for i, e := range f.byIP {
		c.Reference(f.d.vcTable+16*1024+memory.Addr(i)*8, memory.Read)
		if e.ip == IP(next) {
			vs = e.vs
			break
		}
	}
	if vs == nil {
		f.stats.NoVC++
		return false
	}
	tag := vs.vc.word(0, 0)
	clear(hdr)
	if etherType == ProtoISO {
		tag |= isoFlag
		header.RFC2684(hdr[hdrLen-header.RFC2684ISOLen:]).EncodeISO()
	} else {
		header.RFC2684(hdr[vcTagLen:]).EncodeSNAP(etherType)
	}
	binary.LittleEndian.PutUint32(hdr, tag)
	return true
}

// StartXmit implements netdev.Device: the frame goes into the FIFO now,
// unless a PDU is being sent already (this call came from an interrupt's
// softirq): then it waits in the queue until that one is in.
func (f *Interface) StartXmit(b netdev.Buf) bool {
	d := f.d
	if d.txBusy {
		d.stats.TxDeferred++
		f.stopped = true
		return false
	}
	c := d.c
	c.Enter(f.sym.xmit)
	defer c.Exit(f.sym.xmit)
	defer b.Free(d.k)
	var t [vcTagLen]byte
	c.Read(b.Addr, t[:])
	tag := binary.LittleEndian.Uint32(t[:])
	vs := d.vcs[uint16(tag>>4)]
	if !d.ready || vs == nil || !vs.ip || b.Len <= hdrLen {
		f.stats.TxDrops++
		return true
	}
	off := vcTagLen
	if tag&isoFlag != 0 {
		off = hdrLen - header.RFC2684ISOLen
	}
	f.stats.TxFrames++
	d.transmit(vs, b.Addr+memory.Addr(off), b.Len-off, 0)
	return true
}

// txFree is called when a PDU is in the FIFO: a frame that had to wait is
// sent by the transmit softirq.
func (f *Interface) txFree() {
	if f.stopped {
		f.stopped = false
		f.ns.WakeQueue(f.qi)
	}
}

// receive hands a checked SDU of n bytes at buf (a kernel buffer) that
// came on vs to the device layer by its LLC header; an ISO PDU carries
// the VC's neighbour as its Peer.
func (f *Interface) receive(vs *vcState, buf memory.Addr, n int) {
	d := f.d
	c := d.c
	c.Enter(f.sym.input)
	defer c.Exit(f.sym.input)
	var h [header.RFC2684SNAPLen]byte
	c.Read(buf, h[:min(n, len(h))])
	llc := header.RFC2684(h[:min(n, len(h))])
	var proto uint16
	hl := 0
	switch {
	case !llc.IsValid():
	case llc.IsISO():
		proto, hl = ProtoISO, header.RFC2684ISOLen
	default:
		if et, ok := llc.EtherType(); ok {
			proto, hl = et, header.RFC2684SNAPLen
		}
	}
	if proto == 0 || n <= hl {
		d.stats.RxBadLLC++
		d.k.Kfree(buf)
		return
	}
	f.stats.RxFrames++
	b := netdev.Buf{Head: buf, Addr: buf + memory.Addr(hl), Len: n - hl, Dev: f, Proto: proto}
	if proto == ProtoISO {
		copy(b.Peer[:], vs.peer[:])
	}
	f.ns.Rx(b)
}
