package top_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

// rig is one measurement: an originator and a recipient (the same PC in
// loopback).
type rig struct {
	k      *sim.Scheduler
	seg    *ethersim.Segment
	a, b   *pc
	ua, ub *top.User
}

const (
	userSAP = 0x7C
	userSel = 0x21
)

func build(t testing.TB, lv top.Level, size, msgs int, loop bool, cp clnp.Params) *rig {
	t.Helper()
	r := &rig{k: sim.NewScheduler(1)}
	dp := pktdrv.DefaultParams()
	if loop {
		dp.Loopback = true
		r.a = newPC(t, r.k, nil, "a", 1, dp)
		r.b = r.a
	} else {
		var err error
		if r.seg, err = ethersim.NewNetwork(r.k).NewSegment("lan0", ethersim.DefaultSegmentParams()); err != nil {
			t.Fatal(err)
		}
		r.a = newPC(t, r.k, r.seg, "a", 1, dp)
		r.b = newPC(t, r.k, r.seg, "b", 2, dp)
	}
	hosts := []*pc{r.a}
	if !loop {
		hosts = append(hosts, r.b)
	}
	for i, p := range hosts {
		p.nsap = nsapOf(byte(i + 1))
		p.stack(t, lv, cp)
	}
	if !loop && lv == top.LevelCLNS {
		r.a.clns.N.AddRoute(r.b.nsap, r.b.addr)
		r.b.clns.N.AddRoute(r.a.nsap, r.a.addr)
	} else if lv == top.LevelCLNS {
		r.a.clns.N.AddRoute(r.a.nsap, r.a.addr)
	}
	mk := func(p, peer *pc) *top.User {
		u, err := p.h.NewUser(top.UserParams{Level: lv, Size: size, Messages: msgs, Buffers: 4, SAP: userSAP, Selector: userSel,
			Peer: peer.addr, PeerNSAP: peer.nsap.WithSelector(userSel)}, p.drv, p.mac, p.llc, p.clns)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	r.ua = mk(r.a, r.b)
	r.ub = r.ua
	if !loop {
		r.ub = mk(r.b, r.a)
	}
	r.ua.Originate()
	return r
}

// run starts the PCs and runs until the originator has its last reply
// (or limit passes).
func (r *rig) run(t testing.TB, limit sim.Time) top.Result {
	t.Helper()
	r.ua.OnDone = r.k.Stop
	r.a.h.Start()
	if r.b != r.a {
		r.b.h.Start()
	}
	r.k.RunUntil(limit)
	res := r.ua.Result()
	if !res.Done {
		t.Fatalf("no reply to the last message after %v: %+v, recipient %+v", limit, res, r.ub.Received())
	}
	return res
}

// Every layer user, remote and in loopback, at three sizes: all
// messages arrive intact, and the figures order as the study's did — in
// loopback each layer adds cost (packet driver ≥ MAC ≥ LLC ≥ CLNS), the
// loopback beats the wire for large messages (the study: processing is
// negligible next to Tsend for large frames, which loopback replaces by
// a copy), and larger messages go faster. For small ones it need not:
// a 128-octet message's frame takes 0.2 ms on the wire and the ISA bus,
// and remote the two PCs each do one end's work at once, where loopback
// does both on one; the CLNS user's is the most work and the first to
// lose.
func TestLevels(t *testing.T) {
	levels := []top.Level{top.LevelPktDrv, top.LevelMAC, top.LevelLLC, top.LevelCLNS}
	sizes := []int{128, 1024, 1152}
	mbps := map[bool]map[top.Level][]float64{false: {}, true: {}}
	for _, lv := range levels {
		for _, loop := range []bool{false, true} {
			for _, size := range sizes {
				r := build(t, lv, size, 300, loop, clnp.DefaultParams())
				res := r.run(t, 20*sim.Second)
				t.Logf("%v loop=%v %d B: %.2f Mbit/s (tick %.2f), %v a message", lv, loop, size, res.Mbps(), res.TickMbps(), res.Duration()/sim.Time(res.Messages))
				if got := r.ub.Received(); got.Messages != 300 || got.Corrupt != 0 {
					t.Errorf("%v loop=%v %d B: recipient %+v", lv, loop, size, got)
				}
				noGuestErrors(t, r.a, r.b)
				mbps[loop][lv] = append(mbps[loop][lv], res.Mbps())
			}
		}
	}
	for i, size := range sizes {
		for j := 1; j < len(levels); j++ {
			if up, down := mbps[true][levels[j]][i], mbps[true][levels[j-1]][i]; up > down {
				t.Errorf("loopback %d B: %v user %.2f Mbit/s above %v user %.2f", size, levels[j], up, levels[j-1], down)
			}
		}
		for _, lv := range levels {
			if size >= 1024 && mbps[true][lv][i] <= mbps[false][lv][i] {
				t.Errorf("%v %d B: loopback %.2f not above remote %.2f", lv, size, mbps[true][lv][i], mbps[false][lv][i])
			}
			if i > 0 && mbps[false][lv][i] <= mbps[false][lv][0] {
				t.Errorf("%v remote: %d B at %.2f not above 128 B at %.2f", lv, size, mbps[false][lv][i], mbps[false][lv][0])
			}
		}
	}
}
