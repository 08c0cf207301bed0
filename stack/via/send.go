package via

import (
	"encoding/binary"
	"fmt"

	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/netdev"
)

// readDesc reads and checks the descriptor at addr (in the region of
// handle mh) for vi, translating its data segments. The descriptor
// itself must lie in registered memory of vi's protection tag: if not,
// the post fails with rc and nothing is written. A problem in its
// contents is written into its Status (DONE and an error bit) and the
// post fails with VIP_DESCRIPTOR_ERROR.
func (a *Agent) readDesc(l *VIPL, vi *VI, addr memory.Addr, mh MemHandle, op uint32) (*kdesc, Return) {
	c := a.c
	r := a.region(l, mh)
	switch {
	case r == nil || !r.covers(uint64(addr), ControlSegSize):
		return nil, InvalidParameter
	case r.ptag != vi.attrs.Ptag:
		return nil, InvalidPtag
	}
	c.Read(addr, l.ctl[:])
	d, nseg := DecodeControl(l.ctl[:])
	fail := func(bits uint32) (*kdesc, Return) {
		a.stats.DescriptorErrors++
		a.writeStatus(addr, 0, 0, StatusDone|bits|op)
		return nil, DescriptorError
	}
	switch {
	case d.Control&controlReserved != 0 || d.Control&ControlOpMask != ControlOpSendRecv:
		return fail(StatusFormatError) // reserved bits, or RDMA (not offered)
	case nseg > a.p.MaxSegments:
		return fail(StatusFormatError)
	case !r.covers(uint64(addr), uint64(ControlSegSize+DataSegSize*nseg)):
		return fail(StatusProtectionError)
	}
	if nseg > 0 {
		c.Read(addr+ControlSegSize, l.segs[:DataSegSize*nseg])
	}
	kd := vi.newKdesc(addr)
	kd.control, kd.imm = d.Control, d.Immediate
	var total uint64
	for i := range nseg {
		c.Exec(a.cost.segment)
		s := decodeSegment(l.segs, i)
		sr := a.region(l, s.Handle)
		if sr == nil || sr.ptag != vi.attrs.Ptag || !sr.covers(s.Addr, uint64(s.Length)) {
			vi.freeKdesc(kd)
			return fail(StatusProtectionError)
		}
		total += uint64(s.Length)
		if total > uint64(vi.attrs.MaxTransferSize) {
			vi.freeKdesc(kd)
			return fail(StatusLengthError)
		}
		kd.runs = a.translate(sr, s.Addr, s.Length, kd.runs)
	}
	kd.length = uint32(total)
	return kd, Success
}

// writeStatus writes a descriptor's Length, Immediate data and Status
// (the provider's words; Status last).
func (a *Agent) writeStatus(addr memory.Addr, length, imm, status uint32) {
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], imm)
	binary.LittleEndian.PutUint32(b[4:], length)
	binary.LittleEndian.PutUint32(b[8:], status)
	a.c.Write(addr+offImmediate, b[:])
}

// postSend is the agent's VipPostSend, in the fast trap.
func (a *Agent) postSend(l *VIPL, vi *VI, addr memory.Addr, mh MemHandle) Return {
	a.vi(vi.num)
	if vi.state != StateConnected {
		return InvalidState
	}
	kd, rc := a.readDesc(l, vi, addr, mh, StatusOpSend)
	if rc != Success {
		return rc
	}
	seq := vi.txSeq
	vi.txSeq++
	vi.sendQ = append(vi.sendQ, kd)
	a.stats.MessagesSent++
	a.stats.BytesSent += uint64(kd.length)
	n := vi.nic
	maxp := uint32(n.maxPayload())
	// Every message is at least one frame, a zero-length one too.
	kd.posting = true
	for off := uint32(0); off == 0 || off < kd.length; off += maxp {
		pl := min(maxp, kd.length-off)
		if !a.sendFrame(vi, kd, seq, off, pl) {
			// The device is not running: the message completes with a
			// transport error once what went out is read.
			kd.err = StatusTransportError
			break
		}
	}
	kd.posting = false
	if a.p.SyncSend && kd.pending > 0 {
		// Synchronous post: wait until the NIC has read every fragment;
		// its interrupts count them down meanwhile.
		a.spin(vi, func() bool { return kd.pending == 0 })
	}
	if kd.pending == 0 {
		a.sendComplete(kd)
	}
	return Success
}

// sendFrame builds and sends the frame carrying [off, off+pl) of message
// seq. With a gather device the header goes in a header buffer and the
// data straight from the translated runs; otherwise the whole frame is
// copied into a kernel buffer for the device layer. It reports false when
// the frame could not be sent at all.
func (a *Agent) sendFrame(vi *VI, kd *kdesc, seq, off, pl uint32) bool {
	c := a.c
	c.Enter(a.sym.fragment)
	defer c.Exit(a.sym.fragment)
	n := vi.nic
	eth := header.Ethernet(a.hdr[:])
	eth.Encode(&header.EthernetFields{Dst: vi.peerMAC, Src: n.d.MAC(), Type: a.p.EtherType})
	f := header.VIAFields{Type: header.VIATypeData, DstVI: vi.peerVI, SrcVI: vi.num, Seq: seq,
		MsgLen: kd.length, Offset: off, PayloadLen: uint16(pl)}
	if kd.control&ControlImmediate != 0 {
		f.Flags, f.Immediate = header.VIAFlagImmediate, kd.imm
	}
	header.VIA(a.hdr[header.EthernetHeaderLen:]).Encode(&f)
	hlen := len(a.hdr)
	a.stats.FramesSent++
	if n.gather == nil {
		b, ok := netdev.Alloc(a.k, 0, hlen+int(pl))
		if !ok {
			return false
		}
		c.Write(b.Addr, a.hdr[:])
		at := b.Addr + memory.Addr(hlen)
		a.eachRun(kd, off, pl, func(src memory.Addr, k uint32) {
			a.k.Bcopy(at, src, int(k))
			at += memory.Addr(k)
		})
		for !a.nd.Transmit(n.dev, b) {
			a.stats.SendWaits++
			vi.lib.t.Sleep(a.nd.RoomQueue(n.dev))
		}
		return true
	}
	h := a.k.Kmalloc(hlen)
	if h == 0 {
		return false
	}
	c.Write(h, a.hdr[:])
	frags := append(a.frags[:0], netdev.Buf{Addr: h, Len: hlen})
	a.eachRun(kd, off, pl, func(src memory.Addr, k uint32) {
		frags = append(frags, netdev.Buf{Addr: src, Len: int(k)})
	})
	a.frags = frags
	kd.headers = append(kd.headers, h)
	kd.pending++
	for !n.gather.StartXmitFrags(frags, kd.done) {
		if !n.d.Busy() {
			// Refused with nothing outstanding: the device is not
			// running.
			kd.pending--
			kd.headers = kd.headers[:len(kd.headers)-1]
			a.k.Kfree(h)
			return false
		}
		a.stats.SendWaits++
		vi.lib.t.Sleep(a.nd.DrainQueue(n.dev))
	}
	return true
}

// eachRun calls fn for each physical piece of the message's bytes [off,
// off+n).
func (a *Agent) eachRun(kd *kdesc, off, n uint32, fn func(addr memory.Addr, k uint32)) {
	at := uint32(0)
	for _, r := range kd.runs {
		if n == 0 {
			return
		}
		if at+r.n <= off {
			at += r.n
			continue
		}
		skip := off - at
		k := min(r.n-skip, n)
		fn(r.addr+memory.Addr(skip), k)
		off += k
		n -= k
		at += r.n
	}
	if n != 0 {
		panic(fmt.Sprintf("via: message of %d bytes has no bytes at offset %d", kd.length, off))
	}
}

// fragDone is a fragment's completion, called by the driver when the NIC
// has read it (in the interrupt handler): its header buffer is freed and
// the message counted down; an asynchronous post completes with its last
// fragment.
func (a *Agent) fragDone(kd *kdesc) {
	c := a.c
	c.Enter(a.sym.fragDone)
	defer c.Exit(a.sym.fragDone)
	a.k.Kfree(kd.headers[0])
	kd.headers = kd.headers[1:]
	kd.pending--
	c.Reference(kd.vi.entry+8, memory.Write)
	if kd.pending == 0 && !a.p.SyncSend && !kd.posting {
		a.sendComplete(kd)
	}
}

// sendComplete writes a sent descriptor's length and status, adds the
// completion to the send queue's CQ and wakes a waiter.
func (a *Agent) sendComplete(kd *kdesc) {
	c := a.c
	c.Enter(a.sym.sendDone)
	defer c.Exit(a.sym.sendDone)
	vi := kd.vi
	for i, x := range vi.sendQ {
		if x == kd {
			vi.sendQ = append(vi.sendQ[:i], vi.sendQ[i+1:]...)
			break
		}
	}
	a.writeStatus(kd.addr, kd.length, kd.imm, StatusDone|StatusOpSend|kd.err)
	a.complete(vi, false)
	vi.freeKdesc(kd)
}

// complete announces a completion on one of vi's queues: a CQ entry if
// the queue is bound to one, and a wake-up.
func (a *Agent) complete(vi *VI, recv bool) {
	cq, q := vi.sendCQ, &vi.sendWait
	if recv {
		cq, q = vi.recvCQ, &vi.recvWait
	}
	if cq != nil {
		a.cqAdd(cq, vi, recv)
	}
	a.k.Wakeup(q)
}

// cqAdd writes a completion entry; a full ring (its next entry not yet
// consumed) is a catastrophic error of the CQ.
func (a *Agent) cqAdd(cq *CQ, vi *VI, recv bool) {
	c := a.c
	e := cq.ring + memory.Addr(cq.tail*cqEntrySize)
	var b [cqEntrySize]byte
	c.Read(e, b[:])
	if binary.LittleEndian.Uint32(b[4:])&cqValid != 0 {
		a.stats.CQOverflows++
		cq.nic.asyncError(vi, ResourceCQ, ErrCatastrophic)
		return
	}
	flags := uint32(cqValid)
	if recv {
		flags |= cqRecv
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(vi.num))
	binary.LittleEndian.PutUint32(b[4:], flags)
	c.Write(e, b[:])
	cq.tail = (cq.tail + 1) % cq.entries
	a.k.Wakeup(&cq.wait)
}

// postRecv is the agent's VipPostRecv, in the fast trap.
func (a *Agent) postRecv(l *VIPL, vi *VI, addr memory.Addr, mh MemHandle) Return {
	a.vi(vi.num)
	if vi.state == StateError {
		return InvalidState
	}
	kd, rc := a.readDesc(l, vi, addr, mh, StatusOpReceive)
	if rc != Success {
		return rc
	}
	vi.recvQ = append(vi.recvQ, kd)
	return Success
}
