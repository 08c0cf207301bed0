package top_test

import (
	"testing"

	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

func TestSmokeLoopbackMAC(t *testing.T) {
	k := sim.NewScheduler(1)
	dp := pktdrv.DefaultParams()
	dp.Loopback = true
	p := newPC(t, k, nil, "a", 1, dp)
	p.nsap = nsapOf(1)
	p.stack(t, top.LevelMAC, clnp.DefaultParams())
	u, err := p.h.NewUser(top.UserParams{Level: top.LevelMAC, Size: 1024, Messages: 200, Peer: p.addr}, p.drv, p.mac, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	u.Originate()
	u.OnDone = k.Stop
	p.h.Start()
	k.RunUntil(10 * sim.Second)
	r := u.Result()
	t.Logf("%+v mbps %.2f tick %.2f recv %+v mac %+v drv %+v host %+v", r, r.Mbps(), r.TickMbps(), u.Received(), p.mac.Stats(), p.drv.Stats(), p.h.Stats())
	noGuestErrors(t, p)
}
