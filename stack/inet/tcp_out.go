package inet

import (
	"fmt"

	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
)

// rcvWindow is the window to advertise: the free room of the receive
// ring, held at zero while it is below min(MSS, a quarter of the ring)
// (receiver silly-window avoidance, RFC 1122 section 4.2.3.3, as 4.4BSD
// tcp_output), and never shrinking what was already offered.
func (tp *tcb) rcvWindow() int {
	win := tp.rcap - tp.rlen
	if win < tp.rcap/4 && win < tp.rmss {
		win = 0
	}
	if off := int(tp.rcvAdv - tp.rcvNxt); seqGT(tp.rcvAdv, tp.rcvNxt) && win < off {
		win = off
	}
	return min(win, tcpMaxWindow)
}

// synchronized reports whether the handshake is over.
func (tp *tcb) synchronized() bool { return tp.state >= tcpEstablished }

// tcpOutput sends what the connection may send now (4.4BSD tcp_output):
// new or retransmitted data, a SYN or FIN, a window update or an owed
// ACK. t is the calling thread, nil from the softirq and timers.
func (s *Stack) tcpOutput(t *kernel.Thread, tp *tcb) {
	if tp.state == tcpClosed || tp.state == tcpListen || tp.rbuf == 0 {
		return
	}
	if tp.outputting {
		panic(fmt.Sprintf("inet: %s: tcp_output entered again on %d>%v:%d (%s, snd_nxt %d)", s.k.Name(), tp.lport, tp.raddr, tp.rport, tp.state, tp.sndNxt))
	}
	tp.outputting = true
	defer func() { tp.outputting = false }()
	c := s.c
	for {
		c.Enter(s.tcp.sym.output)
		again := s.tcpOutputOne(t, tp)
		c.Exit(s.tcp.sym.output)
		if !again {
			return
		}
	}
}

// tcpOutputOne decides on and sends one segment; it reports whether
// another may follow.
func (s *Stack) tcpOutputOne(t *kernel.Thread, tp *tcb) bool {
	k := s.k
	if !tp.synchronized() && tp.state != tcpSynRcvd || tp.state == tcpSynRcvd && tp.sndNxt == tp.iss {
		// Handshake: the SYN (with our MSS) and nothing else.
		if tp.sndNxt != tp.iss {
			if tp.ackNow && tp.state == tcpSynRcvd {
				s.tcpXmitSeg(t, tp, tp.sndNxt, header.TCPFlagACK, 0, 0)
			}
			return false
		}
		flags := header.TCPFlagSYN
		if tp.state == tcpSynRcvd {
			flags |= header.TCPFlagACK
		}
		if tp.sndMax != tp.iss {
			s.stats.TCPRetransSegs++
		}
		s.tcpXmitSeg(t, tp, tp.iss, flags, 0, 0)
		tp.sndNxt = tp.iss + 1
		if seqGT(tp.sndNxt, tp.sndMax) {
			tp.sndMax = tp.sndNxt
			if !tp.timing {
				tp.timing, tp.rtSeq, tp.rtStart = true, tp.iss, s.c.LocalTime()
			}
		}
		if !tp.rexmt.Pending() {
			k.AddTimer(&tp.rexmt, k.TicksFor(tp.rto))
		}
		return false
	}
	if tp.state == tcpSynRcvd {
		// SYN sent, waiting for its ACK: only ACKs may go.
		if tp.ackNow {
			s.tcpXmitSeg(t, tp, tp.sndNxt, header.TCPFlagACK, 0, 0)
		}
		return false
	}

	off := int(tp.sndNxt - tp.sndBase)
	if off > tp.slen { // our FIN is out and this is past it
		off = tp.slen + 1
	}
	win := min(tp.sndWnd, tp.cwnd)
	if tp.force && win == 0 {
		win = 1
	}
	length := min(tp.slen, win) - off
	if length < 0 {
		length = 0
		if tp.sndWnd == 0 && off <= tp.slen && tp.sndNxt != tp.sndUna {
			// The window closed on data in flight: take it back and
			// let the persist timer probe (4.4BSD).
			k.DelTimer(&tp.rexmt)
			tp.sndNxt = tp.sndUna
			off = int(tp.sndNxt - tp.sndBase)
		}
	}
	sendalot := false
	if length > tp.mss {
		length = tp.mss
		sendalot = true
	}
	finSeq := tp.sndBase + uint32(tp.slen)
	fin := tp.finQueued && tp.sndNxt+uint32(length) == finSeq

	// The BSD send decision (inet-notes section 5).
	send := false
	if length > 0 {
		idle := tp.sndUna == tp.sndMax
		switch {
		case length == tp.mss:
			send = true
		case (idle || tp.opt.noDelay) && off+length >= tp.slen:
			send = true
		case tp.force:
			send = true
		case tp.maxSndWnd > 0 && length >= tp.maxSndWnd/2:
			send = true
		case seqLT(tp.sndNxt, tp.sndMax):
			send = true
		}
	}
	if !send && !tp.finRcvd {
		// A window update, unless the peer has sent its FIN: no more
		// data can come (FreeBSD's TCPS_HAVERCVDFIN test; Linux's
		// tcp_cleanup_rbuf sends none either).
		adv := tp.rcvWindow() - int(tp.rcvAdv-tp.rcvNxt)
		if adv >= 2*tp.rmss || 2*adv >= tp.rcap {
			send = true
		}
	}
	if !send && (tp.ackNow || fin) {
		send = true
	}
	if !send {
		if length > 0 {
			s.stats.TCPSendHeld++
		}
		// Data waits: with nothing in flight to bring an ACK, the
		// persist timer probes the peer's window.
		if tp.slen > off && !tp.rexmt.Pending() && !tp.persist.Pending() {
			tp.rxtShift = 0
			k.AddTimer(&tp.persist, k.TicksFor(tp.rto))
		}
		return false
	}
	if tp.force && length > 0 {
		s.stats.TCPPersistProbes++
	}

	flags := header.TCPFlagACK
	if fin {
		flags |= header.TCPFlagFIN
	}
	if length > 0 && off+length == tp.slen {
		flags |= header.TCPFlagPSH
	}
	if seqLT(tp.sndNxt, tp.sndMax) && (length > 0 || fin) {
		s.stats.TCPRetransSegs++
	}
	start := tp.sndNxt
	s.tcpXmitSeg(t, tp, start, flags, off, length)
	if tp.state == tcpClosed {
		return false
	}
	tp.sndNxt += uint32(length)
	if fin {
		tp.sndNxt++
		tp.finSent = true
	}
	if seqGT(tp.sndNxt, tp.sndMax) {
		if !tp.timing && length > 0 {
			tp.timing, tp.rtSeq, tp.rtStart = true, start, s.c.LocalTime()
		}
		tp.sndMax = tp.sndNxt
	}
	if tp.sndNxt != tp.sndUna && !tp.rexmt.Pending() && (length > 0 || fin) {
		k.DelTimer(&tp.persist)
		tp.rxtShift = 0
		k.AddTimer(&tp.rexmt, k.TicksFor(tp.rto))
	}
	return sendalot
}

// tcpXmitSeg builds and sends one segment of tp: flags, and length bytes
// of data from send-buffer offset off (relative to sndBase), in a clone
// of the write-queue buffer that holds them (tcpSegment), or a new empty
// buffer (tcp_transmit_skb): the header is pushed in front of the data,
// its checksum finished from the data's kept sum, and the segment handed
// to ip_queue_xmit. It records the ACK and window sent.
func (s *Stack) tcpXmitSeg(t *kernel.Thread, tp *tcb, seq uint32, flags header.TCPFlags, off, length int) {
	b, sum, ok := s.tcpSegment(tp, off, length)
	c := s.c
	c.Enter(s.tcp.sym.xmit)
	defer c.Exit(s.tcp.sym.xmit)
	var opts []byte
	var optBuf [header.TCPOptionMSSLen]byte
	if flags&header.TCPFlagSYN != 0 {
		header.PutTCPMSSOption(optBuf[:], uint16(tp.rmss))
		opts = optBuf[:]
	}
	hlen := header.TCPMinimumSize + len(opts)
	var ack uint32
	win := 0
	if flags&header.TCPFlagACK != 0 {
		ack = tp.rcvNxt
		win = tp.rcvWindow()
	} else if flags&header.TCPFlagSYN != 0 {
		win = tp.rcvWindow()
	}
	s.stats.TCPOutSegs++
	if flags&header.TCPFlagACK != 0 {
		tp.rcvAcked = tp.rcvNxt
		if seqGT(tp.rcvNxt+uint32(win), tp.rcvAdv) {
			tp.rcvAdv = tp.rcvNxt + uint32(win)
		}
		tp.ackNow, tp.delAck = false, false
		s.k.DelTimer(&tp.delack)
	}
	if !ok {
		// Lost for want of a buffer: the retransmission timer recovers.
		return
	}
	b.Push(hlen)
	var h [header.TCPMaximumHeaderSize]byte
	v := header.TCP(h[:hlen])
	v.Encode(&header.TCPFields{SrcPort: tp.lport, DstPort: tp.rport, SeqNum: seq, AckNum: ack,
		Flags: flags, Window: uint16(win), Options: opts})
	dst := tp.raddr
	total := header.ChecksumCombine(kernel.Fold(sum), header.PseudoHeaderChecksum(header.IPv4ProtocolTCP, s.addr, dst, uint16(b.Len)))
	v.SetChecksum(^v.HeaderSum(total))
	s.write(b.Addr, h[:hlen])
	s.ipQueueXmit(t, b, dst, header.IPv4ProtocolTCP)
}

// tcpSendReset sends a RST (with ACK when ackFlag) from lport to
// dst:dport, carrying seq and ack. t may be nil.
func (s *Stack) tcpSendReset(t *kernel.Thread, dst Addr, lport, dport uint16, seq, ack uint32, ackFlag bool) {
	c := s.c
	c.Enter(s.tcp.sym.reset)
	defer c.Exit(s.tcp.sym.reset)
	flags := header.TCPFlagRST
	if ackFlag {
		flags |= header.TCPFlagACK
	}
	gf := func(to memory.Addr, _, _ int, _ uint32) uint32 {
		var h [header.TCPMinimumSize]byte
		v := header.TCP(h[:])
		v.Encode(&header.TCPFields{SrcPort: lport, DstPort: dport, SeqNum: seq, AckNum: ack, Flags: flags})
		v.SetChecksum(v.CalculateChecksum(s.addr, dst))
		s.write(to, h[:])
		return 0
	}
	s.stats.TCPOutRsts++
	s.stats.TCPOutSegs++
	s.buildXmit(t, dst, header.IPv4ProtocolTCP, header.TCPMinimumSize, gf)
}
