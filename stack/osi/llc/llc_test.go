package llc_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/osi/llc"
	"simkron/stack/top/toptest"
)

// fakeMAC takes LLC's frames into the memory manager's transmit area.
type fakeMAC struct {
	b    *toptest.Bare
	sent [][]byte
}

func (m *fakeMAC) Address() [6]byte { return [6]byte{2, 0, 0, 0, 0, 2} }
func (m *fakeMAC) MaxSDU() int      { return 1500 }
func (m *fakeMAC) TxBuffer(n int) (memory.Addr, bool) {
	a := m.b.H.Mem().Alloc(osi.Tx, n)
	return a, a != 0
}
func (m *fakeMAC) Send(a memory.Addr, n int, dst [6]byte) {
	p := make([]byte, n)
	_ = m.b.Sys.Phys.Read(a, p)
	m.sent = append(m.sent, p)
	m.b.H.Mem().Free(a)
}

type user struct {
	b   *toptest.Bare
	got [][]byte
}

func (u *user) DLUnitdataIndication(src, dst [6]byte, dsap, ssap uint8, sdu osi.Chain) {
	u.got = append(u.got, append([]byte{dsap, ssap}, u.b.Bytes(sdu)...))
	u.b.H.Bufs().Free(sdu)
}

func run(t testing.TB, frames [][]byte, requests int) (*fakeMAC, *user, *llc.LLC, *toptest.Bare) {
	b := toptest.New(t, "st")
	m := &fakeMAC{b: b}
	l := llc.New(b.H.NewEnv("llc", cpu.LayerLLC), m)
	u := &user{b: b}
	if err := l.Register(0xFE, u); err != nil {
		t.Fatal(err)
	}
	if err := l.Register(0xFF, u); err == nil {
		t.Error("a group SAP was accepted")
	}
	b.H.OnStart(func() {
		for range requests {
			l.UnitdataRequest([6]byte{2, 0, 0, 0, 0, 1}, 0xFE, 0xFE, b.Chain([]byte{0x81, 1, 2, 3}))
		}
		for _, f := range frames {
			if ch := b.Chain(f); ch != 0 {
				l.Input([6]byte{2, 0, 0, 0, 0, 1}, m.Address(), ch)
			}
		}
	})
	b.H.Start()
	b.K.RunUntil(10 * sim.Millisecond)
	return m, u, l, b
}

func TestUIAndResponses(t *testing.T) {
	m, u, l, b := run(t, [][]byte{
		{0xFE, 0xFE, 0x03, 0x81, 9},       // UI to the user
		{0xFE, 0x02, 0xE3, 't'},           // TEST, P clear
		{0x7E, 0xFE, 0x03, 1},             // UI to nobody
		{0xFE, 0xFF, 0xBF, 0x81, 0x01, 0}, // a response: ignored
		{0xFE, 0xFE, 0x23},                // an unknown U command
		{0xFE},                            // short
	}, 1)
	want := [][]byte{
		{0xFE, 0xFE, 0x03, 0x81, 1, 2, 3},
		{0x02, 0xFF, 0xE3, 't'},
	}
	if d := cmp.Diff(want, m.sent); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	if len(u.got) != 1 || !bytes.Equal(u.got[0], []byte{0xFE, 0xFE, 0x81, 9}) {
		t.Errorf("delivered % x", u.got)
	}
	st := l.Stats()
	want2 := llc.Stats{TxUI: 1, TxTESTResponses: 1, RxUI: 1, RxTEST: 1, RxNoSAP: 1, RxResponses: 1, RxUnknownCommand: 1, RxShort: 1}
	if d := cmp.Diff(want2, st); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}
	if n := b.Held(); n != 0 {
		t.Errorf("%d structures still held", n)
	}
}

// FuzzInput: any octets as a received LLC PDU are handled or dropped
// with a counter; nothing panics, every structure is given back, and
// whatever goes out is an LLC response.
func FuzzInput(f *testing.F) {
	f.Add([]byte{0xFE, 0xFE, 0x03, 0x81})
	f.Add([]byte{0xFE, 0x04, 0xBF, 0x81, 1, 0})
	f.Add([]byte{0x00, 0x04, 0xF3, 1, 2, 3})
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) > 1500 {
			return
		}
		m, _, _, b := run(t, [][]byte{p}, 0)
		for _, s := range m.sent {
			if len(s) < 3 || s[1]&1 == 0 {
				t.Fatalf("sent % x, not a response", s)
			}
		}
		if n := b.Held(); n != 0 {
			t.Fatalf("%d structures held", n)
		}
		if b.Sys.Guest.Count() != 0 {
			t.Fatalf("guest errors: %v", b.Sys.Guest.Records())
		}
	})
}
