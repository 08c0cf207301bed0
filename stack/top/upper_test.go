package top_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/osi/pres"
	"simkron/stack/osi/session"
	"simkron/stack/osi/tp4"
	"simkron/stack/top"
)

// upperCfg configures a connection-mode measurement.
type upperCfg struct {
	tp        tp4.Params
	clnp      clnp.Params
	faults    ethersim.FaultParams // on both cards' links
	buffers   int
	echoEvery int
	ses       session.Params
	pres      pres.Params
	machine   machine
	duplex    bool
}

func defaultUpper() upperCfg {
	return upperCfg{tp: tp4.DefaultParams(), clnp: clnp.DefaultParams(), buffers: 16, ses: session.DefaultParams(), pres: pres.DefaultParams(), machine: i486Machine()}
}

// coRig is a connection-mode measurement: the two users and the TP4
// entities (the same PC twice in loopback).
type coRig struct {
	k      *sim.Scheduler
	seg    *ethersim.Segment
	a, b   *pc
	ta, tb *top.TP4
	ua, ub *top.ConnUser
	sa, sb *top.TSAP
}

const tp4Sel = 0x21

func buildUpper(t testing.TB, lv top.Level, size, msgs int, loop bool, cfg upperCfg) *coRig {
	t.Helper()
	r := &coRig{k: sim.NewScheduler(1)}
	dp := pktdrv.DefaultParams()
	if loop {
		dp.Loopback = true
		r.a = newPCOn(t, r.k, nil, "a", 1, dp, cfg.machine)
		r.b = r.a
	} else {
		var err error
		if r.seg, err = ethersim.NewNetwork(r.k).NewSegment("lan0", ethersim.DefaultSegmentParams()); err != nil {
			t.Fatal(err)
		}
		r.a = newPCOn(t, r.k, r.seg, "a", 1, dp, cfg.machine)
		r.b = newPCOn(t, r.k, r.seg, "b", 2, dp, cfg.machine)
		for _, p := range []*pc{r.a, r.b} {
			if err := p.port.SetFaults(cfg.faults); err != nil {
				t.Fatal(err)
			}
		}
	}
	hosts := []*pc{r.a}
	if !loop {
		hosts = append(hosts, r.b)
	}
	for i, p := range hosts {
		p.nsap = nsapOf(byte(i + 1))
		p.stack(t, top.LevelCLNS, cfg.clnp)
	}
	if loop {
		r.a.clns.N.AddRoute(r.a.nsap, r.a.addr)
	} else {
		r.a.clns.N.AddRoute(r.b.nsap, r.b.addr)
		r.b.clns.N.AddRoute(r.a.nsap, r.a.addr)
	}
	var err error
	if r.ta, err = r.a.h.NewTP4(r.a.clns, tp4Sel, cfg.tp); err != nil {
		t.Fatal(err)
	}
	r.tb = r.ta
	if !loop {
		if r.tb, err = r.b.h.NewTP4(r.b.clns, tp4Sel, cfg.tp); err != nil {
			t.Fatal(err)
		}
	}
	sesOf := map[*pc]*top.Session{}
	presOf := map[*pc]*top.Presentation{}
	for _, p := range hosts {
		e := r.ta
		if p == r.b {
			e = r.tb
		}
		if lv >= top.LevelSession {
			sesOf[p] = p.h.NewSession(e, cfg.ses)
		}
		if lv == top.LevelPresentation {
			if presOf[p], err = p.h.NewPresentation(sesOf[p], cfg.pres); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk := func(p *pc, e *top.TP4, self, peer string, peerE *top.TP4, i byte) (*top.ConnUser, *top.TSAP) {
		u, err := p.h.NewConnUser(top.UserParams{Level: lv, Size: size, Messages: msgs, Buffers: cfg.buffers, EchoEvery: cfg.echoEvery, Duplex: cfg.duplex})
		if err != nil {
			t.Fatal(err)
		}
		ssel, speer := []byte{0, i}, []byte{0, 3 - i}
		psel, ppeer := []byte{0, 0, 0, i}, []byte{0, 0, 0, 3 - i}
		switch lv {
		case top.LevelTP4:
			s, err := e.Bind([]byte(self), peerE.Address([]byte(peer)), u.Up())
			if err != nil {
				t.Fatal(err)
			}
			u.Attach(s.SAP, s.WaitReady)
			return u, s
		case top.LevelSession:
			s, err := sesOf[p].Bind(ssel, []byte(self), speer, peerE.Address([]byte(peer)), u.Up())
			if err != nil {
				t.Fatal(err)
			}
			u.Attach(s.SAP, s.WaitReady)
			return u, s.TSAP()
		default:
			s, err := presOf[p].Bind(psel, ssel, []byte(self), ppeer, speer, peerE.Address([]byte(peer)), u.Up())
			if err != nil {
				t.Fatal(err)
			}
			u.Attach(s.SAP, s.WaitReady)
			return u, s.SSAP().TSAP()
		}
	}
	r.ua, r.sa = mk(r.a, r.ta, "orig", "recp", r.tb, 1)
	r.ub, r.sb = mk(r.b, r.tb, "recp", "orig", r.ta, 2)
	r.ua.Originate()
	return r
}

func (r *coRig) start() {
	r.a.h.Start()
	if r.b != r.a {
		r.b.h.Start()
	}
}

// run starts the PCs and runs until both users have released (or limit
// passes).
func (r *coRig) run(t testing.TB, limit sim.Time) top.Result {
	t.Helper()
	r.ub.OnReleased = func() {
		if r.ua.Released {
			r.k.Stop()
		}
	}
	r.ua.OnReleased = func() {
		if r.ub.Released {
			r.k.Stop()
		}
	}
	r.start()
	r.k.RunUntil(limit)
	res := r.ua.Result()
	if !res.Done {
		t.Fatalf("no reply to the last message after %v: %+v, recipient %+v; tp4 a %+v", limit, res, r.ub.Received(), r.ta.T.Stats())
	}
	return res
}

var _ = osi.Tx

func TestUpperUsersSmoke(t *testing.T) {
	for _, c := range []struct {
		lv   top.Level
		loop bool
	}{{top.LevelTP4, false}, {top.LevelTP4, true}, {top.LevelSession, false}, {top.LevelSession, true}, {top.LevelPresentation, false}, {top.LevelPresentation, true}} {
		lv, loop := c.lv, c.loop
		r := buildUpper(t, lv, 1024, 500, loop, defaultUpper())
		res := r.run(t, 60*sim.Second)
		t.Logf("%v loop %v: %.2f Mbit/s (tick %.2f); released %v %v", lv, loop, res.Mbps(), res.TickMbps(), r.ua.Released, r.ub.Released)
		if got := r.ub.Received(); got.Messages != 500 || got.Corrupt != 0 {
			t.Errorf("recipient %+v", got)
		}
		noGuestErrors(t, r.a, r.b)
	}
}

// With the fewest Primitive Structures the host allows, and a TP4 send
// buffer of 4 DTs that keeps the users' 48 requests waiting in the
// queues, the layers run out of structures: requests are refused and
// made again, nothing is lost or freed twice, every message arrives.
func TestUpperScarcePrimitives(t *testing.T) {
	for _, lv := range []top.Level{top.LevelTP4, top.LevelSession, top.LevelPresentation} {
		cfg := defaultUpper()
		cfg.machine.top = func(p *top.Params) { p.TxPrims, p.RxPrims = 8, 8 }
		cfg.buffers = 48
		cfg.tp.SendBuffer = 4
		r := buildUpper(t, lv, 512, 200, false, cfg)
		res := r.run(t, 60*sim.Second)
		st := r.a.h.Stats()
		t.Logf("%v: %.2f Mbit/s, %d primitives refused", lv, res.Mbps(), st.PutFailures)
		if got := r.ub.Received(); got.Messages != 200 || got.Corrupt != 0 || !r.ua.Released || !r.ub.Released {
			t.Errorf("%v: recipient %+v, released %v %v", lv, got, r.ua.Released, r.ub.Released)
		}
		noGuestErrors(t, r.a, r.b)
	}
}
