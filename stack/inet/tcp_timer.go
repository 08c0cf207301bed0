package inet

import "simkron/stack/header"

// rexmtFire is the retransmission timeout (4.4BSD tcp_timers TCPT_REXMT):
// back off the timeout, collapse the congestion window to one segment
// (RFC 5681 section 3.1), forget the RTT being timed (Karn) and resend
// from snd_una; too many tries and the connection times out.
func (tp *tcb) rexmtFire() {
	s := tp.s
	k := s.k
	if tp.state == tcpClosed || tp.state == tcpTimeWait {
		return
	}
	s.stats.TCPTimeouts++
	if tp.synchronized() && tp.sndWnd == 0 && tp.slen > 0 {
		// A zero window, not a loss: probe it and keep trying.
		tp.rto = min(tp.rto*2, tcpMaxRTO)
		tp.sndNxt = tp.sndUna
		k.AddTimer(&tp.rexmt, k.TicksFor(tp.rto))
		tp.force = true
		s.tcpOutput(nil, tp)
		tp.force = false
		return
	}
	tp.rxtShift++
	limit := tcpMaxRetries
	if tp.state == tcpSynSent || tp.state == tcpSynRcvd {
		limit = tcpMaxSynRetries
	}
	if tp.rxtShift > limit {
		if tp.state == tcpSynSent {
			s.stats.TCPAttemptFails++
		}
		s.tcpAbort(tp, ETIMEDOUT)
		return
	}
	tp.rto = min(tp.rto*2, tcpMaxRTO)
	tp.ssthresh = max(min(tp.sndWnd, tp.cwnd)/2, 2*tp.mss)
	tp.cwnd = tp.mss
	tp.dupAcks = 0
	tp.timing = false
	if tp.state == tcpSynSent || tp.state == tcpSynRcvd {
		tp.sndNxt = tp.iss
	} else {
		tp.sndNxt = tp.sndUna
	}
	k.AddTimer(&tp.rexmt, k.TicksFor(tp.rto))
	s.tcpOutput(nil, tp)
}

// persistFire probes a closed window with one byte (TCPT_PERSIST), backing
// off like the retransmission timer.
func (tp *tcb) persistFire() {
	s := tp.s
	k := s.k
	if !tp.synchronized() || tp.state == tcpTimeWait {
		return
	}
	if tp.slen > int(tp.sndNxt-tp.sndBase) || tp.sndWnd == 0 && tp.slen > 0 {
		tp.force = true
		s.tcpOutput(nil, tp)
		tp.force = false
	}
	if tp.sndWnd == 0 && tp.slen > 0 && !tp.rexmt.Pending() {
		tp.rxtShift = min(tp.rxtShift+1, 6)
		k.AddTimer(&tp.persist, k.TicksFor(min(tp.rto<<tp.rxtShift, tcpMaxRTO)))
	}
}

// tcpDelayAck holds back the ACK of in-order data. Linux arms a
// per-connection timer of TCPDelAck; 4.4BSD's tcp_fasttimo runs for every
// connection each PR_FASTHZ period (200 ms) from boot, so a held ACK goes
// at the next multiple of the period: 0 to 200 ms later, depending on the
// phase (modelled as a per-connection timer aimed at that instant).
func (s *Stack) tcpDelayAck(tp *tcb) {
	if tp.delAck {
		return
	}
	tp.delAck = true
	s.stats.TCPDelayedAcks++
	k := s.k
	ticks := k.TicksFor(s.p.TCPDelAck)
	if s.p.TCPDelAckStyle == DelAckBSD {
		ticks -= k.Jiffies() % ticks
	}
	k.AddTimer(&tp.delack, ticks)
}

// delackFire sends the ACK that was being held back.
func (tp *tcb) delackFire() {
	if tp.delAck && tp.state != tcpClosed {
		tp.s.stats.TCPDelAckTimeouts++
		tp.ackNow = true
		tp.s.tcpOutput(nil, tp)
	}
}

// twFire ends TIME_WAIT.
func (tp *tcb) twFire() {
	if tp.state == tcpTimeWait {
		tp.s.tcpDrop(tp, 0)
	}
}

// startKeepAlive arms the keep-alive timer of a connection that has
// SO_KEEPALIVE, from now.
func (tp *tcb) startKeepAlive() {
	if !tp.opt.keepAlive {
		return
	}
	k := tp.s.k
	tp.idleSince, tp.keepProbes = k.Jiffies(), 0
	k.AddTimer(&tp.keep, k.TicksFor(tp.s.p.TCPKeepIdle))
}

// keepFire is the keep-alive timer (Linux tcp_keepalive_timer, RFC 1122
// section 4.2.3.6): once nothing has arrived for TCPKeepIdle it sends a
// probe — an ACK one byte behind snd_una, which the peer must answer —
// every TCPKeepIntvl; any segment from the peer starts the idle time
// again; TCPKeepProbes unanswered probes drop the connection (a RST, and
// ETIMEDOUT to the program). Data in flight or queued is the
// retransmission and persist timers' business.
func (tp *tcb) keepFire() {
	s := tp.s
	k := s.k
	if !tp.opt.keepAlive || tp.state != tcpEstablished && tp.state != tcpCloseWait && tp.state != tcpFinWait2 {
		return
	}
	idle, limit := k.Jiffies()-tp.idleSince, k.TicksFor(s.p.TCPKeepIdle)
	switch {
	case tp.slen > 0:
		k.AddTimer(&tp.keep, limit)
	case tp.keepProbes == 0 && idle < limit:
		k.AddTimer(&tp.keep, limit-idle)
	case tp.keepProbes >= s.p.TCPKeepProbes:
		s.stats.TCPKeepAliveDrops++
		s.tcpAbort(tp, ETIMEDOUT)
	default:
		s.stats.TCPKeepAliveProbes++
		tp.keepProbes++
		s.tcpXmitSeg(nil, tp, tp.sndUna-1, header.TCPFlagACK, 0, 0)
		k.AddTimer(&tp.keep, k.TicksFor(s.p.TCPKeepIntvl))
	}
}
