package inet_test

// Interoperability with an independent TCP/IP implementation: a gVisor
// netstack host (ethersim/gvisorpeer) shares segment lan0 with one
// simulated 486 host, and the two resolve each other's addresses with ARP,
// ping each other and exchange UDP datagrams of sizes that need IP
// fragmentation, each compared byte for byte. gVisor runs on the
// simulation's clock, so the runs are deterministic and take no wall time
// beyond the computation.

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	gvheader "gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"

	"simkron/cpu"
	"simkron/ethersim"
	"simkron/ethersim/gvisorpeer"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/membench"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// interopUDPSizes are the UDP payloads exchanged: 1472 is the largest
// that fits one 1500-byte IP packet, the rest are fragmented.
var interopUDPSizes = []int{1, 100, 1472, 1473, 4000, 20000}

// interopPingData are the ICMP echo data lengths: 1472 fills one packet
// (20 + 8 + 1472 = 1500), 3000 needs fragments both ways.
var interopPingData = []int{56, 1472}

// interopBigPing is an echo whose request and reply must be fragmented.
const interopBigPing = 3000

var (
	interopSimMAC = ethersim.MAC{2, 0, 0, 0, 0, 0x0a}
	interopSimIP  = ethersim.IP4{10, 0, 0, 1}
	interopGvMAC  = ethersim.MAC{2, 0, 0, 0, 0, 0x0b}
	interopGvIP   = ethersim.IP4{10, 0, 0, 2}
)

// interop is one simulation: host pcA of udp-ne2000.toml and a gVisor peer
// that takes pcB's addresses.
type interop struct {
	t    *testing.T
	run  *machine.Run
	k    *sim.Scheduler
	host *machine.Host
	peer *gvisorpeer.Peer
	main *cpu.Symbol
	// Frames as they reached each side, without FCS, in order.
	toSim, toGv [][]byte
	// log has one line per frame on the wire (time, direction, hash), for
	// the determinism check.
	log []string
}

func newInterop(t *testing.T) *interop {
	t.Helper()
	exp, err := machine.LoadExperiment(machinetest.Config("udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// Keep pcA alone; a tiny memory benchmark is the workload machine.New
	// requires, and it ends within microseconds.
	exp.Hosts = exp.Hosts[:1]
	exp.Workload.Type = "membench"
	*membenchParams(exp) = membench.Params{MinSize: 64, MaxSize: 64, Ops: []string{"checksum"}, Passes: 2}
	for i := range machinetest.Segments(exp) {
		machinetest.Segments(exp)[i].Pcap = false
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := &interop{t: t, run: r, k: r.Sched, host: r.Hosts[0]}
	if machinetest.Inet(x.host) == nil || machinetest.Inet(x.host).Addr() != inet.Addr(interopSimIP) {
		t.Fatalf("pcA has no IP stack at %v", interopSimIP)
	}
	seg, ok := machinetest.Ethernet(r.Net).Segment("lan0")
	if !ok {
		t.Fatal("no segment lan0")
	}
	x.peer, err = gvisorpeer.New(machinetest.Ethernet(r.Net).Network, seg, gvisorpeer.Config{Name: "gvisor", MAC: interopGvMAC, IP: interopGvIP})
	if err != nil {
		t.Fatal(err)
	}
	x.peer.Received.Connect(func(f []byte) {
		x.toGv = append(x.toGv, bytes.Clone(f))
		x.note("sim->gv", f)
	})
	machinetest.NICs(x.host)[0].Received().Connect(func(f []byte) {
		f = f[:len(f)-4]
		x.toSim = append(x.toSim, bytes.Clone(f))
		x.note("gv->sim", f)
	})
	x.main = machinetest.Kernel(x.host).Symbols().Define(cpu.Def{Name: "interop_main", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 128, Why: "test program: socket calls in a row"})
	t.Cleanup(func() {
		x.peer.Close()
		r.Close()
	})
	return x
}

func (x *interop) note(dir string, f []byte) {
	x.log = append(x.log, fmt.Sprintf("%v %s %d %x", x.k.Now(), dir, len(f), sha256.Sum256(f)))
}

// spawn runs body as a program on pcA.
func (x *interop) spawn(name string, body func(t *kernel.Thread, c *cpu.CPU)) {
	machinetest.Kernel(x.host).Spawn(name, func(t *kernel.Thread) {
		c := machinetest.Kernel(x.host).CPU()
		c.Enter(x.main)
		defer c.Exit(x.main)
		body(t, c)
	})
}

// runUntil fires events until cond holds or d of simulated time passed.
func (x *interop) runUntil(d sim.Time, cond func() bool) bool {
	limit := x.k.Now() + d
	for !cond() && x.k.Next() <= limit {
		x.k.RunWhile(func() bool { return !cond() && x.k.Next() <= limit })
	}
	return cond()
}

// later returns a function that runs fn from a sim event at the current
// instant (at most once per instant), for gVisor's waiter callbacks,
// which may be called with gVisor's locks held.
func (x *interop) later(name string, fn func()) func(waiter.EventMask) {
	ev := sim.NewEvent(name, fn)
	return func(waiter.EventMask) {
		if !ev.Scheduled() {
			x.k.Schedule(ev, x.k.Now())
		}
	}
}

// pattern returns n bytes that differ from one message to the next.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8 + seed*7 + 1)
	}
	return b
}

func readSim(c *cpu.CPU, a memory.Addr, n int) []byte {
	b := make([]byte, n)
	c.System().Phys.Read(a, b)
	return b
}

// arpFrame is the 60-byte Ethernet frame (padded with zeros) of an ARP
// message, as RFC 826 lays it out.
func arpFrame(dst ethersim.MAC, op uint16, sha ethersim.MAC, spa ethersim.IP4, tha ethersim.MAC, tpa ethersim.IP4) []byte {
	f := make([]byte, 60)
	copy(f[0:], dst[:])
	copy(f[6:], sha[:])
	f[12], f[13] = 0x08, 0x06
	copy(f[14:], []byte{0, 1, 8, 0, 6, 4, byte(op >> 8), byte(op)})
	copy(f[22:], sha[:])
	copy(f[28:], spa[:])
	copy(f[32:], tha[:])
	copy(f[38:], tpa[:])
	return f
}

// checkFrames validates, with gVisor's header package (not simkron's),
// every IPv4 frame one side received: Ethernet addresses, header checksum,
// lengths, and the UDP or ICMP checksum of unfragmented packets. It
// returns the frames' IPv4 packets.
func checkFrames(t *testing.T, dir string, frames [][]byte, src, dst ethersim.MAC) []gvheader.IPv4 {
	t.Helper()
	var pkts []gvheader.IPv4
	for i, f := range frames {
		if len(f) < 60 {
			t.Errorf("%s frame %d: %d bytes, shorter than the Ethernet minimum", dir, i, len(f))
			continue
		}
		eth := gvheader.Ethernet(f)
		if eth.Type() != gvheader.IPv4ProtocolNumber {
			continue
		}
		if !bytes.Equal([]byte(eth.SourceAddress()), src[:]) || !bytes.Equal([]byte(eth.DestinationAddress()), dst[:]) {
			t.Errorf("%s frame %d: Ethernet %s -> %s, want %s -> %s", dir, i, eth.SourceAddress(), eth.DestinationAddress(), tcpip.LinkAddress(src[:]), tcpip.LinkAddress(dst[:]))
		}
		ip := gvheader.IPv4(f[gvheader.EthernetMinimumSize:])
		if !ip.IsValid(len(ip)) || !ip.IsChecksumValid() {
			t.Errorf("%s frame %d: bad IPv4 header % x", dir, i, f[14:34])
			continue
		}
		ip = ip[:ip.TotalLength()]
		pkts = append(pkts, ip)
		if ip.More() || ip.FragmentOffset() != 0 {
			if ip.More() && ip.PayloadLength()%8 != 0 {
				t.Errorf("%s frame %d: non-final fragment of %d bytes", dir, i, ip.PayloadLength())
			}
			continue
		}
		switch ip.TransportProtocol() {
		case gvheader.UDPProtocolNumber:
			u := gvheader.UDP(ip.Payload())
			if int(u.Length()) != len(u) {
				t.Errorf("%s frame %d: UDP length %d in %d bytes", dir, i, u.Length(), len(u))
			}
			sum := gvheader.PseudoHeaderChecksum(gvheader.UDPProtocolNumber, ip.SourceAddress(), ip.DestinationAddress(), uint16(len(u)))
			if u.Checksum() != 0 && checksum.Checksum(u, sum) != 0xffff {
				t.Errorf("%s frame %d: bad UDP checksum", dir, i)
			}
		case gvheader.ICMPv4ProtocolNumber:
			if checksum.Checksum(ip.Payload(), 0) != 0xffff {
				t.Errorf("%s frame %d: bad ICMP checksum", dir, i)
			}
		}
	}
	return pkts
}

// fragments counts the IPv4 packets of protocol proto in pkts, per
// datagram. The exchanges are sequential, so a datagram's packets are
// consecutive; one ends when its pieces cover offset 0 up to a last
// fragment (More clear), whatever their order (simkron sends the highest
// offset first) and whatever the IP ID (gVisor may reuse one).
func fragments(pkts []gvheader.IPv4, proto tcpip.TransportProtocolNumber) []int {
	var out []int
	n, bytes, end := 0, 0, -1
	for _, p := range pkts {
		if p.TransportProtocol() != proto {
			continue
		}
		n++
		bytes += int(p.PayloadLength())
		if !p.More() {
			end = int(p.FragmentOffset()) + int(p.PayloadLength())
		}
		if end >= 0 && bytes >= end {
			out = append(out, n)
			n, bytes, end = 0, 0, -1
		}
	}
	if n > 0 {
		out = append(out, -n)
	}
	return out
}

// wantFragments is how many packets an IP payload of n bytes needs on a
// 1500-byte MTU.
func wantFragments(n int) int { return (n + 1479) / 1480 }

// simEcho is one exchange seen by the simulated program.
type simEcho struct {
	sent, got []byte
	from      inet.Addr
	port      uint16
	err       inet.Errno
}

// TestInteropSimInitiates: the simulated host resolves gVisor's address,
// pings it and sends it UDP datagrams that a gVisor endpoint echoes.
func TestInteropSimInitiates(t *testing.T) {
	x := newInterop(t)
	x.simInitiates()
}

func (x *interop) simInitiates() {
	t := x.t
	// gVisor: a UDP echo server on port 7, driven by its waiter queue.
	var wq waiter.Queue
	ep, terr := x.peer.Stack.NewEndpoint(udp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if terr != nil {
		t.Fatal(terr)
	}
	defer ep.Close()
	if terr := ep.Bind(tcpip.FullAddress{Addr: x.peer.Addr(), Port: 7}); terr != nil {
		t.Fatal(terr)
	}
	var gvGot [][]byte
	entry := waiter.NewFunctionEntry(waiter.ReadableEvents, x.later("gvisor.udpecho", func() {
		for {
			var b bytes.Buffer
			res, terr := ep.Read(&b, tcpip.ReadOptions{NeedRemoteAddr: true})
			if _, ok := terr.(*tcpip.ErrWouldBlock); ok {
				return
			}
			if terr != nil {
				t.Errorf("gVisor read: %s", terr)
				return
			}
			gvGot = append(gvGot, bytes.Clone(b.Bytes()))
			to := res.RemoteAddr
			if _, terr := ep.Write(bytes.NewReader(b.Bytes()), tcpip.WriteOptions{To: &to}); terr != nil {
				t.Errorf("gVisor write: %s", terr)
			}
		}
	}))
	wq.EventRegister(&entry)
	defer wq.EventUnregister(&entry)

	// The simulated program: pings, then UDP datagrams, each waiting for
	// its answer.
	var pings, udps []simEcho
	done := false
	dst := inet.Addr(interopGvIP)
	x.spawn("interop", func(th *kernel.Thread, c *cpu.CPU) {
		defer func() { done = true }()
		s := machinetest.Inet(x.host)
		buf := machinetest.Kernel(x.host).Kmalloc(32768)
		in := machinetest.Kernel(x.host).Kmalloc(32768)
		fd, err := s.Socket(th, inet.SockPing)
		if err != 0 {
			t.Errorf("socket(ping): %v", err)
			return
		}
		for i, n := range append(interopPingData, interopBigPing) {
			msg := append([]byte{8, 0, 0, 0, 0xbe, 0xef, 0, byte(i + 1)}, pattern(n, i)...)
			c.Write(buf, msg)
			e := simEcho{sent: msg}
			if _, e.err = s.SendTo(th, fd, buf, len(msg), dst, 0); e.err == 0 {
				var got int
				got, e.from, _, e.err = s.RecvFrom(th, fd, in, 32768, 2*sim.Second)
				e.got = readSim(c, in, got)
			}
			pings = append(pings, e)
		}
		s.Close(th, fd)
		fd, err = s.Socket(th, inet.SockDgram)
		if err != 0 {
			t.Errorf("socket(dgram): %v", err)
			return
		}
		for i, n := range interopUDPSizes {
			msg := pattern(n, 100+i)
			c.Write(buf, msg)
			e := simEcho{sent: msg}
			if _, e.err = s.SendTo(th, fd, buf, n, dst, 7); e.err == 0 {
				var got int
				got, e.from, e.port, e.err = s.RecvFrom(th, fd, in, 32768, 2*sim.Second)
				e.got = readSim(c, in, got)
			}
			udps = append(udps, e)
		}
		s.Close(th, fd)
	})
	if !x.runUntil(60*sim.Second, func() bool { return done }) {
		t.Fatalf("the simulated program did not finish by %v", x.k.Now())
	}

	// ARP: the simulated host asked, gVisor answered; byte for byte.
	if len(x.toGv) == 0 || len(x.toSim) == 0 {
		t.Fatalf("no frames: %d to gVisor, %d to the simulated host", len(x.toGv), len(x.toSim))
	}
	wantReq := arpFrame(ethersim.Broadcast, 1, interopSimMAC, interopSimIP, ethersim.MAC{}, interopGvIP)
	if got := x.toGv[0]; !bytes.Equal(got[:42], wantReq[:42]) || len(got) != 60 {
		t.Errorf("simulated host's ARP request:\n got % x\nwant % x", got, wantReq)
	}
	wantRep := arpFrame(interopSimMAC, 2, interopGvMAC, interopGvIP, interopSimMAC, interopSimIP)
	if got := x.toSim[0]; !bytes.Equal(got, wantRep) {
		t.Errorf("gVisor's ARP reply:\n got % x\nwant % x", got, wantRep)
	}
	if mac, state, ok := x.peer.Neighbour(interopSimIP); !ok || mac != interopSimMAC {
		t.Errorf("gVisor's neighbour entry for %v: %v (%v), want %v", interopSimIP, mac, state, interopSimMAC)
	} else {
		t.Logf("gVisor learned %v is at %v (state %v)", interopSimIP, mac, state)
	}
	st := machinetest.Inet(x.host).Stats()
	if st.ARPRepliesRecvd == 0 {
		t.Errorf("the simulated host received no ARP reply: %+v", st)
	}

	// Every IPv4 frame is well formed and addressed with the learned MACs.
	toGv := checkFrames(t, "sim->gv", x.toGv, interopSimMAC, interopGvMAC)
	toSim := checkFrames(t, "gv->sim", x.toSim, interopGvMAC, interopSimMAC)

	// ICMP echo, simulated host -> gVisor.
	for i, e := range pings {
		if e.err != 0 {
			t.Errorf("ping %d (%d data bytes): %v", i, len(e.sent)-8, e.err)
			continue
		}
		if e.from != inet.Addr(interopGvIP) || len(e.got) != len(e.sent) {
			t.Errorf("ping %d: %d bytes from %v, want %d from %v", i, len(e.got), e.from, len(e.sent), interopGvIP)
			continue
		}
		// The kernel set the identifier and checksum; the reply has type 0,
		// the same identifier and sequence, and the same data.
		if e.got[0] != 0 || e.got[1] != 0 || e.got[6] != e.sent[6] || e.got[7] != e.sent[7] || !bytes.Equal(e.got[8:], e.sent[8:]) {
			t.Errorf("ping %d: reply % x..., sent % x...", i, e.got[:min(16, len(e.got))], e.sent[:16])
		}
		if checksum.Checksum(e.got, 0) != 0xffff {
			t.Errorf("ping %d: reply checksum wrong", i)
		}
	}
	if got := gvStat(x.peer.Stack.Stats().ICMP.V4.PacketsReceived.EchoRequest); got != uint64(len(pings)) {
		t.Errorf("gVisor received %d echo requests, want %d", got, len(pings))
	}

	// UDP, simulated host -> gVisor -> simulated host.
	for i, e := range udps {
		n := interopUDPSizes[i]
		if i >= len(gvGot) || !bytes.Equal(gvGot[i], e.sent) {
			t.Errorf("UDP %d bytes: gVisor did not receive the same bytes", n)
		}
		if e.err != 0 || e.from != inet.Addr(interopGvIP) || e.port != 7 || !bytes.Equal(e.got, e.sent) {
			t.Errorf("UDP %d bytes: echo %d bytes from %v:%d err %v, want the %d bytes sent from %v:7", n, len(e.got), e.from, e.port, e.err, n, interopGvIP)
		}
	}
	if len(gvGot) != len(interopUDPSizes) {
		t.Errorf("gVisor received %d datagrams, want %d", len(gvGot), len(interopUDPSizes))
	}
	var want []int
	for _, n := range interopUDPSizes {
		want = append(want, wantFragments(n+8))
	}
	if got := fragments(toGv, gvheader.UDPProtocolNumber); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("packets per UDP datagram, sim->gv: %v, want %v", got, want)
	}
	if got := fragments(toSim, gvheader.UDPProtocolNumber); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("packets per UDP datagram, gv->sim: %v, want %v", got, want)
	}
	x.checkHealthy()
	t.Logf("simulated host: %+v", machinetest.Inet(x.host).Stats())
	t.Logf("bridge: %+v; %d frames to gVisor, %d to the simulated host, %v simulated", x.peer.Stats(), len(x.toGv), len(x.toSim), x.k.Now())
}

// checkHealthy fails on any error counter of either side: simkron's
// Internet layer, its card and driver, gVisor, and the bridge.
func (x *interop) checkHealthy() {
	t := x.t
	st := machinetest.Inet(x.host).Stats()
	bad := map[string]uint64{
		"IPInHdrErrors": st.IPInHdrErrors, "IPInBadChecksum": st.IPInBadChecksum, "IPInAddrErrors": st.IPInAddrErrors,
		"IPInTruncated": st.IPInTruncated, "IPReasmFails": st.IPReasmFails, "IPReasmOverlaps": st.IPReasmOverlaps,
		"ARPBadPackets": st.ARPBadPackets, "ARPQueueDrops": st.ARPQueueDrops, "ARPUnresolved": st.ARPUnresolved,
		"ICMPInErrors": st.ICMPInErrors, "UDPNoPorts": st.UDPNoPorts, "UDPInErrors": st.UDPInErrors,
		"UDPInBadChecksum": st.UDPInBadChecksum, "UDPRcvbufErrors": st.UDPRcvbufErrors, "NoBuffers": st.NoBuffers,
	}
	nic := machinetest.NICs(x.host)[0]
	bad["card GuestErrors"] = ne2k(nic).Stats().GuestErrors
	bad["driver TxErrors"] = ne2kDriver(nic).Stats().TxErrors
	bad["driver RxErrors"] = ne2kDriver(nic).Stats().RxErrors
	gs := x.peer.Stack.Stats()
	bad["gVisor IP MalformedPacketsReceived"] = gvStat(gs.IP.MalformedPacketsReceived)
	bad["gVisor IP MalformedFragmentsReceived"] = gvStat(gs.IP.MalformedFragmentsReceived)
	bad["gVisor IP InvalidDestinationAddressesReceived"] = gvStat(gs.IP.InvalidDestinationAddressesReceived)
	bad["gVisor UDP ChecksumErrors"] = gvStat(gs.UDP.ChecksumErrors)
	bad["gVisor UDP MalformedPacketsReceived"] = gvStat(gs.UDP.MalformedPacketsReceived)
	bad["gVisor UDP UnknownPortErrors"] = gvStat(gs.UDP.UnknownPortErrors)
	bad["gVisor ICMP V4 InvalidPacketsReceived"] = gvStat(gs.ICMP.V4.PacketsReceived.Invalid)
	bad["gVisor ARP MalformedPacketsReceived"] = gvStat(gs.ARP.MalformedPacketsReceived)
	ps := x.peer.Stats()
	bad["bridge RxBadFCS"], bad["bridge RxRunts"], bad["bridge TxTooLong"], bad["bridge TxAborted"] = ps.RxBadFCS, ps.RxRunts, ps.TxTooLong, ps.TxAborted
	for name, v := range bad {
		if v != 0 {
			t.Errorf("%s = %d", name, v)
		}
	}
}

// gvStat reads a gVisor counter.
func gvStat(c *tcpip.StatCounter) uint64 { return c.Value() }

// TestInteropGVisorInitiates: gVisor resolves the simulated host's address,
// pings it and sends it UDP datagrams that a simulated program echoes.
func TestInteropGVisorInitiates(t *testing.T) {
	x := newInterop(t)
	x.gvisorInitiates()
}

func (x *interop) gvisorInitiates() {
	t := x.t
	const port = 9000
	// The simulated program: a UDP echo server for len(sizes) datagrams.
	ready, done := false, false
	var simGot []simEcho
	x.spawn("interop-echo", func(th *kernel.Thread, c *cpu.CPU) {
		defer func() { done = true }()
		s := machinetest.Inet(x.host)
		buf := machinetest.Kernel(x.host).Kmalloc(32768)
		fd, err := s.Socket(th, inet.SockDgram)
		if err == 0 {
			err = s.Bind(th, fd, port)
		}
		if err != 0 {
			t.Errorf("socket/bind: %v", err)
			return
		}
		ready = true
		for range interopUDPSizes {
			var e simEcho
			var n int
			n, e.from, e.port, e.err = s.RecvFrom(th, fd, buf, 32768, 30*sim.Second)
			if e.err != 0 {
				simGot = append(simGot, e)
				break
			}
			e.got = readSim(c, buf, n)
			if _, e.err = s.SendTo(th, fd, buf, n, e.from, e.port); e.err != 0 {
				t.Errorf("echo sendto: %v", e.err)
			}
			simGot = append(simGot, e)
		}
		s.Close(th, fd)
	})
	if !x.runUntil(sim.Second, func() bool { return ready }) {
		t.Fatal("the simulated echo server did not start")
	}
	x.toGv, x.toSim = nil, nil

	// gVisor pings the simulated host; the largest echo needs fragments
	// both ways.
	pingSizes := append(interopPingData, interopBigPing)
	pingSent, pingGot := x.gvisorPings(pingSizes)

	// ARP: gVisor asked, the simulated host answered; byte for byte.
	if len(x.toSim) == 0 || len(x.toGv) == 0 {
		t.Fatalf("no frames: %d to gVisor, %d to the simulated host", len(x.toGv), len(x.toSim))
	}
	wantReq := arpFrame(ethersim.Broadcast, 1, interopGvMAC, interopGvIP, ethersim.MAC{}, interopSimIP)
	if got := x.toSim[0]; !bytes.Equal(got, wantReq) {
		t.Errorf("gVisor's ARP request:\n got % x\nwant % x", got, wantReq)
	}
	wantRep := arpFrame(interopGvMAC, 2, interopSimMAC, interopSimIP, interopGvMAC, interopGvIP)
	if got := x.toGv[0]; !bytes.Equal(got[:42], wantRep[:42]) || len(got) != 60 {
		t.Errorf("simulated host's ARP reply:\n got % x\nwant % x", got, wantRep)
	}
	if mac, state, ok := x.peer.Neighbour(interopSimIP); !ok || mac != interopSimMAC {
		t.Errorf("gVisor's neighbour entry for %v: %v (%v), want %v", interopSimIP, mac, state, interopSimMAC)
	}
	for i, got := range pingGot {
		sent := pingSent[i]
		if got == nil {
			continue
		}
		// gVisor's ping endpoint set the identifier and checksum; the reply
		// must carry type 0, the same identifier, sequence and data.
		if len(got) != len(sent) || got[0] != 0 || got[1] != 0 || got[6] != sent[6] || got[7] != sent[7] || !bytes.Equal(got[8:], sent[8:]) {
			t.Errorf("gVisor ping %d: reply of %d bytes % x..., sent %d % x...", i, len(got), got[:min(16, len(got))], len(sent), sent[:16])
		}
	}

	// gVisor sends UDP datagrams to the simulated echo server, one at a time.
	var uq waiter.Queue
	uep, terr := x.peer.Stack.NewEndpoint(udp.ProtocolNumber, ipv4.ProtocolNumber, &uq)
	if terr != nil {
		t.Fatal(terr)
	}
	defer uep.Close()
	if terr := uep.Bind(tcpip.FullAddress{Addr: x.peer.Addr(), Port: 5001}); terr != nil {
		t.Fatal(terr)
	}
	type reply struct {
		data []byte
		from tcpip.FullAddress
	}
	var udpGot []reply
	uentry := waiter.NewFunctionEntry(waiter.ReadableEvents, x.later("gvisor.udp", func() {
		for {
			var b bytes.Buffer
			res, terr := uep.Read(&b, tcpip.ReadOptions{NeedRemoteAddr: true})
			if terr != nil {
				return
			}
			udpGot = append(udpGot, reply{bytes.Clone(b.Bytes()), res.RemoteAddr})
		}
	}))
	uq.EventRegister(&uentry)
	defer uq.EventUnregister(&uentry)
	simDst := tcpip.FullAddress{Addr: tcpip.AddrFrom4(interopSimIP), Port: port}
	var udpSent [][]byte
	for i, n := range interopUDPSizes {
		msg := pattern(n, 200+i)
		udpSent = append(udpSent, msg)
		if _, terr := uep.Write(bytes.NewReader(msg), tcpip.WriteOptions{To: &simDst}); terr != nil {
			t.Errorf("gVisor UDP write of %d bytes: %s", n, terr)
		}
		if !x.runUntil(2*sim.Second, func() bool { return len(udpGot) > i }) {
			t.Errorf("UDP %d bytes: no echo within 2s (simulated host stats %+v)", n, machinetest.Inet(x.host).Stats())
			udpGot = append(udpGot, reply{})
		}
	}
	x.runUntil(sim.Second, func() bool { return done })
	for i, n := range interopUDPSizes {
		if i >= len(simGot) || simGot[i].err != 0 || !bytes.Equal(simGot[i].got, udpSent[i]) {
			t.Errorf("UDP %d bytes: the simulated host did not receive the bytes sent", n)
		} else if simGot[i].from != inet.Addr(interopGvIP) || simGot[i].port != 5001 {
			t.Errorf("UDP %d bytes: the simulated host saw it from %v:%d", n, simGot[i].from, simGot[i].port)
		}
		if r := udpGot[i]; !bytes.Equal(r.data, udpSent[i]) || r.from.Port != port || r.from.Addr != simDst.Addr {
			t.Errorf("UDP %d bytes: gVisor got %d bytes back from %v:%d", n, len(r.data), r.from.Addr, r.from.Port)
		}
	}
	toGv := checkFrames(t, "sim->gv", x.toGv, interopSimMAC, interopGvMAC)
	toSim := checkFrames(t, "gv->sim", x.toSim, interopGvMAC, interopSimMAC)
	var want []int
	for _, n := range interopUDPSizes {
		want = append(want, wantFragments(n+8))
	}
	if got := fragments(toSim, gvheader.UDPProtocolNumber); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("packets per UDP datagram, gv->sim: %v, want %v", got, want)
	}
	if got := fragments(toGv, gvheader.UDPProtocolNumber); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("packets per UDP datagram, sim->gv: %v, want %v", got, want)
	}
	x.checkHealthy()
	t.Logf("simulated host: %+v", machinetest.Inet(x.host).Stats())
	t.Logf("bridge: %+v; %d frames to gVisor, %d to the simulated host, %v simulated", x.peer.Stats(), len(x.toGv), len(x.toSim), x.k.Now())
}

// gvisorPings has gVisor ping the simulated host with echo data of each
// size in turn, through a ping endpoint, waiting up to 2 s for each reply;
// a missing reply is reported and returned as nil.
func (x *interop) gvisorPings(sizes []int) (sent, got [][]byte) {
	t := x.t
	var pq waiter.Queue
	pep, terr := x.peer.Stack.NewEndpoint(icmp.ProtocolNumber4, ipv4.ProtocolNumber, &pq)
	if terr != nil {
		t.Fatal(terr)
	}
	defer pep.Close()
	pentry := waiter.NewFunctionEntry(waiter.ReadableEvents, x.later("gvisor.ping", func() {
		for {
			var b bytes.Buffer
			if _, terr := pep.Read(&b, tcpip.ReadOptions{}); terr != nil {
				return
			}
			got = append(got, bytes.Clone(b.Bytes()))
		}
	}))
	pq.EventRegister(&pentry)
	defer pq.EventUnregister(&pentry)
	simAddr := tcpip.FullAddress{Addr: tcpip.AddrFrom4(interopSimIP)}
	for i, n := range sizes {
		// gVisor's ping endpoint fills in the identifier and checksum.
		msg := append([]byte{8, 0, 0, 0, 0, 0, 0, byte(i + 1)}, pattern(n, 50+i)...)
		sent = append(sent, msg)
		if _, terr := pep.Write(bytes.NewReader(msg), tcpip.WriteOptions{To: &simAddr}); terr != nil {
			t.Errorf("gVisor ping write: %s", terr)
		}
		if !x.runUntil(2*sim.Second, func() bool { return len(got) > i }) {
			nic := machinetest.NICs(x.host)[0]
			t.Errorf("gVisor ping %d (%d data bytes): no reply within 2s\nsimulated host: %+v\ncard: %+v\ndriver: %+v",
				i, n, machinetest.Inet(x.host).Stats(), ne2k(nic).Stats(), ne2kDriver(nic).Stats())
			got = append(got, nil)
		}
	}
	return sent, got
}

// TestInteropDeterministic runs each exchange twice and compares every
// frame and its time.
func TestInteropDeterministic(t *testing.T) {
	for _, f := range []func(*interop){(*interop).simInitiates, (*interop).gvisorInitiates} {
		logs := func() string {
			x := newInterop(t)
			f(x)
			return fmt.Sprint(x.log)
		}
		if a, b := logs(), logs(); a != b {
			t.Errorf("two runs differ")
		}
	}
}
