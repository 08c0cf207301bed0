package via

import (
	"bytes"

	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/netdev"
)

// The connection manager (client/server model, docs/reference/via.md sec. 1): a server
// waits on a discriminator (VipConnectWait) and accepts or rejects what
// comes; a client sends requests (VipConnectRequest), again every
// connect_retry since frames may be lost, until an answer or its timeout.
//
//	client VI                          server
//	IDLE ── ConnRequest(disc) ───────► listener on disc (or queued)
//	PENDING ◄── ConnAccept(server VI) ─ VipConnectAccept: VI CONNECTED
//	CONNECTED
//
// VipDisconnect sends Disconnect: the VI returns to IDLE, the peer's goes
// to ERROR (its connection is lost); a broken reliable connection sends
// Error. Both sides complete what is left on their queues, flushed.

// maxPendingRequests bounds the requests a NIC keeps for a server that
// has not called VipConnectWait yet.
const maxPendingRequests = 16

// sendCtl sends a connection-management frame (unreliably: a full device
// queue drops it, and the client's retries cover that).
func (a *Agent) sendCtl(n *Nic, dst [6]byte, typ uint8, dstVI, srcVI uint16, imm uint32, payload []byte) {
	hl := header.EthernetHeaderLen + header.VIAHeaderLen
	b, ok := netdev.Alloc(a.k, 0, hl+len(payload))
	if !ok {
		return
	}
	var h [header.EthernetHeaderLen + header.VIAHeaderLen]byte
	header.Ethernet(h[:]).Encode(&header.EthernetFields{Dst: dst, Src: n.d.MAC(), Type: a.p.EtherType})
	header.VIA(h[header.EthernetHeaderLen:]).Encode(&header.VIAFields{Type: typ, DstVI: dstVI, SrcVI: srcVI,
		Immediate: imm, PayloadLen: uint16(len(payload))})
	a.c.Write(b.Addr, h[:])
	if len(payload) > 0 {
		a.c.Write(b.Addr+memory.Addr(hl), payload)
	}
	if !a.nd.Transmit(n.dev, b) {
		b.Free(a.k)
	}
}

// connectPayload encodes a VI's attributes (and a discriminator).
func connectPayload(attrs ViAttributes, disc []byte) []byte {
	p := make([]byte, header.VIAConnectLen+len(disc))
	header.VIAConnect(p).Encode(&header.VIAConnectFields{Reliability: uint16(attrs.ReliabilityLevel),
		MaxTransfer: attrs.MaxTransferSize, Discriminator: disc})
	return p
}

// connFrame handles a connection-management frame from src whose payload
// lies at payload in the received buffer.
func (a *Agent) connFrame(n *Nic, src [6]byte, v header.VIA, payload memory.Addr) {
	c := a.c
	c.Enter(a.sym.connRcv)
	defer c.Exit(a.sym.connRcv)
	var cp header.VIAConnect
	if t := v.Type(); t == header.VIATypeConnRequest || t == header.VIATypeConnAccept {
		cp = header.VIAConnect(v.Payload())
		if !cp.IsValid() {
			a.stats.DropBadHeader++
			return
		}
		c.ReferenceRange(payload, uint64(cp.Len()), memory.Read)
	}
	switch v.Type() {
	case header.VIATypeConnRequest:
		a.stats.ConnRequests++
		a.request(n, src, v.SrcVI(), cp)
	case header.VIATypeConnAccept, header.VIATypeConnReject:
		vi := a.vi(v.DstVI())
		if vi == nil || vi.nic != n || vi.state != StateConnectPending || vi.connAnswer != 0 {
			a.stats.DropStale++
			return
		}
		vi.connAnswer = v.Type()
		if v.Type() == header.VIATypeConnAccept {
			a.stats.ConnAccepts++
			vi.peerMAC, vi.peerVI = src, v.SrcVI()
			vi.connAttrs = ViAttributes{ReliabilityLevel: Reliability(cp.Reliability()), MaxTransferSize: cp.MaxTransfer()}
		} else {
			a.stats.ConnRejects++
		}
		a.k.Wakeup(&vi.connWait)
	case header.VIATypeDisconnect, header.VIATypeError:
		vi := a.vi(v.DstVI())
		if vi == nil || vi.nic != n || vi.state != StateConnected || vi.peerMAC != src || vi.peerVI != v.SrcVI() {
			a.stats.DropStale++
			return
		}
		code := ErrConnLost
		if v.Type() == header.VIATypeDisconnect {
			a.stats.Disconnects++
		} else {
			a.stats.ConnBroken++
			if v.Immediate() <= uint32(ErrCatastrophic) {
				code = ErrorCode(v.Immediate())
			}
		}
		vi.state = StateError
		a.flush(vi)
		n.asyncError(vi, ResourceVI, code)
	}
}

// request files a connection request: for a waiting server, queued, or
// answered again when it repeats one already accepted.
func (a *Agent) request(n *Nic, src [6]byte, srcVI uint16, cp header.VIAConnect) {
	for _, vi := range a.vis {
		if vi != nil && vi.nic == n && vi.state == StateConnected && vi.peerMAC == src && vi.peerVI == srcVI {
			a.sendCtl(n, src, header.VIATypeConnAccept, srcVI, vi.num, 0, connectPayload(vi.attrs, nil))
			return
		}
	}
	for _, r := range n.requests {
		if r.mac == src && r.vi == srcVI && !r.done {
			return // a repeat of one waiting for a server
		}
	}
	for _, l := range n.listeners {
		if l.got != nil && l.got.mac == src && l.got.vi == srcVI && !l.got.done {
			return // a repeat of one a server is deciding on
		}
	}
	conn := &Conn{nic: n, mac: src, vi: srcVI, disc: bytes.Clone(cp.Discriminator()),
		attrs: ViAttributes{ReliabilityLevel: Reliability(cp.Reliability()), MaxTransferSize: cp.MaxTransfer()}}
	for _, l := range n.listeners {
		if l.got == nil && bytes.Equal(l.disc, conn.disc) {
			l.got = conn
			a.k.Wakeup(&l.q)
			return
		}
	}
	if len(n.requests) >= maxPendingRequests {
		a.sendCtl(n, src, header.VIATypeConnReject, srcVI, 0, 0, nil)
		return
	}
	n.requests = append(n.requests, conn)
}

// connectWait is the agent's VipConnectWait.
func (a *Agent) connectWait(l *VIPL, n *Nic, disc []byte, timeout sim.Time) (*Conn, Return) {
	for i, r := range n.requests {
		if bytes.Equal(r.disc, disc) {
			n.requests = append(n.requests[:i], n.requests[i+1:]...)
			r.lib = l
			return r, Success
		}
	}
	lst := &listener{disc: bytes.Clone(disc)}
	n.listeners = append(n.listeners, lst)
	ok := a.sleep(l.t, &lst.q, timeout, func() bool { return lst.got != nil })
	for i, x := range n.listeners {
		if x == lst {
			n.listeners = append(n.listeners[:i], n.listeners[i+1:]...)
			break
		}
	}
	if !ok {
		return nil, Timeout
	}
	lst.got.lib = l
	return lst.got, Success
}

// connectAccept is the agent's VipConnectAccept.
func (a *Agent) connectAccept(conn *Conn, vi *VI) Return {
	switch {
	case conn.done:
		return InvalidParameter
	case vi.state != StateIdle:
		return InvalidState
	case vi.attrs.ReliabilityLevel != conn.attrs.ReliabilityLevel:
		return InvalidReliabilityLevel
	}
	conn.done, conn.accepted = true, vi
	vi.peerMAC, vi.peerVI = conn.mac, conn.vi
	vi.txSeq, vi.rxSeq, vi.asm = 0, 0, assembly{}
	vi.state = StateConnected
	a.sendCtl(vi.nic, conn.mac, header.VIATypeConnAccept, conn.vi, vi.num, 0, connectPayload(vi.attrs, nil))
	return Success
}

// connectReject is the agent's VipConnectReject.
func (a *Agent) connectReject(conn *Conn) Return {
	conn.done = true
	a.sendCtl(conn.nic, conn.mac, header.VIATypeConnReject, conn.vi, 0, 0, nil)
	return Success
}

// connectRequest is the agent's VipConnectRequest.
func (a *Agent) connectRequest(l *VIPL, vi *VI, remote NetAddress, timeout sim.Time) (ViAttributes, Return) {
	c := a.c
	vi.state = StateConnectPending
	vi.connAnswer = 0
	payload := connectPayload(vi.attrs, remote.Discriminator)
	deadline := c.LocalTime() + timeout
	for vi.connAnswer == 0 {
		a.sendCtl(vi.nic, remote.Host, header.VIATypeConnRequest, 0, vi.num, 0, payload)
		wait := a.p.ConnectRetry
		if timeout != 0 {
			left := deadline - c.LocalTime()
			if left <= 0 {
				break
			}
			wait = min(wait, left)
		}
		a.sleep(l.t, &vi.connWait, wait, func() bool { return vi.connAnswer != 0 })
	}
	switch vi.connAnswer {
	case header.VIATypeConnAccept:
		vi.txSeq, vi.rxSeq, vi.asm = 0, 0, assembly{}
		vi.state = StateConnected
		return vi.connAttrs, Success
	case header.VIATypeConnReject:
		vi.state = StateIdle
		return ViAttributes{}, Reject
	}
	vi.state = StateIdle
	return ViAttributes{}, Timeout
}

// disconnect is the agent's VipDisconnect.
func (a *Agent) disconnect(vi *VI) Return {
	if vi.state == StateConnected {
		a.sendCtl(vi.nic, vi.peerMAC, header.VIATypeDisconnect, vi.peerVI, vi.num, 0, nil)
	}
	vi.state = StateIdle
	a.flush(vi)
	return Success
}

// breakConn breaks a reliable connection: the peer is told, the VI goes
// to the error state and its queues are flushed.
func (a *Agent) breakConn(vi *VI, code ErrorCode) {
	a.stats.ConnBroken++
	a.sendCtl(vi.nic, vi.peerMAC, header.VIATypeError, vi.peerVI, vi.num, uint32(code), nil)
	vi.state = StateError
	a.flush(vi)
	vi.nic.asyncError(vi, ResourceVI, code)
}

// flush completes every descriptor on vi's queues with the flushed
// status: posted receives at once, sends when the NIC has read what it
// was given of them.
func (a *Agent) flush(vi *VI) {
	c := a.c
	vi.asm = assembly{}
	for len(vi.recvQ) > 0 {
		c.Enter(a.sym.flush)
		kd := vi.recvQ[0]
		vi.recvQ = vi.recvQ[1:]
		a.writeStatus(kd.addr, 0, 0, StatusDone|StatusFlushed|StatusOpReceive)
		a.complete(vi, true)
		vi.freeKdesc(kd)
		c.Exit(a.sym.flush)
	}
	for _, kd := range vi.sendQ {
		kd.err |= StatusFlushed
	}
}
