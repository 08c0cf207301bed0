package tp4_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/tp4"
)

// A connection is set up with the three-way handshake, carries TSDUs of
// every size (those longer than a DT segmented and reassembled), and is
// released with DR and DC; the references freeze and then free; every
// structure goes back to the memory manager.
func TestConnectDataRelease(t *testing.T) {
	pa := testParams()
	pa.TPDUSize = 256
	p := newPair(t, pa, testParams())
	p.connect(t)
	sizes := []int{1, 100, 247, 248, 600, 3000, 0}
	var want []byte
	p.at(100*sim.Millisecond, func() {
		for i, n := range sizes {
			b := pattern(n, i)
			want = append(want, b...)
			if !p.ua.conn.Data(p.chainOf(b)) {
				t.Errorf("T-DATA of %d octets refused", n)
			}
		}
	})
	p.at(2*sim.Second, func() { p.ua.conn.Disconnect() })
	p.run(10 * sim.Second)
	if d := cmp.Diff([]string{"connect-conf", "disconnect"}[:1], p.ua.kinds()); d != "" {
		t.Errorf("A's indications (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"connect-ind", "disconnect"}, p.ub.kinds()); d != "" {
		t.Errorf("B's indications (-want +got):\n%s", d)
	}
	if dc, _ := p.ub.disconnect(); dc != (tp4.Disconnect{Cause: tp4.CausePeer, Reason: header.TPDUReasonNormal}) {
		t.Errorf("B's disconnect %+v", dc)
	}
	if !eq(p.ub.data, want) || len(p.ub.tsdus) != len(sizes) {
		t.Fatalf("B got %d TSDUs, %d octets; want %d and %d", len(p.ub.tsdus), len(p.ub.data), len(sizes), len(want))
	}
	for i, n := range sizes {
		if len(p.ub.tsdus[i]) != n {
			t.Errorf("TSDU %d: %d octets, want %d", i, len(p.ub.tsdus[i]), n)
		}
	}
	// 256-octet TPDUs with a 9-octet DT header carry 247 octets each.
	wantDT := 0
	for _, n := range sizes {
		wantDT += max(1, (n+246)/247)
	}
	if got := p.w.count(nsapA, header.TPDUCodeDT); got != wantDT {
		t.Errorf("%d DTs sent, want %d", got, wantDT)
	}
	for _, c := range []struct {
		src  string
		code uint8
		want int
	}{{"A", header.TPDUCodeCR, 1}, {"B", header.TPDUCodeCC, 1}, {"A", header.TPDUCodeDR, 1}, {"B", header.TPDUCodeDC, 1}} {
		src := nsapA
		if c.src == "B" {
			src = nsapB
		}
		if got := p.w.count(src, c.code); got != c.want {
			t.Errorf("%s sent %d TPDUs %#x, want %d", c.src, got, c.code, c.want)
		}
	}
	p.w.checkAllSums(t)
	for _, e := range []*tp4.TP4{p.a, p.b} {
		for _, c := range e.Conns() {
			if c.State() != tp4.StateClosed {
				t.Errorf("a connection is %v after the freeze time", c.State())
			}
		}
	}
	if n := p.Held(); n != 0 {
		t.Errorf("%d structures still held", n)
	}
	if st := p.a.Stats(); st.TxRetransmissions != 0 || st.RxBadChecksum != 0 {
		t.Errorf("A: %+v", st)
	}
}

// The CR's proposals and the responder's own settings decide the
// format, the checksum, expedited data and the TPDU size, and the
// TPDUs on the wire follow what was agreed.
func TestNegotiation(t *testing.T) {
	type side struct {
		ext, cksum, exp bool
		size            sim.Size
	}
	for _, tc := range []struct {
		name           string
		a, b           side
		ext, cksum, ex bool
		size           int
	}{
		{"defaults", side{false, true, true, 2048}, side{false, true, true, 2048}, false, true, true, 2048},
		{"extended both", side{true, true, true, 2048}, side{true, true, true, 1024}, true, true, true, 1024},
		{"extended refused", side{true, true, false, 512}, side{false, true, true, 8192}, false, true, false, 512},
		{"no checksum both", side{false, false, true, 2048}, side{false, false, true, 2048}, false, false, true, 2048},
		{"no checksum refused", side{false, false, true, 2048}, side{false, true, true, 2048}, false, true, true, 2048},
		{"checksum kept", side{false, true, true, 2048}, side{false, false, true, 2048}, false, true, true, 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa, pb := testParams(), testParams()
			pa.Extended, pa.Checksum, pa.Expedited, pa.TPDUSize = tc.a.ext, tc.a.cksum, tc.a.exp, tc.a.size
			pb.Extended, pb.Checksum, pb.Expedited, pb.TPDUSize = tc.b.ext, tc.b.cksum, tc.b.exp, tc.b.size
			p := newPair(t, pa, pb)
			p.connect(t)
			p.at(100*sim.Millisecond, func() { p.ua.conn.Data(p.chainOf(pattern(3000, 3))) })
			p.run(2 * sim.Second)
			for _, c := range []*tp4.Conn{p.ua.conn, p.ub.conn} {
				ext, ck, ex, size := c.Negotiated()
				if ext != tc.ext || ck != tc.cksum || ex != tc.ex || size != tc.size || c.State() != tp4.StateOpen {
					t.Errorf("negotiated ext %v checksum %v expedited %v size %d (%v), want %v %v %v %d", ext, ck, ex, size, c.State(), tc.ext, tc.cksum, tc.ex, tc.size)
				}
			}
			if len(p.ub.data) != 3000 || !eq(p.ub.data, pattern(3000, 3)) {
				t.Errorf("B got %d octets", len(p.ub.data))
			}
			// After the CR, every TPDU carries the checksum exactly when
			// agreed; DT LIs are those of the agreed format.
			for _, x := range p.w.log[1:] {
				for _, h := range tpdus(x.b) {
					ext := tc.ext && h.Code() != header.TPDUCodeCC
					if !h.IsValid(ext) {
						t.Fatalf("TPDU % x not valid (ext %v)", []byte(h), ext)
					}
					if _, ok := h.Param(ext, header.TPDUParamChecksum); ok != tc.cksum {
						t.Errorf("TPDU %#x: checksum present %v, want %v", h.Code(), ok, tc.cksum)
					}
					if h.Code() == header.TPDUCodeDT && h.LI() != map[[2]bool]int{{false, false}: 4, {false, true}: 8, {true, false}: 7, {true, true}: 11}[[2]bool{tc.ext, tc.cksum}] {
						t.Errorf("DT LI %d for ext %v checksum %v", h.LI(), tc.ext, tc.cksum)
					}
					if h.Code() == header.TPDUCodeDT && h.HeaderLen()+len(h.Data()) > tc.size {
						t.Errorf("a DT of %d octets exceeds the TPDU size %d", h.HeaderLen()+len(h.Data()), tc.size)
					}
				}
			}
			p.w.checkAllSums(t)
		})
	}
}

// The acknowledgement step: one-way, an AK goes after every k-th DT;
// with a number of DTs that is no multiple of k the last ones are
// acknowledged by the acknowledgement timer.
func TestAckStep(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4} {
		pb := testParams()
		pb.AckStep = k
		p := newPair(t, testParams(), pb)
		p.connect(t)
		const dts = 30
		p.at(100*sim.Millisecond, func() {
			for i := range dts {
				if !p.ua.conn.Data(p.chainOf(pattern(200, i))) {
					t.Errorf("T-DATA %d refused", i)
				}
			}
		})
		p.run(3 * sim.Second)
		aks := p.w.count(nsapB, header.TPDUCodeAK)
		// One AK per k DTs, one for the remainder by the timer; the
		// window timer (2 s) adds one late AK.
		want := dts/k + min(dts%k, 1) + 1
		if aks != want {
			t.Errorf("ack step %d: %d AKs for %d DTs, want %d", k, aks, dts, want)
		}
		if len(p.ub.tsdus) != dts || p.a.Stats().TxRetransmissions != 0 {
			t.Errorf("ack step %d: %d TSDUs delivered, %d retransmissions", k, len(p.ub.tsdus), p.a.Stats().TxRetransmissions)
		}
		if w := p.ua.conn.Window(); w.Held != 0 || w.SndUna != dts%128 {
			t.Errorf("ack step %d: sender window %+v", k, w)
		}
	}
}
