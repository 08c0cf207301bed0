package clnp_test

// CLNP's receive path driven directly on a TOP host (no card, no wire): a
// fake subnetwork takes what CLNP sends, a fake NS user keeps what it
// delivers, and the test feeds PDUs as bytes.

import (
	"bytes"
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/top/toptest"
)

type fakeSubnet struct {
	b    *toptest.Bare
	sent [][]byte
}

func (s *fakeSubnet) Address() [6]byte { return [6]byte{2, 0, 0, 0, 0, 2} }
func (s *fakeSubnet) MaxSDU() int      { return 1497 }
func (s *fakeSubnet) Send(dst [6]byte, pdu osi.Chain) bool {
	s.sent = append(s.sent, s.b.Bytes(pdu))
	s.b.H.Bufs().Free(pdu)
	return true
}

type fakeUser struct {
	b   *toptest.Bare
	got [][]byte
}

func (u *fakeUser) NUnitdataIndication(src, dst osi.NSAP, nsdu osi.Chain) {
	u.got = append(u.got, u.b.Bytes(nsdu))
	u.b.H.Bufs().Free(nsdu)
}

type bench struct {
	*toptest.Bare
	n    *clnp.CLNP
	sub  *fakeSubnet
	user *fakeUser
}

var (
	local  = osi.MustNSAP([]byte{0x47, 0, 5, 0x80, 0xFF, 0xFF, 0, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, 0, 2, 0x21})
	remote = osi.MustNSAP([]byte{0x47, 0, 5, 0x80, 0xFF, 0xFF, 0, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, 0, 1, 0x21})
)

func newBench(t testing.TB) *bench {
	t.Helper()
	bare := toptest.New(t, "es")
	b := &bench{Bare: bare, sub: &fakeSubnet{b: bare}, user: &fakeUser{b: bare}}
	p := clnp.DefaultParams()
	p.NSAP = local
	var err error
	if b.n, err = clnp.New(bare.H.NewEnv("clnp", cpu.LayerCLNS), b.sub, p); err != nil {
		t.Fatal(err)
	}
	b.n.AddRoute(remote, [6]byte{2, 0, 0, 0, 0, 1})
	if err := b.n.Register(0x21, b.user); err != nil {
		t.Fatal(err)
	}
	return b
}

// feed gives CLNP each PDU in turn at start-up, then runs for d.
func (b *bench) feed(pdus [][]byte, d sim.Time) {
	b.H.OnStart(func() {
		for _, p := range pdus {
			if ch := b.Chain(p); ch != 0 {
				b.n.Input([6]byte{2, 0, 0, 0, 0, 1}, ch)
			}
		}
	})
	b.H.Start()
	b.K.RunUntil(d)
}

// segmentPDU builds one DT segment of data [off, off+k) of an NSDU of
// total octets.
func segmentPDU(id uint16, data []byte, off, k int, more bool, lifetime uint8) []byte {
	flags := uint8(header.CLNPFlagSP | header.CLNPFlagER)
	if more {
		flags |= header.CLNPFlagMS
	}
	f := header.CLNPFields{Type: header.CLNPTypeDT, Flags: flags, Lifetime: lifetime, Dst: local.Bytes(), Src: remote.Bytes()}
	li := header.CLNPHeaderLen(&f)
	f.Seg = header.CLNPSegmentation{ID: id, Offset: uint16(off), Total: uint16(li + len(data))}
	f.SegmentLength = uint16(li + k)
	b := make([]byte, li+k)
	h := header.CLNP(b[:li])
	h.Encode(&f)
	h.SetChecksum(h.CalculateChecksum())
	copy(b[li:], data[off:off+k])
	return b
}

func pattern(n int) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = byte(i*7 + i>>8)
	}
	return d
}

// Segments in reverse order, with an overlapping and a duplicated one,
// reassemble into the NSDU once; an ER goes for nothing.
func TestReassemblyOrders(t *testing.T) {
	b := newBench(t)
	data := pattern(3000)
	pdus := [][]byte{
		segmentPDU(5, data, 2400, 600, false, 30),
		segmentPDU(5, data, 800, 1600, true, 30), // covers the next two
		segmentPDU(5, data, 1600, 800, true, 30),
		segmentPDU(5, data, 1600, 800, true, 30), // a duplicate
		segmentPDU(5, data, 0, 800, true, 30),
	}
	b.feed(pdus, sim.Second)
	if len(b.user.got) != 1 || !bytes.Equal(b.user.got[0], data) {
		t.Fatalf("delivered %d NSDUs; first matches: %v", len(b.user.got), len(b.user.got) > 0 && bytes.Equal(b.user.got[0], data))
	}
	st := b.n.Stats()
	if st.ReasmOK != 1 || st.ReasmDuplicates != 2 || len(b.sub.sent) != 0 {
		t.Errorf("stats %+v, %d PDUs sent", st, len(b.sub.sent))
	}
	if n := b.Held(); n != 0 {
		t.Errorf("%d structures still held", n)
	}
}

// FuzzReassembly feeds segments of one NSDU in any order, overlapping,
// duplicated, cut short or inconsistent: whatever is delivered is the
// NSDU exactly; when every segment is sound and together they cover it,
// it is delivered; and once the reassembly timers have run out every
// structure is back in the memory manager.
func FuzzReassembly(f *testing.F) {
	f.Add(uint16(3000), []byte{0, 100, 100, 100, 200, 60})
	f.Add(uint16(100), []byte{50, 50, 0, 60, 0, 60})
	f.Add(uint16(4000), []byte{0, 255, 128, 255, 30, 20, 0x80 | 3, 7})
	f.Fuzz(func(t *testing.T, size uint16, ops []byte) {
		n := int(size%5000) + 1
		data := pattern(n)
		var pdus [][]byte
		sound := true
		cover := make([]bool, n)
		for i := 0; i+1 < len(ops) && len(pdus) < 24; i += 2 {
			units := (n + 7) / 8
			off := int(ops[i]&0x7F) * units / 128 * 8
			if off >= n {
				off = (n - 1) / 8 * 8
			}
			k := (int(ops[i+1])%180 + 1) * 8
			end := min(n, off+k)
			p := segmentPDU(9, data, off, end-off, end < n, 20)
			if ops[i]&0x80 != 0 {
				// Cut short: the PDU no longer holds its segment length.
				p = p[:len(p)-1-int(ops[i+1])%len(p)]
				sound = false
			} else {
				for x := off; x < end; x++ {
					cover[x] = true
				}
			}
			pdus = append(pdus, p)
		}
		b := newBench(t)
		b.feed(pdus, 30*sim.Second)
		for _, g := range b.user.got {
			if !bytes.Equal(g, data) {
				t.Fatalf("delivered %d octets that are not the NSDU", len(g))
			}
		}
		all := true
		for _, c := range cover {
			all = all && c
		}
		if sound && all && len(pdus) > 0 && len(b.user.got) == 0 {
			t.Fatalf("sound segments covering the NSDU were not delivered: %+v", b.n.Stats())
		}
		if n := b.Held(); n != 0 {
			t.Fatalf("%d structures still held after the time-outs; %+v", n, b.n.Stats())
		}
		if b.Sys.Guest.Count() != 0 {
			t.Fatalf("guest errors: %v", b.Sys.Guest.Records())
		}
	})
}

// FuzzInput feeds arbitrary octets as PDUs (after a valid one, so that
// the machine is warm): the receive path drops what it cannot use with a
// counter and never panics, answers only with well-formed ERs, and gives
// every structure back.
func FuzzInput(f *testing.F) {
	good := segmentPDU(1, pattern(100), 0, 100, false, 20)
	f.Add(good)
	f.Add(good[:30])
	f.Add([]byte{0x00, 1, 2, 3})
	f.Add([]byte{0x81, 0x09, 0x01, 0x00, 0x21, 0x00, 0x09, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, p []byte) {
		b := newBench(t)
		b.feed([][]byte{good, p}, 30*sim.Second)
		for _, s := range b.sub.sent {
			h := header.CLNP(s)
			if !h.IsValid(len(s)) || h.Type() != header.CLNPTypeER || !h.IsChecksumValid() {
				t.Fatalf("sent something that is not a good ER: % x", s)
			}
		}
		if n := b.Held(); n != 0 {
			t.Fatalf("%d structures held; %+v", n, b.n.Stats())
		}
		if b.Sys.Guest.Count() != 0 {
			t.Fatalf("guest errors: %v", b.Sys.Guest.Records())
		}
	})
}
