package tp4_test

import (
	"testing"

	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/tp4"
)

// dtNumber returns the number of the DT in an NSDU, if it has one.
func dtNumber(b []byte) (uint32, bool) {
	for _, h := range tpdus(b) {
		if h.Code() == header.TPDUCodeDT {
			return h.Number(false), true
		}
	}
	return 0, false
}

// A lost DT: the ones after it arrive out of sequence and are kept; T1
// resends the lost one; everything is delivered in order once. A lost AK
// makes the sender resend, and the receiver acknowledges the duplicate.
func TestLossAndResequencing(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	lost := map[uint32]bool{2: true}
	akLost := 0
	p.w.filter = func(n *nsdu) verdict {
		if nr, ok := dtNumber(n.b); ok && n.src == nsapA && lost[nr] {
			delete(lost, nr)
			return drop
		}
		// The AK for DT 6 and later, once.
		if n.src == nsapB && akLost == 0 {
			for _, h := range tpdus(n.b) {
				if h.Code() == header.TPDUCodeAK && h.Number(false) == 8 {
					akLost++
					return drop
				}
			}
		}
		return pass
	}
	var want []byte
	p.at(100*sim.Millisecond, func() {
		for i := range 8 {
			b := pattern(300, i)
			want = append(want, b...)
			p.ua.conn.Data(p.chainOf(b))
		}
	})
	p.run(3 * sim.Second)
	if !eq(p.ub.data, want) {
		t.Fatalf("B got %d octets, want %d in order", len(p.ub.data), len(want))
	}
	sa, sb := p.a.Stats(), p.b.Stats()
	if sb.RxDTOutOfSequence != 5 {
		t.Errorf("B kept %d DTs out of sequence, want 5 (3..7)", sb.RxDTOutOfSequence)
	}
	if sa.TxRetransmissions < 1 || sb.RxDTDuplicates == 0 && akLost > 0 {
		t.Errorf("A resent %d DTs; B saw %d duplicates (AK lost %d)", sa.TxRetransmissions, sb.RxDTDuplicates, akLost)
	}
	if w := p.ua.conn.Window(); w.Held != 0 || w.SndUna != 8 {
		t.Errorf("A's window %+v", w)
	}
	if w := p.ub.conn.Window(); w.Resequencing != 0 || w.RcvNxt != 8 {
		t.Errorf("B's window %+v", w)
	}
}

// DTs duplicated and reordered on the way are delivered once, in order.
func TestDuplicationAndReordering(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	i := 0
	p.w.filter = func(n *nsdu) verdict {
		i++
		switch i % 5 {
		case 1:
			return dup
		case 3:
			return delay
		}
		return pass
	}
	var want []byte
	p.at(100*sim.Millisecond, func() {
		for i := range 40 {
			b := pattern(150+i, i)
			want = append(want, b...)
			p.ua.conn.Data(p.chainOf(b))
		}
	})
	p.run(4 * sim.Second)
	if !eq(p.ub.data, want) || len(p.ub.tsdus) != 40 {
		t.Fatalf("B got %d TSDUs, %d octets; want 40, %d", len(p.ub.tsdus), len(p.ub.data), len(want))
	}
	if st := p.b.Stats(); st.RxDTDuplicates == 0 || st.RxDTOutOfSequence == 0 {
		t.Errorf("no duplicate or out-of-sequence DT seen: %+v", st)
	}
	if st := p.a.Stats(); st.RxAKStale == 0 {
		t.Errorf("A saw no stale AK though AKs were reordered: %+v", st)
	}
}

// A DT never acknowledged is sent N times, then the connection is
// released: the user learns why, and a DR goes.
func TestRetransmissionLimit(t *testing.T) {
	pa := testParams()
	p := newPair(t, pa, testParams())
	p.connect(t)
	p.at(100*sim.Millisecond, func() {
		p.w.filter = func(n *nsdu) verdict {
			if n.src == nsapA {
				if _, ok := dtNumber(n.b); ok {
					return drop
				}
			}
			return pass
		}
		p.ua.conn.Data(p.chainOf(pattern(100, 0)))
	})
	p.run(5 * sim.Second)
	d, ok := p.ua.disconnect()
	if !ok || d.Cause != tp4.CauseRetransmission {
		t.Fatalf("A's indications %v, disconnect %+v", p.ua.kinds(), d)
	}
	if got := p.w.count(nsapA, header.TPDUCodeDT); got != pa.N {
		t.Errorf("the DT went %d times, want N = %d", got, pa.N)
	}
	if db, ok := p.ub.disconnect(); !ok || db.Cause != tp4.CausePeer || db.Reason != header.TPDUReasonNotSpecified {
		t.Errorf("B: %v %+v", p.ub.kinds(), db)
	}
}

// A peer that vanishes: the inactivity timer releases the connection and
// the user is told; the window timer kept sending AKs meanwhile.
func TestInactivity(t *testing.T) {
	pa := testParams()
	p := newPair(t, pa, testParams())
	p.connect(t)
	p.at(200*sim.Millisecond, func() { p.w.filter = func(*nsdu) verdict { return drop } })
	p.run(10 * sim.Second)
	d, ok := p.ua.disconnect()
	if !ok || d.Cause != tp4.CauseInactivity {
		t.Fatalf("A: %v %+v", p.ua.kinds(), d)
	}
	if st := p.a.Stats(); st.InactivityReleases != 1 {
		t.Errorf("A: %+v", st)
	}
	if n := p.w.count(nsapA, header.TPDUCodeAK); n < 3 {
		t.Errorf("A sent %d AKs while idle; the window timer (%v) should have sent about %d", n, pa.WindowTime, int(pa.Inactivity/pa.WindowTime))
	}
}

// Credit reduction: the receiver lowers its credit to 2, and the sender
// never has more than 2 DTs beyond the lower edge; reopening the window
// at the same edge goes with a subsequence number, the sender confirms it
// (flow-control confirmation), and a lost confirmation is made good.
func TestCreditReductionAndFCC(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	fccLost := false
	p.w.filter = func(n *nsdu) verdict {
		if n.src == nsapA && !fccLost {
			for _, h := range tpdus(n.b) {
				if _, ok := h.Param(false, header.TPDUParamFlowControl); ok && h.Code() == header.TPDUCodeAK {
					fccLost = true
					return drop
				}
			}
		}
		return pass
	}
	p.at(100*sim.Millisecond, func() { p.ub.conn.SetCredit(2) })
	p.at(300*sim.Millisecond, func() {
		for i := range 10 {
			p.ua.conn.Data(p.chainOf(pattern(100, i)))
		}
	})
	p.at(700*sim.Millisecond, func() { p.ub.conn.SetCredit(0) })
	p.at(1200*sim.Millisecond, func() { p.ub.conn.SetCredit(8) })
	p.run(4 * sim.Second)
	// Never more than the credit beyond the lower edge on the wire.
	for _, x := range p.w.log {
		if x.src != nsapA {
			continue
		}
		if nr, ok := dtNumber(x.b); ok && nr > 9 {
			t.Errorf("DT %d beyond the 10 sent", nr)
		}
	}
	if len(p.ub.tsdus) != 10 {
		t.Errorf("B got %d TSDUs, want 10", len(p.ub.tsdus))
	}
	sa, sb := p.a.Stats(), p.b.Stats()
	if sa.TxFCC < 2 || sb.RxFCC < 1 || !fccLost {
		t.Errorf("FCC sent %d (one lost: %v), received %d", sa.TxFCC, fccLost, sb.RxFCC)
	}
	subs := 0
	for _, x := range p.w.log {
		if x.src == nsapB {
			for _, h := range tpdus(x.b) {
				if _, ok := h.Param(false, header.TPDUParamSubsequence); ok {
					subs++
				}
			}
		}
	}
	if subs == 0 {
		t.Error("no AK with a subsequence number")
	}
	if sb.RxDTOutsideWindow != 0 {
		t.Errorf("B dropped %d DTs beyond its window: the sender ignored the credit", sb.RxDTOutsideWindow)
	}
}

// Expedited data: delivered at once, acknowledged by EA, one
// outstanding; the second request is refused and TReady follows the EA;
// DTs wait while an ED is unacknowledged; a lost EA makes the ED go
// again and the duplicate is acknowledged but not delivered twice.
func TestExpedited(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	eaLost := false
	p.w.filter = func(n *nsdu) verdict {
		if n.src == nsapB && !eaLost {
			for _, h := range tpdus(n.b) {
				if h.Code() == header.TPDUCodeEA {
					eaLost = true
					return drop
				}
			}
		}
		return pass
	}
	var refused bool
	p.at(100*sim.Millisecond, func() {
		if !p.ua.conn.Expedited(p.chainOf([]byte("urgent"))) {
			t.Error("ED refused")
		}
		ch := p.chainOf([]byte("second"))
		refused = !p.ua.conn.Expedited(ch)
		if refused {
			p.H.Bufs().Free(ch)
		}
		p.ua.conn.Data(p.chainOf([]byte("after")))
	})
	p.run(2 * sim.Second)
	if !refused || p.ua.ready != 1 {
		t.Errorf("second ED refused %v, TReady %d", refused, p.ua.ready)
	}
	var exp []string
	for _, e := range p.ub.events {
		if e.kind == "expedited" {
			exp = append(exp, string(e.data))
		}
	}
	if len(exp) != 1 || exp[0] != "urgent" || string(p.ub.data) != "after" {
		t.Errorf("B: expedited %q, data %q", exp, p.ub.data)
	}
	if st := p.b.Stats(); st.RxEDDuplicates != 1 {
		t.Errorf("B: %d ED duplicates, want 1", st.RxEDDuplicates)
	}
	// The DT went only after the (second) EA.
	firstDT, lastED := -1, -1
	for i, x := range p.w.log {
		if x.src != nsapA {
			continue
		}
		for _, h := range tpdus(x.b) {
			if h.Code() == header.TPDUCodeDT && firstDT < 0 {
				firstDT = i
			}
			if h.Code() == header.TPDUCodeED {
				lastED = i
			}
		}
	}
	if firstDT < lastED {
		t.Errorf("a DT (NSDU %d) went before the ED's last transmission (NSDU %d)", firstDT, lastED)
	}
}

// A TPDU damaged in the network fails its checksum, is dropped and
// counted, and the retransmission makes up for it.
func TestBadChecksum(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	damaged := 0
	p.w.filter = func(n *nsdu) verdict {
		if _, ok := dtNumber(n.b); ok && n.src == nsapA && damaged == 0 {
			damaged++
			n.b = append([]byte(nil), n.b...)
			n.b[len(n.b)-1] ^= 0x10
		}
		return pass
	}
	p.at(100*sim.Millisecond, func() { p.ua.conn.Data(p.chainOf(pattern(500, 1))) })
	p.run(2 * sim.Second)
	if st, sa := p.b.Stats(), p.a.Stats(); st.RxBadChecksum != 1 || st.RxDT != 1 || sa.TxRetransmissions != 1 {
		t.Errorf("B: %d bad checksums, %d good DTs, A resent %d; want 1, 1, 1", st.RxBadChecksum, st.RxDT, sa.TxRetransmissions)
	}
	if !eq(p.ub.data, pattern(500, 1)) {
		t.Errorf("B got %d octets", len(p.ub.data))
	}
}

// Concatenation: data both ways, and the AKs ride in front of DTs.
func TestConcatenation(t *testing.T) {
	pb := testParams()
	p := newPair(t, testParams(), pb)
	p.connect(t)
	p.ub.onData = func(c *tp4.Conn, b []byte) {
		c.Data(p.chainOf(b)) // echo each TSDU
	}
	p.at(100*sim.Millisecond, func() {
		for i := range 20 {
			p.ua.conn.Data(p.chainOf(pattern(100, i)))
		}
	})
	p.run(2 * sim.Second)
	if len(p.ua.tsdus) != 20 {
		t.Fatalf("A got %d echoes, want 20", len(p.ua.tsdus))
	}
	both := 0
	for _, x := range p.w.log {
		hs := tpdus(x.b)
		if len(hs) == 2 && hs[0].Code() == header.TPDUCodeAK && hs[1].Code() == header.TPDUCodeDT {
			both++
		}
	}
	if both == 0 || p.b.Stats().TxAKConcatenated == 0 {
		t.Errorf("no AK concatenated with a DT (%d NSDUs)", len(p.w.log))
	}
	p.w.checkAllSums(t)
}

// Extended formats carry a credit above 15, and normal formats wrap
// their numbers modulo 128 over a long transfer.
func TestFormatsAndWrap(t *testing.T) {
	for _, ext := range []bool{false, true} {
		pa, pb := testParams(), testParams()
		pa.Extended, pb.Extended = ext, ext
		if ext {
			pa.Credit, pb.Credit = 40, 40
			pa.SendBuffer = 100
		}
		p := newPair(t, pa, pb)
		p.connect(t)
		var want []byte
		for step := range 6 {
			p.at(sim.Time(100+200*step)*sim.Millisecond, func() {
				for i := range 50 {
					b := pattern(64, step*50+i)
					want = append(want, b...)
					if !p.ua.conn.Data(p.chainOf(b)) {
						t.Errorf("ext %v: T-DATA refused", ext)
					}
				}
			})
		}
		p.run(3 * sim.Second)
		if !eq(p.ub.data, want) {
			t.Errorf("ext %v: B got %d octets of %d", ext, len(p.ub.data), len(want))
		}
		w := p.ua.conn.Window()
		wantUna := uint32(300 % 128)
		if ext {
			wantUna = 300
		}
		if w.SndUna != wantUna || w.Held != 0 {
			t.Errorf("ext %v: sender window %+v", ext, w)
		}
		if ext && p.ub.conn.Window().RcvCredit != 40 {
			t.Errorf("credit %d, want 40", p.ub.conn.Window().RcvCredit)
		}
	}
}

// After release a reference is frozen: a late TPDU for it is counted and
// ignored, and a new connection takes another slot.
func TestReferenceFreezing(t *testing.T) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	var old uint16
	var late []byte
	p.at(200*sim.Millisecond, func() {
		old, _ = p.ub.conn.Ref()
		for _, x := range p.w.log {
			if _, ok := dtNumber(x.b); ok {
				late = x.b
			}
		}
		p.ua.conn.Disconnect()
	})
	p.at(100*sim.Millisecond, func() { p.ua.conn.Data(p.chainOf(pattern(10, 0))) })
	p.at(600*sim.Millisecond, func() {
		// A late duplicate of the DT.
		p.w.q = append(p.w.q, nsdu{nsapA, nsapB, late})
		p.H.Schedule(p.w.task)
		c, err := p.a.Connect(p.ua, tp4.Address{NSAP: nsapA, TSAP: []byte("A")}, tp4.Address{NSAP: nsapB, TSAP: []byte("B")})
		if err != nil {
			t.Error(err)
		}
		p.ua.conn = c
	})
	p.run(2 * sim.Second)
	if st := p.b.Stats(); st.RxFrozenRef != 1 {
		t.Errorf("B: %d TPDUs for frozen references, want 1", st.RxFrozenRef)
	}
	if r, _ := p.ub.conn.Ref(); r == old || p.ub.conn.State() != tp4.StateOpen {
		t.Errorf("the new connection has reference %#x (old %#x), state %v", r, old, p.ub.conn.State())
	}
	if late == nil {
		t.Fatal("no DT logged")
	}
}

// A CR for a TSAP nobody listens on is refused with reason 2; a refusal
// by the user goes as a DR with its reason; the initiator is told.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		tsap   string
		refuse uint8
		want   uint8
	}{{"nobody", 0, header.TPDUReasonNotAttached}, {"B", header.TPDUReasonRefused, header.TPDUReasonRefused}} {
		p := newPair(t, testParams(), testParams())
		p.ub.refuse = tc.refuse
		p.H.OnStart(func() {
			c, err := p.a.Connect(p.ua, tp4.Address{NSAP: nsapA, TSAP: []byte("A")}, tp4.Address{NSAP: nsapB, TSAP: []byte(tc.tsap)})
			if err != nil {
				t.Fatal(err)
			}
			p.ua.conn = c
		})
		p.run(time(1))
		d, ok := p.ua.disconnect()
		if !ok || d.Cause != tp4.CauseRefused || d.Reason != tc.want {
			t.Errorf("%s: A got %v %+v, want refused with %d", tc.tsap, p.ua.kinds(), d, tc.want)
		}
		if n := p.Held(); n != 0 {
			t.Errorf("%s: %d structures held", tc.tsap, n)
		}
	}
}

func time(s int) sim.Time { return sim.Time(s) * sim.Second }

// An idle connection stays up: both ends' window timers send AKs that
// keep the other's inactivity timer from running out.
func TestIdleConnectionKeptAlive(t *testing.T) {
	pa := testParams()
	p := newPair(t, pa, testParams())
	p.connect(t)
	p.run(4 * pa.Inactivity)
	if p.ua.conn.State() != tp4.StateOpen || p.ub.conn.State() != tp4.StateOpen {
		t.Fatalf("after %v idle: %v and %v", 4*pa.Inactivity, p.ua.conn.State(), p.ub.conn.State())
	}
	if n := p.w.count(nsapB, header.TPDUCodeAK); n < 3*int(pa.Inactivity/pa.WindowTime) {
		t.Errorf("the responder sent %d AKs in %v (window time %v)", n, 4*pa.Inactivity, pa.WindowTime)
	}
}
