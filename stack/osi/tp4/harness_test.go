package tp4_test

// TP4 driven on a bare TOP host: two transport entities (two "systems")
// on one core, joined by a scripted network that copies each NSDU's
// octets, may drop, delay, duplicate, reorder or change them, and
// delivers them from a task of its own (never from inside the sender),
// as a real network service would. Users record what they are given.

import (
	"bytes"
	"testing"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi"
	"simkron/stack/osi/tp4"
	"simkron/stack/top"
	"simkron/stack/top/toptest"
)

var (
	nsapA = osi.MustNSAP([]byte{0x49, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x21})
	nsapB = osi.MustNSAP([]byte{0x49, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0x21})
)

// nsdu is one NSDU in the network.
type nsdu struct {
	src, dst osi.NSAP
	b        []byte
}

// verdict is what the network does with an NSDU.
type verdict int

const (
	pass verdict = iota
	drop
	dup   // deliver twice
	delay // hold until the next NSDU has gone (reorder)
)

// wire is the scripted network.
type wire struct {
	b       *toptest.Bare
	task    *top.Task
	q       []nsdu
	held    []nsdu
	ents    map[osi.NSAP]*tp4.TP4 // by the system's NSAP
	filter  func(n *nsdu) verdict
	log     []nsdu // every NSDU sent, as sent
	stopped bool
}

type port struct{ w *wire }

func (p port) UnitdataRequest(src, dst osi.NSAP, ch osi.Chain) bool {
	w := p.w
	b := w.b.Bytes(ch)
	w.b.H.Bufs().Free(ch)
	n := nsdu{src, dst, b}
	w.log = append(w.log, nsdu{src, dst, append([]byte(nil), b...)})
	v := pass
	if w.filter != nil {
		v = w.filter(&n)
	}
	switch v {
	case drop:
		return true
	case dup:
		w.q = append(w.q, n, nsdu{n.src, n.dst, append([]byte(nil), n.b...)})
	case delay:
		w.held = append(w.held, n)
		return true
	default:
		w.q = append(w.q, n)
	}
	// What was held back goes after this one: it has been overtaken.
	w.q = append(w.q, w.held...)
	w.held = w.held[:0]
	w.b.H.Schedule(w.task)
	return true
}

func (w *wire) deliver() {
	if len(w.q) == 0 {
		return
	}
	n := w.q[0]
	w.q = w.q[1:]
	if len(w.q) > 0 {
		w.b.H.Schedule(w.task)
	}
	e, ok := w.ents[n.dst.WithSelector(0x21)]
	if !ok || w.stopped {
		return
	}
	ch := w.b.Chain(n.b)
	if ch != 0 {
		e.Input(n.src, n.dst, ch)
	}
}

// event is one indication a user got.
type event struct {
	kind string
	conn *tp4.Conn
	data []byte
	d    tp4.Disconnect
}

// recorder is a TS user that keeps everything and accepts every
// connection (unless refuse is set).
type recorder struct {
	b      *toptest.Bare
	name   string
	events []event
	data   []byte // the TSDUs' octets, in order
	tsdus  [][]byte
	conn   *tp4.Conn
	refuse uint8
	onData func(c *tp4.Conn, b []byte)
	ready  int
}

func (r *recorder) TConnectIndication(c *tp4.Conn) {
	r.events = append(r.events, event{kind: "connect-ind", conn: c})
	r.conn = c
	if r.refuse != 0 {
		c.Refuse(r.refuse)
		return
	}
	c.Accept()
}

func (r *recorder) TConnectConfirm(c *tp4.Conn) {
	r.events = append(r.events, event{kind: "connect-conf", conn: c})
}

func (r *recorder) TDataIndication(c *tp4.Conn, ch osi.Chain) {
	b := r.b.Bytes(ch)
	r.b.H.Bufs().Free(ch)
	r.data = append(r.data, b...)
	r.tsdus = append(r.tsdus, b)
	if r.onData != nil {
		r.onData(c, b)
	}
}

func (r *recorder) TExpeditedIndication(c *tp4.Conn, ch osi.Chain) {
	r.events = append(r.events, event{kind: "expedited", conn: c, data: r.b.Bytes(ch)})
	r.b.H.Bufs().Free(ch)
}

func (r *recorder) TDisconnectIndication(c *tp4.Conn, d tp4.Disconnect) {
	r.events = append(r.events, event{kind: "disconnect", conn: c, d: d})
}

func (r *recorder) TReady(c *tp4.Conn) { r.ready++ }

func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, e.kind)
	}
	return out
}

func (r *recorder) disconnect() (tp4.Disconnect, bool) {
	for _, e := range r.events {
		if e.kind == "disconnect" {
			return e.d, true
		}
	}
	return tp4.Disconnect{}, false
}

// pair is two entities, A calling B.
type pair struct {
	*toptest.Bare
	w      *wire
	a, b   *tp4.TP4
	ua, ub *recorder
	steps  *top.Env
}

func testParams() tp4.Params {
	p := tp4.DefaultParams()
	p.T1 = 300 * sim.Millisecond
	p.N = 4
	p.WindowTime = 2 * sim.Second
	p.Inactivity = 6 * sim.Second
	p.FreezeTime = 3 * sim.Second
	return p
}

func newPair(t testing.TB, pa, pb tp4.Params) *pair {
	t.Helper()
	bare := toptest.New(t, "es")
	p := &pair{Bare: bare}
	p.w = &wire{b: bare, ents: map[osi.NSAP]*tp4.TP4{}}
	p.w.task = bare.H.NewTask(cpu.Def{Name: "net_deliver", Layer: cpu.LayerCLNS, Instructions: 10, Why: "the test network delivers an NSDU"}, osi.CatOther, p.w.deliver)
	var err error
	if p.a, err = tp4.New(bare.H.NewEnv("tp4a", cpu.LayerTP4), port{p.w}, pa); err != nil {
		t.Fatal(err)
	}
	if p.b, err = tp4.New(bare.H.NewEnv("tp4b", cpu.LayerTP4), port{p.w}, pb); err != nil {
		t.Fatal(err)
	}
	p.w.ents[nsapA] = p.a
	p.w.ents[nsapB] = p.b
	p.ua = &recorder{b: bare, name: "A"}
	p.ub = &recorder{b: bare, name: "B"}
	if err := p.b.Listen([]byte("B"), p.ub); err != nil {
		t.Fatal(err)
	}
	return p
}

// connect opens A→B at start-up; then runs for d.
func (p *pair) connect(t testing.TB) {
	t.Helper()
	p.H.OnStart(func() {
		c, err := p.a.Connect(p.ua, tp4.Address{NSAP: nsapA, TSAP: []byte("A")}, tp4.Address{NSAP: nsapB, TSAP: []byte("B")})
		if err != nil {
			t.Error(err)
			return
		}
		p.ua.conn = c
	})
}

// at runs fn in the program at simulated time at (as a task, so that
// the TP4 machines are never entered from inside each other).
func (p *pair) at(at sim.Time, fn func()) {
	if p.steps == nil {
		p.steps = p.H.NewEnv("test", cpu.LayerAPPL)
	}
	tm := p.steps.NewTimer("test.step", fn)
	p.H.OnStart(func() { tm.Start(at) })
}

func (p *pair) run(d sim.Time) {
	p.H.Start()
	p.K.RunUntil(d)
}

// chainOf makes a transmission chain holding b.
func (p *pair) chainOf(b []byte) osi.Chain {
	ch, a := p.H.Bufs().New(osi.Tx, max(len(b), 1))
	if ch != 0 {
		p.H.CPU().Write(a, b)
		if len(b) == 0 {
			p.H.Bufs().Truncate(ch, 0)
		}
	}
	return ch
}

func pattern(n, seed int) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = byte(i*7 + i>>8 + seed)
	}
	return d
}

// tpdus splits a logged NSDU into its TPDUs (normal format unless ext).
func tpdus(b []byte) []header.TPDU {
	var out []header.TPDU
	for len(b) >= 2 {
		hl := int(b[0]) + 1
		if hl > len(b) {
			break
		}
		if header.TPDUHasData(b[1]) {
			out = append(out, header.TPDU(b))
			break
		}
		out = append(out, header.TPDU(b[:hl]))
		b = b[hl:]
	}
	return out
}

// count returns how many TPDUs of code went from src.
func (w *wire) count(src osi.NSAP, code uint8) int {
	n := 0
	for _, x := range w.log {
		if x.src != src {
			continue
		}
		for _, h := range tpdus(x.b) {
			if h.Code() == code {
				n++
			}
		}
	}
	return n
}

// checkAllSums verifies the checksum of every logged TPDU that carries
// one, with the brute-force-free closed form's independent check: both
// running sums zero.
func (w *wire) checkAllSums(t testing.TB) {
	t.Helper()
	for i, x := range w.log {
		for _, h := range tpdus(x.b) {
			if _, ok := h.Param(h.LI()%2 == 1 && h.Code() == header.TPDUCodeAK, header.TPDUParamChecksum); ok && !fletcherOracle(h) {
				t.Errorf("NSDU %d: TPDU %#x fails its checksum: % x", i, h.Code(), []byte(h))
			}
		}
	}
}

// fletcherOracle recomputes the ISO checksum's two sums octet by octet,
// modulo 255 at every step (X.224 annex D.4).
func fletcherOracle(b []byte) bool {
	c0, c1 := 0, 0
	for _, v := range b {
		c0 = (c0 + int(v)) % 255
		c1 = (c1 + c0) % 255
	}
	return c0 == 0 && c1 == 0
}

func eq(a, b []byte) bool { return bytes.Equal(a, b) }
