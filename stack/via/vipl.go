package via

import (
	"bytes"
	"encoding/binary"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
)

// VIPL is the VI Provider Library as linked into one program: its calls
// run on the program's thread. Handles (*Nic, *VI, *CQ, *Conn, Ptag,
// MemHandle) are the ones the calls return; a nil handle or another
// program's is VIP_INVALID_PARAMETER.
type VIPL struct {
	a    *Agent
	t    *kernel.Thread
	c    *cpu.CPU
	ctl  [ControlSegSize]byte
	segs []byte
	word [4]byte
	cqe  [cqEntrySize]byte
}

// NewVIPL links the library into the program running on thread t.
func (a *Agent) NewVIPL(t *kernel.Thread) *VIPL {
	return &VIPL{a: a, t: t, c: a.c, segs: make([]byte, DataSegSize*a.p.MaxSegments)}
}

// call runs fn in the agent through a system call, after the VIPL's own
// argument handling.
func (l *VIPL) call(sym *cpu.Symbol, fn func()) {
	c := l.c
	c.Enter(l.a.sym.vplCall)
	l.t.Syscall(sym, fn)
	c.Exit(l.a.sym.vplCall)
}

// ftrap runs fn in the agent through the fast trap: the core's trap and
// return with the agent's own short entry path instead of the generic
// system-call dispatch.
func (l *VIPL) ftrap(sym *cpu.Symbol, fn func()) {
	c := l.c
	c.Enter(l.a.sym.ftrap)
	c.Trap()
	c.Call(sym, fn)
	c.Exit(l.a.sym.ftrap)
}

func (l *VIPL) owns(vi *VI) bool { return vi != nil && vi.lib == l }

// VipOpenNic opens the VI NIC called name (the device's name, "eth0").
func (l *VIPL) VipOpenNic(name string) (nic *Nic, rc Return) {
	rc = InvalidParameter
	l.call(l.a.sym.openNic, func() {
		for _, n := range l.a.nics {
			l.c.Exec(4)
			if n.name == name {
				nic, rc = n, Success
				return
			}
		}
	})
	return nic, rc
}

// VipCloseNic closes the NIC (nothing the program holds is freed).
func (l *VIPL) VipCloseNic(nic *Nic) Return {
	if nic == nil {
		return InvalidParameter
	}
	return Success
}

// VipQueryNic returns the NIC's attributes.
func (l *VIPL) VipQueryNic(nic *Nic) (NicAttributes, Return) {
	if nic == nil {
		return NicAttributes{}, InvalidParameter
	}
	p := l.a.p
	return NicAttributes{
		Name: nic.name, LocalNicAddress: nic.d.MAC(), MaxDiscriminatorLen: header.VIAMaxDiscriminator,
		MaxRegisterBytes: uint64(l.a.sys.Phys.Size()), MaxRegisterRegions: maxRegions, MaxVI: p.MaxVIs,
		MaxDescriptorsPerQueue: p.MaxDescriptors, MaxSegmentsPerDesc: p.MaxSegments, MaxCQEntries: p.MaxCQEntries,
		MaxTransferSize: uint32(p.MaxTransfer), NativeMTU: nic.maxPayload(),
		ReliabilityLevelSupport: Unreliable | ReliableDelivery,
	}, Success
}

// VipCreatePtag creates a protection tag of this program on the NIC.
func (l *VIPL) VipCreatePtag(nic *Nic) (p Ptag, rc Return) {
	if nic == nil {
		return 0, InvalidParameter
	}
	l.call(l.a.sym.ptag, func() {
		l.a.ptags = append(l.a.ptags, l)
		p, rc = Ptag(len(l.a.ptags)), Success
	})
	return p, rc
}

// VipDestroyPtag destroys a protection tag no region or VI uses any more.
func (l *VIPL) VipDestroyPtag(nic *Nic, p Ptag) (rc Return) {
	if nic == nil || !l.a.ptagOf(l, p) {
		return InvalidPtag
	}
	l.call(l.a.sym.ptag, func() {
		for _, r := range l.a.regions {
			if r != nil && r.ptag == p {
				rc = ErrorResource
				return
			}
		}
		for _, vi := range l.a.vis {
			if vi != nil && vi.attrs.Ptag == p {
				rc = ErrorResource
				return
			}
		}
		l.a.ptags[p-1] = nil
		rc = Success
	})
	return rc
}

// VipRegisterMem registers n bytes at va: the pages are pinned, their
// translation recorded, and the returned handle stands for the region in
// descriptors.
func (l *VIPL) VipRegisterMem(nic *Nic, va memory.Addr, n uint64, attrs MemAttributes) (h MemHandle, rc Return) {
	if nic == nil {
		return 0, InvalidParameter
	}
	l.call(l.a.sym.register, func() { h, rc = l.a.registerMem(l, va, n, attrs) })
	return h, rc
}

// VipDeregisterMem releases a region registered at va.
func (l *VIPL) VipDeregisterMem(nic *Nic, va memory.Addr, h MemHandle) (rc Return) {
	if nic == nil {
		return InvalidParameter
	}
	l.call(l.a.sym.deregister, func() { rc = l.a.deregisterMem(l, va, h) })
	return rc
}

// VipCreateCQ creates a completion queue of entries entries.
func (l *VIPL) VipCreateCQ(nic *Nic, entries int) (cq *CQ, rc Return) {
	if nic == nil || entries <= 0 {
		return nil, InvalidParameter
	}
	if entries > l.a.p.MaxCQEntries {
		return nil, ErrorResource
	}
	l.call(l.a.sym.createCQ, func() {
		ring := l.a.k.Kmalloc(entries * cqEntrySize)
		if ring == 0 {
			rc = ErrorResource
			return
		}
		l.c.Write(ring, make([]byte, entries*cqEntrySize))
		cq, rc = &CQ{a: l.a, lib: l, nic: nic, ring: ring, entries: entries}, Success
	})
	return cq, rc
}

// VipCreateVi creates a VI with attrs, its queues bound to the completion
// queues given (nil: none).
func (l *VIPL) VipCreateVi(nic *Nic, attrs ViAttributes, sendCQ, recvCQ *CQ) (vi *VI, rc Return) {
	a := l.a
	switch {
	case nic == nil:
		return nil, InvalidParameter
	case sendCQ != nil && (sendCQ.lib != l || sendCQ.nic != nic), recvCQ != nil && (recvCQ.lib != l || recvCQ.nic != nic):
		return nil, InvalidParameter
	case attrs.ReliabilityLevel != Unreliable && attrs.ReliabilityLevel != ReliableDelivery:
		return nil, InvalidReliabilityLevel
	case attrs.EnableRdmaRead:
		return nil, InvalidRDMARead
	case attrs.EnableRdmaWrite:
		return nil, InvalidParameter
	case attrs.MaxTransferSize > uint32(a.p.MaxTransfer):
		return nil, InvalidMTU
	case !a.ptagOf(l, attrs.Ptag):
		return nil, InvalidPtag
	}
	if attrs.MaxTransferSize == 0 {
		attrs.MaxTransferSize = uint32(a.p.MaxTransfer)
	}
	l.call(a.sym.createVi, func() {
		if len(a.vis) >= a.p.MaxVIs {
			rc = ErrorResource
			return
		}
		vi = &VI{a: a, lib: l, nic: nic, num: uint16(len(a.vis) + 1), attrs: attrs, sendCQ: sendCQ, recvCQ: recvCQ}
		vi.entry = a.viTab + memory.Addr(64*(int(vi.num)-1))
		l.c.Write(vi.entry, make([]byte, 64))
		a.vis = append(a.vis, vi)
		rc = Success
	})
	return vi, rc
}

// VipDestroyVi destroys an idle VI whose queues are empty.
func (l *VIPL) VipDestroyVi(vi *VI) (rc Return) {
	if !l.owns(vi) {
		return InvalidParameter
	}
	if vi.state == StateConnected || vi.state == StateConnectPending || len(vi.sendPosted)+len(vi.recvPosted) > 0 {
		return InvalidState
	}
	l.call(l.a.sym.createVi, func() {
		l.a.vis[vi.num-1] = nil
		vi.lib = nil
		rc = Success
	})
	return rc
}

// VipQueryVi returns the VI's state and attributes.
func (l *VIPL) VipQueryVi(vi *VI) (State, ViAttributes, Return) {
	if !l.owns(vi) {
		return 0, ViAttributes{}, InvalidParameter
	}
	return vi.state, vi.attrs, Success
}

// postCommon is the VIPL's user-level part of posting desc: it clears the
// descriptor's Status and its link, then enters the agent; on success it
// links desc behind the tail of the queue's list.
func (l *VIPL) postCommon(posted *[]memory.Addr, desc memory.Addr, mh MemHandle, enter func() Return) Return {
	c := l.c
	if desc%DescAlign != 0 || !l.a.sys.Phys.InRange(desc, ControlSegSize) {
		return InvalidParameter
	}
	var z [12]byte
	c.Write(desc+offNext, z[:])
	c.Write(desc+offStatus, z[:4])
	rc := enter()
	if rc != Success {
		return rc
	}
	if n := len(*posted); n > 0 {
		var link [12]byte
		binary.LittleEndian.PutUint64(link[0:], uint64(desc))
		binary.LittleEndian.PutUint32(link[8:], uint32(mh))
		c.Write((*posted)[n-1]+offNext, link[:])
	}
	*posted = append(*posted, desc)
	return Success
}

// VipPostSend posts a send descriptor and rings the doorbell: the agent
// checks and translates it and hands the message's frames to the NIC.
func (l *VIPL) VipPostSend(vi *VI, desc memory.Addr, mh MemHandle) (rc Return) {
	c := l.c
	c.Enter(l.a.sym.vplPostSend)
	defer c.Exit(l.a.sym.vplPostSend)
	if !l.owns(vi) {
		return InvalidParameter
	}
	if len(vi.sendPosted) >= l.a.p.MaxDescriptors {
		return ErrorResource
	}
	return l.postCommon(&vi.sendPosted, desc, mh, func() Return {
		l.ftrap(l.a.sym.postSend, func() { rc = l.a.postSend(l, vi, desc, mh) })
		return rc
	})
}

// VipPostRecv posts a receive descriptor: the agent checks and
// translates it and queues it for the next message. Receives may be
// posted before the VI is connected.
func (l *VIPL) VipPostRecv(vi *VI, desc memory.Addr, mh MemHandle) (rc Return) {
	c := l.c
	c.Enter(l.a.sym.vplPostRecv)
	defer c.Exit(l.a.sym.vplPostRecv)
	if !l.owns(vi) {
		return InvalidParameter
	}
	if len(vi.recvPosted) >= l.a.p.MaxDescriptors {
		return ErrorResource
	}
	return l.postCommon(&vi.recvPosted, desc, mh, func() Return {
		l.ftrap(l.a.sym.postRecv, func() { rc = l.a.postRecv(l, vi, desc, mh) })
		return rc
	})
}

// status loads a descriptor's Status word.
func (l *VIPL) status(desc memory.Addr) uint32 {
	l.c.Read(desc+offStatus, l.word[:])
	return binary.LittleEndian.Uint32(l.word[:])
}

// reap takes the head of posted if it is complete.
func (l *VIPL) reap(posted *[]memory.Addr) (memory.Addr, Return) {
	if len(*posted) == 0 {
		return 0, NotDone
	}
	d := (*posted)[0]
	if l.status(d)&StatusDone == 0 {
		return 0, NotDone
	}
	*posted = (*posted)[1:]
	return d, Success
}

// wait reaps the head of posted, blocking in the agent on q until it is
// complete or the timeout (0: none) passes.
func (l *VIPL) wait(posted *[]memory.Addr, q *kernel.WaitQueue, timeout sim.Time) (memory.Addr, Return) {
	if d, rc := l.reap(posted); rc == Success {
		return d, rc
	}
	if len(*posted) == 0 {
		return 0, ErrorResource // nothing posted: nothing can complete
	}
	head := (*posted)[0]
	ok := false
	l.ftrap(l.a.sym.wait, func() {
		ok = l.a.sleep(l.t, q, timeout, func() bool { return l.status(head)&StatusDone != 0 })
	})
	if !ok {
		return 0, Timeout
	}
	return l.reap(posted)
}

// VipSendDone returns the send queue's head descriptor if it is complete,
// or VIP_NOT_DONE.
func (l *VIPL) VipSendDone(vi *VI) (memory.Addr, Return) {
	l.c.Enter(l.a.sym.vplSendDone)
	defer l.c.Exit(l.a.sym.vplSendDone)
	if !l.owns(vi) {
		return 0, InvalidParameter
	}
	return l.reap(&vi.sendPosted)
}

// VipSendWait waits for the send queue's head descriptor to complete.
func (l *VIPL) VipSendWait(vi *VI, timeout sim.Time) (memory.Addr, Return) {
	l.c.Enter(l.a.sym.vplSendWait)
	defer l.c.Exit(l.a.sym.vplSendWait)
	if !l.owns(vi) {
		return 0, InvalidParameter
	}
	return l.wait(&vi.sendPosted, &vi.sendWait, timeout)
}

// VipRecvDone returns the receive queue's head descriptor if it is
// complete, or VIP_NOT_DONE.
func (l *VIPL) VipRecvDone(vi *VI) (memory.Addr, Return) {
	l.c.Enter(l.a.sym.vplRecvDone)
	defer l.c.Exit(l.a.sym.vplRecvDone)
	if !l.owns(vi) {
		return 0, InvalidParameter
	}
	return l.reap(&vi.recvPosted)
}

// VipRecvWait waits for the receive queue's head descriptor to complete.
func (l *VIPL) VipRecvWait(vi *VI, timeout sim.Time) (memory.Addr, Return) {
	l.c.Enter(l.a.sym.vplRecvWait)
	defer l.c.Exit(l.a.sym.vplRecvWait)
	if !l.owns(vi) {
		return 0, InvalidParameter
	}
	return l.wait(&vi.recvPosted, &vi.recvWait, timeout)
}

// cqHead loads the CQ's head entry.
func (l *VIPL) cqHead(cq *CQ) (num uint32, flags uint32) {
	l.c.Read(cq.ring+memory.Addr(cq.head*cqEntrySize), l.cqe[:])
	return binary.LittleEndian.Uint32(l.cqe[0:]), binary.LittleEndian.Uint32(l.cqe[4:])
}

// cqTake consumes the head entry if it is valid.
func (l *VIPL) cqTake(cq *CQ) (*VI, bool, Return) {
	num, flags := l.cqHead(cq)
	if flags&cqValid == 0 {
		return nil, false, NotDone
	}
	var z [4]byte
	l.c.Write(cq.ring+memory.Addr(cq.head*cqEntrySize)+4, z[:])
	cq.head = (cq.head + 1) % cq.entries
	var vi *VI
	if num > 0 && int(num) <= len(l.a.vis) {
		vi = l.a.vis[num-1]
	}
	return vi, flags&cqRecv != 0, Success
}

// VipCQDone returns the VI and queue of the oldest completion, or
// VIP_NOT_DONE; the descriptor itself is then reaped with VipSendDone or
// VipRecvDone.
func (l *VIPL) VipCQDone(cq *CQ) (vi *VI, isRecv bool, rc Return) {
	l.c.Enter(l.a.sym.vplCQDone)
	defer l.c.Exit(l.a.sym.vplCQDone)
	if cq == nil || cq.lib != l {
		return nil, false, InvalidParameter
	}
	return l.cqTake(cq)
}

// VipCQWait waits for a completion on cq.
func (l *VIPL) VipCQWait(cq *CQ, timeout sim.Time) (vi *VI, isRecv bool, rc Return) {
	l.c.Enter(l.a.sym.vplCQWait)
	defer l.c.Exit(l.a.sym.vplCQWait)
	if cq == nil || cq.lib != l {
		return nil, false, InvalidParameter
	}
	if vi, isRecv, rc = l.cqTake(cq); rc == Success {
		return vi, isRecv, rc
	}
	ok := false
	l.ftrap(l.a.sym.wait, func() {
		ok = l.a.sleep(l.t, &cq.wait, timeout, func() bool { _, f := l.cqHead(cq); return f&cqValid != 0 })
	})
	if !ok {
		return nil, false, Timeout
	}
	return l.cqTake(cq)
}

// VipConnectWait waits for a connection request to the discriminator of
// local (its host part must be the NIC's address).
func (l *VIPL) VipConnectWait(nic *Nic, local NetAddress, timeout sim.Time) (conn *Conn, remote NetAddress, rattrs ViAttributes, rc Return) {
	if nic == nil || len(local.Discriminator) > header.VIAMaxDiscriminator || local.Host != nic.d.MAC() {
		return nil, NetAddress{}, ViAttributes{}, InvalidParameter
	}
	l.call(l.a.sym.connect, func() { conn, rc = l.a.connectWait(l, nic, local.Discriminator, timeout) })
	if rc != Success {
		return nil, NetAddress{}, ViAttributes{}, rc
	}
	return conn, NetAddress{Host: conn.mac, Discriminator: bytes.Clone(conn.disc)}, conn.attrs, Success
}

// VipConnectAccept connects vi to the requester of conn.
func (l *VIPL) VipConnectAccept(conn *Conn, vi *VI) (rc Return) {
	if conn == nil || conn.lib != l || !l.owns(vi) || vi.nic != conn.nic {
		return InvalidParameter
	}
	l.call(l.a.sym.connect, func() { rc = l.a.connectAccept(conn, vi) })
	return rc
}

// VipConnectReject refuses the request of conn.
func (l *VIPL) VipConnectReject(conn *Conn) (rc Return) {
	if conn == nil || conn.lib != l || conn.done {
		return InvalidParameter
	}
	l.call(l.a.sym.connect, func() { rc = l.a.connectReject(conn) })
	return rc
}

// VipConnectRequest asks the VI waiting on remote's discriminator at
// remote's host to connect to vi, waiting up to timeout (0: for ever) for
// the answer; it returns the remote VI's attributes.
func (l *VIPL) VipConnectRequest(vi *VI, local, remote NetAddress, timeout sim.Time) (rattrs ViAttributes, rc Return) {
	if !l.owns(vi) || len(remote.Discriminator) > header.VIAMaxDiscriminator || local.Host != vi.nic.d.MAC() {
		return ViAttributes{}, InvalidParameter
	}
	if vi.state != StateIdle {
		return ViAttributes{}, InvalidState
	}
	l.call(l.a.sym.connect, func() { rattrs, rc = l.a.connectRequest(l, vi, remote, timeout) })
	return rattrs, rc
}

// VipDisconnect closes vi's connection: the peer is told, and every
// descriptor still on vi's queues completes flushed.
func (l *VIPL) VipDisconnect(vi *VI) (rc Return) {
	if !l.owns(vi) {
		return InvalidParameter
	}
	l.call(l.a.sym.disconnect, func() { rc = l.a.disconnect(vi) })
	return rc
}
