package session_test

// Two session connections on a bare TOP host, joined by a scripted
// transport that copies each TSDU and delivers the T- indications from a
// task of its own.

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/session"
	"simkron/stack/top"
	"simkron/stack/top/toptest"
)

type tevent struct {
	to   *session.Conn
	kind string // "conn-ind", "conn-conf", "data", "disc"
	b    []byte
}

// transport is one end of the scripted transport connection.
type transport struct {
	n    *net
	peer *transport
	conn *session.Conn
	log  [][]byte // TSDUs sent
	disc int
}

type net struct {
	b        *toptest.Bare
	task     *top.Task
	q        []tevent
	drop     bool
	dropFrom *transport
}

func (n *net) push(e tevent) {
	n.q = append(n.q, e)
	n.b.H.Schedule(n.task)
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
	case "conn-ind":
		e.to.TConnectIndication()
	case "conn-conf":
		e.to.TConnectConfirm()
	case "data":
		e.to.TData(n.b.Chain(e.b))
	case "disc":
		e.to.TDisconnect()
	}
}

func (t *transport) Connect() { t.n.push(tevent{to: t.peer.conn, kind: "conn-ind"}) }
func (t *transport) Accept()  { t.n.push(tevent{to: t.peer.conn, kind: "conn-conf"}) }
func (t *transport) Data(ch osi.Chain) bool {
	b := t.n.b.Bytes(ch)
	t.n.b.H.Bufs().Free(ch)
	t.log = append(t.log, b)
	if !t.n.drop && t != t.n.dropFrom {
		t.n.push(tevent{to: t.peer.conn, kind: "data", b: b})
	}
	return true
}
func (t *transport) Disconnect() {
	t.disc++
	t.n.push(tevent{to: t.peer.conn, kind: "disc"})
}

// user records the session indications and answers them as told.
type user struct {
	b        *toptest.Bare
	events   []string
	data     [][]byte
	ud       []byte
	refuse   int // -1: accept
	accepted bool
	reason   uint8
	release  bool // answer a release indication
	provider bool
}

func (u *user) take(ch osi.Chain) []byte {
	if ch == 0 {
		return nil
	}
	b := u.b.Bytes(ch)
	u.b.H.Bufs().Free(ch)
	return b
}

func (u *user) SConnectIndication(c *session.Conn, ud osi.Chain) {
	u.events = append(u.events, "connect-ind")
	u.ud = u.take(ud)
	if u.refuse >= 0 {
		c.Refuse(uint8(u.refuse), chainOf(u.b, []byte("no")))
		return
	}
	c.Accept(chainOf(u.b, []byte("welcome")))
}
func (u *user) SConnectConfirm(c *session.Conn, ok bool, reason uint8, ud osi.Chain) {
	u.events = append(u.events, "connect-conf")
	u.accepted, u.reason, u.ud = ok, reason, u.take(ud)
}
func (u *user) SDataIndication(c *session.Conn, ch osi.Chain) { u.data = append(u.data, u.take(ch)) }
func (u *user) SReleaseIndication(c *session.Conn, ud osi.Chain) {
	u.events = append(u.events, "release-ind")
	u.ud = u.take(ud)
	if u.release {
		c.ReleaseResponse(chainOf(u.b, []byte("bye")))
	}
}
func (u *user) SReleaseConfirm(c *session.Conn, ud osi.Chain) {
	u.events = append(u.events, "release-conf")
	u.ud = u.take(ud)
}
func (u *user) SAbortIndication(c *session.Conn, provider bool, ud osi.Chain) {
	u.events = append(u.events, "abort")
	u.provider, u.ud = provider, u.take(ud)
}
func (u *user) SReady(c *session.Conn) { u.events = append(u.events, "ready") }

func chainOf(b *toptest.Bare, p []byte) osi.Chain {
	ch, a := b.H.Bufs().New(osi.Tx, max(len(p), 1))
	b.H.CPU().Write(a, p)
	if len(p) == 0 {
		b.H.Bufs().Truncate(ch, 0)
	}
	return ch
}

type pair struct {
	*toptest.Bare
	n      *net
	s      *session.Session
	ta, tb *transport
	a, b   *session.Conn
	ua, ub *user
	env    *top.Env
}

func newPair(t *testing.T, called []byte) *pair {
	bare := toptest.New(t, "es")
	p := &pair{Bare: bare, n: &net{b: bare}}
	p.n.task = bare.H.NewTask(cpu.Def{Name: "tnet", Layer: cpu.LayerTP4, Instructions: 5, Why: "the test transport"}, osi.CatOther, p.n.deliver)
	sp := session.DefaultParams()
	sp.DisconnectTime = 500 * sim.Millisecond
	p.s = session.New(bare.H.NewEnv("ses", cpu.LayerSES), sp)
	p.ta, p.tb = &transport{n: p.n}, &transport{n: p.n}
	p.ta.peer, p.tb.peer = p.tb, p.ta
	p.ua = &user{b: bare, refuse: -1, release: true}
	p.ub = &user{b: bare, refuse: -1, release: true}
	p.a = p.s.NewConn(p.ta, p.ua, []byte{0, 1}, called)
	p.b = p.s.NewConn(p.tb, p.ub, []byte{0, 2}, nil)
	p.ta.conn, p.tb.conn = p.a, p.b
	p.env = bare.H.NewEnv("test", cpu.LayerAPPL)
	return p
}

func (p *pair) at(d sim.Time, fn func()) {
	tm := p.env.NewTimer("step", fn)
	p.H.OnStart(func() { tm.Start(d) })
}

func (p *pair) run(d sim.Time) {
	p.H.Start()
	p.K.RunUntil(d)
}

// The whole life of a connection: CN with user data, AC, data both
// ways (GT DT in front of each SSDU), FN, DN, the transport released by
// the FN's sender; the SPDUs on the wire are the standard's.
func TestSessionLife(t *testing.T) {
	p := newPair(t, []byte{0, 2})
	p.H.OnStart(func() {
		if err := p.a.Connect(chainOf(p.Bare, []byte("CP-PPDU"))); err != nil {
			t.Fatal(err)
		}
	})
	p.at(100*sim.Millisecond, func() {
		for i := range 3 {
			p.a.Data(chainOf(p.Bare, bytes.Repeat([]byte{byte(i)}, 100+i)))
		}
		p.b.Data(chainOf(p.Bare, []byte("back")))
	})
	p.at(200*sim.Millisecond, func() { p.a.Release(0) })
	p.run(sim.Second)
	if d := cmp.Diff([]string{"connect-conf", "release-conf"}, p.ua.events); d != "" {
		t.Errorf("A (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"connect-ind", "release-ind"}, p.ub.events); d != "" {
		t.Errorf("B (-want +got):\n%s", d)
	}
	if !p.ua.accepted || string(p.ua.ud) != "bye" || len(p.ub.data) != 3 || len(p.ub.data[2]) != 102 || string(p.ua.data[0]) != "back" {
		t.Errorf("A accepted %v ud %q; B got %d SSDUs", p.ua.accepted, p.ua.ud, len(p.ub.data))
	}
	if p.a.State() != session.StateClosed || p.b.State() != session.StateClosed || p.ta.disc != 1 || p.tb.disc != 0 {
		t.Errorf("states %v %v, transport releases %d %d", p.a.State(), p.b.State(), p.ta.disc, p.tb.disc)
	}
	cn := header.SPDU(p.ta.log[0])
	if !cn.IsValid() || cn.SI() != header.SPDUConnect {
		t.Fatalf("first SPDU % x", p.ta.log[0])
	}
	item, _ := cn.Param(header.SESPGIConnectAccept)
	ver, _ := header.SESUnit(item, header.SESPIVersion)
	fu, _ := cn.Param(header.SESPIUserRequirements)
	called, _ := cn.Param(header.SESPICalledSSAP)
	ud, _ := cn.Param(header.SESPGIUserData)
	if !bytes.Equal(ver, []byte{2}) || !bytes.Equal(fu, []byte{0, 2}) || !bytes.Equal(called, []byte{0, 2}) || string(ud) != "CP-PPDU" {
		t.Errorf("CN: version % x units % x called % x user data %q", ver, fu, called, ud)
	}
	if dt := p.ta.log[1]; !bytes.Equal(dt[:4], []byte{1, 0, 1, 0}) || len(dt) != 104 {
		t.Errorf("data TSDU % x", dt[:8])
	}
	fn := header.SPDU(p.ta.log[4])
	if td, _ := fn.Param(header.SESPITransportDisc); fn.SI() != header.SPDUFinish || !bytes.Equal(td, []byte{1}) {
		t.Errorf("FN % x", p.ta.log[4])
	}
	if dn := header.SPDU(p.tb.log[len(p.tb.log)-1]); dn.SI() != header.SPDUDisconnect {
		t.Errorf("DN % x", []byte(dn))
	}
	if n := p.Held(); n != 0 {
		t.Errorf("%d structures held", n)
	}
}

// Refusals: by the SPM (unknown SSAP) and by the user, with the reason
// and the user's data in the RF; the initiator releases the transport.
func TestSessionRefusal(t *testing.T) {
	for _, tc := range []struct {
		called []byte
		refuse int
		reason uint8
		ud     string
	}{{[]byte{9, 9}, -1, header.SESRefuseSSAPUnknown, ""}, {[]byte{0, 2}, 1, 1, "no"}} {
		p := newPair(t, tc.called)
		p.ub.refuse = tc.refuse
		p.H.OnStart(func() { p.a.Connect(0) })
		p.run(2 * sim.Second)
		if p.ua.accepted || p.ua.reason != tc.reason || string(p.ua.ud) != tc.ud || p.ta.disc != 1 {
			t.Errorf("called % x: accepted %v reason %d ud %q, releases %d", tc.called, p.ua.accepted, p.ua.reason, p.ua.ud, p.ta.disc)
		}
		if p.b.State() != session.StateClosed || p.Held() != 0 {
			t.Errorf("B %v, %d held", p.b.State(), p.Held())
		}
	}
}

// A user abort: AB with the user's data; the peer is told and releases
// the transport. A responder whose DN is not followed by the transport
// release releases it itself when TIM runs out.
func TestSessionAbortAndTIM(t *testing.T) {
	p := newPair(t, []byte{0, 2})
	p.H.OnStart(func() { p.a.Connect(0) })
	p.at(100*sim.Millisecond, func() { p.a.Abort(chainOf(p.Bare, []byte("ARU"))) })
	p.run(2 * sim.Second)
	if got := p.ub.events; len(got) != 2 || got[1] != "abort" || p.ub.provider || string(p.ub.ud) != "ARU" || p.tb.disc != 1 {
		t.Errorf("B %v provider %v ud %q releases %d", got, p.ub.provider, p.ub.ud, p.tb.disc)
	}
	q := newPair(t, []byte{0, 2})
	q.H.OnStart(func() { q.a.Connect(0) })
	// A never gets the DN: the transport loses what B sends.
	q.at(100*sim.Millisecond, func() {
		q.n.dropFrom = q.tb
		q.a.Release(0)
	})
	q.run(3 * sim.Second)
	if q.s.Stats().Timeouts != 1 || q.tb.disc != 1 {
		t.Errorf("TIM: %+v, B released the transport %d times", q.s.Stats(), q.tb.disc)
	}
}

// What does not parse or fit the state is a protocol error: the user
// gets an S-P-ABORT, an AB with protocol error goes, it is counted; the
// receive path survives any octets.
func TestSessionProtocolErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		p := newPair(t, []byte{0, 2})
		p.H.OnStart(func() { p.a.Connect(0) })
		var junk []byte
		switch i {
		case 0:
			junk = []byte{1, 0, 'x'} // DT without a GT
		case 1:
			junk = []byte{13, 0} // a second CN
		case 2:
			junk = []byte{10, 0} // DN without an FN
		default:
			junk = make([]byte, r.IntN(12))
			for k := range junk {
				junk[k] = byte(r.IntN(256))
			}
			if r.IntN(2) == 0 && len(junk) > 2 {
				junk[0] = []byte{1, 9, 10, 13, 14, 25}[r.IntN(6)]
			}
		}
		p.at(100*sim.Millisecond, func() { p.n.push(tevent{to: p.b, kind: "data", b: junk}) })
		p.run(2 * sim.Second)
		st := p.s.Stats()
		if i < 3 && (st.ProviderAborts == 0 || p.ub.events[len(p.ub.events)-1] != "abort" || !p.ub.provider) {
			t.Errorf("% x: %+v, B %v", junk, st, p.ub.events)
		}
		if n := p.Held(); n != 0 {
			t.Fatalf("% x: %d structures held", junk, n)
		}
	}
}
