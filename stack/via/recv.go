package via

import (
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/netdev"
)

// nicOf returns the NIC of device d.
func (a *Agent) nicOf(d netdev.Device) *Nic {
	for _, n := range a.nics {
		if n.d == d {
			return n
		}
	}
	return nil
}

// rcv is the device layer's handler of VIA frames, in the receive
// softirq, for a driver without a direct receive (the NE2000's): the
// frame is the agent's, freed once used.
func (a *Agent) rcv(b netdev.Buf) {
	a.rcvDirect(b)
	b.Free(a.k)
}

// rcvDirect takes a VIA frame where the driver received it (called from
// its receive interrupt by a driver with a direct receive, or by rcv): its
// payload is copied into the posted buffer before it returns and the
// buffer stays the caller's. It never fails: a frame it cannot use is
// counted.
func (a *Agent) rcvDirect(b netdev.Buf) {
	c := a.c
	c.Enter(a.sym.rcv)
	defer c.Exit(a.sym.rcv)
	const eh = header.EthernetHeaderLen
	if b.Len < eh+header.VIAHeaderLen {
		a.stats.DropShort++
		return
	}
	body := b.Len - eh
	if cap(a.frame) < body {
		a.frame = make([]byte, body)
	}
	f := a.frame[:body]
	// The header is loaded; the payload is charged where it is used (the
	// copy into the receive buffers, a connection frame's fields).
	c.Read(b.Addr+eh, f[:header.VIAHeaderLen])
	_ = a.sys.Phys.Read(b.Addr+eh+header.VIAHeaderLen, f[header.VIAHeaderLen:])
	v := header.VIA(f)
	if !v.IsValid() {
		a.stats.DropBadHeader++
		return
	}
	var src [6]byte
	c.Read(b.Addr+6, src[:])
	n := a.nicOf(b.Dev)
	if n == nil {
		a.stats.DropUnknownVI++
		return
	}
	a.stats.FramesReceived++
	if v.Type() != header.VIATypeData {
		a.connFrame(n, src, v, b.Addr+eh+header.VIAHeaderLen)
		return
	}
	vi := a.vi(v.DstVI())
	switch {
	case vi == nil || vi.nic != n:
		a.stats.DropUnknownVI++
	case vi.state != StateConnected:
		a.stats.DropNotConnected++
	case src != vi.peerMAC || v.SrcVI() != vi.peerVI:
		a.stats.DropWrongPeer++
	default:
		a.data(vi, v, b.Addr+eh+header.VIAHeaderLen)
	}
}

// data places a data frame's payload (at payload in the received buffer)
// in the receive descriptor of its message.
func (a *Agent) data(vi *VI, v header.VIA, payload memory.Addr) {
	c := a.c
	c.Enter(a.sym.defrag)
	defer c.Exit(a.sym.defrag)
	seq, off, msgLen, pl := v.Seq(), v.Offset(), v.MsgLen(), uint32(v.PayloadLen())
	reliable := vi.attrs.ReliabilityLevel != Unreliable
	asm := &vi.asm
	if asm.active && seq == asm.seq && off+pl <= asm.got && pl > 0 {
		a.stats.DropStale++ // a duplicate of a fragment already placed
		return
	}
	if asm.active && (seq != asm.seq || off != asm.got) {
		// The message in progress lost a fragment.
		if !asm.discard {
			a.stats.PartialMessages++
			a.recvComplete(vi, asm.d, asm.got, StatusTransportError)
		}
		asm.active = false
		if reliable {
			a.breakConn(vi, ErrConnLost)
			return
		}
	}
	if !asm.active {
		switch d := int32(seq - vi.rxSeq); {
		case d < 0:
			a.stats.DropStale++
			return
		case d > 0:
			a.stats.MessagesLost += uint64(d)
			if reliable {
				a.breakConn(vi, ErrConnLost)
				return
			}
		}
		vi.rxSeq = seq + 1
		*asm = assembly{active: true, seq: seq, msgLen: msgLen}
		switch {
		case off != 0:
			// Its first fragment never came.
			a.stats.DropOrphanFragment++
			if reliable {
				asm.active = false
				a.breakConn(vi, ErrConnLost)
				return
			}
			asm.discard = true
			asm.got = off
		case len(vi.recvQ) == 0:
			if reliable {
				asm.active = false
				a.breakConn(vi, ErrRecvQEmpty)
				return
			}
			a.stats.DropRecvQEmpty++
			asm.discard = true
		case msgLen > vi.recvQ[0].length:
			a.stats.LengthErrors++
			a.recvComplete(vi, vi.recvQ[0], 0, StatusLengthError)
			if reliable {
				asm.active = false
				a.breakConn(vi, ErrConnLost)
				return
			}
			asm.discard = true
		default:
			asm.d = vi.recvQ[0]
		}
	}
	if asm.discard {
		a.stats.DropDiscarded++
	} else {
		a.place(asm.d, off, payload, pl)
		a.stats.BytesRecv += uint64(pl)
	}
	asm.got += pl
	if asm.got < asm.msgLen {
		return
	}
	asm.active = false
	if !asm.discard {
		var bits uint32
		if v.Flags()&header.VIAFlagImmediate != 0 {
			bits = StatusImmediate
			asm.d.imm = v.Immediate()
		}
		a.stats.MessagesReceived++
		a.recvComplete(vi, asm.d, asm.msgLen, bits)
	}
}

// place copies n payload bytes at src into the descriptor's buffers at
// message offset off.
func (a *Agent) place(kd *kdesc, off uint32, src memory.Addr, n uint32) {
	c := a.c
	at := uint32(0)
	for _, r := range kd.runs {
		if n == 0 {
			return
		}
		if at+r.n <= off {
			at += r.n
			continue
		}
		c.Exec(a.cost.recvSeg)
		skip := off - at
		k := min(r.n-skip, n)
		a.k.Bcopy(r.addr+memory.Addr(skip), src, int(k))
		src += memory.Addr(k)
		off += k
		n -= k
		at += r.n
	}
}

// recvComplete completes the receive queue's head descriptor kd with
// length bytes and DONE, the receive op and bits.
func (a *Agent) recvComplete(vi *VI, kd *kdesc, length, bits uint32) {
	c := a.c
	c.Enter(a.sym.recvDone)
	defer c.Exit(a.sym.recvDone)
	if len(vi.recvQ) == 0 || vi.recvQ[0] != kd {
		panic("via: completing a receive descriptor that is not the queue's head")
	}
	vi.recvQ = vi.recvQ[1:]
	imm := uint32(0)
	if bits&StatusImmediate != 0 {
		imm = kd.imm
	}
	a.writeStatus(kd.addr, length, imm, StatusDone|StatusOpReceive|bits)
	a.complete(vi, true)
	vi.freeKdesc(kd)
}
