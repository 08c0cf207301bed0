package tp4_test

import (
	"math/rand/v2"
	"testing"

	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/tp4"
)

// invariants checks what must hold for every connection of e whatever
// it was sent: the window edges in order, the credit given within the
// configured one, the retention count equal to the DTs between the lower
// edge and the next number to build, the resequencing buffer inside the
// window, and the structures in use bounded.
func invariants(t testing.TB, p *pair, e *tp4.TP4, where string) {
	t.Helper()
	pp := e.Params()
	for i, c := range e.Conns() {
		st := c.State()
		if st != tp4.StateOpen && st != tp4.StateWaitAck {
			continue
		}
		w := c.Window()
		m := w.Modulus
		d := func(a, b uint32) uint32 { return (a - b) & (m - 1) }
		if d(w.SndNxt, w.SndUna) > d(w.SndNew, w.SndUna) || int(d(w.SndNew, w.SndUna)) != w.Held {
			t.Fatalf("%s: conn %d: send edges una %d nxt %d new %d, held %d", where, i, w.SndUna, w.SndNxt, w.SndNew, w.Held)
		}
		if w.Held > pp.SendBuffer {
			t.Fatalf("%s: conn %d: %d DTs held, buffer %d", where, i, w.Held, pp.SendBuffer)
		}
		if w.RcvCredit > uint32(pp.Credit) || w.Resequencing >= max(int(w.RcvCredit), 1) && w.Resequencing > 0 {
			t.Fatalf("%s: conn %d: credit %d (configured %d), %d kept out of sequence", where, i, w.RcvCredit, pp.Credit, w.Resequencing)
		}
	}
	if n := p.Held(); n > 400 {
		t.Fatalf("%s: %d structures in use", where, n)
	}
}

// randomTPDU makes a TPDU from r: any code (sometimes none), a reference
// that is B's connection or not, numbers near the window, parameters
// well or badly formed, a checksum right or wrong.
func randomTPDU(r *rand.Rand, ref uint16) []byte {
	codes := []uint8{header.TPDUCodeCR, header.TPDUCodeCC, header.TPDUCodeDR, header.TPDUCodeDC, header.TPDUCodeDT,
		header.TPDUCodeED, header.TPDUCodeAK, header.TPDUCodeEA, header.TPDUCodeRJ, header.TPDUCodeER, 0x30, 0x90}
	code := codes[r.IntN(len(codes))]
	if r.IntN(4) == 0 {
		ref = uint16(r.IntN(0x10000))
	}
	var params []byte
	for range r.IntN(3) {
		pc := []byte{header.TPDUParamSubsequence, header.TPDUParamFlowControl, header.TPDUParamTPDUSize, header.TPDUParamOptions, 0x99}[r.IntN(5)]
		v := make([]byte, r.IntN(9))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		params = header.AppendTPDUParam(params, pc, v...)
	}
	params = append([]byte{header.TPDUParamChecksum, 2, 0, 0}, params...)
	f := header.TPDUFields{Code: code & 0xF0, DstRef: ref, SrcRef: uint16(r.IntN(4)), Class: 0x40, Reason: byte(r.IntN(256)),
		Number: uint32(r.IntN(24)), EOT: r.IntN(2) == 0, CDT: uint16(r.IntN(16)), Params: params}
	if header.TPDUFixedLen(code, false) == 0 {
		b := []byte{byte(4 + len(params)), code, byte(ref >> 8), byte(ref), 0}
		return append(b, params...)
	}
	n := header.TPDUHeaderLen(&f)
	var data []byte
	if header.TPDUHasData(code) {
		data = pattern(r.IntN(40), r.IntN(9))
	}
	b := make([]byte, n+len(data))
	header.TPDU(b).Encode(&f)
	copy(b[n:], data)
	if r.IntN(8) != 0 {
		header.TPDU(b).SetChecksum(false)
	}
	if r.IntN(10) == 0 {
		b = b[:r.IntN(len(b))] // cut short
	}
	return b
}

// runRandom keeps a connection busy both ways and feeds B TPDUs drawn
// from r between the real ones; after each the invariants hold, and once
// every connection is released and its reference unfrozen every
// structure is back.
func runRandom(t testing.TB, r *rand.Rand, count int) {
	p := newPair(t, testParams(), testParams())
	p.connect(t)
	p.ub.onData = func(c *tp4.Conn, b []byte) {
		if c.State() == tp4.StateOpen && len(b) > 0 {
			c.Data(p.chainOf(b[:1+int(b[0])%len(b)]))
		}
	}
	sent := 0
	p.at(100*sim.Millisecond, func() {
		for i := range 10 {
			p.ua.conn.Data(p.chainOf(pattern(50+i*20, i)))
		}
	})
	inject := func() {
		ref, _ := p.ub.conn.Ref()
		for range count {
			b := randomTPDU(r, ref)
			p.w.q = append(p.w.q, nsdu{nsapA, nsapB, b})
			sent++
		}
		p.H.Schedule(p.w.task)
	}
	p.at(150*sim.Millisecond, inject)
	var checked int
	p.at(400*sim.Millisecond, func() { invariants(t, p, p.b, "after the random TPDUs"); invariants(t, p, p.a, "A"); checked++ })
	p.at(600*sim.Millisecond, func() {
		for _, e := range []*tp4.TP4{p.a, p.b} {
			for _, c := range e.Conns() {
				c.Disconnect()
			}
		}
	})
	p.run(12 * sim.Second)
	if checked != 1 {
		t.Fatal("the invariants were not checked")
	}
	if n := p.Held(); n != 0 {
		t.Fatalf("%d structures still held after every connection was released", n)
	}
	for _, e := range []*tp4.TP4{p.a, p.b} {
		for i, c := range e.Conns() {
			if c.State() != tp4.StateClosed {
				t.Fatalf("connection %d is %v", i, c.State())
			}
		}
	}
}

// Random TPDUs against a live connection, many seeds.
func TestRandomTPDUs(t *testing.T) {
	for seed := range uint64(40) {
		runRandom(t, rand.New(rand.NewPCG(seed, 7)), 60)
	}
}

func FuzzTP4Input(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(20))
	f.Add(uint64(99), uint64(0), uint8(200))
	f.Fuzz(func(t *testing.T, a, b uint64, n uint8) {
		runRandom(t, rand.New(rand.NewPCG(a, b)), int(n))
	})
}
