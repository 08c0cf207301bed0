package inet

import (
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// tcpSeg is a received segment's header, read out of its buffer.
type tcpSeg struct {
	seq, ack uint32
	flags    header.TCPFlags
	wnd      int
	sport    uint16
	dport    uint16
	data     memory.Addr // first data byte
	n        int         // data bytes
	mss      int         // MSS option, 0 when absent
}

func (g *tcpSeg) has(f header.TCPFlags) bool { return g.flags&f != 0 }

// seqLen is the sequence space the segment takes: data, SYN and FIN.
func (g *tcpSeg) seqLen() uint32 {
	n := uint32(g.n)
	if g.has(header.TCPFlagSYN) {
		n++
	}
	if g.has(header.TCPFlagFIN) {
		n++
	}
	return n
}

// tcpRcv is the TCP input path (tcp_v4_rcv; b's data at the TCP header):
// header checks, checksum, lookup; the segment is processed now, or
// queued on the backlog of a socket a system call owns.
func (s *Stack) tcpRcv(b netdev.Buf, info ipHeaderInfo) {
	c := s.c
	c.Enter(s.tcp.sym.rcv)
	defer c.Exit(s.tcp.sym.rcv)
	s.stats.TCPInSegs++
	if b.Len < header.TCPMinimumSize || info.dst != s.addr {
		s.stats.TCPInErrs++
		b.Free(s.k)
		return
	}
	sum := s.k.CsumPartial(b.Addr, b.Len, uint32(header.PseudoHeaderChecksum(header.IPv4ProtocolTCP, info.src, info.dst, uint16(b.Len))))
	if kernel.Fold(sum) != 0xFFFF {
		s.stats.TCPInBadChecksum++
		s.stats.TCPInErrs++
		b.Free(s.k)
		return
	}
	var h [header.TCPMinimumSize]byte
	s.read(b.Addr, h[:])
	v := header.TCP(h[:])
	sport, dport := v.SrcPort(), v.DstPort()
	tp := s.tcp.conns[connKey{dport, info.src, sport}]
	if tp == nil {
		if so := s.ports[dport]; so != nil && so.proto == protoTCP && so.tcb != nil && so.tcb.state == tcpListen {
			tp = so.tcb
		}
	}
	if tp == nil {
		s.stats.TCPNoPorts++
		g, ok := s.tcpParse(b)
		if ok {
			s.tcpRespondReset(&g, info.src)
		} else {
			s.stats.TCPInErrs++
		}
		b.Free(s.k)
		return
	}
	if tp.owned {
		s.stats.TCPBacklogged++
		tp.pending = append(tp.pending, backlogSeg{buf: b, info: info})
		if s.gauges.Listened() {
			tp.showBacklog()
		}
		return
	}
	s.tcpProcess(tp, b, info)
}

// tcpParse reads the header and options of the segment in b.
func (s *Stack) tcpParse(b netdev.Buf) (tcpSeg, bool) {
	var h [header.TCPMaximumHeaderSize]byte
	s.read(b.Addr, h[:header.TCPMinimumSize])
	hl := header.TCP(h[:]).DataOffset()
	if hl < header.TCPMinimumSize || hl > b.Len {
		return tcpSeg{}, false
	}
	if hl > header.TCPMinimumSize {
		s.read(b.Addr+header.TCPMinimumSize, h[header.TCPMinimumSize:hl])
	}
	v := header.TCP(h[:hl])
	g := tcpSeg{seq: v.SeqNum(), ack: v.AckNum(), flags: v.Flags(), wnd: int(v.Window()),
		sport: v.SrcPort(), dport: v.DstPort(), data: b.Addr + memory.Addr(hl), n: b.Len - hl}
	if o, ok := header.ParseTCPOptions(v.Options()); ok && o.HasMSS {
		g.mss = int(o.MSS)
	}
	return g, true
}

// tcpRespondReset answers an unwanted segment with a RST (RFC 793 section
// 3.4, "Reset Generation"); a RST is never answered.
func (s *Stack) tcpRespondReset(g *tcpSeg, src Addr) {
	if g.has(header.TCPFlagRST) {
		return
	}
	if g.has(header.TCPFlagACK) {
		s.tcpSendReset(nil, src, g.dport, g.sport, g.ack, 0, false)
	} else {
		s.tcpSendReset(nil, src, g.dport, g.sport, 0, g.seq+g.seqLen(), true)
	}
}

// tcpProcess runs one segment through tp's state machine (RFC 793
// section 3.9, "SEGMENT ARRIVES"), then sends what it made due. It owns
// and frees b.
func (s *Stack) tcpProcess(tp *tcb, b netdev.Buf, info ipHeaderInfo) {
	defer b.Free(s.k)
	g, ok := s.tcpParse(b)
	if !ok {
		s.stats.TCPInErrs++
		return
	}
	switch tp.state {
	case tcpClosed:
		s.tcpRespondReset(&g, info.src)
		return
	case tcpListen:
		s.tcpListenInput(tp, &g, info)
		return
	case tcpSynSent:
		s.tcpSynSentInput(tp, &g)
		return
	}
	s.tcpSyncInput(tp, &g)
	if tp.state != tcpClosed {
		s.tcpOutput(nil, tp)
	}
}

// tcpListenInput handles a segment for a listener: a SYN makes a new
// connection in SYN_RCVD (tcp_v4_conn_request).
func (s *Stack) tcpListenInput(lt *tcb, g *tcpSeg, info ipHeaderInfo) {
	switch {
	case g.has(header.TCPFlagRST):
		return
	case g.has(header.TCPFlagACK):
		s.tcpRespondReset(g, info.src)
		return
	case !g.has(header.TCPFlagSYN):
		return
	}
	c := s.c
	c.Enter(s.tcp.sym.connReq)
	defer c.Exit(s.tcp.sym.connReq)
	if lt.synQ >= lt.backlog || lt.so == nil {
		s.stats.TCPListenDrops++
		return
	}
	tp := s.newTCB(nil)
	tp.lport, tp.raddr, tp.rport = lt.lport, info.src, g.sport
	tp.opt = lt.so.opt
	if !tp.allocBuffers(lt.so.opt.sndBuf, lt.so.opt.rcvBuf) {
		s.stats.NoBuffers++
		return
	}
	tp.parent = lt
	lt.synQ++
	tp.irs = g.seq
	tp.rcvNxt = g.seq + 1
	tp.rcvAdv = tp.rcvNxt
	tp.iss = s.newISS()
	tp.sndUna, tp.sndNxt, tp.sndMax = tp.iss, tp.iss, tp.iss
	tp.sndBase = tp.iss + 1
	tp.setMSS(g.mss)
	tp.sndWnd, tp.maxSndWnd = g.wnd, g.wnd
	tp.sndWl1, tp.sndWl2 = g.seq, tp.iss
	tp.state = tcpSynRcvd
	s.tcp.conns[tp.key()] = tp
	s.stats.TCPPassiveOpens++
	s.tcpOutput(nil, tp)
}

// setMSS takes the peer's MSS option (536 without it, RFC 1122 section
// 4.2.2.6) and starts the congestion window at one segment.
func (tp *tcb) setMSS(peer int) {
	if peer == 0 {
		peer = header.TCPDefaultMSS
	}
	tp.mss = max(min(peer, tp.rmss, tp.scap), 64)
	tp.cwnd = tp.mss
	tp.ssthresh = tcpMaxWindow
	tp.quickAcks = min(tp.rcap/(2*tp.rmss), 16)
}

// tcpSynSentInput handles the answer to our SYN.
func (s *Stack) tcpSynSentInput(tp *tcb, g *tcpSeg) {
	ackOK := g.has(header.TCPFlagACK) && seqGT(g.ack, tp.iss) && seqLEQ(g.ack, tp.sndMax)
	if g.has(header.TCPFlagACK) && !ackOK {
		if !g.has(header.TCPFlagRST) {
			s.tcpSendReset(nil, tp.raddr, tp.lport, tp.rport, g.ack, 0, false)
		}
		return
	}
	if g.has(header.TCPFlagRST) {
		if ackOK {
			s.stats.TCPAttemptFails++
			s.tcpDrop(tp, ECONNREFUSED)
		}
		return
	}
	if !g.has(header.TCPFlagSYN) {
		return
	}
	if !ackOK {
		// Simultaneous open: not supported; refuse it.
		s.tcpSendReset(nil, tp.raddr, tp.lport, tp.rport, 0, g.seq+g.seqLen(), true)
		return
	}
	tp.irs = g.seq
	tp.rcvNxt = g.seq + 1
	tp.rcvAdv = tp.rcvNxt
	tp.setMSS(g.mss)
	tp.sndUna = g.ack
	if seqLT(tp.sndNxt, tp.sndUna) {
		tp.sndNxt = tp.sndUna
	}
	tp.sndWnd, tp.maxSndWnd = g.wnd, g.wnd
	tp.sndWl1, tp.sndWl2 = g.seq, g.ack
	s.k.DelTimer(&tp.rexmt)
	if tp.timing {
		tp.rttSample(s.c.LocalTime() - tp.rtStart)
	}
	tp.rxtShift = 0
	tp.state = tcpEstablished
	tp.startKeepAlive()
	tp.ackNow = true
	tp.wake()
	// Data that came with the SYN is dropped (no T/TCP); the peer
	// retransmits it.
	s.tcpOutput(nil, tp)
}

// rttSample folds a measurement into the estimator (Jacobson/Karels,
// RFC 6298 section 2) and recomputes the timeout: RTO = SRTT +
// max(tcp_min_rto, 4 RTTVAR), RFC 6298 2.3's SRTT + max(G, K*RTTVAR) with
// the lower bound in G's place, as Linux does it (tcp_rtt_estimator keeps
// the variance term at least TCP_RTO_MIN, so the timeout is at least the
// round trip plus 200 ms). A bound on the sum instead (max(SRTT + 4
// RTTVAR, 200 ms)) lets a timeout of 200 ms race the peer's 200 ms
// delayed-ACK timer on a lossless path: a spurious retransmission.
func (tp *tcb) rttSample(m sim.Time) {
	tp.timing = false
	if m <= 0 {
		m = 1
	}
	if tp.srtt == 0 {
		tp.srtt, tp.rttvar = m, m/2
	} else {
		e := m - tp.srtt
		tp.srtt += e / 8
		if e < 0 {
			e = -e
		}
		tp.rttvar += (e - tp.rttvar) / 4
	}
	tp.rto = min(tp.srtt+max(4*tp.rttvar, tp.s.p.TCPMinRTO), tcpMaxRTO)
}

// tcpSyncInput handles a segment for a connection past SYN_SENT (RFC 793
// section 3.9 from "first check sequence number"; 4.4BSD tcp_input).
func (s *Stack) tcpSyncInput(tp *tcb, g *tcpSeg) {
	tp.idleSince, tp.keepProbes = s.k.Jiffies(), 0
	// Trim what was already received.
	if g.has(header.TCPFlagSYN) && seqLT(g.seq, tp.rcvNxt) {
		g.flags &^= header.TCPFlagSYN
		g.seq++
	}
	if todrop := int(int32(tp.rcvNxt - g.seq)); todrop > 0 {
		if todrop > g.n || todrop == g.n && !g.has(header.TCPFlagFIN) {
			// A duplicate: acknowledge it, keep only the ACK field. A
			// zero-length one is no retransmission but a stale or
			// forged ACK: answering each would feed an ACK war.
			s.stats.TCPDupData++
			if g.n == 0 && !g.has(header.TCPFlagFIN) {
				tp.oowAck()
			} else {
				tp.ackNow = true
			}
			g.flags &^= header.TCPFlagFIN
			todrop = g.n
		}
		if todrop > 0 {
			g.seq += uint32(todrop)
			g.data += memory.Addr(todrop)
			g.n -= todrop
		}
	}
	// Trim what is beyond the room we have.
	room := tp.rcap - tp.rlen
	if tp.state >= tcpCloseWait && tp.state != tcpFinWait1 && tp.state != tcpFinWait2 {
		room = 0 // the peer has closed: no more data
	}
	if g.n == 0 && seqGT(g.seq, tp.rcvNxt+uint32(room)) {
		// A zero-length segment beyond the window is unacceptable (RFC
		// 793 section 3.3): answer with an ACK, unless it is a RST.
		if !g.has(header.TCPFlagRST) {
			tp.oowAck()
		}
		return
	}
	if todrop := int(int32(g.seq + uint32(g.n) - (tp.rcvNxt + uint32(room)))); todrop > 0 {
		if todrop >= g.n && g.n > 0 {
			if !(room == 0 && g.seq == tp.rcvNxt) {
				s.stats.TCPDupData++
			}
			tp.ackNow = true // a window probe, or out of window
			if !g.has(header.TCPFlagRST) {
				s.tcpAckOnly(tp, g)
				return
			}
		} else if todrop > 0 {
			g.n -= min(todrop, g.n)
			g.flags &^= header.TCPFlagFIN | header.TCPFlagPSH
		}
	}
	if g.has(header.TCPFlagRST) {
		// In window (RFC 793; RFC 5961's stricter check not applied).
		if seqGEQ(g.seq, tp.rcvNxt) && seqLEQ(g.seq, tp.rcvNxt+uint32(max(room, 1))) {
			switch tp.state {
			case tcpSynRcvd:
				s.tcpDrop(tp, ECONNREFUSED)
			case tcpEstablished, tcpFinWait1, tcpFinWait2, tcpCloseWait:
				s.stats.TCPEstabResets++
				s.tcpDrop(tp, ECONNRESET)
			default:
				s.tcpDrop(tp, 0)
			}
		}
		return
	}
	if g.has(header.TCPFlagSYN) {
		// A SYN in the window is an error: reset (RFC 793).
		s.stats.TCPEstabResets++
		s.tcpAbort(tp, ECONNRESET)
		return
	}
	if !g.has(header.TCPFlagACK) {
		return
	}
	if !s.tcpAck(tp, g) || tp.state == tcpClosed {
		return
	}
	s.tcpData(tp, g)
}

// tcpAckOnly processes just the ACK field of a segment whose data was
// outside the window, then sends the owed ACK.
func (s *Stack) tcpAckOnly(tp *tcb, g *tcpSeg) {
	g.n = 0
	g.flags &^= header.TCPFlagFIN
	if g.has(header.TCPFlagACK) && !g.has(header.TCPFlagSYN) {
		s.tcpAck(tp, g)
	}
}

// tcpAck processes the ACK field and the window (tcp_ack); it reports
// whether processing goes on to the data.
func (s *Stack) tcpAck(tp *tcb, g *tcpSeg) bool {
	c := s.c
	c.Enter(s.tcp.sym.ack)
	defer c.Exit(s.tcp.sym.ack)
	k := s.k
	if tp.state == tcpSynRcvd {
		if seqLEQ(g.ack, tp.sndUna) || seqGT(g.ack, tp.sndMax) {
			s.tcpSendReset(nil, tp.raddr, tp.lport, tp.rport, g.ack, 0, false)
			return false
		}
		if lt := tp.parent; lt != nil && lt.state != tcpListen {
			// The listener closed during the handshake.
			s.tcpAbort(tp, 0)
			return false
		}
		tp.state = tcpEstablished
		tp.startKeepAlive()
		tp.sndUna = tp.iss // the SYN is acknowledged below
		if lt := tp.parent; lt != nil {
			lt.acceptQ = append(lt.acceptQ, tp)
			lt.wake()
		}
	}
	if seqGT(g.ack, tp.sndMax) {
		tp.oowAck()
		return false
	}
	if seqLEQ(g.ack, tp.sndUna) {
		if g.n == 0 && g.wnd == tp.sndWnd && g.ack == tp.sndUna && tp.rexmt.Pending() && tp.sndUna != tp.sndMax {
			tp.dupAcks++
			switch {
			case tp.dupAcks == 3:
				// Fast retransmit, then fast recovery (RFC 5681 3.2).
				s.stats.TCPFastRetrans++
				onxt := tp.sndNxt
				tp.ssthresh = max(min(tp.sndWnd, tp.cwnd)/2, 2*tp.mss)
				k.DelTimer(&tp.rexmt)
				tp.timing = false
				tp.sndNxt = tp.sndUna
				tp.cwnd = tp.mss
				s.tcpOutput(nil, tp)
				tp.cwnd = tp.ssthresh + 3*tp.mss
				if seqGT(onxt, tp.sndNxt) {
					tp.sndNxt = onxt
				}
			case tp.dupAcks > 3:
				tp.cwnd = min(tp.cwnd+tp.mss, tcpMaxWindow)
				s.tcpOutput(nil, tp)
			}
		} else {
			tp.dupAcks = 0
		}
		s.tcpWindowUpdate(tp, g, false)
		return true
	}
	// New data acknowledged.
	if tp.dupAcks >= 3 && tp.cwnd > tp.ssthresh {
		tp.cwnd = tp.ssthresh
	}
	tp.dupAcks = 0
	if tp.timing && seqGT(g.ack, tp.rtSeq) {
		tp.rttSample(s.c.LocalTime() - tp.rtStart)
		tp.rxtShift = 0
	}
	if g.ack == tp.sndMax {
		k.DelTimer(&tp.rexmt)
	} else {
		k.AddTimer(&tp.rexmt, k.TicksFor(tp.rto))
	}
	// Slow start below ssthresh, then about one segment per window.
	if tp.cwnd <= tp.ssthresh {
		tp.cwnd += tp.mss
	} else {
		tp.cwnd += max(tp.mss*tp.mss/tp.cwnd, 1)
	}
	tp.cwnd = min(tp.cwnd, tcpMaxWindow)
	if seqGT(g.ack, tp.sndBase) {
		n := min(int(g.ack-tp.sndBase), tp.slen)
		s.tcpCleanRtx(tp, n)
		tp.slen -= n
		tp.sndBase += uint32(n)
		tp.wake()
	}
	ourFinAcked := tp.finSent && seqGT(g.ack, tp.sndBase)
	tp.sndUna = g.ack
	if seqLT(tp.sndNxt, tp.sndUna) {
		tp.sndNxt = tp.sndUna
	}
	s.tcpWindowUpdate(tp, g, true)
	switch tp.state {
	case tcpFinWait1:
		if ourFinAcked {
			tp.state = tcpFinWait2
			tp.wake()
		}
	case tcpClosing:
		if ourFinAcked {
			s.tcpEnterTimeWait(tp)
			return false
		}
	case tcpLastAck:
		if ourFinAcked {
			s.tcpDrop(tp, 0)
			return false
		}
	case tcpTimeWait:
		// A retransmitted FIN: acknowledge it, restart 2·MSL.
		tp.ackNow = true
		k.AddTimer(&tp.tw, k.TicksFor(2*s.p.TCPMSL))
	}
	return true
}

// tcpOOWRateLimit spaces the ACKs sent in answer to out-of-window
// segments (Linux sysctl_tcp_invalid_ratelimit, 500 ms; RFC 5961 section
// 7): two ends that disagree on the sequence space would otherwise
// answer each other's ACKs for ever.
const tcpOOWRateLimit = 500 * sim.Millisecond

// oowAck owes an ACK for an out-of-window segment, unless one went out
// less than tcpOOWRateLimit ago.
func (tp *tcb) oowAck() {
	now := tp.s.c.LocalTime()
	if tp.oowSent && now-tp.lastOOW < tcpOOWRateLimit {
		tp.s.stats.TCPOOWAckLimited++
		return
	}
	tp.oowSent, tp.lastOOW = true, now
	tp.ackNow = true
}

// tcpWindowUpdate takes the peer's window from the newest segment (RFC
// 793 section 3.9, SND.WL1/SND.WL2). A segment that acknowledges new data
// is always newer (Linux tcp_may_update_window), so one bogus segment
// with a high sequence number cannot freeze the window.
func (s *Stack) tcpWindowUpdate(tp *tcb, g *tcpSeg, newAck bool) {
	if newAck || seqLT(tp.sndWl1, g.seq) || tp.sndWl1 == g.seq && (seqLT(tp.sndWl2, g.ack) || tp.sndWl2 == g.ack && g.wnd > tp.sndWnd) {
		tp.sndWnd = g.wnd
		tp.sndWl1, tp.sndWl2 = g.seq, g.ack
		tp.maxSndWnd = max(tp.maxSndWnd, g.wnd)
		if g.wnd > 0 {
			s.k.DelTimer(&tp.persist)
			tp.force = false
		}
	}
}

// tcpData queues the segment's data and FIN (tcp_data): in order into the
// ring, out of order into the ring at its offset, remembered as a range;
// then decides between an immediate and a delayed ACK.
func (s *Stack) tcpData(tp *tcb, g *tcpSeg) {
	c := s.c
	c.Enter(s.tcp.sym.data)
	defer c.Exit(s.tcp.sym.data)
	if g.n > 0 && (tp.state == tcpEstablished || tp.state == tcpFinWait1 || tp.state == tcpFinWait2) {
		if tp.rdShut {
			// Nobody will read it: acknowledge and discard.
			tp.rcvNxt += uint32(g.n)
			tp.ackNow = true
		} else {
			s.tcpStore(tp, g)
			tp.rcvMSS = max(tp.rcvMSS, min(g.n, tp.rmss))
			if g.seq == tp.rcvNxt {
				tp.rcvNxt += uint32(g.n)
				tp.rlen += g.n
				tp.mergeOOO()
				if s.gauges.Listened() {
					tp.showReceive()
				}
				tp.wake()
				switch {
				case len(tp.ooo) > 0, tp.opt.quickAck:
					tp.ackNow = true
				case s.p.TCPDelAckStyle == DelAckBSD:
					// 4.4BSD sets TF_DELACK and nothing more: the fast
					// timer, or a window update after a read, sends it.
					s.tcpDelayAck(tp)
				case tp.quickAcks > 0:
					// Quick-ACK mode at connection start (Linux
					// tcp_enter_quickack_mode): the sender's window is
					// one or two segments, and a held ACK would stall it
					// until its retransmission timer.
					tp.quickAcks--
					tp.ackNow = true
				case int(tp.rcvNxt-tp.rcvAcked) > tp.rcvMSS:
					// More than one full-sized segment unacknowledged
					// (Linux __tcp_ack_snd_check; for equal segments,
					// every second one as RFC 1122 4.2.3.2 asks).
					tp.ackNow = true
				default:
					s.tcpDelayAck(tp)
				}
			} else {
				s.stats.TCPOutOfOrder++
				tp.addOOO(g.seq, g.seq+uint32(g.n))
				tp.ackNow = true // a duplicate ACK tells the sender
			}
		}
	}
	if g.has(header.TCPFlagFIN) && !tp.finRcvd {
		tp.finRcvd = true
		tp.finSeq = g.seq + uint32(g.n)
	}
	if tp.finRcvd && !tp.eof && tp.rcvNxt == tp.finSeq {
		tp.eof = true
		tp.rcvNxt++
		tp.ackNow = true
		tp.wake()
		switch tp.state {
		case tcpEstablished, tcpSynRcvd:
			tp.state = tcpCloseWait
		case tcpFinWait1:
			tp.state = tcpClosing
		case tcpFinWait2:
			s.tcpEnterTimeWait(tp)
		}
	}
}

// tcpStore copies the segment's data into the receive ring at its
// sequence offset.
func (s *Stack) tcpStore(tp *tcb, g *tcpSeg) {
	at := (tp.rhead + tp.rlen + int(g.seq-tp.rcvNxt)) % tp.rcap
	first := min(g.n, tp.rcap-at)
	s.k.Bcopy(tp.rbuf+memory.Addr(at), g.data, first)
	if g.n > first {
		s.k.Bcopy(tp.rbuf, g.data+memory.Addr(first), g.n-first)
	}
}

// addOOO records [start, end) as received out of order, merging ranges.
func (tp *tcb) addOOO(start, end uint32) {
	r := seqRange{start, end}
	var out []seqRange
	placed := false
	for _, x := range tp.ooo {
		switch {
		case seqLT(x.end, r.start):
			out = append(out, x)
		case seqLT(r.end, x.start):
			if !placed {
				out = append(out, r)
				placed = true
			}
			out = append(out, x)
		default:
			if seqLT(x.start, r.start) {
				r.start = x.start
			}
			if seqGT(x.end, r.end) {
				r.end = x.end
			}
		}
	}
	if !placed {
		out = append(out, r)
	}
	tp.ooo = out
}

// mergeOOO moves out-of-order ranges that rcv_nxt has reached into the
// in-order data.
func (tp *tcb) mergeOOO() {
	for len(tp.ooo) > 0 && seqLEQ(tp.ooo[0].start, tp.rcvNxt) {
		if r := tp.ooo[0]; seqGT(r.end, tp.rcvNxt) {
			tp.rlen += int(r.end - tp.rcvNxt)
			tp.rcvNxt = r.end
		}
		tp.ooo = tp.ooo[1:]
	}
}

// tcpEnterTimeWait starts the 2·MSL wait (RFC 793: the last ACK may need
// resending, and old duplicates must die out).
func (s *Stack) tcpEnterTimeWait(tp *tcb) {
	k := s.k
	tp.state = tcpTimeWait
	k.DelTimer(&tp.rexmt)
	k.DelTimer(&tp.persist)
	k.AddTimer(&tp.tw, k.TicksFor(2*s.p.TCPMSL))
	tp.wake()
}
