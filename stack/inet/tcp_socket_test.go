package inet_test

// TCP socket calls: error numbers, refused and timed-out connects, and
// Nagle's algorithm seen in the number of segments small writes make.

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// TestTCPConnectErrors connects to a port nobody listens on (pcB answers
// with a RST: ECONNREFUSED) and to an address nobody has (the SYNs go
// unanswered: ETIMEDOUT after the retries), and checks the calls' error
// numbers on the way.
func TestTCPConnectErrors(t *testing.T) {
	exp := loadUDP(t, []int{4}, 1, 0)
	machinetest.InetParams(ownMachine(exp, 0)).TCPInitialRTO = 10 * sim.Millisecond
	tr := newThreadRun(t, exp)
	var timedOutAt, startedAt sim.Time
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		want := func(what string, got, want inet.Errno) {
			if got != want {
				tr.errorf("%s: %v, want %v", what, got, want)
			}
		}
		buf := userBuf(h, 64, nil)
		fd, err := s.Socket(th, inet.SockStream)
		want("socket", err, 0)
		_, err = s.Send(th, fd, buf, 4)
		want("send before connect", err, inet.ENOTCONN)
		_, err = s.Recv(th, fd, buf, 4, sim.Millisecond)
		want("recv before connect", err, inet.ENOTCONN)
		want("shutdown before connect", s.Shutdown(th, fd, inet.ShutWr), inet.ENOTCONN)
		want("connect to port 0", s.Connect(th, fd, ipB, 0), inet.EDESTADDRREQ)
		want("connect off the link", s.Connect(th, fd, inet.Addr{192, 168, 7, 1}, 80), inet.ENETUNREACH)
		want("set rcvbuf too large", s.SetOption(th, fd, inet.OptRcvBuf, 1<<20), inet.EINVAL)
		want("set sndbuf", s.SetOption(th, fd, inet.OptSndBuf, 8192), 0)
		want("connect to a closed port", s.Connect(th, fd, ipB, 4444), inet.ECONNREFUSED)
		want("close", s.Close(th, fd), 0)
		_, err = s.Send(th, fd, buf, 4)
		want("send on a closed descriptor", err, inet.EBADF)

		udp, _ := s.Socket(th, inet.SockDgram)
		want("listen on a UDP socket", s.Listen(th, udp, 1), inet.EOPNOTSUPP)
		s.Close(th, udp)

		fd, _ = s.Socket(th, inet.SockStream)
		startedAt = machinetest.Kernel(h).CPU().LocalTime()
		want("connect to nobody", s.Connect(th, fd, inet.Addr{10, 0, 0, 99}, 80), inet.ETIMEDOUT)
		timedOutAt = machinetest.Kernel(h).CPU().LocalTime()
		want("close", s.Close(th, fd), 0)
	})
	tr.execute()
	a, b := machinetest.Inet(host(t, tr.r, "pcA")).Stats(), machinetest.Inet(host(t, tr.r, "pcB")).Stats()
	if b.TCPNoPorts != 1 || b.TCPOutRsts != 1 || a.TCPAttemptFails != 2 {
		t.Errorf("pcB: %d segments for no port, %d RSTs; pcA: %d failed attempts; want 1, 1, 2", b.TCPNoPorts, b.TCPOutRsts, a.TCPAttemptFails)
	}
	// 7 SYNs with the timeout doubling from 10 ms: 10+20+...+640 ms,
	// give or take the phase of the 10 ms clock tick.
	if d := timedOutAt - startedAt; d < 1250*sim.Millisecond || d > 1500*sim.Millisecond {
		t.Errorf("connect timed out after %v, want about 1.27 s", d)
	}
	if len(machinetest.Inet(host(t, tr.r, "pcA")).TCPConns()) != 0 {
		t.Errorf("connections left on pcA: %+v", machinetest.Inet(host(t, tr.r, "pcA")).TCPConns())
	}
}

// TestTCPAcceptTimeout: an accept that nobody connects to gives up with
// ETIMEDOUT after its timeout (the kernel's 10 ms tick rounding it up),
// and the listener is still there for the connection that comes later,
// which an accept within its timeout takes.
func TestTCPAcceptTimeout(t *testing.T) {
	exp := loadUDP(t, []int{4}, 1, 0)
	tr := newThreadRun(t, exp)
	var waited sim.Time
	accepted := false
	tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		c := machinetest.Kernel(h).CPU()
		lfd, _ := s.Socket(th, inet.SockStream)
		s.Bind(th, lfd, tcpPort)
		s.Listen(th, lfd, 1)
		start := c.LocalTime()
		if _, _, _, err := s.AcceptTimeout(th, lfd, 200*sim.Millisecond); err != inet.ETIMEDOUT {
			tr.errorf("accept with nobody connecting: %v, want ETIMEDOUT", err)
		}
		waited = c.LocalTime() - start
		fd, _, _, err := s.AcceptTimeout(th, lfd, sim.Second)
		if err != 0 {
			tr.errorf("accept of pcA's connection: %v", err)
			return
		}
		accepted = true
		s.Close(th, fd)
		s.Close(th, lfd)
	})
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(300 * sim.Millisecond)
		fd, _ := s.Socket(th, inet.SockStream)
		if e := s.Connect(th, fd, ipB, tcpPort); e != 0 {
			tr.errorf("connect: %v", e)
		}
		s.Close(th, fd)
	})
	tr.execute()
	if waited < 200*sim.Millisecond || waited > 220*sim.Millisecond {
		t.Errorf("accept gave up after %v, want 200 ms (at most two 10 ms ticks more)", waited)
	}
	if !accepted {
		t.Error("the connection after the timeout was not accepted")
	}
}

// nagleRun sends 200 writes of 10 bytes from pcA to pcB and returns the
// segments pcA sent from the first write on (data, FIN and the last
// ACK), with or without TCP_NODELAY.
func nagleRun(t *testing.T, noDelay bool) (segs uint64) {
	exp := loadUDP(t, []int{4}, 1, 0)
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
		if got := recvAll(tr, th, h, fd, "server"); len(got) != 2000 {
			tr.errorf("server got %d bytes, want 2000", len(got))
		}
		s.Close(th, fd)
		s.Close(th, lfd)
	})
	var before, after uint64
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(10 * sim.Millisecond)
		fd, _ := s.Socket(th, inet.SockStream)
		if noDelay {
			if e := s.SetOption(th, fd, inet.OptNoDelay, 1); e != 0 {
				tr.errorf("nodelay: %v", e)
			}
		}
		if e := s.Connect(th, fd, ipB, tcpPort); e != 0 {
			tr.errorf("connect: %v", e)
			return
		}
		buf := userBuf(h, 10, make([]byte, 10))
		before = s.Stats().TCPOutSegs
		for range 200 {
			s.Send(th, fd, buf, 10)
		}
		s.Close(th, fd)
		th.SleepFor(sim.Second)
		after = s.Stats().TCPOutSegs
	})
	tr.execute()
	return after - before
}

// TestTCPNagle: with Nagle's algorithm, small writes wait for the ACK of
// what is in flight and go out together; with TCP_NODELAY each leaves at
// once.
func TestTCPNagle(t *testing.T) {
	nagle, noDelay := nagleRun(t, false), nagleRun(t, true)
	t.Logf("200 writes of 10 bytes: %d segments with Nagle, %d with TCP_NODELAY", nagle, noDelay)
	if nagle >= 100 || noDelay < 150 || nagle >= noDelay {
		t.Errorf("segments: %d with Nagle, %d without; want Nagle to coalesce (< 100) and TCP_NODELAY not (>= 150)", nagle, noDelay)
	}
}

// ackDelays has pcA write 100 bytes every 300 ms, 16 times, and returns
// how long each write waited for its ACK (read from the connection's
// state, which the test only looks at).
func ackDelays(t *testing.T, delack sim.Time) []sim.Time {
	exp := loadUDP(t, []int{4}, 1, 0)
	if delack > 0 {
		machinetest.InetParams(ownMachine(exp, 1)).TCPDelAck = delack
	}
	tr := newThreadRun(t, exp)
	tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		lfd, _ := s.Socket(th, inet.SockStream)
		s.Bind(th, lfd, tcpPort)
		s.Listen(th, lfd, 1)
		fd, _, _, err := s.Accept(th, lfd)
		if err != 0 {
			return
		}
		recvAll(tr, th, h, fd, "server")
		s.Close(th, fd)
		s.Close(th, lfd)
	})
	var delays []sim.Time
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(10 * sim.Millisecond)
		fd, _ := s.Socket(th, inet.SockStream)
		if e := s.Connect(th, fd, ipB, tcpPort); e != 0 {
			tr.errorf("connect: %v", e)
			return
		}
		buf := userBuf(h, 100, make([]byte, 100))
		c := machinetest.Kernel(h).CPU()
		for range 16 {
			th.SleepFor(300 * sim.Millisecond)
			start := c.LocalTime()
			s.Send(th, fd, buf, 100)
			for {
				cs := s.TCPConns()
				if len(cs) == 0 || cs[0].SndUna == cs[0].SndMax {
					break
				}
				th.SleepFor(sim.Millisecond)
			}
			delays = append(delays, c.LocalTime()-start)
		}
		s.Close(th, fd)
		th.SleepFor(sim.Second)
	})
	tr.execute()
	return delays
}

// TestTCPDelayedAck: after the quick ACKs of the connection's start (a
// 32 KiB window holds 11 full segments: 11 of them), a lone segment is
// acknowledged when the delayed-ACK timer runs out: 200 ms by default,
// 50 ms when configured, rounded up to the 10 ms tick (the test polls
// once a tick, so its waits read up to 10 ms long).
func TestTCPDelayedAck(t *testing.T) {
	for _, tc := range []struct {
		delack, want sim.Time
	}{{0, 200 * sim.Millisecond}, {50 * sim.Millisecond, 50 * sim.Millisecond}} {
		d := ackDelays(t, tc.delack)
		t.Logf("delack %v: waits %v", tc.want, d)
		for i, w := range d {
			quick := i < 11
			if quick && w > 12*sim.Millisecond || !quick && (w < tc.want-10*sim.Millisecond || w > tc.want+22*sim.Millisecond) {
				t.Errorf("delack %v: write %d waited %v for its ACK (quick ACK: %v)", tc.want, i, w, quick)
			}
		}
	}
}
