package top_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/tp4"
	"simkron/stack/top"
)

// dtRepeats reads a capture and counts, per source station, the DTs
// sent again: a new DT always carries the next number (modulo 128), so
// one that does not is a retransmission.
func dtRepeats(t testing.TB, capture []byte) (map[[6]byte]int, map[[6]byte]int) {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	next := map[[6]byte]uint32{}
	repeats, dts := map[[6]byte]int{}, map[[6]byte]int{}
	for {
		f, _, err := rd.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e := header.Ethernet(f)
		l := int(e.Type())
		if len(f) < 14+3+2 || !header.IsLengthField(e.Type()) || f[14] != header.LLCSAPISONet {
			continue
		}
		p := f[17 : 14+l]
		if p[0] != header.CLNPNLPID || int(p[1]) > len(p) {
			continue
		}
		nsdu := p[p[1]:]
		for len(nsdu) >= 2 {
			h := header.TPDU(nsdu)
			if !h.IsValid(false) {
				break
			}
			if h.Code() == header.TPDUCodeDT {
				src := e.Src()
				dts[src]++
				if nr := h.Number(false); nr == next[src] {
					next[src] = (nr + 1) % 128
				} else {
					repeats[src]++
				}
			}
			if header.TPDUHasData(h.Code()) {
				break
			}
			nsdu = nsdu[h.HeaderLen():]
		}
	}
	return repeats, dts
}

// TP4 moves 10 MiB each way between two PCs while the link loses 2% of
// the frames, damages 1% (the cards' FCS check drops them), duplicates
// 1% and reorders 1% (ethersim's reorder fault holds a frame back 3 ms,
// so that the ones behind it overtake it): every octet is delivered once
// and in order, the
// connection is released cleanly (DR answered by DC), and the DTs TP4
// counts as retransmitted are exactly those the capture shows sent
// again.
func TestReliabilityUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("10 MiB each way")
	}
	const size, msgs = 1024, 10240
	cfg := defaultUpper()
	cfg.tp.T1 = 300 * sim.Millisecond
	cfg.faults = ethersim.FaultParams{Drop: 0.02, Corrupt: 0.01, Duplicate: 0.01, Reorder: 0.01, ReorderDelay: 3 * sim.Millisecond}
	cfg.duplex = true
	r := buildUpper(t, top.LevelTP4, size, msgs, false, cfg)
	var capture bytes.Buffer
	if err := r.seg.Tap(&capture); err != nil {
		t.Fatal(err)
	}
	res := r.run(t, 2000*sim.Second)
	r.k.RunUntil(r.k.Now() + 5*sim.Second) // the DR's DC
	for _, u := range []*top.ConnUser{r.ua, r.ub} {
		got := u.Received()
		if got.Messages != msgs || got.Octets != msgs*size || got.OutOfOrder != 0 || got.Corrupt != 0 || u.Aborted {
			t.Errorf("a user received %+v (aborted %v), want %d messages of %d octets in order", got, u.Aborted, msgs, size)
		}
	}
	if !r.ua.Released || !r.ub.Released {
		t.Errorf("released: %v %v", r.ua.Released, r.ub.Released)
	}
	for _, s := range []*top.TSAP{r.sa, r.sb} {
		if st := s.Conn().State(); st != tp4.StateFrozen && st != tp4.StateClosed {
			t.Errorf("a connection ends %v, want released", st)
		}
	}
	if d := r.sb.Disconnect; d.Cause != tp4.CausePeer || d.Reason != header.TPDUReasonNormal {
		t.Errorf("the recipient's disconnect %+v, want a normal release", d)
	}
	if st := r.ta.T.Stats(); st.RxDC != 1 {
		t.Errorf("the originator got %d DCs, want 1", st.RxDC)
	}
	repeats, dts := dtRepeats(t, capture.Bytes())
	ca, cb := r.sa.Conn().Stats, r.sb.Conn().Stats
	t.Logf("%.2f Mbit/s each way over %v; DTs sent a %d (%d again) b %d (%d again); capture: a %d (%d again) b %d (%d again)",
		res.Mbps(), res.Duration(), ca.DTsSent, ca.DTsRetransmitted, cb.DTsSent, cb.DTsRetransmitted, dts[r.a.addr], repeats[r.a.addr], dts[r.b.addr], repeats[r.b.addr])
	if uint64(repeats[r.a.addr]) != ca.DTsRetransmitted || uint64(repeats[r.b.addr]) != cb.DTsRetransmitted || ca.DTsRetransmitted == 0 || cb.DTsRetransmitted == 0 {
		t.Errorf("retransmissions: TP4 counts %d and %d, the capture shows %d and %d", ca.DTsRetransmitted, cb.DTsRetransmitted, repeats[r.a.addr], repeats[r.b.addr])
	}
	for _, p := range []*pc{r.a, r.b} {
		as := p.port.Stats()
		if as.Dropped == 0 || as.Corrupted == 0 || as.Duplicated == 0 || as.Reordered == 0 {
			t.Errorf("%s: faults %+v", p.name, as)
		}
		if cs := p.drv.Stats(); cs.CRCErrors+cs.RxErrors == 0 && p.card != nil {
			t.Logf("%s: card %+v", p.name, cs)
		}
	}
	sa, sb := r.ta.T.Stats(), r.tb.T.Stats()
	t.Logf("a: %+v\nb: %+v", sa, sb)
	if sa.RxDTDuplicates+sb.RxDTDuplicates == 0 || sa.RxDTOutOfSequence+sb.RxDTOutOfSequence == 0 {
		t.Error("no duplicate or out-of-sequence DT reached TP4")
	}
	noGuestErrors(t, r.a, r.b)
}

// A peer that vanishes while the connection is idle: the window timer
// keeps sending AKs that nobody answers, and the inactivity timer
// releases the connection; the transport user gets a T-DISCONNECT
// indication with the reason (inactivity) about I after the last TPDU
// heard.
func TestVanishedPeer(t *testing.T) {
	cfg := defaultUpper()
	cfg.tp.WindowTime = 2 * sim.Second
	cfg.tp.Inactivity = 7 * sim.Second
	r := buildUpper(t, top.LevelTP4, 64, 0, false, cfg)
	const gone = 3 * sim.Second
	r.k.Schedule(sim.NewEvent("test.vanish", func() {
		for _, p := range []*pc{r.a, r.b} {
			if err := p.port.SetFaults(ethersim.FaultParams{Drop: 1}); err != nil {
				t.Error(err)
			}
		}
	}), gone)
	var lost sim.Time
	r.ua.OnAborted = func() { r.a.c.Sync(); lost = r.a.c.LocalTime() }
	r.start()
	r.k.RunUntil(30 * sim.Second)
	if lo, hi := gone+cfg.tp.Inactivity-cfg.tp.WindowTime-top.TickPeriod, gone+cfg.tp.Inactivity+top.TickPeriod; lost <= lo || lost > hi {
		t.Errorf("the loss noticed at %v, want between %v and %v (I after the last TPDU heard)", lost, lo, hi)
	}
	if !r.ua.Connected || !r.ua.Aborted || r.ua.Released {
		t.Fatalf("originator connected %v aborted %v released %v", r.ua.Connected, r.ua.Aborted, r.ua.Released)
	}
	d := r.sa.Disconnect
	if d.Cause != tp4.CauseInactivity || r.ua.AbortArg>>8 != uint16(tp4.CauseInactivity) {
		t.Errorf("the user's disconnect: %+v (argument %#x), want inactivity", d, r.ua.AbortArg)
	}
	if st := r.ta.T.Stats(); st.InactivityReleases != 1 || st.TxAK < 2 {
		t.Errorf("originator: %d inactivity releases, %d AKs (the window timer's)", st.InactivityReleases, st.TxAK)
	}
	// The peer is told nothing (it is gone) but notices the same way.
	if !r.ub.Aborted || r.sb.Disconnect.Cause != tp4.CauseInactivity {
		t.Errorf("recipient: aborted %v, %+v", r.ub.Aborted, r.sb.Disconnect)
	}
}

// upperTrace runs a presentation exchange under seeded faults with a tap
// and an event-trace hash.
func upperTrace(t *testing.T, observe bool) (top.Result, []byte, uint64) {
	cfg := defaultUpper()
	cfg.tp.T1 = 300 * sim.Millisecond
	cfg.faults = ethersim.FaultParams{Drop: 0.02, Corrupt: 0.01, Duplicate: 0.01}
	cfg.echoEvery = 7
	r := buildUpper(t, top.LevelPresentation, 700, 300, false, cfg)
	var buf bytes.Buffer
	if err := r.seg.Tap(&buf); err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	r.k.Firing.Connect(func(ev *sim.Event) { fmt.Fprintf(h, "%d %s\n", ev.When(), ev.Name()) })
	if !observe {
		r.a.c.SetAttribution(false)
		r.b.c.SetAttribution(false)
	}
	res := r.run(t, 100*sim.Second)
	return res, buf.Bytes(), h.Sum64()
}

// The same configuration and seed give the same result, capture and
// event trace, faults included; counting cycles changes none of them.
func TestUpperDeterminism(t *testing.T) {
	r1, p1, h1 := upperTrace(t, true)
	r2, p2, h2 := upperTrace(t, true)
	r3, p3, h3 := upperTrace(t, false)
	if r1 != r2 || !bytes.Equal(p1, p2) || h1 != h2 {
		t.Errorf("two runs differ: %+v / %+v, pcap equal %v, trace %x / %x", r1, r2, bytes.Equal(p1, p2), h1, h2)
	}
	if r1 != r3 || !bytes.Equal(p1, p3) || h1 != h3 {
		t.Errorf("attribution changed the run: %+v / %+v, pcap equal %v, trace %x / %x", r1, r3, bytes.Equal(p1, p3), h1, h3)
	}
}

// BenchmarkTP4Remote1024 reports simulated TP4 DTs per host second for
// the transport user at 1024 bytes between two PCs (both ends' DTs and
// AKs simulated; the DTs counted are the originator's).
func BenchmarkTP4Remote1024(b *testing.B) {
	const msgs = 2000
	var dts uint64
	var simulated sim.Time
	for b.Loop() {
		r := buildUpper(b, top.LevelTP4, 1024, msgs, false, defaultUpper())
		res := r.run(b, 60*sim.Second)
		dts += r.ta.T.Stats().TxDT
		simulated += res.Duration()
	}
	b.ReportMetric(float64(dts)/b.Elapsed().Seconds(), "DTs/s")
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
}
