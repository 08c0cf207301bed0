package via_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"simkron/devices/simoseth"
	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	"simkron/stack/apps/tcp"
	"simkron/stack/apps/udp"
	"simkron/stack/apps/via"
)

const studyConfig = "../../../configs/simos-study.toml"

// study is one run of an experiment.
type study struct {
	res *report.Result
	run *machine.Run
}

// loadStudy reads configs/simos-study.toml with fewer round trips per
// size (n measured, one warm-up), lets edit change it, and runs it.
func loadStudy(t testing.TB, path string, n int, edit func(*machine.Experiment)) study {
	t.Helper()
	exp, err := machine.LoadExperiment(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := exp.Workload.Params[exp.Workload.Type].(*compare.Params); ok {
		p.Messages, p.Warmup = n, 1
	} else {
		p := seriesParams(exp, exp.Workload.Type)
		p.Messages, p.Warmup = n, 1
	}
	for i := range machinetest.Segments(exp) {
		machinetest.Segments(exp)[i].Pcap = false
	}
	if edit != nil {
		edit(exp)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	for _, h := range res.Hosts {
		if h.GuestErrors != 0 {
			t.Errorf("%s: %d guest errors: %v", h.Name, h.GuestErrors, h.GuestLog)
		}
	}
	return study{res: res, run: r}
}

// compareParams returns the settings of exp's comparison.
func compareParams(exp *machine.Experiment) *compare.Params {
	return exp.Workload.Params["compare"].(*compare.Params)
}

// seriesParams returns the series settings of workload name in exp.
func seriesParams(exp *machine.Experiment, name string) *latency.Params {
	switch p := exp.Workload.Params[name].(type) {
	case *udp.Params:
		return &p.Params
	case *tcp.Params:
		return &p.Params
	case *via.Params:
		return &p.Params
	}
	panic("no series " + name)
}

func (s study) rows(t testing.TB, name string) []latency.Row {
	t.Helper()
	for _, sec := range s.res.Sections {
		if sec.Name == name {
			return sec.Value.([]latency.Row)
		}
	}
	t.Fatalf("no section %q", name)
	return nil
}

func (s study) row(t testing.TB, name string, size int) latency.Row {
	t.Helper()
	for _, r := range s.rows(t, name) {
		if r.Size == size {
			return r
		}
	}
	t.Fatalf("%s: no row of %d bytes", name, size)
	return latency.Row{}
}

func layer(ls []latency.LayerCost, name string) float64 {
	for _, l := range ls {
		if l.Layer == name {
			return l.Cycles
		}
	}
	return 0
}

func sum(ls []latency.LayerCost) float64 {
	var s float64
	for _, l := range ls {
		s += l.Cycles
	}
	return s
}

func (s study) table(t testing.TB, prefix string) [][]string {
	t.Helper()
	for _, tb := range s.res.Figures.Tables {
		if strings.HasPrefix(tb.Title, prefix) {
			return tb.Rows
		}
	}
	t.Fatalf("no table %q", prefix)
	return nil
}

// viaTxDMACycles is the time, in cycles of the 1 GHz core, the card's DMA
// engine takes to read a VIA message of n bytes at rate bytes per second:
// per frame two descriptor fetches (header and data), the 42-byte Ethernet
// and M-VIA header, two status write-backs, and the data.
func viaTxDMACycles(n int, rate float64) float64 {
	frames := max(1, (n+1471)/1472)
	return float64(frames*(2*16+42+2*4)+n) / rate * 1e9
}

// TestStudyShapes runs the study (fewer round trips) and checks what the
// mechanisms give, as shapes (the study's own factors are not a target:
// nothing is tuned to them): every message echoed whole and measured once
// per host each way, every split summing to its latency, and the layer
// shapes of the Linux/SimOS study.
func TestStudyShapes(t *testing.T) {
	const n = 4
	s := loadStudy(t, studyConfig, n, nil)
	sizes := compareParams(nil2exp(t)).Sizes
	for _, proto := range []string{"udp", "tcp", "via"} {
		for _, r := range s.rows(t, proto) {
			if r.Messages != n || r.Lost+r.Corrupt != 0 || r.Send.N != 2*n || r.Receive.N != 2*n ||
				r.SendThread == nil || r.SendThread.N != 2*n || r.ReceiveArrival == nil || r.ReceiveArrival.N != 2*n {
				t.Fatalf("%s %d: %d messages, %d lost, %d corrupt, %d sends, %d receives measured", proto, r.Size, r.Messages, r.Lost, r.Corrupt, r.Send.N, r.Receive.N)
			}
			for what, c := range map[string][2]float64{
				"send": {sum(r.SendLayers), r.Send.Mean}, "receive": {sum(r.RecvLayers), r.Receive.Mean},
			} {
				if math.Abs(c[0]-c[1]) > 1e-6*c[1] {
					t.Errorf("%s %d: %s layers sum to %.3f, latency %.3f", proto, r.Size, what, c[0], c[1])
				}
			}
			// The study's definitions against the call's own cycles and the
			// whole receive span: a send lasts at least as long as its call,
			// a receive without the wait for the wire no longer than with it.
			if r.SendThread.Min > r.Send.Min || r.Receive.Mean > r.ReceiveArrival.Mean {
				t.Errorf("%s %d: send %.0f, its call %.0f; receive %.0f, with the wait for the wire %.0f", proto, r.Size,
					r.Send.Min, r.SendThread.Min, r.Receive.Mean, r.ReceiveArrival.Mean)
			}
		}
	}
	// The study's send is the whole call: UDP's sendto and TCP's send
	// begin where the program enters the kernel, their trap and the
	// system call's dispatch in the span (KERN), as M-VIA's fast trap is
	// in VipPostSend's (TRANS). Up to 1 KiB each send takes one
	// DMA-completion interrupt and no other kernel entry, so their KERN
	// exceeds VIA's by exactly that crossing.
	h := s.run.Hosts[0]
	sc, _ := h.Syms.Lookup("system_call")
	crossing := float64(h.Spec.CPU.TrapCycles + sc.Instructions)
	for _, n := range sizes {
		if n > 1024 {
			continue
		}
		v := layer(s.row(t, "via", n).SendLayers, "KERN")
		for _, p := range []string{"udp", "tcp"} {
			if k := layer(s.row(t, p, n).SendLayers, "KERN"); k != v+crossing {
				t.Errorf("%s send %d: KERN %.0f, VIA's %.0f: want the system call's %.0f cycles more", p, n, k, v, crossing)
			}
		}
	}
	udp := func(l string, n int) float64 { return layer(s.row(t, "udp", n).SendLayers, l) }
	for _, n := range sizes {
		// UDP send: APPL and UDP small and flat.
		if udp("APPL", n) != udp("APPL", 4) || math.Abs(udp("UDP", n)-udp("UDP", 4)) > 0.02*udp("UDP", 4) {
			t.Errorf("UDP send %d: APPL %.0f, UDP %.0f: not flat", n, udp("APPL", n), udp("UDP", n))
		}
		// TCP send: TCP the largest part, IP small. Below 256 bytes the
		// send's DMA-completion interrupt (DEV: three register accesses of
		// 100 ns and the ring's clean-up) costs more than TCP's work on so
		// few bytes: the model disagrees with the study's statement there.
		if r := s.row(t, "tcp", n); n >= 256 {
			for _, l := range r.SendLayers {
				if l.Layer != "TCP" && l.Cycles >= layer(r.SendLayers, "TCP") {
					t.Errorf("TCP send %d: %s (%.0f) not below TCP (%.0f)", n, l.Layer, l.Cycles, layer(r.SendLayers, "TCP"))
				}
			}
			if ip := layer(r.SendLayers, "IP"); n >= 1024 && ip > 0.1*r.Send.Mean {
				t.Errorf("TCP send %d: IP %.0f of %.0f", n, ip, r.Send.Mean)
			}
		}
		r := s.row(t, "via", n)
		if n <= 1024 {
			// VIA send up to 1 KiB: in APPL (the descriptor and the
			// post), TRANS (the agent) and DEV (the DMA-completion
			// interrupt), none of them most of it. (The study finds the
			// three about even; here APPL is the smallest by far.)
			for _, l := range []string{"APPL", "TRANS", "DEV"} {
				if v := layer(r.SendLayers, l); v <= 0 || v > 0.6*r.Send.Mean {
					t.Errorf("VIA send %d: %s %.0f of %.0f", n, l, v, r.Send.Mean)
				}
			}
		} else {
			// Beyond: the send lasts until the NIC has read the message,
			// and its total follows the DMA engine's time; the CPU's
			// completion interrupts (DEV, KERN) overlap the engine's work,
			// so that the wait (DMA) and they together are most of it;
			// TRANS (fragmentation) and DEV (more interrupts) grow.
			wait := layer(r.SendLayers, "DMA") + layer(r.SendLayers, "DEV") + layer(r.SendLayers, "KERN")
			if wait < 0.6*r.Send.Mean {
				t.Errorf("VIA send %d: DMA, DEV and KERN %.0f of %.0f", n, wait, r.Send.Mean)
			}
			if dma := viaTxDMACycles(n, 1200e6); n >= 4096 && (r.Send.Median < dma || r.Send.Median > 1.15*dma+1500) {
				t.Errorf("VIA send %d: %.0f cycles; the DMA of its frames takes %.0f", n, r.Send.Median, dma)
			}
			if m := s.row(t, "via", n); frames(n) > frames(prevSize(sizes, n)) {
				prev := s.row(t, "via", prevSize(sizes, n))
				if layer(m.SendLayers, "TRANS") <= layer(prev.SendLayers, "TRANS") || layer(m.SendLayers, "DEV") <= layer(prev.SendLayers, "DEV") {
					t.Errorf("VIA send %d: TRANS or DEV not above %d's", n, prev.Size)
				}
			}
		}
		// From 1 KiB up the receiving host works less for VIA (one copy,
		// no checksum) than for UDP and TCP. Below, VIA's receive holds
		// the re-post of its descriptor (VipPostRecv, a fast trap into the
		// agent), which the study counts, and costs about what UDP's does.
		v, u, c := r.Receive.Median, s.row(t, "udp", n).Receive.Median, s.row(t, "tcp", n).Receive.Median
		if n >= 1024 && (v >= u || v >= c) {
			t.Errorf("receive %d: VIA %.0f, UDP %.0f, TCP %.0f", n, v, u, c)
		}
	}
	// UDP send: IP and DEV grow with the size, IP more steeply past the
	// MTU (a fragment's frame, copy and checksum each).
	ip := func(n int) float64 { return udp("IP", n) }
	below, above := (ip(1024)-ip(4))/1020, (ip(32768)-ip(2048))/30720
	if ip(2048) < 2*ip(1024) || above <= below {
		t.Errorf("UDP send: IP %.0f at 4 B, %.0f at 1 KiB, %.0f at 2 KiB, %.0f at 32 KiB (%.2f, %.2f cycles a byte)", ip(4), ip(1024), ip(2048), ip(32768), below, above)
	}
	if d4, d32 := udp("DEV", 4), udp("DEV", 32768); d32 < 20*d4 {
		t.Errorf("UDP send: DEV %.0f at 4 B, %.0f at 32 KiB", d4, d32)
	}
	// UDP receive above the MTU: UDP and IP grow quickly (reassembly).
	if r1, r2 := s.row(t, "udp", 1024).RecvLayers, s.row(t, "udp", 32768).RecvLayers; layer(r2, "IP") < 100*layer(r1, "IP") || layer(r2, "UDP") < 20*layer(r1, "UDP") {
		t.Errorf("UDP receive: IP %.0f -> %.0f, UDP %.0f -> %.0f from 1 KiB to 32 KiB", layer(r1, "IP"), layer(r2, "IP"), layer(r1, "UDP"), layer(r2, "UDP"))
	}
	// The tables of the three side by side and the factors.
	if rows := s.table(t, "send by layer, protocols side by side (median"); len(rows) != 3*len(sizes) {
		t.Errorf("send medians: %d rows, want %d", len(rows), 3*len(sizes))
	}
	factors := s.table(t, "factors against VIA (protocol / VIA), mean")
	if len(factors) != 6 {
		t.Fatalf("factors: %d rows, want 6 (send, receive, round trip of UDP and TCP)", len(factors))
	}
	for _, row := range factors {
		// protocol, latency, below, above: as latency, over, below, above
		f := []string{row[1], row[0], row[2], row[3]}
		if f[0] == "rtt" {
			continue
		}
		var below, above float64
		if _, err := fmt.Sscan(f[2], &below); err != nil {
			t.Fatalf("factor %v: %v", f, err)
		}
		fmt.Sscan(f[3], &above)
		// VIA's advantage above the MTU: its send moves no byte with
		// the CPU and its receive copies once.
		if f[0] != "receive" && above <= 1 {
			t.Errorf("VIA over %s, %s above the MTU: %.2f", f[1], f[0], above)
		}
		if f[0] == "receive" && above <= 1 {
			t.Errorf("VIA over %s, receive above the MTU: %.2f", f[1], above)
		}
	}
	var ch bool
	for _, c := range s.res.Figures.Charts {
		ch = ch || c.Name == "medians" && len(c.Plots) == 2
	}
	if !ch {
		t.Error("no chart of medians in two plots")
	}
}

// frames is how many frames carry a VIA message of n bytes (1472 a frame).
func frames(n int) int { return max(1, (n+1471)/1472) }

// prevSize returns the size before n in sizes.
func prevSize(sizes []int, n int) int {
	i := slices.Index(sizes, n)
	return sizes[max(i-1, 0)]
}

// busy is a receive's mean cycles without its DMA: the receiving host's
// own work.
func busy(r latency.Row) float64 { return r.Receive.Mean - layer(r.RecvLayers, "DMA") }

func nil2exp(t testing.TB) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperiment(studyConfig)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// TestStudyMechanisms changes the machine file's DMA rate and memory
// latency and checks that each protocol's latencies and layers move as the
// mechanisms say: a quarter of the DMA rate adds three times the DMA
// engine's time to a VIA send (bound by the engine: the NIC reads the
// message from registered memory) and to every receive's last frame (the
// card stores a frame before the host sees it), and nothing to the
// receiving host's own work; a UDP send of 32 KiB, whose fragments' DMA
// overlaps the next one's copy at the full rate and only the last one's
// is its tail, becomes bound by the engine; twice the memory latency costs
// every receive of 32 KiB at least one more memory latency per L2 line the
// NIC wrote (its DMA took those lines out of the caches), and leaves VIA's
// send, which copies nothing, as it was.
func TestStudyMechanisms(t *testing.T) {
	sizes := func(exp *machine.Experiment) {
		compareParams(exp).Sizes = []int{4, 1024, 32768}
	}
	base := loadStudy(t, studyConfig, 3, sizes)
	dma := loadStudy(t, studyConfig, 3, func(exp *machine.Experiment) {
		sizes(exp)
		for _, h := range exp.Hosts {
			for _, d := range h.Machine.Devices {
				if p, ok := d.Params.(*simoseth.Params); ok {
					p.DMARate /= 4
				}
			}
		}
	})
	mem := loadStudy(t, studyConfig, 3, func(exp *machine.Experiment) {
		sizes(exp)
		for _, h := range exp.Hosts {
			h.Machine.Cache.MemLatency, h.Machine.Cache.MemWriteLatency = 200, 200
		}
	})
	near := func(what string, got, want float64) {
		t.Helper()
		if got < 0.9*want || got > 1.1*want {
			t.Errorf("%s: changed by %.0f cycles, want %.0f (±10%%)", what, got, want)
		}
	}
	for _, n := range []int{1024, 32768} {
		near(fmt.Sprintf("VIA send %d at a quarter of the DMA rate", n),
			dma.row(t, "via", n).Send.Median-base.row(t, "via", n).Send.Median, 3*viaTxDMACycles(n, 1200e6))
	}
	// A UDP send of 32 KiB (23 fragments, the highest offset first): at the
	// full rate each fragment's DMA overlaps the copy of the next and only
	// the last one's (a descriptor fetch, the 1514-byte frame, the status
	// write-back) is the send's tail; at a quarter of the rate the DMA is
	// slower than the copies and the send lasts as long as the engine
	// takes to read every frame.
	frames := 22*float64(16+1514+4) + float64(16+14+20+8+32768-22*1480+4)
	near("UDP send of 32 KiB at the full DMA rate: its tail", layer(base.row(t, "udp", 32768).SendLayers, "DMA"), float64(16+1514+4)/1.2)
	// Beside the engine's time the send holds what comes before the
	// first frame is handed to the card (the call's entry, udp_sendmsg,
	// the first fragment's copy and checksum) and the last frame's
	// completion interrupt: 6% of the engine's time covers them.
	if d, engine := dma.row(t, "udp", 32768).Send.Median, frames/0.3; d < engine || d > 1.06*engine {
		t.Errorf("UDP send of 32 KiB at a quarter of the DMA rate: %.0f cycles, the engine's time for its frames %.0f", d, engine)
	}
	// Layers that hold no DMA and no memory reference the change touches
	// stay as they were (within 30 cycles: a layer's mean over the six
	// samples moves so by one cache miss to memory, about 110 cycles,
	// placed differently in one sample).
	same := func(what string, b, x []latency.LayerCost, except ...string) {
		t.Helper()
		for _, l := range []string{"APPL", "TRANS", "UDP", "TCP", "IP", "DEV", "DMA", "KERN"} {
			if slices.Contains(except, l) {
				continue
			}
			if d := layer(x, l) - layer(b, l); math.Abs(d) > 30 {
				t.Errorf("%s: %s changed by %.0f cycles", what, l, d)
			}
		}
	}
	for _, p := range []string{"via", "udp"} {
		// A 1 KiB message is one frame of 1066 bytes (headers included)
		// for VIA, 1066 for UDP too: a descriptor fetch, the frame and
		// the status write-back. The engine's extra time is all DMA, on
		// both sides; the hosts' own work does not change.
		engine := 3 * float64(16+1066+4) / 1.2
		if p == "via" {
			engine = 3 * viaTxDMACycles(1024, 1200e6)
		}
		b, d := base.row(t, p, 1024), dma.row(t, p, 1024)
		near(p+" send of 1 KiB at a quarter of the DMA rate: DMA", layer(d.SendLayers, "DMA")-layer(b.SendLayers, "DMA"), engine)
		same(p+" send of 1 KiB at a quarter of the DMA rate", b.SendLayers, d.SendLayers, "DMA")
		near(p+" receive of 1 KiB at a quarter of the DMA rate", d.Receive.Median-b.Receive.Median, 3*float64(16+1066+4)/1.2)
		near(p+" receive of 1 KiB at a quarter of the DMA rate: DMA", layer(d.RecvLayers, "DMA")-layer(b.RecvLayers, "DMA"), 3*float64(16+1066+4)/1.2)
		same(p+" receive of 1 KiB at a quarter of the DMA rate", b.RecvLayers, d.RecvLayers, "DMA")
		// Twice the memory latency: one more memory latency for each
		// interrupt's first look at a descriptor the card wrote back
		// (DEV); a 1 KiB receive's copy (UDP's in recvfrom, VIA's in the
		// agent) reads the 8 L2 lines the card wrote from memory; nothing
		// else moves.
		m := mem.row(t, p, 1024)
		if d := layer(m.SendLayers, "DEV") - layer(b.SendLayers, "DEV"); d < 100 {
			t.Errorf("%s send of 1 KiB at twice the memory latency: DEV %.0f cycles more, want at least 100", p, d)
		}
		same(p+" send of 1 KiB at twice the memory latency", b.SendLayers, m.SendLayers, "DEV")
		copier := map[string]string{"via": "TRANS", "udp": "UDP"}[p]
		near(p+" receive of 1 KiB at twice the memory latency: "+copier, layer(m.RecvLayers, copier)-layer(b.RecvLayers, copier), 8*100)
		same(p+" receive of 1 KiB at twice the memory latency", b.RecvLayers, m.RecvLayers, "DEV", copier)
	}
	for _, p := range []string{"via", "udp", "tcp"} {
		lines := float64(32768 / 128) // L2 lines of the message the NIC wrote
		if d := busy(mem.row(t, p, 32768)) - busy(base.row(t, p, 32768)); d < lines*100 {
			t.Errorf("%s receive of 32 KiB at twice the memory latency: %.0f cycles more, want at least %.0f", p, d, lines*100)
		}
	}
	if b, m := base.row(t, "via", 32768).Send.Median, mem.row(t, "via", 32768).Send.Median; m > 1.02*b {
		t.Errorf("VIA send of 32 KiB: %.0f cycles, %.0f at twice the memory latency", b, m)
	}
}

// TestVIAOverNE2000: the via workload runs over any card the agent
// drives; on the R4000-class machine's NE2000 the message's bytes move by
// programmed I/O, so the DMA layer of a send is the CPU's own work (busy,
// not waiting) and grows with the message.
func TestVIAOverNE2000(t *testing.T) {
	dir := t.TempDir()
	m, err := os.ReadFile("../../../configs/machines/r4000.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "r4000-via.toml"), append(m, "\n[via]\nenabled = true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	e := `[experiment]
name = "via-ne2000"
stop_at = "60s"
[[segment]]
name = "lan0"
rate = "10Mbps"
[[host]]
name = "a"
machine = "r4000-via.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
[[host]]
name = "b"
machine = "r4000-via.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0b"
[workload]
type = "via"
[workload.via]
client = "a"
server = "b"
sizes = [64, 4096]
messages = 3
warmup = 1
receive_span = "dma"
`
	p := filepath.Join(dir, "e.toml")
	if err := os.WriteFile(p, []byte(e), 0o644); err != nil {
		t.Fatal(err)
	}
	s := loadStudy(t, p, 3, nil)
	small, big := s.row(t, "via", 64), s.row(t, "via", 4096)
	for _, r := range []latency.Row{small, big} {
		if r.Messages != 3 || r.Send.N != 6 || r.Receive.N != 6 {
			t.Fatalf("%d B: %d messages, %d sends, %d receives", r.Size, r.Messages, r.Send.N, r.Receive.N)
		}
	}
	// Hosts without IP addresses: the VIA series needs none.
	if machinetest.Inet(s.run.Hosts[0]) != nil {
		t.Error("host a has the Internet protocols")
	}
	if d := layer(big.SendLayers, "DMA"); d < 0.5*big.Send.Mean || d < 20*layer(small.SendLayers, "DMA") {
		t.Errorf("VIA send over the NE2000: DMA (PIO) %.0f of %.0f at 4 KiB, %.0f at 64 B", d, big.Send.Mean, layer(small.SendLayers, "DMA"))
	}
	// On receive the wire's time dominates; of the host's busy cycles the
	// data port's reads (DMA: PIO on the CPU) are most.
	if d, b := layer(big.RecvLayers, "DMA"), big.Receive.Mean; d < 0.5*b {
		t.Errorf("VIA receive over the NE2000: DMA (PIO) %.0f of %.0f busy cycles", d, b)
	}
}
