package pres_test

// Two presentation connections on a bare TOP host over a scripted
// session service that copies user data and delivers the S- indications
// from a task of its own.

import (
	"bytes"
	"encoding/asn1"
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/pres"
	"simkron/stack/top"
	"simkron/stack/top/toptest"
)

type sevent struct {
	to       *pres.Conn
	kind     string
	b        []byte
	accepted bool
}

type net struct {
	b    *toptest.Bare
	task *top.Task
	q    []sevent
}

func (n *net) push(e sevent) { n.q = append(n.q, e); n.b.H.Schedule(n.task) }

func (n *net) chain(b []byte) osi.Chain {
	if b == nil {
		return 0
	}
	return n.b.Chain(b)
}

func (n *net) deliver() {
	if len(n.q) == 0 {
		return
	}
	e := n.q[0]
	n.q = n.q[1:]
	if len(n.q) > 0 {
		n.b.H.Schedule(n.task)
	}
	switch e.kind {
	case "connect":
		e.to.SConnectIndication(n.chain(e.b))
	case "confirm":
		e.to.SConnectConfirm(e.accepted, n.chain(e.b))
	case "data":
		e.to.SData(n.chain(e.b))
	case "release":
		e.to.SReleaseIndication(0)
	case "release-conf":
		e.to.SReleaseConfirm(0)
	case "abort":
		e.to.SAbort(false, n.chain(e.b))
	}
}

// ses is one end of the scripted session connection.
type ses struct {
	n    *net
	peer *ses
	conn *pres.Conn
	log  [][]byte
}

func (s *ses) bytesOf(ch osi.Chain) []byte {
	if ch == 0 {
		return nil
	}
	b := s.n.b.Bytes(ch)
	s.n.b.H.Bufs().Free(ch)
	s.log = append(s.log, b)
	return b
}

func (s *ses) Connect(ud osi.Chain) {
	s.n.push(sevent{to: s.peer.conn, kind: "connect", b: s.bytesOf(ud)})
}
func (s *ses) Accept(ud osi.Chain) {
	s.n.push(sevent{to: s.peer.conn, kind: "confirm", accepted: true, b: s.bytesOf(ud)})
}
func (s *ses) Refuse(_ uint8, ud osi.Chain) {
	s.n.push(sevent{to: s.peer.conn, kind: "confirm", b: s.bytesOf(ud)})
}
func (s *ses) Data(ch osi.Chain) bool {
	s.n.push(sevent{to: s.peer.conn, kind: "data", b: s.bytesOf(ch)})
	return true
}
func (s *ses) Release(ud osi.Chain) {
	s.bytesOf(ud)
	s.n.push(sevent{to: s.peer.conn, kind: "release"})
}
func (s *ses) ReleaseResponse(ud osi.Chain) {
	s.bytesOf(ud)
	s.n.push(sevent{to: s.peer.conn, kind: "release-conf"})
}
func (s *ses) Abort(ud osi.Chain) { s.n.push(sevent{to: s.peer.conn, kind: "abort", b: s.bytesOf(ud)}) }

type user struct {
	b        *toptest.Bare
	events   []string
	data     [][]byte
	accepted bool
	provider bool
	refuse   bool
}

func (u *user) PConnectIndication(c *pres.Conn) {
	u.events = append(u.events, "connect-ind")
	if u.refuse {
		c.Refuse()
		return
	}
	c.Accept()
}
func (u *user) PConnectConfirm(c *pres.Conn, ok bool) {
	u.events = append(u.events, "connect-conf")
	u.accepted = ok
}
func (u *user) PDataIndication(c *pres.Conn, ch osi.Chain) {
	u.data = append(u.data, u.b.Bytes(ch))
	u.b.H.Bufs().Free(ch)
}
func (u *user) PReleaseIndication(c *pres.Conn) {
	u.events = append(u.events, "release-ind")
	c.ReleaseResponse()
}
func (u *user) PReleaseConfirm(c *pres.Conn) { u.events = append(u.events, "release-conf") }
func (u *user) PAbortIndication(c *pres.Conn, provider bool) {
	u.events = append(u.events, "abort")
	u.provider = provider
}
func (u *user) PReady(c *pres.Conn) {}

type pair struct {
	*toptest.Bare
	n      *net
	e      *pres.Presentation
	sa, sb *ses
	a, b   *pres.Conn
	ua, ub *user
	env    *top.Env
}

func newPair(t *testing.T, called []byte, pb pres.Params) *pair {
	bare := toptest.New(t, "es")
	p := &pair{Bare: bare, n: &net{b: bare}}
	p.n.task = bare.H.NewTask(cpu.Def{Name: "snet", Layer: cpu.LayerSES, Instructions: 5, Why: "the test session service"}, osi.CatOther, p.n.deliver)
	var err error
	if p.e, err = pres.New(bare.H.NewEnv("pres", cpu.LayerPRES), pres.DefaultParams()); err != nil {
		t.Fatal(err)
	}
	eb, err := pres.New(bare.H.NewEnv("presb", cpu.LayerPRES), pb)
	if err != nil {
		t.Fatal(err)
	}
	p.sa, p.sb = &ses{n: p.n}, &ses{n: p.n}
	p.sa.peer, p.sb.peer = p.sb, p.sa
	p.ua, p.ub = &user{b: bare}, &user{b: bare}
	p.a = p.e.NewConn(p.sa, p.ua, []byte{0, 0, 0, 1}, called)
	p.b = eb.NewConn(p.sb, p.ub, []byte{0, 0, 0, 2}, nil)
	p.sa.conn, p.sb.conn = p.a, p.b
	p.env = bare.H.NewEnv("test", cpu.LayerAPPL)
	return p
}

func (p *pair) at(d sim.Time, fn func()) {
	tm := p.env.NewTimer("step", fn)
	p.H.OnStart(func() { tm.Start(d) })
}

func chainOf(b *toptest.Bare, v []byte) osi.Chain {
	ch, a := b.H.Bufs().New(osi.Tx, max(len(v), 1))
	b.H.CPU().Write(a, v)
	if len(v) == 0 {
		b.H.Bufs().Truncate(ch, 0)
	}
	return ch
}

// A connection with CP and CPA, data both ways as TD PPDUs (checked
// against encoding/asn1), and the release; every structure comes back.
func TestPresentationLife(t *testing.T) {
	p := newPair(t, []byte{0, 0, 0, 2}, pres.DefaultParams())
	p.H.OnStart(func() {
		if err := p.a.Connect(); err != nil {
			t.Fatal(err)
		}
	})
	sizes := []int{1, 100, 127, 128, 300, 1152}
	p.at(100*sim.Millisecond, func() {
		for _, n := range sizes {
			if !p.a.Data(chainOf(p.Bare, bytes.Repeat([]byte{0x5A}, n))) {
				t.Error("P-DATA refused")
			}
		}
		p.b.Data(chainOf(p.Bare, []byte("back")))
	})
	p.at(200*sim.Millisecond, func() { p.a.Release() })
	p.H.Start()
	p.K.RunUntil(sim.Second)
	if !p.ua.accepted || len(p.ub.data) != len(sizes) || string(p.ua.data[0]) != "back" {
		t.Fatalf("accepted %v, B got %d values, A %q", p.ua.accepted, len(p.ub.data), p.ua.data)
	}
	for i, n := range sizes {
		if len(p.ub.data[i]) != n {
			t.Errorf("value %d: %d octets, want %d", i, len(p.ub.data[i]), n)
		}
	}
	cp, ok := header.ParseCP(p.sa.log[0])
	if !ok || !bytes.Equal(cp.Called, []byte{0, 0, 0, 2}) || len(cp.Contexts) != 1 || !cp.Contexts[0].Abstract.Equal(pres.DefaultParams().AbstractSyntax) {
		t.Errorf("CP %+v %v", cp, ok)
	}
	// Each TD as encoding/asn1 reads it: [APPLICATION 1] SEQUENCE OF
	// PDV-list { INTEGER, [1] OCTET STRING }.
	type pdv struct {
		Context int
		Value   []byte `asn1:"tag:1"`
	}
	for i, td := range p.sa.log[1 : 1+len(sizes)] {
		var got []pdv
		rest, err := asn1.UnmarshalWithParams(td, &got, "application,tag:1")
		if err != nil || len(rest) != 0 || len(got) != 1 || got[0].Context != 1 || len(got[0].Value) != sizes[i] {
			t.Errorf("TD %d: encoding/asn1 reads %v (%v)", i, got, err)
		}
	}
	if p.a.State() != pres.StateClosed || p.b.State() != pres.StateClosed || p.ua.events[len(p.ua.events)-1] != "release-conf" {
		t.Errorf("states %v %v, A %v", p.a.State(), p.b.State(), p.ua.events)
	}
	if st := p.e.Stats(); st.TLVs == 0 || st.EncodedOctets == 0 || st.DecodedOctets == 0 {
		t.Errorf("no BER work counted: %+v", st)
	}
	if n := p.Held(); n != 0 {
		t.Errorf("%d structures held", n)
	}
}

// Refusals go as CPRs: an unknown called selector, another abstract
// syntax, and the user's own refusal.
func TestPresentationRefusal(t *testing.T) {
	other := pres.DefaultParams()
	other.AbstractSyntax = header.OID{1, 0, 9506, 2, 1}
	for _, tc := range []struct {
		name   string
		called []byte
		pb     pres.Params
		refuse bool
	}{{"selector", []byte{7}, pres.DefaultParams(), false}, {"syntax", []byte{0, 0, 0, 2}, other, false}, {"user", []byte{0, 0, 0, 2}, pres.DefaultParams(), true}} {
		p := newPair(t, tc.called, tc.pb)
		p.ub.refuse = tc.refuse
		p.H.OnStart(func() { p.a.Connect() })
		p.H.Start()
		p.K.RunUntil(sim.Second)
		if p.ua.accepted || len(p.ua.events) != 1 || p.a.State() != pres.StateClosed {
			t.Errorf("%s: A %v accepted %v", tc.name, p.ua.events, p.ua.accepted)
		}
		if _, ok := header.ParseCPR(p.sb.log[0]); !ok {
			t.Errorf("%s: the refusal is no CPR: % x", tc.name, p.sb.log[0])
		}
	}
}

// A TD that does not decode, or names another context, is a protocol
// error: an ARP goes, the user gets a P-P-ABORT; a user abort goes as an
// ARU and the peer gets a P-U-ABORT.
func TestPresentationErrorsAndAbort(t *testing.T) {
	for _, junk := range [][]byte{{0x61, 0x03, 0x30, 0x01, 0x02}, header.EncodeUserData([]header.PDV{{Context: 3, Kind: header.PDVOctets, Value: []byte("x")}}), {0xFF}, {}} {
		p := newPair(t, []byte{0, 0, 0, 2}, pres.DefaultParams())
		p.H.OnStart(func() { p.a.Connect() })
		p.at(100*sim.Millisecond, func() { p.n.push(sevent{to: p.b, kind: "data", b: junk}) })
		p.H.Start()
		p.K.RunUntil(sim.Second)
		if e := p.ub.events; e[len(e)-1] != "abort" || !p.ub.provider || p.b.State() != pres.StateClosed {
			t.Errorf("% x: B %v provider %v", junk, e, p.ub.provider)
		}
		if last := p.sb.log[len(p.sb.log)-1]; !header.BER(last).IsValid() || !header.BER(last).Is(header.PresTagSequence) {
			t.Errorf("% x: B's abort carried % x, not an ARP", junk, last)
		}
		if e := p.ua.events; e[len(e)-1] != "abort" || !p.ua.provider {
			t.Errorf("% x: A %v", junk, e)
		}
		if n := p.Held(); n != 0 {
			t.Errorf("%d structures held", n)
		}
	}
	p := newPair(t, []byte{0, 0, 0, 2}, pres.DefaultParams())
	p.H.OnStart(func() { p.a.Connect() })
	p.at(100*sim.Millisecond, func() { p.a.Abort() })
	p.H.Start()
	p.K.RunUntil(sim.Second)
	if e := p.ub.events; e[len(e)-1] != "abort" || p.ub.provider {
		t.Errorf("user abort: B %v provider %v", e, p.ub.provider)
	}
}
