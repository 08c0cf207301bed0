package tp4

import (
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
)

// State is a connection's place in the class 4 state machine (RFC 905
// clause 14 names: CLOSED, WFCC, WFTRESP, AKWAIT, OPEN, CLOSING, and the
// frozen reference).
//
//	        Connect                      CR from peer
//	CLOSED ─────────► WFCC        CLOSED ──────────► WFTRESP
//	                   │ CC                            │ Accept (CC)
//	                   ▼                               ▼
//	                  OPEN ◄──── AK, DT, ED ──────── AKWAIT
//	                   │ Disconnect (DR)
//	                   ▼
//	                CLOSING ── DC, DR, or N DRs ──► FROZEN ── FreezeTime ──► CLOSED
type State uint8

// States.
const (
	StateClosed State = iota
	StateWaitCC
	StateWaitUser
	StateWaitAck
	StateOpen
	StateClosing
	StateFrozen
)

const (
	stClosed   = StateClosed
	stWaitCC   = StateWaitCC
	stWaitUser = StateWaitUser
	stWaitAck  = StateWaitAck
	stOpen     = StateOpen
	stClosing  = StateClosing
	stFrozen   = StateFrozen
)

func (s State) String() string {
	return [...]string{"CLOSED", "WFCC", "WFTRESP", "AKWAIT", "OPEN", "CLOSING", "FROZEN"}[s]
}

// sendEntry is one DT of the send queue: built at the T-DATA request,
// kept (its chain's allocation count) until acknowledged.
type sendEntry struct {
	ch    osi.Chain // header piece, then the data slice
	hlen  int
	tries int      // transmissions so far (0: not sent yet)
	due   sim.Time // when it is to be sent again, once sent
}

// rxEntry is an out-of-sequence DT kept for resequencing: its data (the
// header stripped) and EOT.
type rxEntry struct {
	ch  osi.Chain
	eot bool
	ok  bool
}

// Conn is one transport connection (a reference of the entity).
type Conn struct {
	t         *TP4
	idx       int
	ref       uint16
	gen       uint8
	peerRef   uint16
	state     State
	user      User
	initiator bool
	local     Address
	remote    Address
	ext       bool // extended formats
	cksum     bool // the checksum in use
	expedited bool
	tpduSize  int
	mod       uint32 // 2^7 or 2^31

	// Send side: the queue holds DTs from sndUna on; the first
	// sndNxt−sndUna have been sent. The peer's last AK set the lower
	// window edge (sndUna), its credit and subsequence.
	sq        []sendEntry
	sqHead    int
	sqLen     int
	sndUna    uint32
	sndNxt    uint32 // next number to send
	sndNew    uint32 // number the next DT built gets
	peerCDT   uint32
	peerSub   uint16
	wantReady bool

	// Receive side.
	rcvNxt     uint32 // next expected (the lower window edge we give)
	rcvCDT     uint32 // credit we give
	rcvUnacked int    // DTs accepted in sequence since our last AK
	akOwed     bool   // an AK must go (step reached, duplicate, credit change)
	lastAKNxt  uint32
	lastAKCDT  uint32
	subseq     uint16 // of our last AK
	fccWait    bool   // our last AK reopened the window: resend until confirmed
	fccTries   int
	reseq      []rxEntry // by (number − rcvNxt − 1)
	tsdu       osi.Chain // the TSDU being reassembled
	akSent     bool      // at least one AK went since open

	// Expedited data.
	edOut     osi.Chain // the ED awaiting its EA
	edSndNr   uint32
	edTries   int
	edDue     sim.Time
	edRcvNr   uint32
	edRcvSeen bool

	// Control TPDU retransmission (CR, CC, DR).
	ctlTries int
	drReason uint8

	// Receive work of one NSDU: TSDUs completed, delivered at the end.
	done    []osi.Chain
	rcvBase uint64 // DTs accepted in sequence so far (places out-of-sequence ones)
	fccSend bool   // the next AK carries a flow-control confirmation
	fccLWE  uint32
	fccSub  uint16
	fccCDT  uint32

	t1, tAck, tWin, tInact, tFreeze osi.Timer

	// Stats counts this connection's traffic.
	Stats ConnStats
}

// ConnStats counts one connection's traffic.
type ConnStats struct {
	TSDUsSent, TSDUsDelivered     uint64
	OctetsSent, OctetsDelivered   uint64
	DTsSent, DTsRetransmitted     uint64
	DTsReceived, AKsSent, AKsRecv uint64
	EDsSent, EDsDelivered         uint64
}

func newConn(t *TP4, i int) *Conn {
	k := &Conn{t: t, idx: i, sq: make([]sendEntry, t.p.SendBuffer), reseq: make([]rxEntry, t.p.Credit)}
	k.t1 = t.env.NewTimer("tp4.t1", k.t1Timeout)
	k.tAck = t.env.NewTimer("tp4.ack", k.ackTimeout)
	k.tWin = t.env.NewTimer("tp4.window", k.windowTimeout)
	k.tInact = t.env.NewTimer("tp4.inactivity", k.inactivityTimeout)
	k.tFreeze = t.env.NewTimer("tp4.freeze", k.unfreeze)
	return k
}

// open starts a connection in slot k: a new reference (the slot's index
// in the low octet, a generation above it), fresh windows.
func (k *Conn) open(u User, local, remote Address, initiator bool) {
	k.gen++
	if k.gen == 0 {
		k.gen = 1
	}
	k.ref = uint16(k.gen)<<8 | uint16(k.idx+1)
	k.user, k.local, k.remote, k.initiator = u, Address{local.NSAP, append([]byte(nil), local.TSAP...)}, Address{remote.NSAP, append([]byte(nil), remote.TSAP...)}, initiator
	k.peerRef = 0
	k.cksum = k.t.p.Checksum
	k.expedited = k.t.p.Expedited
	k.tpduSize = int(k.t.p.TPDUSize)
	k.sqHead, k.sqLen = 0, 0
	k.sndUna, k.sndNxt, k.sndNew, k.peerCDT, k.peerSub = 0, 0, 0, 0, 0
	k.rcvNxt, k.rcvCDT, k.rcvUnacked, k.akOwed = 0, uint32(k.t.p.Credit), 0, false
	k.lastAKNxt, k.lastAKCDT, k.subseq, k.fccWait, k.fccTries, k.akSent = 0, 0, 0, false, 0, false
	k.edOut, k.edSndNr, k.edTries, k.edRcvNr, k.edRcvSeen = 0, 0, 0, 0, false
	k.ctlTries, k.wantReady = 0, false
	k.Stats = ConnStats{}
}

// setFormat fixes the numbering once the format is agreed.
func (k *Conn) setFormat(ext bool) {
	k.ext = ext
	k.mod = header.TPDUNormalModulus
	if ext {
		k.mod = header.TPDUExtendedModulus
	}
	if !ext && k.rcvCDT > header.TPDUNormalMaxCredit {
		k.rcvCDT = header.TPDUNormalMaxCredit
	}
}

func (k *Conn) add(a, n uint32) uint32  { return (a + n) & (k.mod - 1) }
func (k *Conn) diff(a, b uint32) uint32 { return (a - b) & (k.mod - 1) }

// State returns the connection's state.
func (k *Conn) State() State { return k.state }

// Ref returns the connection's reference and the peer's.
func (k *Conn) Ref() (local, peer uint16) { return k.ref, k.peerRef }

// Local and Remote return the connection's addresses.
func (k *Conn) Local() Address  { return k.local }
func (k *Conn) Remote() Address { return k.remote }

// User returns the connection's TS user.
func (k *Conn) User() User { return k.user }

// SetUser gives the connection to u (a listener that hands connections
// on).
func (k *Conn) SetUser(u User) { k.user = u }

// Negotiated returns the agreed format, checksum use, expedited data and
// TPDU size.
func (k *Conn) Negotiated() (extended, checksum, expedited bool, tpduSize int) {
	return k.ext, k.cksum, k.expedited, k.tpduSize
}

// Window is a snapshot of a connection's flow-control state, for
// observers and invariant checks.
type Window struct {
	SndUna, SndNxt, SndNew uint32 // lower edge, next to send, next to build
	PeerCredit             uint32 // the peer's credit: it accepts up to SndUna+PeerCredit−1
	Held                   int    // DTs kept (sent and unacknowledged, or waiting)
	RcvNxt, RcvCredit      uint32 // our lower edge and credit
	Resequencing           int    // out-of-sequence DTs kept
	Modulus                uint32
	EDOutstanding          bool
}

// Window returns the connection's flow-control state.
func (k *Conn) Window() Window {
	w := Window{SndUna: k.sndUna, SndNxt: k.sndNxt, SndNew: k.sndNew, PeerCredit: k.peerCDT, Held: k.sqLen,
		RcvNxt: k.rcvNxt, RcvCredit: k.rcvCDT, Modulus: k.mod, EDOutstanding: k.edOut != 0}
	for _, e := range k.reseq {
		if e.ok {
			w.Resequencing++
		}
	}
	return w
}

// entry returns the i-th DT of the send queue (0: number sndUna).
func (k *Conn) entry(i int) *sendEntry { return &k.sq[(k.sqHead+i)%len(k.sq)] }

// outstanding is the number of DTs sent and not acknowledged.
func (k *Conn) outstanding() int { return int(k.diff(k.sndNxt, k.sndUna)) }

// NotifyReady asks for a TReady once acknowledgements free room.
func (k *Conn) NotifyReady() { k.wantReady = true }

// Room returns how many DTs the send queue can still take.
func (k *Conn) Room() int { return len(k.sq) - k.sqLen }

// maxData is the user data one DT carries.
func (k *Conn) maxData() int { return k.tpduSize - k.dtHeaderLen() }

func (k *Conn) dtHeaderLen() int {
	n := 1 + header.TPDUFixedLen(header.TPDUCodeDT, k.ext)
	if k.cksum {
		n += header.TPDUChecksumParamLen
	}
	return n
}

// Data sends tsdu (consumed when it returns true) as one or more DTs
// (T-DATA request). It returns false, tsdu untouched, when the
// connection is not open or the send queue lacks room for its DTs: the
// user gets a TReady when acknowledgements have freed some.
func (k *Conn) Data(tsdu osi.Chain) bool {
	t := k.t
	c := t.c
	c.Enter(t.sym.dataReq)
	defer c.Exit(t.sym.dataReq)
	if k.state != stOpen && k.state != stWaitAck {
		t.stats.TxRefused++
		return false
	}
	n := t.bufs.Len(tsdu)
	per := k.maxData()
	dts := max(1, (n+per-1)/per)
	if dts > k.Room() {
		t.stats.TxRefused++
		k.wantReady = true
		return false
	}
	if dts == 1 {
		if !k.segment(tsdu, n, true) {
			t.stats.TxRefused++
			return false
		}
	} else {
		for off := 0; off < n; off += per {
			part := t.bufs.Slice(osi.Tx, tsdu, off, min(per, n-off))
			if part == 0 || !k.segment(part, min(per, n-off), off+per >= n) {
				// Out of memory half way: the DTs queued go, the rest
				// of the TSDU is lost; the connection cannot keep its
				// promise and is released.
				t.bufs.Free(part)
				t.bufs.Free(tsdu)
				k.giveUp(CauseNoMemory)
				return true
			}
		}
		t.bufs.Free(tsdu)
	}
	k.Stats.TSDUsSent++
	k.Stats.OctetsSent += uint64(n)
	k.output()
	return true
}

// segment queues one DT over data (consumed): its header chained in
// front, numbered, EOT as given, the checksum computed.
func (k *Conn) segment(data osi.Chain, n int, eot bool) bool {
	t := k.t
	c := t.c
	c.Enter(t.sym.segment)
	defer c.Exit(t.sym.segment)
	f := header.TPDUFields{Code: header.TPDUCodeDT, Extended: k.ext, DstRef: k.peerRef, Number: k.sndNew, EOT: eot}
	if k.cksum {
		f.Params = k.t.cksumParam()
	}
	hl := header.TPDUHeaderLen(&f)
	ch, a := t.bufs.Prepend(osi.Tx, data, hl)
	if ch == 0 {
		t.stats.TxNoMemory++
		return false
	}
	h := header.TPDU(t.hdr[:hl])
	h.Encode(&f)
	c.Write(a, h)
	if k.cksum {
		t.checksum(ch, a, h, hl+n)
	}
	e := k.entry(k.sqLen)
	*e = sendEntry{ch: ch, hlen: hl}
	k.sqLen++
	k.sndNew = k.add(k.sndNew, 1)
	return true
}

// output sends the DTs the peer's credit allows, while no ED is
// outstanding; a waiting AK rides in front of the first. An AK still
// owed afterwards goes on its own.
func (k *Conn) output() {
	t := k.t
	c := t.c
	c.Enter(t.sym.output)
	defer c.Exit(t.sym.output)
	if k.state == stOpen {
		for k.edOut == 0 && k.outstanding() < k.sqLen && k.outstanding() < int(k.peerCDT) {
			e := k.entry(k.outstanding())
			if !k.transmit(e) {
				break
			}
			k.sndNxt = k.add(k.sndNxt, 1)
			k.Stats.DTsSent++
		}
	}
	if k.akOwed {
		k.sendAK(0)
	}
}

// transmit sends one DT of the queue (first time or again), with a
// concatenated AK when one is owed or pending.
func (k *Conn) transmit(e *sendEntry) bool {
	t := k.t
	t.bufs.Hold(e.ch)
	nsdu := e.ch
	if t.p.Concatenate && (k.akOwed || k.rcvUnacked > 0) && k.state == stOpen {
		if withAK := k.sendAK(e.ch); withAK != 0 {
			nsdu = withAK
			t.stats.TxAKConcatenated++
		}
	}
	if !t.net.UnitdataRequest(k.local.NSAP, k.remote.NSAP, nsdu) {
		t.stats.TxNoMemory++
		// The network freed the NSDU and with it our extra hold.
		return false
	}
	if e.tries > 0 {
		t.stats.TxRetransmissions++
		k.Stats.DTsRetransmitted++
	}
	t.stats.TxDT++
	e.tries++
	e.due = t.env.Now() + t.p.T1
	if !k.t1.Pending() {
		k.t1.Start(t.p.T1)
	}
	return true
}

// sendAK builds an AK of the receive state. With dt non-zero it is
// chained in front of that DT (held already) and the NSDU is returned
// for the caller to send; otherwise it is sent on its own. It returns
// 0 when memory ran out (or when sent on its own).
func (k *Conn) sendAK(dt osi.Chain) osi.Chain {
	t := k.t
	c := t.c
	c.Enter(t.sym.akBuild)
	defer c.Exit(t.sym.akBuild)
	if k.rcvNxt == k.lastAKNxt && k.rcvCDT != k.lastAKCDT && k.akSent {
		k.subseq++ // the same lower edge with another credit
	} else if k.rcvNxt != k.lastAKNxt {
		k.subseq = 0
	}
	f := header.TPDUFields{Code: header.TPDUCodeAK, Extended: k.ext, DstRef: k.peerRef, Number: k.rcvNxt, CDT: uint16(k.rcvCDT)}
	var p []byte
	if k.cksum {
		p = t.cksumParam()
	}
	if k.subseq != 0 {
		p = header.AppendTPDUParam(p, header.TPDUParamSubsequence, byte(k.subseq>>8), byte(k.subseq))
	}
	if k.fccSend {
		l, s, d := k.fccLWE, k.fccSub, k.fccCDT
		p = header.AppendTPDUParam(p, header.TPDUParamFlowControl, byte(l>>24), byte(l>>16), byte(l>>8), byte(l), byte(s>>8), byte(s), byte(d>>8), byte(d))
		k.fccSend = false
		t.stats.TxFCC++
	}
	f.Params = p
	hl := header.TPDUHeaderLen(&f)
	var ch osi.Chain
	var a memory.Addr
	if dt != 0 {
		ch, a = t.bufs.Prepend(osi.Tx, dt, hl)
	} else {
		ch, a = t.bufs.New(osi.Tx, hl)
	}
	if ch == 0 {
		t.stats.TxNoMemory++
		return 0
	}
	h := header.TPDU(t.hdr[:hl])
	h.Encode(&f)
	c.Write(a, h)
	if k.cksum {
		t.checksumHeader(a, h)
	}
	if k.rcvCDT > k.lastAKCDT && k.subseq != 0 {
		// A window reopened at the same edge: the peer must confirm it.
		k.fccWait = true
		k.fccTries = 0
	}
	k.lastAKNxt, k.lastAKCDT, k.akSent = k.rcvNxt, k.rcvCDT, true
	k.rcvUnacked, k.akOwed = 0, false
	k.tAck.Stop()
	k.restartWindowTimer()
	t.stats.TxAK++
	k.Stats.AKsSent++
	if dt != 0 {
		return ch
	}
	t.net.UnitdataRequest(k.local.NSAP, k.remote.NSAP, ch)
	return 0
}

// restartWindowTimer arms W, or T1 while a reopened window waits for its
// confirmation.
func (k *Conn) restartWindowTimer() {
	if k.fccWait {
		k.tWin.Start(k.t.p.T1)
	} else {
		k.tWin.Start(k.t.p.WindowTime)
	}
}

// SetCredit changes the credit this end gives (credit reduction, or
// reopening a window): an AK tells the peer at once.
func (k *Conn) SetCredit(n int) {
	max := len(k.reseq)
	if !k.ext {
		max = min(max, header.TPDUNormalMaxCredit)
	}
	v := uint32(min(max, n))
	if v == k.rcvCDT {
		return
	}
	// DTs kept beyond a reduced window are dropped: the sender resends
	// them when the window opens again.
	for i := int(v); i < len(k.reseq); i++ {
		if k.reseq[i].ok {
			k.t.bufs.Free(k.reseq[i].ch)
			k.reseq[i] = rxEntry{}
		}
	}
	k.rcvCDT = v
	if k.state == stOpen {
		k.akOwed = true
		k.output()
	}
}

// Expedited sends data (consumed when true; at most 16 octets) as an ED
// (T-EXPEDITED-DATA request). It returns false when expedited data was
// not agreed, the connection is not open, or an ED is outstanding (a
// TReady follows its EA).
func (k *Conn) Expedited(data osi.Chain) bool {
	t := k.t
	c := t.c
	c.Enter(t.sym.edReq)
	defer c.Exit(t.sym.edReq)
	n := t.bufs.Len(data)
	if !k.expedited || k.state != stOpen || k.edOut != 0 || n > header.TPDUMaxExpeditedData {
		if k.edOut != 0 {
			k.wantReady = true
		}
		t.stats.TxRefused++
		return false
	}
	f := header.TPDUFields{Code: header.TPDUCodeED, Extended: k.ext, DstRef: k.peerRef, Number: k.edSndNr, EOT: true}
	if k.cksum {
		f.Params = t.cksumParam()
	}
	hl := header.TPDUHeaderLen(&f)
	ch, a := t.bufs.Prepend(osi.Tx, data, hl)
	if ch == 0 {
		t.stats.TxNoMemory++
		return false
	}
	h := header.TPDU(t.hdr[:hl])
	h.Encode(&f)
	c.Write(a, h)
	if k.cksum {
		t.checksum(ch, a, h, hl+n)
	}
	k.edOut, k.edTries = ch, 0
	k.sendED()
	return true
}

func (k *Conn) sendED() {
	t := k.t
	t.bufs.Hold(k.edOut)
	if t.net.UnitdataRequest(k.local.NSAP, k.remote.NSAP, k.edOut) {
		t.stats.TxED++
		k.Stats.EDsSent++
		if k.edTries > 0 {
			t.stats.TxRetransmissions++
		}
	}
	k.edTries++
	k.edDue = t.env.Now() + t.p.T1
	if !k.t1.Pending() {
		k.t1.Start(t.p.T1)
	}
}

// Disconnect releases the connection (T-DISCONNECT request): whatever it
// holds is freed and a DR goes to the peer (normal disconnect), or a
// refusal when the connection was only offered.
func (k *Conn) Disconnect() {
	switch k.state {
	case stWaitUser:
		k.Refuse(header.TPDUReasonNormal)
	case stWaitCC, stWaitAck, stOpen:
		k.closeWith(header.TPDUReasonNormal)
	}
}

// closeWith frees the connection's data, sends a DR with reason and
// waits for the DC (state CLOSING).
func (k *Conn) closeWith(reason uint8) {
	t := k.t
	c := t.c
	c.Enter(t.sym.disc)
	defer c.Exit(t.sym.disc)
	k.flush()
	if k.peerRef == 0 && k.state == stWaitCC {
		// No reference of the peer's yet: nothing to release there.
		k.freeze()
		return
	}
	k.state = stClosing
	k.ctlTries = 0
	k.drReason = reason
	k.sendDR()
	k.t1.Start(t.p.T1)
}

// giveUp releases the connection for cause, tells the user, and sends a
// DR (reason protocol error or not specified).
func (k *Conn) giveUp(cause Cause) {
	t := k.t
	if k.state == stClosed || k.state == stFrozen || k.state == stClosing {
		return
	}
	t.stats.GivenUp++
	reason := uint8(header.TPDUReasonNotSpecified)
	if cause == CauseProtocolError {
		reason = header.TPDUReasonProtocolError
	}
	u := k.user
	k.closeWith(reason)
	if u != nil {
		u.TDisconnectIndication(k, Disconnect{Cause: cause})
	}
}

// flush frees every chain the connection holds and stops its timers.
func (k *Conn) flush() {
	t := k.t
	for i := range k.sqLen {
		t.bufs.Free(k.entry(i).ch)
		*k.entry(i) = sendEntry{}
	}
	k.sqLen = 0
	for i := range k.reseq {
		if k.reseq[i].ok {
			t.bufs.Free(k.reseq[i].ch)
			k.reseq[i] = rxEntry{}
		}
	}
	t.bufs.Free(k.tsdu)
	k.tsdu = 0
	t.bufs.Free(k.edOut)
	k.edOut = 0
	k.t1.Stop()
	k.tAck.Stop()
	k.tWin.Stop()
	k.tInact.Stop()
}

// freeze ends the connection: its reference stays unusable for the
// freeze time.
func (k *Conn) freeze() {
	k.flush()
	k.state = stFrozen
	k.user = nil
	k.t.stats.Released++
	if k.t.p.FreezeTime > 0 {
		k.tFreeze.Start(k.t.p.FreezeTime)
	} else {
		k.state = stClosed
	}
}

// release frees a slot that never got anywhere (no TPDU of it left).
func (k *Conn) release() {
	k.flush()
	k.state = stClosed
	k.user = nil
}
