package tp4

import (
	"encoding/binary"

	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// dtInput handles a DT whose user data is n octets from dataOff of nsdu
// (consumed).
//
//	numbers:  ... rcvNxt−1 │ rcvNxt  rcvNxt+1 ... rcvNxt+CDT−1 │ beyond
//	          duplicates   │ in      out of sequence: kept      │ dropped
//	          (AK again)   │ sequence                           │ (AK)
func (k *Conn) dtInput(h header.TPDU, nsdu osi.Chain, dataOff, n int) {
	t := k.t
	c := t.c
	c.Enter(t.sym.dtIn)
	defer c.Exit(t.sym.dtIn)
	k.confirmed()
	if k.state != stOpen {
		t.stats.RxWrongState++
		t.bufs.Free(nsdu)
		return
	}
	if h.HeaderLen()+n > k.tpduSize {
		// Longer than the TPDU size agreed: a procedure error. (The DT's
		// own length: an AK concatenated in front of it is not part of
		// it.)
		t.bufs.Free(nsdu)
		k.protocolError()
		return
	}
	k.Stats.DTsReceived++
	x, eot := h.Number(k.ext), h.EOT()
	d := k.diff(x, k.rcvNxt)
	switch {
	case d == 0:
		t.bufs.Pull(nsdu, dataOff)
		k.take(nsdu, eot)
		for {
			e := &k.reseq[k.rcvBase%uint64(len(k.reseq))]
			if !e.ok {
				break
			}
			ch, eot := e.ch, e.eot
			*e = rxEntry{}
			c.Exec(defDTInput.Instructions / 4) // one resequenced DT
			k.take(ch, eot)
		}
		if k.rcvUnacked >= t.p.AckStep {
			k.akOwed = true
		} else if !k.tAck.Pending() {
			k.tAck.Start(t.p.AckTime)
		}
	case d < k.rcvCDT:
		e := &k.reseq[(k.rcvBase+uint64(d))%uint64(len(k.reseq))]
		if e.ok {
			t.stats.RxDTDuplicates++
			t.bufs.Free(nsdu)
			k.akOwed = true
			break
		}
		t.stats.RxDTOutOfSequence++
		t.bufs.Pull(nsdu, dataOff)
		*e = rxEntry{ch: nsdu, eot: eot, ok: true}
	case d >= k.mod/2:
		// Behind the window: a DT received (and acknowledged) before,
		// resent because the AK was lost. Acknowledge it again.
		t.stats.RxDTDuplicates++
		t.bufs.Free(nsdu)
		k.akOwed = true
	default:
		t.stats.RxDTOutsideWindow++
		t.bufs.Free(nsdu)
		k.akOwed = true
	}
	k.deliver()
	if k.state == stOpen {
		k.output()
	}
}

// take accepts the next DT in sequence: its data joins the TSDU, which
// is complete at EOT.
func (k *Conn) take(data osi.Chain, eot bool) {
	t := k.t
	k.tsdu = t.bufs.Append(k.tsdu, data)
	k.rcvNxt = k.add(k.rcvNxt, 1)
	k.rcvBase++
	k.rcvUnacked++
	if eot {
		k.done = append(k.done, k.tsdu)
		k.tsdu = 0
	}
}

// deliver hands the completed TSDUs to the user, after the receive state
// is up to date (the user may call back).
func (k *Conn) deliver() {
	t := k.t
	for i := 0; i < len(k.done); i++ {
		ch := k.done[i]
		k.done[i] = 0
		if k.state != stOpen {
			t.bufs.Free(ch)
			continue
		}
		n := t.bufs.Len(ch)
		k.Stats.TSDUsDelivered++
		k.Stats.OctetsDelivered += uint64(n)
		k.user.TDataIndication(k, ch)
	}
	k.done = k.done[:0]
}

// akInput handles an AK: ISO 8073 12.2.3.8 orders AKs by their number,
// then their subsequence number, then their credit, so that a stale one
// (overtaken in the network) changes nothing.
func (k *Conn) akInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.akIn)
	defer c.Exit(t.sym.akIn)
	k.confirmed()
	if k.state != stOpen {
		t.stats.RxWrongState++
		return
	}
	k.Stats.AKsRecv++
	n, cdt := h.Number(k.ext), uint32(h.Credit(k.ext))
	sub := uint16(0)
	if v, ok := h.Param(k.ext, header.TPDUParamSubsequence); ok && len(v) == 2 {
		sub = binary.BigEndian.Uint16(v)
	}
	if v, ok := h.Param(k.ext, header.TPDUParamFlowControl); ok && len(v) == header.TPDUFlowControlLen {
		k.fccInput(v)
	}
	d := k.diff(n, k.sndUna)
	if int(d) > k.outstanding() {
		if d >= k.mod/2 {
			t.stats.RxAKStale++ // behind the lower edge: an old AK
			return
		}
		// It acknowledges DTs never sent.
		k.protocolError()
		return
	}
	if d == 0 {
		switch {
		case int16(sub-k.peerSub) < 0:
			t.stats.RxAKStale++
			return
		case sub == k.peerSub && cdt <= k.peerCDT:
			if sub != 0 && cdt == k.peerCDT && cdt > 0 {
				// The window-opening AK again: our confirmation was lost.
				k.confirmWindow(n, sub, cdt)
				k.output()
			}
			return
		}
	}
	oldUwe := k.add(k.sndUna, k.peerCDT)
	for i := 0; i < int(d); i++ {
		e := k.entry(0)
		t.bufs.Free(e.ch)
		*e = sendEntry{}
		k.sqHead = (k.sqHead + 1) % len(k.sq)
		k.sqLen--
	}
	k.sndUna = n
	k.peerCDT, k.peerSub = cdt, sub
	if sub != 0 && d == 0 {
		if up := k.diff(k.add(n, cdt), oldUwe); up > 0 && up < k.mod/2 {
			k.confirmWindow(n, sub, cdt)
		}
	}
	k.rearmT1()
	k.output()
	if d > 0 && k.wantReady && k.state == stOpen {
		k.wantReady = false
		k.user.TReady(k)
	}
}

// confirmWindow makes the next AK carry a flow-control confirmation of
// the peer's AK (n, sub, cdt), and sends it now.
func (k *Conn) confirmWindow(n uint32, sub uint16, cdt uint32) {
	k.fccSend, k.fccLWE, k.fccSub, k.fccCDT = true, n, sub, cdt
	k.akOwed = true
}

// fccInput takes the peer's confirmation of our window-opening AK.
func (k *Conn) fccInput(v []byte) {
	lwe := binary.BigEndian.Uint32(v[0:])
	sub := binary.BigEndian.Uint16(v[4:])
	cdt := uint32(binary.BigEndian.Uint16(v[6:]))
	k.t.stats.RxFCC++
	if k.fccWait && lwe == k.lastAKNxt && sub == k.subseq && cdt == k.lastAKCDT {
		k.fccWait = false
		k.restartWindowTimer()
	}
}

// rearmT1 points T1 at the earliest due retransmission, or stops it.
func (k *Conn) rearmT1() {
	now := k.t.env.Now()
	var next sim.Time = -1
	for i := range min(k.outstanding(), int(k.peerCDT)) {
		if e := k.entry(i); next < 0 || e.due < next {
			next = e.due
		}
	}
	if k.edOut != 0 && (next < 0 || k.edDue < next) {
		next = k.edDue
	}
	if next < 0 {
		k.t1.Stop()
		return
	}
	k.t1.Start(max(next-now, 1))
}

// edInput handles an ED (user data n octets from dataOff of nsdu,
// consumed): delivered once, acknowledged by an EA every time.
func (k *Conn) edInput(h header.TPDU, nsdu osi.Chain, dataOff, n int) {
	t := k.t
	c := t.c
	c.Enter(t.sym.edIn)
	defer c.Exit(t.sym.edIn)
	k.confirmed()
	if k.state != stOpen || !k.expedited || n > header.TPDUMaxExpeditedData {
		t.bufs.Free(nsdu)
		if k.state == stOpen {
			k.protocolError()
		} else {
			t.stats.RxWrongState++
		}
		return
	}
	x := h.Number(k.ext)
	switch {
	case x == k.edRcvNr:
		k.sendEA(x)
		k.edRcvNr = k.add(k.edRcvNr, 1)
		k.Stats.EDsDelivered++
		t.bufs.Pull(nsdu, dataOff)
		k.user.TExpeditedIndication(k, nsdu)
		return
	case x == k.add(k.edRcvNr, k.mod-1):
		t.stats.RxEDDuplicates++
		k.sendEA(x)
	default:
		t.stats.RxEDUnexpected++
	}
	t.bufs.Free(nsdu)
}

// eaInput releases the outstanding ED.
func (k *Conn) eaInput(h header.TPDU) {
	t := k.t
	c := t.c
	c.Enter(t.sym.eaIn)
	defer c.Exit(t.sym.eaIn)
	k.confirmed()
	if k.state != stOpen || k.edOut == 0 || h.Number(k.ext) != k.edSndNr {
		t.stats.RxEDUnexpected++
		return
	}
	t.bufs.Free(k.edOut)
	k.edOut = 0
	k.edSndNr = k.add(k.edSndNr, 1)
	k.rearmT1()
	k.output()
	if k.wantReady && k.state == stOpen {
		k.wantReady = false
		k.user.TReady(k)
	}
}

// t1Timeout is the retransmission timer: resend what is due.
func (k *Conn) t1Timeout() {
	t := k.t
	c := t.c
	c.Enter(t.sym.t1)
	defer c.Exit(t.sym.t1)
	switch k.state {
	case stWaitCC:
		if k.ctlTries >= t.p.N {
			u := k.user
			k.freeze()
			u.TDisconnectIndication(k, Disconnect{Cause: CauseNoResponse})
			return
		}
		t.stats.TxRetransmissions++
		k.sendCR()
		k.t1.Start(t.p.T1)
	case stWaitAck:
		if k.ctlTries >= t.p.N {
			k.giveUp(CauseNoResponse)
			return
		}
		t.stats.TxRetransmissions++
		k.sendCC()
		k.t1.Start(t.p.T1)
	case stClosing:
		if k.ctlTries >= t.p.N {
			k.freeze()
			return
		}
		t.stats.TxRetransmissions++
		k.sendDR()
		k.t1.Start(t.p.T1)
	case stOpen:
		now := t.env.Now()
		if k.edOut != 0 && k.edDue <= now {
			if k.edTries >= t.p.N {
				k.giveUp(CauseRetransmission)
				return
			}
			k.sendED()
		}
		// The oldest DT that is due goes again; the others due wait one
		// more T1: the AK its arrival draws covers those the receiver kept
		// out of sequence, so only DTs lost too are sent again later.
		resent := false
		for i := range min(k.outstanding(), int(k.peerCDT)) {
			e := k.entry(i)
			if e.due > now {
				continue
			}
			if resent {
				e.due = now + t.p.T1
				continue
			}
			if e.tries >= t.p.N {
				k.giveUp(CauseRetransmission)
				return
			}
			resent = true
			if !k.transmit(e) {
				e.due = now + t.p.T1 // try again later
			}
		}
		k.rearmT1()
	}
}

// ackTimeout sends the AK a lone DT is owed.
func (k *Conn) ackTimeout() {
	c := k.t.c
	c.Enter(k.t.sym.ackTO)
	defer c.Exit(k.t.sym.ackTO)
	if k.state == stOpen && k.rcvUnacked > 0 {
		k.akOwed = true
		k.output()
	}
}

// windowTimeout resends the AK of an idle connection (and of a reopened
// window until the peer confirms it).
func (k *Conn) windowTimeout() {
	c := k.t.c
	c.Enter(k.t.sym.wTO)
	defer c.Exit(k.t.sym.wTO)
	if k.state != stOpen {
		return
	}
	if k.fccWait {
		k.fccTries++
		if k.fccTries >= k.t.p.N {
			k.fccWait = false // leave it to the window timer
		}
	}
	k.akOwed = true
	k.output()
}

// inactivityTimeout releases a connection that heard nothing.
func (k *Conn) inactivityTimeout() {
	c := k.t.c
	c.Enter(k.t.sym.iTO)
	defer c.Exit(k.t.sym.iTO)
	if k.state == stOpen || k.state == stWaitAck {
		k.t.stats.InactivityReleases++
		k.giveUp(CauseInactivity)
	}
}

// unfreeze frees the reference after the freeze time.
func (k *Conn) unfreeze() {
	c := k.t.c
	c.Enter(k.t.sym.freeze)
	defer c.Exit(k.t.sym.freeze)
	if k.state == stFrozen {
		k.state = stClosed
	}
}
