package machine_test

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/apps/ttcp"
	"simkron/stack/inet"
)

const ttcpStallConfig = "../configs/ttcp-stall.toml"

// ttcpStallOutput is one run of configs/ttcp-stall.toml: its result, the
// result's JSON and the capture of ring0.
type ttcpStallOutput struct {
	res     *report.Result
	json    []byte
	capture []byte
}

func runTTCPStall(t testing.TB) ttcpStallOutput {
	t.Helper()
	exp, err := machine.LoadExperiment(ttcpStallConfig)
	if err != nil {
		t.Fatal(err)
	}
	r := machinetest.Build(t, exp, machine.Options{})
	res := machinetest.Execute(t, r)
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	caps := r.Net.Captures()
	if len(caps) != 1 || caps[0].Segment != "ring0" {
		t.Fatalf("captures of %d segments, want ring0", len(caps))
	}
	return ttcpStallOutput{res: res, json: js.Bytes(), capture: caps[0].Data}
}

var ttcpStall struct {
	once sync.Once
	out  ttcpStallOutput
	ok   bool
}

// ttcpStallRun returns the run shared by the tests (the transfers take
// 79 simulated seconds; one run costs under a second of host time).
func ttcpStallRun(t *testing.T) ttcpStallOutput {
	t.Helper()
	ttcpStall.once.Do(func() {
		ttcpStall.out = runTTCPStall(t)
		ttcpStall.ok = true
	})
	if !ttcpStall.ok {
		t.Fatal("the shared ttcp-stall run failed")
	}
	return ttcpStall.out
}

func ttcpRuns(t *testing.T, res *report.Result) map[string]ttcp.Result {
	t.Helper()
	want := []string{"fddi-stall", "mtu-1500", "nodelay", "sndbuf-16k", "no-delack"}
	if len(ttcpResults(res)) != len(want) {
		t.Fatalf("%d ttcp runs, want %d", len(ttcpResults(res)), len(want))
	}
	runs := map[string]ttcp.Result{}
	for i, r := range ttcpResults(res) {
		if r.Name != want[i] {
			t.Fatalf("run %d is %q, want %q", i, r.Name, want[i])
		}
		runs[r.Name] = r
	}
	return runs
}

// The five runs of inet-notes section 6: the FDDI-sized MTU with BSD MSS
// rounding, an 8 KiB send buffer, Nagle and the 200 ms fast timer stalls
// once per timer period; taking away any one ingredient streams.
func TestTTCPStallResults(t *testing.T) {
	out := ttcpStallRun(t)
	runs := ttcpRuns(t, out.res)
	for _, r := range ttcpResults(out.res) {
		t.Logf("%-10s mtu %4d mss %4d %7.1f KB/s %4d segs %v stalls %3d max gap %6.1f ms held %4d delack %3d",
			r.Name, r.IfMTU, r.MSS, r.KBps, r.DataSegments, r.Sizes, r.Gaps.Stalls, r.Gaps.MaxMS, r.Held, r.DelAckTimeouts)
		if r.Error != "" {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
		if r.Bytes != 2048000 || r.Corrupt != 0 || r.Retransmits != 0 {
			t.Errorf("%s: %d bytes, %d corrupt, %d retransmits; want 2048000, 0, 0", r.Name, r.Bytes, r.Corrupt, r.Retransmits)
		}
		var sum int64
		for _, sc := range r.Sizes {
			sum += int64(sc.Bytes) * int64(sc.Count)
		}
		if sum != r.Bytes {
			t.Errorf("%s: segment sizes %v add up to %d bytes, %d received", r.Name, r.Sizes, sum, r.Bytes)
		}
		wantMTU, wantMSS := 4352, 4096
		if r.Name == "mtu-1500" {
			wantMTU, wantMSS = 1500, 1460
		}
		if r.IfMTU != wantMTU || r.MSS != wantMSS {
			t.Errorf("%s: MTU %d MSS %d, want %d and %d", r.Name, r.IfMTU, r.MSS, wantMTU, wantMSS)
		}
	}

	stall := runs["fddi-stall"]
	// Only 2048- and 4096-byte segments, as many of one as of the other
	// (one 2048 and one 4096 per timer period).
	counts := map[int]int{}
	for _, sc := range stall.Sizes {
		counts[sc.Bytes] = sc.Count
		if sc.Bytes != 2048 && sc.Bytes != 4096 {
			t.Errorf("fddi-stall: %d segments of %d bytes; want only 2048 and 4096", sc.Count, sc.Bytes)
		}
	}
	if d := counts[2048] - counts[4096]; d < -2 || d > 2 || counts[4096] < 300 {
		t.Errorf("fddi-stall: %d of 2048 bytes, %d of 4096; want about 333 of each", counts[2048], counts[4096])
	}
	if stall.Gaps.Stalls < 300 || stall.KBps >= 50 {
		t.Errorf("fddi-stall: %d stalls at %.1f KB/s; want at least 300 and under 50 KB/s", stall.Gaps.Stalls, stall.KBps)
	}
	// Nothing waits longer than one period of the fast timer plus the
	// few milliseconds a segment takes.
	if stall.Gaps.MaxMS > 205 {
		t.Errorf("fddi-stall: longest gap %.1f ms, want at most 205", stall.Gaps.MaxMS)
	}
	// Every stall ends with an ACK sent by the receiver's timer.
	if d := int(stall.DelAckTimeouts) - stall.Gaps.Stalls; d < -2 || d > 2 {
		t.Errorf("fddi-stall: %d delayed-ACK timeouts for %d stalls", stall.DelAckTimeouts, stall.Gaps.Stalls)
	}
	if int(stall.Held) < stall.Gaps.Stalls {
		t.Errorf("fddi-stall: data held back %d times, fewer than the %d stalls", stall.Held, stall.Gaps.Stalls)
	}
	if !strings.HasPrefix(stall.Verdict, "STALLED") {
		t.Errorf("fddi-stall: verdict %q", stall.Verdict)
	}

	for _, name := range []string{"mtu-1500", "nodelay", "sndbuf-16k", "no-delack"} {
		r := runs[name]
		if r.KBps < 10*stall.KBps || r.Gaps.Stalls > 2 {
			t.Errorf("%s: %.1f KB/s with %d stalls; want at least %.1f KB/s (10 times fddi-stall) and at most 2 stalls",
				name, r.KBps, r.Gaps.Stalls, 10*stall.KBps)
		}
		if !strings.HasPrefix(r.Verdict, "streaming") {
			t.Errorf("%s: verdict %q", name, r.Verdict)
		}
	}
	if r := runs["nodelay"]; r.Held != 0 {
		t.Errorf("nodelay: data held back %d times with Nagle off", r.Held)
	}
	if r := runs["no-delack"]; r.DelAckTimeouts != 0 {
		t.Errorf("no-delack: %d delayed-ACK timeouts with delayed ACKs off", r.DelAckTimeouts)
	}
	// Each run's explanation names the rule that decided it.
	for name, want := range map[string][]string{
		"fddi-stall": {"less than 2·MSS (8192) and half the receive buffer (8192)", "200 ms delayed-ACK timer", "Nagle", "8192-byte send buffer is full"},
		"mtu-1500":   {"2·MSS (2920)"},
		"nodelay":    {"TCP_NODELAY", "held back 0 times"},
		"sndbuf-16k": {"16384-byte send buffer holds 2·MSS (8192)"},
		"no-delack":  {"delayed ACKs are off"},
	} {
		for _, w := range want {
			if !strings.Contains(runs[name].Why, w) {
				t.Errorf("%s: explanation %q lacks %q", name, runs[name].Why, w)
			}
		}
	}
}

// wireSeg is one TCP segment of the capture, read with gopacket alone.
type wireSeg struct {
	at            time.Duration // since the start of the simulation
	frameLen      int
	ipLen         int
	src, dst      netip.AddrPort
	seq, ack      uint32
	win           uint16
	syn, fin, rst bool
	payload       int
}

// wireSegments decodes every TCP/IPv4 frame of a capture with gopacket's
// own layers (not the simulator's header views or its observer).
func wireSegments(t *testing.T, capture []byte) []wireSeg {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	if rd.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("capture link type %v", rd.LinkType())
	}
	var (
		eth     layers.Ethernet
		ip      layers.IPv4
		tcp     layers.TCP
		payload gopacket.Payload
		decoded []gopacket.LayerType
		segs    []wireSeg
	)
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &tcp, &payload)
	for n := 0; ; n++ {
		pkt, ci, err := rd.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := p.DecodeLayers(pkt, &decoded); err != nil {
			var unsupported gopacket.UnsupportedLayerType
			if !errors.As(err, &unsupported) {
				t.Fatalf("frame %d: %v", n, err)
			}
		}
		if len(decoded) < 3 || decoded[2] != layers.LayerTypeTCP {
			continue
		}
		src, _ := netip.AddrFromSlice(ip.SrcIP)
		dst, _ := netip.AddrFromSlice(ip.DstIP)
		segs = append(segs, wireSeg{
			at: time.Duration(ci.Timestamp.UnixNano()), frameLen: len(pkt), ipLen: int(ip.Length),
			src: netip.AddrPortFrom(src, uint16(tcp.SrcPort)), dst: netip.AddrPortFrom(dst, uint16(tcp.DstPort)),
			seq: tcp.Seq, ack: tcp.Ack, win: tcp.Window, syn: tcp.SYN, fin: tcp.FIN, rst: tcp.RST, payload: len(tcp.Payload),
		})
	}
	return segs
}

// connSegments returns the segments of the connection to port on the
// receiver, in capture order.
func connSegments(segs []wireSeg, rx netip.Addr, port uint16) []wireSeg {
	var out []wireSeg
	for _, s := range segs {
		if s.dst == netip.AddrPortFrom(rx, port) || s.src == netip.AddrPortFrom(rx, port) {
			out = append(out, s)
		}
	}
	return out
}

// The stall as the wire shows it, read from the pcap with gopacket rather
// than the workload's own observer: after the start, the first run's
// connection repeats exactly [data 2048, data 4096, ACK of everything
// with WIN=16384] — the ACK 150 to 205 ms after the 4096, sent on the
// receiver's 200 ms fast timer (so every such ACK has the same phase
// modulo 200 ms since boot), and the next 2048 a few milliseconds after
// the ACK. Frames are larger than Ethernet's in the FDDI-MTU runs, and
// never in the MTU 1500 one.
func TestTTCPStallWire(t *testing.T) {
	out := ttcpStallRun(t)
	segs := wireSegments(t, out.capture)
	tx, rx := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")

	conn := connSegments(segs, rx, 5001)
	if len(conn) < 3 || !conn[0].syn || !conn[1].syn {
		t.Fatalf("port 5001: %d segments, not starting with SYN, SYN+ACK", len(conn))
	}
	iss, irs := conn[0].seq, conn[1].seq
	// Steady state: data segments and the receiver's pure ACKs.
	type ev struct {
		data bool
		seg  wireSeg
		rel  uint32 // data: its sequence number; ack: its ACK, relative to iss+1
	}
	var evs []ev
	var sent int
	for _, s := range conn[2:] {
		switch {
		case s.rst:
			t.Fatalf("port 5001: reset at %v", s.at)
		case s.src.Addr() == tx && s.payload > 0:
			if rel := s.seq - iss - 1; int(rel) != sent {
				t.Fatalf("port 5001: data at %v with relative seq %d, want %d (no retransmissions, in order)", s.at, rel, sent)
			}
			sent += s.payload
			evs = append(evs, ev{true, s, s.seq - iss - 1})
		case s.src.Addr() == rx && s.payload == 0 && !s.fin:
			if s.seq != irs+1 {
				t.Errorf("port 5001: receiver's ACK at %v has seq %d, want %d", s.at, s.seq, irs+1)
			}
			evs = append(evs, ev{false, s, s.ack - iss - 1})
		}
	}
	if sent != 2048000 {
		t.Errorf("port 5001: %d bytes of data on the wire, want 2048000", sent)
	}

	const period = 200 * time.Millisecond
	var (
		cycles, first, last int
		phases              []time.Duration
	)
	first = -1
	for i := 0; i+2 < len(evs); {
		d2, d4, a := evs[i], evs[i+1], evs[i+2]
		if !d2.data || d2.seg.payload != 2048 || !d4.data || d4.seg.payload != 4096 || a.data {
			if first >= 0 {
				break // the steady state has ended
			}
			i++
			continue
		}
		if first < 0 {
			first = i
		}
		if end := d4.rel + 4096; a.rel != end {
			t.Errorf("cycle at %v: ACK %d, want %d (everything sent)", a.seg.at, a.rel, end)
		}
		if a.seg.win != 16384 {
			t.Errorf("cycle at %v: ACK's window %d, want 16384", a.seg.at, a.seg.win)
		}
		if wait := a.seg.at - d4.seg.at; wait < 150*time.Millisecond || wait > 205*time.Millisecond {
			t.Errorf("cycle at %v: ACK %v after the 4096-byte segment, want 150 to 205 ms", a.seg.at, wait)
		}
		if i+3 < len(evs) {
			if next := evs[i+3]; !next.data || next.seg.at-a.seg.at > 10*time.Millisecond {
				t.Errorf("cycle at %v: after the ACK comes %+v, want data within 10 ms", a.seg.at, next.seg)
			}
		}
		phases = append(phases, a.seg.at%period)
		cycles++
		i += 3
		last = i
	}
	t.Logf("port 5001: %d events, %d cycles from event %d to %d; ACK phases %v .. %v mod 200 ms",
		len(evs), cycles, first, last, minDur(phases), maxDur(phases))
	if cycles < 320 || first > 6 || len(evs)-last > 6 {
		t.Errorf("port 5001: %d cycles of 2048, 4096, ACK from event %d to %d of %d; want at least 320 covering all but the start and end",
			cycles, first, last, len(evs))
	}
	// The fast timer ticks every 200 ms from boot, so the ACKs it sends
	// leave at the same phase: just after a multiple of 200 ms (the
	// timer softirq, tcp_output and the 60-byte frame's time on the wire).
	if lo, hi := minDur(phases), maxDur(phases); hi-lo > time.Millisecond || hi > 2*time.Millisecond {
		t.Errorf("port 5001: ACKs at %v to %v after a multiple of 200 ms, want within 1 ms of each other and under 2 ms", lo, hi)
	}

	// Frame sizes: an MSS of 4096 gives 4096+40-byte IP packets, 4150-byte
	// frames, beyond Ethernet's 1514 and within the MTU of 4352; MTU 1500
	// frames stay within Ethernet's.
	maxFrame := map[uint16]int{}
	for _, port := range []uint16{5001, 5002, 5003, 5004, 5005} {
		for _, s := range connSegments(segs, rx, port) {
			maxFrame[port] = max(maxFrame[port], s.frameLen)
			if s.frameLen != 14+max(46, s.ipLen) {
				t.Errorf("port %d: frame of %d bytes for a %d-byte IP packet", port, s.frameLen, s.ipLen)
			}
		}
	}
	for port, n := range maxFrame {
		limit, want := 14+4352, 14+40+4096
		if port == 5002 {
			limit, want = 14+1500, 14+1500
		}
		if n > limit || n != want {
			t.Errorf("port %d: largest frame %d bytes, want %d (at most %d)", port, n, want, limit)
		}
	}
}

func minDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// The ttcp runs depend on nothing but the seed: a second run gives the
// same result file and the same capture byte for byte. (cmd/simkron's
// TestRunDeterministic covers only its small config.)
func TestTTCPStallDeterministic(t *testing.T) {
	a := ttcpStallRun(t)
	b := runTTCPStall(t)
	if !bytes.Equal(a.json, b.json) {
		t.Errorf("result JSON differs between two runs of %s", ttcpStallConfig)
	}
	if !bytes.Equal(a.capture, b.capture) {
		t.Errorf("capture differs between two runs of %s", ttcpStallConfig)
	}
}

// A bulk transfer on the R4000s, whose NE2000 drivers load one frame while
// the card sends another (tx_buffers = 2): the transmit-done interrupt
// taken at a register access inside the driver's transmit runs the
// transmit softirq on its exit, which must not feed the queue the outer
// call is feeding (it did, and crashed).
func TestTTCPTwoTransmitSlots(t *testing.T) {
	exp := ttcpBulk(t, "../configs/machines/r4000.toml", 300)
	res := machinetest.Execute(t, machinetest.Build(t, exp, machine.Options{}))
	if !res.Complete || len(ttcpResults(res)) != 1 {
		t.Fatalf("incomplete: %s", res.Incomplete)
	}
	if c := ttcpResults(res)[0]; c.Bytes != 300*ttcpBenchSize || c.Corrupt != 0 || c.Retransmits != 0 {
		t.Errorf("%d bytes, %d corrupt, %d retransmissions", c.Bytes, c.Corrupt, c.Retransmits)
	}
}

// What the stall needs, and what it does not: with Linux's receiver,
// which acknowledges once more than one full segment (its estimate of the
// peer's MSS, 4096 here) is unacknowledged, the 6144 bytes of each burst
// are acknowledged at once and the transfer streams (inet-notes section
// 6); so it does with an 8 KiB receive buffer, whose 50% window-update
// rule fires at 6144 bytes read. On a 100 Mbit/s wire, as FDDI's, the
// stall is the same: the timer sets its period.
func TestTTCPStallConditions(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(exp *machine.Experiment, c *ttcp.Case)
		stalled bool
	}{
		{"linux acks", func(exp *machine.Experiment, c *ttcp.Case) {
			for i := range exp.Hosts {
				machinetest.InetParams(ownMachine(exp, i)).TCPDelAckStyle = inet.DelAckLinux
			}
		}, false},
		{"8 KiB receive buffer", func(exp *machine.Experiment, c *ttcp.Case) { c.RcvBuf = 8 * sim.KiB }, false},
		{"100 Mbit/s", func(exp *machine.Experiment, c *ttcp.Case) { machinetest.Segments(exp)[0].Rate = 100 * sim.Mbps }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp, err := machine.LoadExperiment(ttcpStallConfig)
			if err != nil {
				t.Fatal(err)
			}
			machinetest.Segments(exp)[0].Pcap = false
			c := ttcpParams(exp).Cases[0]
			if c.Name != "fddi-stall" {
				t.Fatalf("first run %q, want fddi-stall", c.Name)
			}
			c.Writes = 300
			tc.edit(exp, &c)
			ttcpParams(exp).Cases = []ttcp.Case{c}
			r := ttcpResults(machinetest.Execute(t, machinetest.Build(t, exp, machine.Options{})))[0]
			t.Logf("%.1f KB/s, %d stalls, %d delayed-ACK timeouts: %s", r.KBps, r.Gaps.Stalls, r.DelAckTimeouts, r.Verdict)
			if r.Bytes != 300*2048 || strings.HasPrefix(r.Verdict, "STALLED") != tc.stalled {
				t.Errorf("%d bytes, %q; want stalled %v", r.Bytes, r.Verdict, tc.stalled)
			}
			if tc.stalled && (r.KBps < 25 || r.KBps > 35) {
				t.Errorf("stalled at %.1f KB/s, want about 30 (6 KiB per 200 ms)", r.KBps)
			}
		})
	}
}
