package inet_test

// TCP interoperability with gVisor's netstack, through the gvisorpeer
// bridge with TCP on: the bridge settles gVisor's processors after every
// frame and timer, and the tests settle after every socket call they make
// on gVisor's side, so gVisor never runs while the event loop does and
// the run stays deterministic.

import (
	"bytes"
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/gopacket/gopacket/pcapgo"

	"simkron/ethersim"
	"simkron/ethersim/gvisorpeer"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/apps/membench"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// gvConn drives one gVisor TCP endpoint from a periodic sim event: it
// reads whatever has arrived, writes what is left to send, and shuts its
// sending side once everything is written.
type gvConn struct {
	p                *gvisorpeer.Peer
	ep               tcpip.Endpoint
	out              []byte
	got              []byte
	eof, shut        bool
	sendAfterEOF     bool // write only once the peer's stream has ended
	err              tcpip.Error
	firstByte, ended sim.Time
}

func (c *gvConn) pump() {
	defer c.p.Settle()
	for !c.eof {
		var b bytes.Buffer
		_, err := c.ep.Read(&b, tcpip.ReadOptions{})
		if err != nil {
			switch err.(type) {
			case *tcpip.ErrWouldBlock:
			case *tcpip.ErrClosedForReceive:
				c.eof = true
				c.ended = c.p.Scheduler().Now()
			default:
				c.err = err
				c.eof = true
			}
			break
		}
		if len(c.got) == 0 {
			c.firstByte = c.p.Scheduler().Now()
		}
		c.got = append(c.got, b.Bytes()...)
	}
	if c.sendAfterEOF && !c.eof {
		return
	}
	for len(c.out) > 0 {
		n, err := c.ep.Write(bytes.NewReader(c.out), tcpip.WriteOptions{})
		c.out = c.out[n:]
		if err != nil {
			if _, ok := err.(*tcpip.ErrWouldBlock); !ok {
				c.err = err
				c.out = nil
			}
			break
		}
	}
	if len(c.out) == 0 && !c.shut {
		c.shut = true
		c.ep.Shutdown(tcpip.ShutdownWrite)
	}
}

const interopTCPSize = 1 << 20

// newTCPInterop builds pcA alone on lan0 with a TCP-capable gVisor peer
// at pcB's addresses, faults on the frames reaching either, and lan0
// captured.
func newTCPInterop(t *testing.T, faults ethersim.FaultParams) (*machine.Run, *machine.Host, *gvisorpeer.Peer) {
	exp, err := machine.LoadExperiment(machinetest.Config("udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	exp.Hosts = exp.Hosts[:1]
	exp.Workload.Type = "membench"
	*membenchParams(exp) = membench.Params{MinSize: 64, MaxSize: 64, Ops: []string{"checksum"}, Passes: 2}
	machinetest.NICSpecs(&exp.Hosts[0])[0].Faults = faults
	machinetest.InetParams(ownMachine(exp, 0)).TCPMSL = 500 * sim.Millisecond
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	seg, ok := machinetest.Ethernet(r.Net).Segment("lan0")
	if !ok {
		t.Fatal("no segment lan0")
	}
	p, err := gvisorpeer.New(machinetest.Ethernet(r.Net).Network, seg, gvisorpeer.Config{Name: "gvtcp", MAC: interopGvMAC, IP: interopGvIP, TCP: true, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return r, r.Hosts[0], p
}

func runSim(k *sim.Scheduler, d sim.Time, cond func() bool) bool {
	limit := k.Now() + d
	for !cond() && k.Next() <= limit {
		k.RunWhile(func() bool { return !cond() && k.Next() <= limit })
	}
	return cond()
}

// poll runs fn every period of simulated time until stop reports true.
func poll(k *sim.Scheduler, period sim.Time, fn func(), stop func() bool) {
	var ev *sim.Event
	ev = sim.NewEvent("gvtcp.poll", func() {
		fn()
		if !stop() {
			k.Schedule(ev, k.Now()+period)
		}
	})
	k.Schedule(ev, k.Now())
}

// TestTCPInteropSimConnects: the simulated host connects to gVisor, sends
// 1 MiB, shuts down its side, reads gVisor's 1 MiB to the end and closes;
// on a clean link, with 2% of the frames lost each way, and with 2%
// corrupted (the cards' FCS checks drop them): every byte arrives once, in
// order, and the capture shows the retransmissions that repaired the
// faults (and none without them).
func TestTCPInteropSimConnects(t *testing.T) {
	for _, tc := range interopFaults {
		t.Run(tc.name, func(t *testing.T) {
			r, h, p := newTCPInterop(t, tc.faults)
			simConnects(t, r, h, p)
			checkRetransmissions(t, r, h, tc.faults)
		})
	}
}

// retransmissions counts the TCP data segments in a capture that carry
// bytes their direction has carried before, by destination.
func retransmissions(t *testing.T, capture []byte) (toGv, toSim int) {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	high := map[inet.Addr]uint32{}
	seen := map[inet.Addr]bool{}
	for {
		data, _, err := rd.ReadPacketData()
		if err != nil {
			break
		}
		if len(data) < header.EthernetHeaderLen+header.IPv4MinimumSize || header.Ethernet(data).Type() != header.EtherTypeIPv4 {
			continue
		}
		ip := header.IPv4(data[header.EthernetHeaderLen:])
		if !ip.IsValid(len(ip)) || ip.Protocol() != header.IPv4ProtocolTCP {
			continue
		}
		seg := header.TCP(ip.Payload())
		if !seg.IsValid() {
			continue
		}
		n := len(seg.Payload())
		if n == 0 {
			continue
		}
		dst, seq := ip.Dst(), seg.SeqNum()
		if seen[dst] && int32(seq-high[dst]) < 0 {
			if dst == inet.Addr(interopGvIP) {
				toGv++
			} else {
				toSim++
			}
		}
		if end := seq + uint32(n); !seen[dst] || int32(end-high[dst]) > 0 {
			high[dst] = end
		}
		seen[dst] = true
	}
	return toGv, toSim
}

func simConnects(t *testing.T, r *machine.Run, h *machine.Host, p *gvisorpeer.Peer) {
	k := r.Sched
	const port = 7000
	var wq waiter.Queue
	lep, terr := p.Stack.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if terr != nil {
		t.Fatal(terr)
	}
	if terr := lep.Bind(tcpip.FullAddress{Port: port}); terr != nil {
		t.Fatal(terr)
	}
	if terr := lep.Listen(4); terr != nil {
		t.Fatal(terr)
	}
	up, down := pattern(interopTCPSize, 11), pattern(interopTCPSize, 12)
	var gc *gvConn
	poll(k, 500*sim.Microsecond, func() {
		if gc == nil {
			ep, _, err := lep.Accept(nil)
			p.Settle()
			if err != nil {
				return
			}
			gc = &gvConn{p: p, ep: ep, out: down, sendAfterEOF: true}
		}
		gc.pump()
	}, func() bool { return gc != nil && (gc.err != nil || gc.eof && gc.shut) })

	var simGot []byte
	var simErr []string
	var start, end sim.Time
	done := false
	machinetest.Kernel(h).Spawn("tcp-client", func(th *kernel.Thread) {
		defer func() { done = true }()
		s := machinetest.Inet(h)
		fd, err := s.Socket(th, inet.SockStream)
		if err == 0 {
			err = s.Connect(th, fd, inet.Addr(interopGvIP), port)
		}
		if err != 0 {
			simErr = append(simErr, "connect: "+err.Error())
			return
		}
		start = machinetest.Kernel(h).CPU().LocalTime()
		tr := &threadRun{t: t}
		sendAll(tr, th, h, fd, up, 8192, "sim")
		if e := s.Shutdown(th, fd, inet.ShutWr); e != 0 {
			simErr = append(simErr, "shutdown: "+e.Error())
		}
		simGot = recvAll(tr, th, h, fd, "sim")
		end = machinetest.Kernel(h).CPU().LocalTime()
		if e := s.Close(th, fd); e != 0 {
			simErr = append(simErr, "close: "+e.Error())
		}
		simErr = append(simErr, tr.errs...)
		th.SleepFor(1500 * sim.Millisecond) // TIME_WAIT ends
	})
	if !runSim(k, 120*sim.Second, func() bool { return done }) {
		t.Fatalf("the simulated client did not finish by %v: got %d bytes; gVisor got %d; pcA %+v conns %+v", k.Now(), len(simGot), len(gc.got), machinetest.Inet(h).Stats(), machinetest.Inet(h).TCPConns())
	}
	for _, e := range simErr {
		t.Error(e)
	}
	if gc == nil {
		t.Fatal("gVisor accepted nothing")
	}
	if gc.err != nil {
		t.Errorf("gVisor: %v", gc.err)
	}
	if !bytes.Equal(gc.got, up) {
		t.Errorf("gVisor got %d bytes, want %d, equal %v", len(gc.got), len(up), bytes.Equal(gc.got, up))
	}
	if !bytes.Equal(simGot, down) {
		t.Errorf("the simulated host got %d bytes, want %d", len(simGot), len(down))
	}
	st := machinetest.Inet(h).Stats()
	if len(machinetest.Inet(h).TCPConns()) != 0 || st.TCPTimeWaitEnds != 1 {
		t.Errorf("pcA: connections left %+v, %d TIME_WAIT ends", machinetest.Inet(h).TCPConns(), st.TCPTimeWaitEnds)
	}
	gc.ep.Close()
	lep.Close()
	p.Settle()
	d := end - start
	t.Logf("2 MiB exchanged in %v (%.2f Mbit/s each way in turn); gVisor received sim's 1 MiB by %v", d, 2*8*float64(interopTCPSize)/d.Seconds()/1e6, gc.ended)
	t.Logf("pcA: %+v", st)
}

// interopFaults are the link conditions of the interop transfers: clean,
// 2% of the frames lost each way, 2% corrupted each way (the cards' FCS
// checks drop them).
var interopFaults = []struct {
	name   string
	faults ethersim.FaultParams
}{
	{"clean", ethersim.FaultParams{}},
	{"loss", ethersim.FaultParams{Drop: 0.02}},
	{"corrupt", ethersim.FaultParams{Corrupt: 0.02}},
}

// checkRetransmissions holds the capture's retransmissions to the faults:
// some in each direction when there were faults, none without, and pcA's
// own count equal to what it put on the wire.
func checkRetransmissions(t *testing.T, r *machine.Run, h *machine.Host, faults ethersim.FaultParams) {
	t.Helper()
	caps := r.Net.Captures()
	if len(caps) != 1 {
		t.Fatalf("%d captures", len(caps))
	}
	toGv, toSim := retransmissions(t, caps[0].Data)
	faulty := faults != ethersim.FaultParams{}
	t.Logf("retransmitted data segments in the capture: %d to gVisor, %d to pcA; pcA counted %d", toGv, toSim, machinetest.Inet(h).Stats().TCPRetransSegs)
	if faulty != (toGv > 0) || faulty != (toSim > 0) {
		t.Errorf("faults %+v: %d retransmissions to gVisor and %d to pcA in the capture", faults, toGv, toSim)
	}
	if got := machinetest.Inet(h).Stats().TCPRetransSegs; uint64(toGv) != got {
		t.Errorf("the capture shows %d retransmissions from pcA, its stack counted %d", toGv, got)
	}
}

// TestTCPInteropGVisorConnects: gVisor connects to the simulated host,
// which accepts, reads 1 MiB to the end, answers with 1 MiB and closes;
// clean, and with loss or corruption on the link as in
// TestTCPInteropSimConnects.
func TestTCPInteropGVisorConnects(t *testing.T) {
	for _, tc := range interopFaults {
		t.Run(tc.name, func(t *testing.T) {
			r, h, p := newTCPInterop(t, tc.faults)
			gvisorConnects(t, r, h, p)
			checkRetransmissions(t, r, h, tc.faults)
		})
	}
}

func gvisorConnects(t *testing.T, r *machine.Run, h *machine.Host, p *gvisorpeer.Peer) {
	k := r.Sched
	const port = 7001
	up, down := pattern(interopTCPSize, 21), pattern(interopTCPSize, 22)
	var simGot []byte
	var simErr []string
	ready, done := false, false
	var start, mid, end sim.Time
	machinetest.Kernel(h).Spawn("tcp-server", func(th *kernel.Thread) {
		defer func() { done = true }()
		s := machinetest.Inet(h)
		lfd, err := s.Socket(th, inet.SockStream)
		if err == 0 {
			err = s.Bind(th, lfd, port)
		}
		if err == 0 {
			err = s.Listen(th, lfd, 4)
		}
		if err != 0 {
			simErr = append(simErr, "listen: "+err.Error())
			return
		}
		ready = true
		fd, from, _, err := s.Accept(th, lfd)
		if err != 0 || from != inet.Addr(interopGvIP) {
			simErr = append(simErr, "accept failed")
			return
		}
		start = machinetest.Kernel(h).CPU().LocalTime()
		tr := &threadRun{t: t}
		simGot = recvAll(tr, th, h, fd, "sim")
		mid = machinetest.Kernel(h).CPU().LocalTime()
		sendAll(tr, th, h, fd, down, 8192, "sim")
		if e := s.Close(th, fd); e != 0 {
			simErr = append(simErr, "close: "+e.Error())
		}
		s.Close(th, lfd)
		end = machinetest.Kernel(h).CPU().LocalTime()
		simErr = append(simErr, tr.errs...)
	})
	if !runSim(k, sim.Second, func() bool { return ready }) {
		t.Fatal("the simulated server did not start")
	}
	var wq waiter.Queue
	ep, terr := p.Stack.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if terr != nil {
		t.Fatal(terr)
	}
	terr = ep.Connect(tcpip.FullAddress{Addr: tcpip.AddrFrom4(interopSimIP), Port: port})
	p.Settle()
	if _, ok := terr.(*tcpip.ErrConnectStarted); !ok && terr != nil {
		t.Fatal(terr)
	}
	if !runSim(k, 5*sim.Second, func() bool { return ep.(*tcp.Endpoint).EndpointState() == tcp.StateEstablished }) {
		t.Fatalf("gVisor's connection is %v", ep.(*tcp.Endpoint).EndpointState())
	}
	gc := &gvConn{p: p, ep: ep, out: up}
	poll(k, 500*sim.Microsecond, gc.pump, func() bool { return gc.err != nil || gc.eof && gc.shut })
	if !runSim(k, 120*sim.Second, func() bool { return done && gc.eof }) {
		t.Fatalf("not finished by %v: sim got %d, gVisor got %d; pcA %+v conns %+v", k.Now(), len(simGot), len(gc.got), machinetest.Inet(h).Stats(), machinetest.Inet(h).TCPConns())
	}
	runSim(k, 100*sim.Millisecond, func() bool { return false })
	for _, e := range simErr {
		t.Error(e)
	}
	if gc.err != nil {
		t.Errorf("gVisor: %v", gc.err)
	}
	if !bytes.Equal(simGot, up) {
		t.Errorf("the simulated host got %d bytes, want %d", len(simGot), len(up))
	}
	if !bytes.Equal(gc.got, down) {
		t.Errorf("gVisor got %d bytes, want %d", len(gc.got), len(down))
	}
	if len(machinetest.Inet(h).TCPConns()) != 0 {
		t.Errorf("pcA: connections left %+v", machinetest.Inet(h).TCPConns())
	}
	gc.ep.Close()
	p.Settle()
	t.Logf("gVisor -> sim 1 MiB in %v (%.2f Mbit/s); sim -> gVisor 1 MiB in %v (%.2f Mbit/s)",
		mid-start, 8*float64(interopTCPSize)/(mid-start).Seconds()/1e6, end-mid, 8*float64(interopTCPSize)/(end-mid).Seconds()/1e6)
	t.Logf("pcA: %+v", machinetest.Inet(h).Stats())
}
