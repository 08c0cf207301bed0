package inet_test

// End-to-end tests of TCP (stack/inet) between two 486 hosts with NE2000
// cards (configs/udp-ne2000.toml with no workload of its own): simulated
// threads connect, move 100 KiB each way, close in order, and the active
// closer's TIME_WAIT runs out; then the same with 2 % of the frames one
// card receives dropped.

import (
	"bytes"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

const tcpPort = 5001

// tcpTransfer is the result of one exchange.
type tcpTransfer struct {
	toServer, toClient []byte // what each side received
	clientDone         sim.Time
	a, b               inet.Stats
	connsA, connsB     []inet.TCPConnInfo
}

// recvAll reads until end of stream into a Go slice.
func recvAll(tr *threadRun, th *kernel.Thread, h *machine.Host, fd int, what string) []byte {
	s := machinetest.Inet(h)
	const chunk = 4096
	buf := userBuf(h, chunk, nil)
	defer machinetest.Kernel(h).Kfree(buf)
	var got []byte
	for {
		n, err := s.Recv(th, fd, buf, chunk, 0)
		if err != 0 {
			tr.errorf("%s: recv: %v after %d bytes", what, err, len(got))
			return got
		}
		if n == 0 {
			return got
		}
		got = append(got, readSim(machinetest.Kernel(h).CPU(), buf, n)...)
	}
}

// sendAll sends data in pieces of at most piece bytes.
func sendAll(tr *threadRun, th *kernel.Thread, h *machine.Host, fd int, data []byte, piece int, what string) {
	buf := userBuf(h, len(data), data)
	defer machinetest.Kernel(h).Kfree(buf)
	for off := 0; off < len(data); {
		n := min(piece, len(data)-off)
		sent, err := machinetest.Inet(h).Send(th, fd, buf+memory.Addr(off), n)
		if err != 0 || sent != n {
			tr.errorf("%s: send of %d at %d: sent %d, %v", what, n, off, sent, err)
			return
		}
		off += n
	}
}

func runTCPExchange(t *testing.T, size int, drop float64) tcpTransfer {
	return runTCPExchangeWith(t, size, func(exp *machine.Experiment) {
		if drop > 0 {
			machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Drop = drop
		}
	})
}

func runTCPExchangeWith(t *testing.T, size int, faults func(*machine.Experiment)) tcpTransfer {
	exp := loadUDP(t, []int{4}, 1, 0)
	for i := range 2 {
		machinetest.InetParams(ownMachine(exp, i)).TCPMSL = 500 * sim.Millisecond
	}
	faults(exp)
	tr := newThreadRun(t, exp)
	up, down := pattern(size, 1), pattern(size, 2)
	ex := spawnExchange(tr, up, down)
	tr.execute()
	res := tcpTransfer{toServer: ex.toServer, toClient: ex.toClient, clientDone: ex.clientDone}
	ha, hb := host(t, tr.r, "pcA"), host(t, tr.r, "pcB")
	res.a, res.b = machinetest.Inet(ha).Stats(), machinetest.Inet(hb).Stats()
	res.connsA, res.connsB = machinetest.Inet(ha).TCPConns(), machinetest.Inet(hb).TCPConns()
	if !bytes.Equal(res.toServer, up) {
		t.Errorf("server got %d bytes, want %d, equal %v", len(res.toServer), len(up), bytes.Equal(res.toServer, up))
	}
	if !bytes.Equal(res.toClient, down) {
		t.Errorf("client got %d bytes, want %d, equal %v", len(res.toClient), len(down), bytes.Equal(res.toClient, down))
	}
	if len(res.connsA) != 0 || len(res.connsB) != 0 {
		t.Errorf("connections left: pcA %+v pcB %+v", res.connsA, res.connsB)
	}
	if res.a.TCPTimeWaitEnds != 1 || res.b.TCPTimeWaitEnds != 0 {
		t.Errorf("TIME_WAIT ended %d times on pcA, %d on pcB; want 1, 0", res.a.TCPTimeWaitEnds, res.b.TCPTimeWaitEnds)
	}
	if res.a.TCPOutRsts != 0 || res.b.TCPOutRsts != 0 || res.a.TCPEstabResets+res.b.TCPEstabResets != 0 {
		t.Errorf("resets: pcA %d sent, pcB %d sent, %d connections reset", res.a.TCPOutRsts, res.b.TCPOutRsts, res.a.TCPEstabResets+res.b.TCPEstabResets)
	}
	for _, h := range []*machine.Host{ha, hb} {
		if now, _ := machinetest.Kernel(h).Allocator().InUse(); now > 1<<16 {
			t.Logf("%s: %d bytes of heap still in use", h.Name, now)
		}
	}
	return res
}

// exchange is a TCP transfer between pcA and pcB: pcA connects, sends up
// and shuts its side; pcB reads to the end, answers with down and closes;
// pcA reads to the end and closes. Both wait out TIME_WAIT.
type exchange struct {
	toServer, toClient []byte
	clientDone         sim.Time
}

// spawnExchange puts the transfer's programs on tr's hosts.
func spawnExchange(tr *threadRun, up, down []byte) *exchange {
	ex := &exchange{}
	tr.spawn("pcB", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		lfd, err := s.Socket(th, inet.SockStream)
		if err != 0 {
			tr.errorf("server socket: %v", err)
			return
		}
		if err := s.Bind(th, lfd, tcpPort); err != 0 {
			tr.errorf("bind: %v", err)
			return
		}
		if err := s.Listen(th, lfd, 4); err != 0 {
			tr.errorf("listen: %v", err)
			return
		}
		fd, from, _, err := s.Accept(th, lfd)
		if err != 0 || from != ipA {
			tr.errorf("accept: fd %d from %v, %v", fd, from, err)
			return
		}
		ex.toServer = recvAll(tr, th, h, fd, "server")
		sendAll(tr, th, h, fd, down, 3000, "server")
		if err := s.Close(th, fd); err != 0 {
			tr.errorf("server close: %v", err)
		}
		if err := s.Close(th, lfd); err != 0 {
			tr.errorf("listener close: %v", err)
		}
		th.SleepFor(2 * sim.Second)
	})
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		th.SleepFor(10 * sim.Millisecond) // the server listens first
		fd, err := s.Socket(th, inet.SockStream)
		if err != 0 {
			tr.errorf("client socket: %v", err)
			return
		}
		if err := s.Connect(th, fd, ipB, tcpPort); err != 0 {
			tr.errorf("connect: %v", err)
			return
		}
		sendAll(tr, th, h, fd, up, 1000, "client")
		if err := s.Shutdown(th, fd, inet.ShutWr); err != 0 {
			tr.errorf("shutdown: %v", err)
		}
		ex.toClient = recvAll(tr, th, h, fd, "client")
		if err := s.Close(th, fd); err != 0 {
			tr.errorf("client close: %v", err)
		}
		ex.clientDone = machinetest.Kernel(h).CPU().LocalTime()
		th.SleepFor(2 * sim.Second) // TIME_WAIT (2·MSL = 1 s) runs out
	})
	return ex
}

// TestTCPExchange moves 100 KiB each way over a clean segment.
func TestTCPExchange(t *testing.T) {
	r := runTCPExchange(t, 100*1024, 0)
	t.Logf("client done at %v", r.clientDone)
	t.Logf("pcA: %d segs out, %d in, %d retransmitted, %d delayed ACKs", r.a.TCPOutSegs, r.a.TCPInSegs, r.a.TCPRetransSegs, r.a.TCPDelayedAcks)
	t.Logf("pcB: %d segs out, %d in, %d retransmitted, %d delayed ACKs", r.b.TCPOutSegs, r.b.TCPInSegs, r.b.TCPRetransSegs, r.b.TCPDelayedAcks)
	if r.a.TCPRetransSegs+r.b.TCPRetransSegs != 0 {
		t.Errorf("%d retransmissions on a clean segment", r.a.TCPRetransSegs+r.b.TCPRetransSegs)
	}
	if r.a.TCPActiveOpens != 1 || r.b.TCPPassiveOpens != 1 {
		t.Errorf("opens: pcA %d active, pcB %d passive; want 1, 1", r.a.TCPActiveOpens, r.b.TCPPassiveOpens)
	}
}

// TestTCPExchangeUnderLoss drops 2 % of the frames pcB receives: every
// byte still arrives once, in order, and the losses show as
// retransmissions.
func TestTCPExchangeUnderLoss(t *testing.T) {
	r := runTCPExchange(t, 100*1024, 0.02)
	t.Logf("client done at %v", r.clientDone)
	t.Logf("pcA: %d segs out, %d retransmitted (%d fast, %d timeouts)", r.a.TCPOutSegs, r.a.TCPRetransSegs, r.a.TCPFastRetrans, r.a.TCPTimeouts)
	t.Logf("pcB: %d segs out, %d retransmitted (%d fast, %d timeouts), %d out of order", r.b.TCPOutSegs, r.b.TCPRetransSegs, r.b.TCPFastRetrans, r.b.TCPTimeouts, r.b.TCPOutOfOrder)
	if r.a.TCPRetransSegs == 0 {
		t.Errorf("no retransmissions from pcA with 2 %% of its frames to pcB dropped")
	}
}

// TestTCPExchangeHostile loses, duplicates and corrupts frames in both
// directions: the streams still arrive whole, corrupt segments are
// dropped by the checksum.
func TestTCPExchangeHostile(t *testing.T) {
	r := runTCPExchangeWith(t, 100*1024, func(exp *machine.Experiment) {
		for i := range 2 {
			f := &machinetest.NICSpecs(&exp.Hosts[i])[0].Faults
			f.Drop, f.Duplicate, f.Corrupt = 0.05, 0.02, 0.02
		}
	})
	t.Logf("client done at %v", r.clientDone)
	t.Logf("pcA: %d segs out, %d retransmitted (%d fast, %d timeouts), %d bad checksums", r.a.TCPOutSegs, r.a.TCPRetransSegs, r.a.TCPFastRetrans, r.a.TCPTimeouts, r.a.TCPInBadChecksum)
	t.Logf("pcB: %d segs out, %d retransmitted (%d fast, %d timeouts), %d bad checksums", r.b.TCPOutSegs, r.b.TCPRetransSegs, r.b.TCPFastRetrans, r.b.TCPTimeouts, r.b.TCPInBadChecksum)
}
