package top_test

import (
	"bytes"
	"testing"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

// prober is a bare station on the segment: it sends crafted frames and
// keeps what reaches it.
type prober struct {
	k    *sim.Scheduler
	port *ethersim.Attachment
	mac  ethersim.MAC
	got  [][]byte // frames without FCS
	ev   []*sim.Event
}

func (p *prober) Receive(frame []byte) {
	if len(frame) < 18 || !ethersim.CheckFCS(frame) {
		return
	}
	f := append([]byte(nil), frame[:len(frame)-4]...)
	if [6]byte(f[0:6]) == p.mac || f[0]&1 != 0 {
		p.got = append(p.got, f)
	}
}

func newProber(t testing.TB, r *rig, last byte) *prober {
	t.Helper()
	return newSegProber(t, r.k, r.seg, last)
}

// newSegProber attaches a prober to seg.
func newSegProber(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, last byte) *prober {
	t.Helper()
	p := &prober{k: k, mac: ethersim.MAC{2, 0, 0, 0, 0, last}}
	var err error
	if p.port, err = seg.Attach("probe", p, ethersim.FaultParams{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// sendAt transmits an 802.3 frame with an LLC PDU to dst at time at.
func (p *prober) sendAt(at sim.Time, dst ethersim.MAC, llcPDU []byte) {
	f := make([]byte, 14+len(llcPDU))
	header.Ethernet(f).Encode(&header.EthernetFields{Dst: dst, Src: p.mac, Type: uint16(len(llcPDU))})
	copy(f[14:], llcPDU)
	for len(f) < header.EthernetMinFrameLen {
		f = append(f, 0)
	}
	frame := ethersim.AppendFCS(f)
	e := sim.NewEvent("probe.send", func() { _ = p.port.Transmit(frame) })
	p.ev = append(p.ev, e)
	p.k.Schedule(e, at)
}

// llcOf returns the LLC PDUs of the frames received, by the 802.3 length.
func (p *prober) llcOf() [][]byte {
	var out [][]byte
	for _, f := range p.got {
		if l := int(header.Ethernet(f).Type()); header.IsLengthField(uint16(l)) && 14+l <= len(f) {
			out = append(out, f[14:14+l])
		}
	}
	return out
}

// clnpPDU builds a DT PDU (LLC header in front) from src to dst with the
// given data, lifetime and flags; bad spoils the checksum.
func clnpPDU(src, dst osi.NSAP, data []byte, lifetime, flags uint8, seg *header.CLNPSegmentation, bad bool) []byte {
	f := header.CLNPFields{Type: header.CLNPTypeDT, Flags: flags, Lifetime: lifetime, Dst: dst.Bytes(), Src: src.Bytes()}
	if seg != nil {
		f.Seg = *seg
	}
	li := header.CLNPHeaderLen(&f)
	f.SegmentLength = uint16(li + len(data))
	b := make([]byte, 3+li+len(data))
	b[0], b[1], b[2] = 0xFE, 0xFE, 0x03
	h := header.CLNP(b[3 : 3+li])
	h.Encode(&f)
	h.SetChecksum(h.CalculateChecksum())
	if bad {
		h.SetChecksum(h.Checksum() ^ 0x0101)
	}
	copy(b[3+li:], data)
	return b
}

// erReasons returns the reason codes of the ER PDUs among pdus.
func erReasons(t testing.TB, pdus [][]byte) []uint8 {
	var out []uint8
	for _, p := range pdus {
		if len(p) < 4 || p[0] != 0xFE {
			continue
		}
		h := header.CLNP(p[3:])
		if !h.IsValid(len(p)-3) || h.Type() != header.CLNPTypeER {
			continue
		}
		if !h.IsChecksumValid() {
			t.Errorf("ER with a bad checksum: % x", p)
		}
		v, ok := h.Option(header.CLNPOptReasonDiscard)
		if !ok || len(v) != 2 {
			t.Errorf("ER without a reason: % x", p)
			continue
		}
		out = append(out, v[0])
	}
	return out
}

// A CLNS user's NSDUs longer than a frame are segmented by pointer
// manipulation and reassembled by chaining, byte for byte, remote and in
// loopback.
func TestSegmentation(t *testing.T) {
	for _, loop := range []bool{false, true} {
		for _, size := range []int{1441, 2880, 4000, 9000} {
			r := build(t, top.LevelCLNS, size, 50, loop, clnp.DefaultParams())
			res := r.run(t, 20*sim.Second)
			sa, sb := r.a.clns.N.Stats(), r.b.clns.N.Stats()
			per := (1497 - 57) / 8 * 8
			segs := (size + per - 1) / per
			if segs == 1 {
				segs = 0
			}
			t.Logf("loop=%v %d B: %.2f Mbit/s, %d segments sent, %d reassembled", loop, size, res.Mbps(), sa.TxSegments, sb.ReasmOK)
			if got := r.ub.Received(); got.Messages != 50 || got.Corrupt != 0 {
				t.Errorf("loop=%v %d B: recipient %+v", loop, size, got)
			}
			if !loop && (sa.TxSegments != uint64(50*segs) || sb.ReasmOK != uint64(50*min(segs, 1))) {
				t.Errorf("%d B: %d segments, %d reassembled; want %d and %d", size, sa.TxSegments, sb.ReasmOK, 50*segs, 50*min(segs, 1))
			}
			noGuestErrors(t, r.a, r.b)
		}
	}
}

// XID and TEST commands are answered: XID with the type 1 information
// field, TEST with the command's own information, F = P, from the
// addressed SAP to the source SAP with the response bit.
func TestXIDAndTEST(t *testing.T) {
	r := build(t, top.LevelCLNS, 128, 1, false, clnp.DefaultParams())
	p := newProber(t, r, 9)
	p.sendAt(10*sim.Millisecond, r.b.addr, []byte{0xFE, 0x04, 0xBF, 0x81, 0x01, 0x00})
	p.sendAt(11*sim.Millisecond, r.b.addr, append([]byte{0xFE, 0x04, 0xF3}, []byte("simkron test info")...))
	p.sendAt(12*sim.Millisecond, r.b.addr, []byte{0x00, 0x04, 0xAF})       // null SAP, P clear
	p.sendAt(13*sim.Millisecond, r.b.addr, []byte{0x42, 0x04, 0xBF, 0x81}) // no such SAP
	p.sendAt(14*sim.Millisecond, r.b.addr, []byte{0xFE, 0x04, 0x00, 0x00}) // an I frame: type 2
	r.run(t, sim.Second)
	r.k.RunUntil(100 * sim.Millisecond)
	want := [][]byte{
		{0x04, 0xFF, 0xBF, 0x81, 0x01, 0x00},
		append([]byte{0x04, 0xFF, 0xF3}, []byte("simkron test info")...),
		{0x04, 0x01, 0xAF, 0x81, 0x01, 0x00},
	}
	got := p.llcOf()
	if len(got) != len(want) {
		t.Fatalf("prober got %d LLC PDUs, want %d: % x", len(got), len(want), got)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("response %d: % x, want % x", i, got[i], want[i])
		}
	}
	st := r.b.llc.L.Stats()
	if st.RxXID != 2 || st.RxTEST != 1 || st.RxNoSAP != 1 || st.RxType2 != 1 || st.TxXIDResponses != 2 || st.TxTESTResponses != 1 {
		t.Errorf("LLC counters %+v", st)
	}
}

// A PDU with a bad checksum, an expired lifetime or another system's
// address is dropped and counted, with an ER back when E/R asked for one;
// garbage is a counted header error.
func TestCLNPDiscards(t *testing.T) {
	r := build(t, top.LevelCLNS, 128, 1, false, clnp.DefaultParams())
	p := newProber(t, r, 9)
	me := nsapOf(9)
	r.b.clns.N.AddRoute(me, p.mac)
	dst := r.b.nsap.WithSelector(userSel)
	other := nsapOf(7)
	er := uint8(header.CLNPFlagSP | header.CLNPFlagER)
	seg := &header.CLNPSegmentation{ID: 1, Total: 0}
	withTotal := func(s *header.CLNPSegmentation, n int) *header.CLNPSegmentation {
		c := *s
		c.Total = uint16(n)
		return &c
	}
	data := bytes.Repeat([]byte{0xAB}, 40)
	li := 9 + 2 + 20 + 20 + 6
	p.sendAt(10*sim.Millisecond, r.b.addr, clnpPDU(me, dst, data, 20, er, withTotal(seg, li+40), true))                  // bad checksum: ER 0x02
	p.sendAt(11*sim.Millisecond, r.b.addr, clnpPDU(me, dst, data, 0, er, withTotal(seg, li+40), false))                  // lifetime 0: ER 0xA0
	p.sendAt(12*sim.Millisecond, r.b.addr, clnpPDU(me, other, data, 20, er, withTotal(seg, li+40), false))               // not for B: ER 0x80
	p.sendAt(13*sim.Millisecond, r.b.addr, clnpPDU(me, dst, data, 20, header.CLNPFlagSP, withTotal(seg, li+40), true))   // bad, no E/R: no ER
	p.sendAt(14*sim.Millisecond, r.b.addr, []byte{0xFE, 0xFE, 0x03, 0x81, 0xFF, 0x01, 0x00})                             // garbage
	p.sendAt(15*sim.Millisecond, r.b.addr, []byte{0xFE, 0xFE, 0x03, 0x81, 60, 0x01, 20, 0x1c, 0, 60, 0, 0, 20, 1, 2, 3}) // truncated header
	r.run(t, sim.Second)
	r.k.RunUntil(100 * sim.Millisecond)
	reasons := erReasons(t, p.llcOf())
	wantReasons := []uint8{header.CLNPReasonChecksum, header.CLNPReasonLifetimeTransit, header.CLNPReasonDestUnreachable}
	if !bytes.Equal(reasons, wantReasons) {
		t.Errorf("ER reasons % x, want % x", reasons, wantReasons)
	}
	st := r.b.clns.N.Stats()
	if st.RxBadChecksum != 2 || st.RxLifetimeExpired != 1 || st.RxNotForUs != 1 || st.RxHeaderErrors != 2 || st.TxER != 3 {
		t.Errorf("CLNP counters %+v", st)
	}
	noGuestErrors(t, r.a, r.b)
}

// Only the first segment of a PDU arrives: its reassembly times out
// (bounded by the lifetime: 4 units = 2 s), an ER says so, and every
// structure it held is given back.
func TestReassemblyTimeout(t *testing.T) {
	r := build(t, top.LevelCLNS, 128, 1, false, clnp.DefaultParams())
	p := newProber(t, r, 9)
	me := nsapOf(9)
	r.b.clns.N.AddRoute(me, p.mac)
	dst := r.b.nsap.WithSelector(userSel)
	li := 9 + 2 + 20 + 20 + 6
	flags := uint8(header.CLNPFlagSP | header.CLNPFlagER | header.CLNPFlagMS)
	p.sendAt(10*sim.Millisecond, r.b.addr, clnpPDU(me, dst, bytes.Repeat([]byte{1}, 64), 4, flags, &header.CLNPSegmentation{ID: 9, Offset: 0, Total: uint16(li + 200)}, false))
	r.run(t, sim.Second)
	_, _, rxP0, rxD0 := r.b.h.Mem().StructuresInUse()
	r.k.RunUntil(r.k.Now() + 50*sim.Millisecond)
	_, _, rxP1, rxD1 := r.b.h.Mem().StructuresInUse()
	if rxD1 <= rxD0 {
		t.Errorf("the segment holds no parameter structure while it waits (%d, %d)", rxD0, rxD1)
	}
	r.k.RunUntil(3 * sim.Second)
	st := r.b.clns.N.Stats()
	if st.ReasmTimeout != 1 || st.ReasmSegments != 1 {
		t.Errorf("CLNP counters %+v", st)
	}
	if got := erReasons(t, p.llcOf()); !bytes.Equal(got, []uint8{header.CLNPReasonLifetimeReasm}) {
		t.Errorf("ER reasons % x, want a1", got)
	}
	_, _, rxP2, rxD2 := r.b.h.Mem().StructuresInUse()
	if rxP2 != rxP0 || rxD2 != rxD0 {
		t.Errorf("after the time-out: %d primitives and %d parameter structures held, %d and %d before", rxP2, rxD2, rxP0, rxD0)
	}
	_ = rxP1
	if ts := r.b.h.TimerStats(); ts.Expired == 0 {
		t.Errorf("timer manager %+v: nothing expired", ts)
	}
}

// Frames corrupted on the wire are dropped by the card's FCS check and
// counted; nothing above sees them, nothing panics.
func TestCorruptedFrames(t *testing.T) {
	r := build(t, top.LevelCLNS, 1024, 400, false, clnp.DefaultParams())
	for _, a := range r.seg.Attachments() {
		if a.Name() == "b.nic0" {
			if err := a.SetFaults(ethersim.FaultParams{Corrupt: 0.05}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.ua.OnDone = r.k.Stop
	r.a.h.Start()
	r.b.h.Start()
	r.k.RunUntil(5 * sim.Second)
	got := r.ub.Received()
	crc := r.b.card.Stats().CRCErrors
	t.Logf("recipient %+v, card CRC errors %d", got, crc)
	if crc == 0 || got.Corrupt != 0 || got.Messages+crc != 400 && got.Messages+crc != 401 {
		t.Errorf("%d messages intact and %d CRC errors of 400 sent, %d corrupt delivered", got.Messages, crc, got.Corrupt)
	}
	noGuestErrors(t, r.a, r.b)
}

// With the inactive subset on both systems the NSDUs travel behind a
// one-octet header; the addresses come from the subnetwork addresses.
func TestInactiveSubset(t *testing.T) {
	cp := clnp.DefaultParams()
	cp.InactiveSubset = true
	r := build(t, top.LevelCLNS, 512, 100, false, cp)
	r.run(t, 10*sim.Second)
	sa, sb := r.a.clns.N.Stats(), r.b.clns.N.Stats()
	if sa.TxInactive != 100 || sb.RxInactive != 100 || sa.RxInactive != 1 || sa.TxDT != 0 {
		t.Errorf("A %+v\nB %+v", sa, sb)
	}
	if got := r.ub.Received(); got.Messages != 100 || got.Corrupt != 0 {
		t.Errorf("recipient %+v", got)
	}
}
