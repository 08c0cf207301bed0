package inet_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// keepAliveRun opens a connection from pcA to pcB that then stays idle;
// pcA has SO_KEEPALIVE when keep is set (probes after 2 s idle, every
// 500 ms, 3 of them). cut, when set, is when frames stop reaching pcB (its
// cable pulled). pcA waits in recv for 20 s and reports how it ended.
func keepAliveRun(t *testing.T, keep bool, cut sim.Time) (a, b inet.Stats, recvErr inet.Errno, endedAt sim.Time) {
	exp := loadUDP(t, []int{4}, 1, 0)
	for i := range 2 {
		p := machinetest.InetParams(ownMachine(exp, i))
		p.TCPKeepIdle, p.TCPKeepIntvl, p.TCPKeepProbes = 2*sim.Second, 500*sim.Millisecond, 3
	}
	tr := newThreadRun(t, exp)
	tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		lfd, _ := s.Socket(th, inet.SockStream)
		s.Bind(th, lfd, tcpPort)
		s.Listen(th, lfd, 1)
		fd, _, _, err := s.Accept(th, lfd)
		if err != 0 {
			tr.errorf("accept: %v", err)
			return
		}
		buf := userBuf(h, 64, nil)
		s.Recv(th, fd, buf, 64, 25*sim.Second)
	})
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(10 * sim.Millisecond)
		fd, _ := s.Socket(th, inet.SockStream)
		if keep {
			if err := s.SetOption(th, fd, inet.OptKeepAlive, 1); err != 0 {
				tr.errorf("SO_KEEPALIVE: %v", err)
			}
		}
		if err := s.Connect(th, fd, ipB, tcpPort); err != 0 {
			tr.errorf("connect: %v", err)
			return
		}
		buf := userBuf(h, 64, nil)
		_, recvErr = s.Recv(th, fd, buf, 64, 20*sim.Second)
		endedAt = machinetest.Kernel(h).CPU().LocalTime()
		s.Close(th, fd)
	})
	if cut > 0 {
		k := tr.r.Sched
		k.Schedule(sim.NewEvent("cut", func() {
			if err := machinetest.NICs(host(t, tr.r, "pcB"))[0].Port.SetFaults(ethersim.FaultParams{Drop: 1}); err != nil {
				t.Error(err)
			}
		}), cut)
	}
	tr.execute()
	return machinetest.Inet(host(t, tr.r, "pcA")).Stats(), machinetest.Inet(host(t, tr.r, "pcB")).Stats(), recvErr, endedAt
}

// Keep-alive is off by default: an idle connection sends nothing. With
// SO_KEEPALIVE an idle connection probes its peer after the idle time and
// the peer's answer keeps it up; when the peer stops answering, the
// probes run out and the connection is dropped with ETIMEDOUT.
func TestTCPKeepAlive(t *testing.T) {
	a, _, err, _ := keepAliveRun(t, false, 0)
	if a.TCPKeepAliveProbes != 0 || err != inet.ETIMEDOUT {
		t.Errorf("keep-alive off: %d probes; recv ended with %v, want its own timeout", a.TCPKeepAliveProbes, err)
	}

	a, b, err, _ := keepAliveRun(t, true, 0)
	// Idle 2 s, a probe, answered: again 2 s later. About 10 in 20 s.
	if a.TCPKeepAliveProbes < 8 || a.TCPKeepAliveProbes > 10 || a.TCPKeepAliveDrops != 0 || err != inet.ETIMEDOUT {
		t.Errorf("answered: %d probes, %d drops; recv ended with %v, want its own timeout", a.TCPKeepAliveProbes, a.TCPKeepAliveDrops, err)
	}
	if b.TCPDupData < a.TCPKeepAliveProbes {
		t.Errorf("pcB saw %d of the %d probes as old data", b.TCPDupData, a.TCPKeepAliveProbes)
	}

	t.Logf("answered: %d probes in 20 s", a.TCPKeepAliveProbes)
	a, _, err, at := keepAliveRun(t, true, 5*sim.Second)
	t.Logf("cut at 5 s: %d probes, dropped at %v with %v", a.TCPKeepAliveProbes, at, err)
	// Cut at 5 s: the probe due at about 6 s goes unanswered, two more
	// 500 ms apart, and the next timer, at about 7.5 s, drops it.
	if a.TCPKeepAliveDrops != 1 || err != inet.ETIMEDOUT || at < 7*sim.Second || at > 8*sim.Second {
		t.Errorf("cut: %d drops, recv ended with %v at %v; want ETIMEDOUT between 7 and 8 s", a.TCPKeepAliveDrops, err, at)
	}
	if a.TCPOutRsts != 1 {
		t.Errorf("cut: %d RSTs sent, want the one that ends the connection", a.TCPOutRsts)
	}
}
