package via_test

// The Linux/SimOS study's comparison (via.md secs. 5-6, inet-notes.md sec.
// 8) between two hand-built hosts of its machine: vpingpong over VIA
// (the M-VIA test program: receives pre-posted, N messages per size, each
// echoed), then the same ping-pong over UDP (sendto/recvfrom) and TCP
// (send/recv), on the same hosts in one run, measured by the probes of
// probe_test.go.

import (
	"encoding/binary"
	"fmt"
	"testing"

	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/via"
)

var studySizes = []int{4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768}

const (
	viaSlots = 4        // receives pre-posted
	maxMsg   = 32 << 10 // the study's largest message
	udpPort  = 7
	tcpPort  = 5001
)

type study struct {
	s      *sweep
	a, b   *host
	errors []string
}

func (st *study) failf(f string, args ...any) { st.errors = append(st.errors, fmt.Sprintf(f, args...)) }

// runStudy runs the three sweeps of sizes, warm+n round trips each, and
// returns their samples.
func runStudy(t testing.TB, o opts, sizes []int, warm, n int) *study {
	t.Helper()
	return runStudyHook(t, o, sizes, warm, n, nil)
}

func runStudyHook(t testing.TB, o opts, sizes []int, warm, n int, hook func(*host)) *study {
	t.Helper()
	k, _, a, b := pair(t, o, o)
	if hook != nil {
		hook(a)
		hook(b)
	}
	st := &study{s: newSweep(), a: a, b: b}
	pa, pb := newProbe(a, st.s), newProbe(b, st.s)
	phase := func(proto string, match func([]byte) bool) {
		st.s.proto = proto
		pa.matches, pb.matches = match, match
		pa.arrival, pb.arrival = nil, nil
	}
	total := len(sizes) * (warm + n)
	done := 0
	b.kern.Spawn("server", func(th *kernel.Thread) {
		defer func() { done++ }()
		c := b.c
		c.Enter(b.main)
		defer c.Exit(b.main)
		st.viaServer(th, pb, total)
		st.udpServer(th, pb, total)
		st.tcpServer(th, pb, sizes, warm+n)
	})
	a.kern.Spawn("client", func(th *kernel.Thread) {
		defer func() { done++ }()
		c := a.c
		c.Enter(a.main)
		defer c.Exit(a.main)
		th.SleepFor(20 * sim.Millisecond)
		phase("VIA", viaData)
		st.viaClient(th, pa, sizes, warm, n)
		th.SleepFor(10 * sim.Millisecond)
		phase("UDP", func(f []byte) bool { return ipProto(f, header.IPv4ProtocolUDP, udpPort, true) })
		st.udpClient(th, pa, sizes, warm, n)
		th.SleepFor(10 * sim.Millisecond)
		phase("TCP", func(f []byte) bool { return ipProto(f, header.IPv4ProtocolTCP, tcpPort, true) })
		st.tcpClient(th, pa, sizes, warm, n)
	})
	runUntil(t, k, 60*sim.Second, func() bool { return done == 2 })
	for _, e := range st.errors {
		t.Error(e)
	}
	noGuestErrors(t, a, b)
	return st
}

// stamp writes message number seq into the first 4 bytes at a (the
// program's store) and returns it.
func stamp(h *host, a memory.Addr, seq uint32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], seq)
	h.c.Write(a, b[:])
}

func stampAt(h *host, a memory.Addr) uint32 {
	var b [4]byte
	h.sys.Phys.Read(a, b[:])
	return binary.BigEndian.Uint32(b[:])
}

// vpingpong, client: post a send, wait for the echo, post the receive
// again, reap the send.
func (st *study) viaClient(th *kernel.Thread, p *probe, sizes []int, warm, n int) {
	e, err := open(p.h, th, (viaSlots+1)*maxMsg, via.ViAttributes{}, false)
	if err != nil {
		st.failf("VIA client: %v", err)
		return
	}
	for i := range viaSlots {
		e.postRecv(i, i*maxMsg, maxMsg)
	}
	if err := e.connect(st.b); err != nil {
		st.failf("%v", err)
		return
	}
	out := viaSlots * maxMsg
	e.pattern(out, maxMsg, 3)
	seq := uint32(0)
	for _, size := range sizes {
		for i := range warm + n {
			st.s.size, st.s.measured = size, i >= warm
			seq++
			stamp(p.h, e.buf(out), seq)
			d := e.put(viaSlots, via.Descriptor{Segs: []via.Segment{e.seg(out, size)}})
			start := p.now()
			rc := e.l.VipPostSend(e.vi, d, e.mh)
			p.sent(start)
			if rc != via.Success {
				st.failf("VipPostSend of %d: %v", size, rc)
				return
			}
			r, rc := e.l.VipRecvWait(e.vi, sim.Second)
			p.received()
			if rc != via.Success {
				st.failf("VipRecvWait for %d: %v", size, rc)
				return
			}
			slot := int(r-e.desc(0)) / descStride
			if l, stt, _ := e.status(r); l != uint32(size) || stt != recvOK || stampAt(p.h, e.buf(slot*maxMsg)) != seq {
				st.failf("VIA echo of %d: length %d status %#x", size, l, stt)
			}
			e.postRecv(slot, slot*maxMsg, maxMsg)
			if _, rc := e.l.VipSendDone(e.vi); rc != via.Success {
				st.failf("VipSendDone: %v", rc)
			}
		}
	}
}

// vpingpong, server: wait for a message, post the receive again, send it
// back from where it arrived, reap the send.
func (st *study) viaServer(th *kernel.Thread, p *probe, total int) {
	e, err := open(p.h, th, (viaSlots+1)*maxMsg, via.ViAttributes{}, false)
	if err != nil {
		st.failf("VIA server: %v", err)
		return
	}
	for i := range viaSlots {
		e.postRecv(i, i*maxMsg, maxMsg)
	}
	if err := e.accept(); err != nil {
		st.failf("%v", err)
		return
	}
	back := viaSlots // the echo's descriptor slot
	for range total {
		r, rc := e.l.VipRecvWait(e.vi, 5*sim.Second)
		p.received()
		if rc != via.Success {
			st.failf("server VipRecvWait: %v", rc)
			return
		}
		slot := int(r-e.desc(0)) / descStride
		l, _, _ := e.status(r)
		d := e.put(back, via.Descriptor{Segs: []via.Segment{e.seg(slot*maxMsg, int(l))}})
		start := p.now()
		rc = e.l.VipPostSend(e.vi, d, e.mh)
		p.sent(start)
		if rc != via.Success {
			st.failf("server VipPostSend: %v", rc)
		}
		e.l.VipSendDone(e.vi)
		e.postRecv(slot, slot*maxMsg, maxMsg)
	}
}

func (st *study) udpClient(th *kernel.Thread, p *probe, sizes []int, warm, n int) {
	h := p.h
	out, in := h.kern.Kmalloc(maxMsg), h.kern.Kmalloc(maxMsg)
	fd, err := h.inet.Socket(th, inet.SockDgram)
	if err != 0 {
		st.failf("socket: %v", err)
		return
	}
	seq := uint32(0)
	for _, size := range sizes {
		for i := range warm + n {
			st.s.size, st.s.measured = size, i >= warm
			seq++
			stamp(h, out, seq)
			start := p.now()
			_, err := h.inet.SendTo(th, fd, out, size, st.b.ip, udpPort)
			p.sent(start)
			if err != 0 {
				st.failf("sendto %d: %v", size, err)
				return
			}
			m, _, _, err := h.inet.RecvFrom(th, fd, in, maxMsg, sim.Second)
			p.received()
			if err != 0 || m != size || stampAt(h, in) != seq {
				st.failf("UDP echo of %d: %d bytes, %v", size, m, err)
				return
			}
		}
	}
	h.inet.Close(th, fd)
}

func (st *study) udpServer(th *kernel.Thread, p *probe, total int) {
	h := p.h
	buf := h.kern.Kmalloc(maxMsg)
	fd, _ := h.inet.Socket(th, inet.SockDgram)
	if err := h.inet.Bind(th, fd, udpPort); err != 0 {
		st.failf("bind: %v", err)
		return
	}
	for range total {
		m, from, port, err := h.inet.RecvFrom(th, fd, buf, maxMsg, 5*sim.Second)
		p.received()
		if err != 0 {
			st.failf("server recvfrom: %v", err)
			return
		}
		start := p.now()
		h.inet.SendTo(th, fd, buf, m, from, port)
		p.sent(start)
	}
	h.inet.Close(th, fd)
}

// recvFull reads n bytes into buf, recv after recv; the probe's receive
// ends with the recv that gives the last byte.
func recvFull(th *kernel.Thread, h *host, fd int, buf memory.Addr, n int) error {
	for got := 0; got < n; {
		m, err := h.inet.Recv(th, fd, buf+memory.Addr(got), n-got, 5*sim.Second)
		if err != 0 || m == 0 {
			return fmt.Errorf("recv after %d of %d bytes: %v", got, n, err)
		}
		got += m
	}
	return nil
}

func (st *study) tcpClient(th *kernel.Thread, p *probe, sizes []int, warm, n int) {
	h := p.h
	out, in := h.kern.Kmalloc(maxMsg), h.kern.Kmalloc(maxMsg)
	fd, _ := h.inet.Socket(th, inet.SockStream)
	h.inet.SetOption(th, fd, inet.OptNoDelay, 1)
	if err := h.inet.Connect(th, fd, st.b.ip, tcpPort); err != 0 {
		st.failf("connect: %v", err)
		return
	}
	seq := uint32(0)
	for _, size := range sizes {
		for i := range warm + n {
			st.s.size, st.s.measured = size, i >= warm
			seq++
			stamp(h, out, seq)
			start := p.now()
			_, err := h.inet.Send(th, fd, out, size)
			p.sent(start)
			if err != 0 {
				st.failf("send %d: %v", size, err)
				return
			}
			if err := recvFull(th, h, fd, in, size); err != nil {
				st.failf("TCP echo of %d: %v", size, err)
				return
			}
			p.received()
			if stampAt(h, in) != seq {
				st.failf("TCP echo of %d: wrong message", size)
			}
		}
	}
	h.inet.Close(th, fd)
}

func (st *study) tcpServer(th *kernel.Thread, p *probe, sizes []int, per int) {
	h := p.h
	buf := h.kern.Kmalloc(maxMsg)
	lfd, _ := h.inet.Socket(th, inet.SockStream)
	h.inet.Bind(th, lfd, tcpPort)
	h.inet.Listen(th, lfd, 1)
	fd, _, _, err := h.inet.Accept(th, lfd)
	if err != 0 {
		st.failf("accept: %v", err)
		return
	}
	h.inet.SetOption(th, fd, inet.OptNoDelay, 1)
	for _, size := range sizes {
		for range per {
			if err := recvFull(th, h, fd, buf, size); err != nil {
				st.failf("server: %v", err)
				return
			}
			p.received()
			start := p.now()
			h.inet.Send(th, fd, buf, size)
			p.sent(start)
		}
	}
	h.inet.Close(th, fd)
}

var (
	inetLayers = []string{"APPL", "UDP", "TCP", "IP", "DEV", "DMA", "KERN"}
	viaLayers  = []string{"APPL", "TRANS", "DEV", "DMA", "KERN"}
)

// report renders the three protocols' tables and the improvement factors.
func (st *study) report(sizes []int) string {
	var out string
	for _, proto := range []string{"VIA", "UDP", "TCP"} {
		r := st.s.results[proto]
		if r == nil {
			continue
		}
		order := inetLayers
		if proto == "VIA" {
			order = viaLayers
		}
		cols := layersSeen(r, order)
		out += table(proto+" send", sizes, cols, func(n int) layerMedians { return medians(r.send[n]) }, false) + "\n"
		out += table(proto+" receive (with wire; host = busy cycles only)", sizes, cols, func(n int) layerMedians { return medians(r.recv[n]) }, true) + "\n"
	}
	out += "improvement factors (UDP or TCP median / VIA median; mean over the sizes below and above the MTU)\n"
	for _, what := range []string{"send", "receive", "receive host"} {
		for _, other := range []string{"UDP", "TCP"} {
			below, above := st.factors(other, what, sizes)
			out += fmt.Sprintf("  %-12s VIA vs %s: %5.2f below the MTU, %5.2f above\n", what, other, below, above)
		}
	}
	return out
}

// metric is the median the factors compare.
func (st *study) metric(proto, what string, n int) float64 {
	r := st.s.results[proto]
	switch what {
	case "send":
		return medians(r.send[n]).Total
	case "receive":
		return medians(r.recv[n]).Total
	}
	return medians(r.recv[n]).Host
}

// factors returns the mean ratio other/VIA over the sizes up to 1024
// (below the MTU) and from 2048 (above it).
func (st *study) factors(other, what string, sizes []int) (below, above float64) {
	var nb, na int
	for _, n := range sizes {
		f := st.metric(other, what, n) / st.metric("VIA", what, n)
		if n <= 1024 {
			below += f
			nb++
		} else {
			above += f
			na++
		}
	}
	return below / float64(max(nb, 1)), above / float64(max(na, 1))
}

// TestStudy runs the comparison, prints its tables (go test -v) and checks
// the shapes of the study that come out of this model's mechanisms (the
// study's own factors are not a target: nothing is tuned to them).
func TestStudy(t *testing.T) {
	st := runStudy(t, defaultOpts(), studySizes, 2, 10)
	t.Log("\n" + st.report(studySizes))
	lay := func(proto, what, layer string, n int) float64 {
		r := st.s.results[proto]
		if what == "send" {
			return medians(r.send[n]).Layers[layer]
		}
		return medians(r.recv[n]).Layers[layer]
	}
	for _, n := range studySizes {
		for _, p := range []string{"VIA", "UDP", "TCP"} {
			r := st.s.results[p]
			if len(r.send[n]) != 20 || len(r.recv[n]) != 20 {
				t.Fatalf("%s %d: %d sends and %d receives measured, want 20 each (both hosts)", p, n, len(r.send[n]), len(r.recv[n]))
			}
		}
		// UDP send: APPL and UDP the same at every size.
		if lay("UDP", "send", "APPL", n) != lay("UDP", "send", "APPL", 4) || lay("UDP", "send", "UDP", n) != lay("UDP", "send", "UDP", 4) {
			t.Errorf("UDP send %d: APPL and UDP are not flat", n)
		}
		// TCP send: TCP the largest part, IP small.
		if n >= 64 {
			m := medians(st.s.results["TCP"].send[n])
			for l, v := range m.Layers {
				if l != "TCP" && v >= m.Layers["TCP"] {
					t.Errorf("TCP send %d: %s (%.0f) is not below TCP (%.0f)", n, l, v, m.Layers["TCP"])
				}
			}
			if n >= 1024 && m.Layers["IP"] > 0.1*m.Total {
				t.Errorf("TCP send %d: IP %.0f of %.0f", n, m.Layers["IP"], m.Total)
			}
		}
		// VIA send up to 1 KiB: spread over APPL, TRANS and DEV.
		if n <= 1024 {
			m := medians(st.s.results["VIA"].send[n])
			for _, l := range []string{"APPL", "TRANS", "DEV"} {
				if m.Layers[l] <= 0 || m.Layers[l] > 0.6*m.Total {
					t.Errorf("VIA send %d: %s %.0f of %.0f", n, l, m.Layers[l], m.Total)
				}
			}
		}
		// The receiving host works less for VIA than for UDP and TCP.
		if v, u, c := st.metric("VIA", "host", n), st.metric("UDP", "host", n), st.metric("TCP", "host", n); v > u || v > c {
			t.Errorf("receive %d, host cycles: VIA %.0f, UDP %.0f, TCP %.0f", n, v, u, c)
		}
	}
	// UDP send: IP and DEV grow with the size, IP more steeply past the
	// MTU (fragmentation: a frame, a copy and checksum per fragment).
	ip := func(n int) float64 { return lay("UDP", "send", "IP", n) }
	below, above := (ip(1024)-ip(4))/1020, (ip(32768)-ip(2048))/30720
	if ip(2048) < 2*ip(1024) || above <= below {
		t.Errorf("UDP send: IP %.0f at 4 B, %.0f at 1 KiB, %.0f at 2 KiB, %.0f at 32 KiB (%.2f, %.2f cycles a byte)",
			ip(4), ip(1024), ip(2048), ip(32768), below, above)
	}
	if d4, d32 := lay("UDP", "send", "DEV", 4), lay("UDP", "send", "DEV", 32768); d32 < 20*d4 {
		t.Errorf("UDP send: DEV %.0f at 4 B, %.0f at 32 KiB", d4, d32)
	}
	// VIA send past a frame is bound by the NIC's DMA: its total follows
	// the time the DMA engine takes to read the message (descriptors,
	// headers, data, status), within 15%.
	for _, n := range []int{4096, 8192, 16384, 32768} {
		dma := viaTxDMACycles(n, 1200e6)
		if got := st.metric("VIA", "send", n); got < dma || got > 1.15*dma+1500 {
			t.Errorf("VIA send %d: %.0f cycles; the DMA of its frames takes %.0f", n, got, dma)
		}
	}
}

// viaTxDMACycles is the time, in cycles of the 1 GHz core, the card's
// DMA engine takes to read a VIA message of n bytes at rate bytes per
// second: per frame two descriptor fetches (header and data), the 42-byte
// Ethernet and M-VIA header and two status write-backs, and the data.
func viaTxDMACycles(n int, rate float64) float64 {
	frames := max(1, (n+1471)/1472)
	return float64(frames*(2*16+42+2*4)+n) / rate * 1e9
}

// TestStudyMechanisms changes the NIC's DMA rate and the memory latency
// and checks that the latencies move as the mechanisms say: a quarter of
// the DMA rate adds three times the DMA engine's time to a synchronous
// VIA post and to every receive's last frame, and nothing to a UDP send,
// whose DMA overlaps the next fragment's copy; twice the memory latency
// costs every receive at least one more memory latency per L2 line the
// NIC wrote (its DMA took those lines out of the caches), and leaves
// VIA's send, which copies nothing, as it was.
func TestStudyMechanisms(t *testing.T) {
	sizes := []int{4, 1024, 32768}
	base := runStudy(t, defaultOpts(), sizes, 1, 5)
	slowDMA := defaultOpts()
	slowDMA.machine = func(m *machineFile) { m.Card.DMARate /= 4 }
	dma := runStudy(t, slowDMA, sizes, 1, 5)
	slowMem := defaultOpts()
	slowMem.machine = func(m *machineFile) { m.Cache.MemLatency, m.Cache.MemWriteLatency = 200, 200 }
	mem := runStudy(t, slowMem, sizes, 1, 5)
	near := func(what string, got, want float64) {
		t.Helper()
		if got < 0.9*want || got > 1.1*want {
			t.Errorf("%s: changed by %.0f cycles, want %.0f (±10%%)", what, got, want)
		}
	}
	for _, n := range []int{1024, 32768} {
		near(fmt.Sprintf("VIA send %d at a quarter of the DMA rate", n),
			dma.metric("VIA", "send", n)-base.metric("VIA", "send", n), 3*viaTxDMACycles(n, 1200e6))
	}
	if b, d := base.metric("UDP", "send", 32768), dma.metric("UDP", "send", 32768); d > 1.02*b {
		t.Errorf("UDP send of 32 KiB: %.0f cycles at the full DMA rate, %.0f at a quarter", b, d)
	}
	for _, p := range []string{"VIA", "UDP"} {
		// A 1 KiB message is one frame of 1066 bytes (headers included):
		// a descriptor fetch, the frame and the status write-back.
		near(p+" receive of 1 KiB at a quarter of the DMA rate",
			dma.metric(p, "receive", 1024)-base.metric(p, "receive", 1024), 3*float64(16+1066+4)/1.2)
		if b, d := base.metric(p, "host", 1024), dma.metric(p, "host", 1024); b != d {
			t.Errorf("%s receive of 1 KiB: the host's busy cycles changed with the DMA rate (%.0f, %.0f)", p, b, d)
		}
	}
	for _, p := range []string{"VIA", "UDP", "TCP"} {
		lines := float64(32768 / 128) // L2 lines of the message the NIC wrote
		if d := mem.metric(p, "host", 32768) - base.metric(p, "host", 32768); d < lines*100 {
			t.Errorf("%s receive of 32 KiB at twice the memory latency: %.0f cycles more, want at least %.0f", p, d, lines*100)
		}
	}
	if b, m := base.metric("VIA", "send", 32768), mem.metric("VIA", "send", 32768); m > 1.02*b {
		t.Errorf("VIA send of 32 KiB: %.0f cycles, %.0f at twice the memory latency", b, m)
	}
}

// TestStudyDeterministic: the same hosts and programs give the same
// numbers, run after run.
func TestStudyDeterministic(t *testing.T) {
	sizes := []int{4, 2048}
	a := runStudy(t, defaultOpts(), sizes, 1, 3).report(sizes)
	b := runStudy(t, defaultOpts(), sizes, 1, 3).report(sizes)
	if a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
}
