package inet_test

// End-to-end tests of the Internet layer (stack/inet) on two 486 hosts
// with NE2000 cards, built from configs/udp-ne2000.toml: the UDP echo
// sweep, fragment reassembly under lost, duplicated and corrupted frames,
// the socket calls' error numbers, ICMP (ping and port unreachable), and
// the segment's capture read back in Go and, when installed, by tshark.
//
// Frames are checked where the hosts cannot lie about them: in the capture
// (what went on the wire, before any receive fault), at the receiving
// card (its Received trace source: what arrived after the faults) and at
// the door of UDP (inet.Stack.Delivered: what the IP layer handed up).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket/pcapgo"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
	"simkron/memory"
	"simkron/report"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/apps/udp"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

func loadUDP(t testing.TB, sizes []int, messages, warmup int) *machine.Experiment {
	return machinetest.LoadUDP(t, sizes, messages, warmup)
}

var (
	ipA = inet.Addr{10, 0, 0, 1} // pcA, the sweep's client
	ipB = inet.Addr{10, 0, 0, 2} // pcB, the echo server
)

// fragsFor is the number of IP datagrams a UDP message of n bytes takes
// with a 1500-byte MTU: 1480 bytes of IP payload each.
func fragsFor(n int) int { return (n + header.UDPMinimumSize + 1479) / 1480 }

func layerCycles(ls []latency.LayerCost, layer string) float64 {
	for _, l := range ls {
		if l.Layer == layer {
			return l.Cycles
		}
	}
	return 0
}

// wireDatagram is an IP datagram reassembled from a capture.
type wireDatagram struct {
	src, dst inet.Addr
	proto    uint8
	id       uint16
	frames   []int  // capture indices of its frames, in capture order
	offsets  []int  // their fragment offsets
	data     []byte // the IP payload, once complete
	complete bool
}

// readDatagrams reads a pcap capture and reassembles its IPv4 datagrams
// (keyed by source, destination, protocol and ID, which do not repeat in
// these short runs). Every IPv4 header must be well formed with a good
// checksum. Overlapping fragments must agree byte for byte.
func readDatagrams(t testing.TB, capture []byte) (frames int, dgs []*wireDatagram) {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		src, dst inet.Addr
		proto    uint8
		id       uint16
	}
	type part struct {
		have  []bool
		total int
	}
	byKey := map[key]*wireDatagram{}
	parts := map[key]*part{}
	for ; ; frames++ {
		pkt, _, err := rd.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(pkt) < header.EthernetHeaderLen || header.Ethernet(pkt).Type() != header.EtherTypeIPv4 {
			continue
		}
		ip := header.IPv4(pkt[header.EthernetHeaderLen:])
		if !ip.IsValid(len(ip)) || !ip.IsChecksumValid() {
			t.Errorf("capture frame %d: bad IPv4 header % x", frames, pkt[header.EthernetHeaderLen:min(len(pkt), header.EthernetHeaderLen+header.IPv4MinimumSize)])
			continue
		}
		k := key{ip.Src(), ip.Dst(), ip.Protocol(), ip.ID()}
		d, ok := byKey[k]
		if !ok {
			d = &wireDatagram{src: k.src, dst: k.dst, proto: k.proto, id: k.id}
			byKey[k] = d
			parts[k] = &part{total: -1}
			dgs = append(dgs, d)
		}
		off := int(ip.FragmentOffset())
		payload := ip.Payload()
		d.frames = append(d.frames, frames)
		d.offsets = append(d.offsets, off)
		p := parts[k]
		if end := off + len(payload); end > len(d.data) {
			d.data = append(d.data, make([]byte, end-len(d.data))...)
			p.have = append(p.have, make([]bool, end-len(p.have))...)
		}
		for i, c := range payload {
			if p.have[off+i] && d.data[off+i] != c {
				t.Errorf("capture frame %d: datagram %v id %d: fragments disagree at byte %d", frames, k.src, k.id, off+i)
			}
			d.data[off+i], p.have[off+i] = c, true
		}
		if !ip.More() {
			p.total = off + len(payload)
		}
		d.complete = p.total >= 0 && len(p.have) == p.total && !slices.Contains(p.have, false)
	}
	return frames, dgs
}

// udpChecksumOK verifies a UDP datagram's checksum (header and data in u).
func udpChecksumOK(src, dst inet.Addr, u []byte) bool {
	h := header.UDP(u)
	if h.Checksum() == 0 {
		return true
	}
	return header.Checksum(u, header.PseudoHeaderChecksum(header.IPv4ProtocolUDP, src, dst, uint16(len(u)))) == 0xFFFF
}

// sweepRun runs the sweep with a small number of messages and returns the
// result's JSON, the result and the capture of lan0.
func sweepRun(t testing.TB) ([]byte, *report.Result, []byte) {
	t.Helper()
	exp := loadUDP(t, udp.DefaultParams().Sizes, 3, 1)
	r := build(t, exp, machine.Options{})
	res := execute(t, r)
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	caps := r.Net.Captures()
	if len(caps) != 1 || caps[0].Segment != "lan0" {
		t.Fatalf("captures of %d segments, want lan0", len(caps))
	}
	return js.Bytes(), res, caps[0].Data
}

// TestUDPSweep runs the echo sweep from 4 B to 32 KiB: every message must
// come back intact, each size must take the expected number of fragments
// on the wire, the costs must behave as the Linux/SimOS study reports
// (sending a fragmented datagram costs the IP layer a fragment build per
// 1480 bytes), and the run must depend on nothing but its seed.
func TestUDPSweep(t *testing.T) {
	js, res, capture := sweepRun(t)
	sizes := udp.DefaultParams().Sizes
	if len(udpRows(res)) != len(sizes) {
		t.Fatalf("%d rows, want %d", len(udpRows(res)), len(sizes))
	}
	bySize := map[int]latency.Row{}
	for i, row := range udpRows(res) {
		bySize[row.Size] = row
		t.Logf("%5d B: %2d frags, send %8.0f (IP %7.0f), receive %8.0f cycles, rtt %8.1f us",
			row.Size, row.Packets, row.Send.Mean, layerCycles(row.SendLayers, "IP"), row.Receive.Mean, row.RTTMicros)
		if row.Size != sizes[i] {
			t.Errorf("row %d: size %d, want %d", i, row.Size, sizes[i])
		}
		if row.Messages != 3 || row.Lost != 0 || row.Corrupt != 0 {
			t.Errorf("%d B: %d messages, %d lost, %d corrupt; want 3, 0, 0", row.Size, row.Messages, row.Lost, row.Corrupt)
		}
		if want := fragsFor(row.Size); row.Packets != want {
			t.Errorf("%d B: %d fragments, want %d", row.Size, row.Packets, want)
		}
		// Both hosts send (the request and its echo) and receive each
		// measured message.
		for _, s := range []struct {
			name string
			sum  latency.Summary
		}{{"send", row.Send}, {"receive", row.Receive}} {
			if s.sum.N != 2*row.Messages || s.sum.Min <= 0 || s.sum.Min > s.sum.Median || s.sum.Median > s.sum.Max || s.sum.Mean < s.sum.Min || s.sum.Mean > s.sum.Max {
				t.Errorf("%d B: %s summary %+v; want %d positive, ordered samples", row.Size, s.name, s.sum, 2*row.Messages)
			}
		}
		if len(row.SendLayers) == 0 || len(row.RecvLayers) == 0 || row.RTTMicros <= 0 {
			t.Errorf("%d B: send layers %v, receive layers %v, rtt %v: want some", row.Size, row.SendLayers, row.RecvLayers, row.RTTMicros)
		}
	}
	// Beyond the MTU, a larger message costs more to send.
	var prev latency.Row
	for _, row := range udpRows(res) {
		if row.Size > 1472 && prev.Size > 1472 && row.Send.Mean <= prev.Send.Mean {
			t.Errorf("send latency %.0f cycles at %d B, not above %.0f at %d B", row.Send.Mean, row.Size, prev.Send.Mean, prev.Size)
		}
		prev = row
	}
	// The IP layer's send work jumps once datagrams are fragmented: a
	// buffer, a header and a checksummed copy per fragment.
	ip1472, ip4096 := layerCycles(bySize[1472].SendLayers, "IP"), layerCycles(bySize[4096].SendLayers, "IP")
	if ip1472 <= 0 || ip4096 < 2*ip1472 {
		t.Errorf("IP send cycles: %.0f at 1472 B, %.0f at 4096 B; want at least double", ip1472, ip4096)
	}

	// The wire: every message is one datagram each way, in the expected
	// number of fragments, highest offset first, with good checksums, and
	// each echo carries the request's data back.
	_, dgs := readDatagrams(t, capture)
	type flow struct{ req, rep []*wireDatagram }
	flows := map[int]*flow{} // by UDP payload size
	for _, d := range dgs {
		if d.proto != header.IPv4ProtocolUDP {
			continue
		}
		if !d.complete {
			t.Errorf("datagram %v id %d: incomplete on the wire", d.src, d.id)
			continue
		}
		if !udpChecksumOK(d.src, d.dst, d.data) {
			t.Errorf("datagram %v id %d: bad UDP checksum", d.src, d.id)
		}
		n := len(d.data) - header.UDPMinimumSize
		if len(d.frames) != fragsFor(n) {
			t.Errorf("%d B datagram from %v: %d frames, want %d", n, d.src, len(d.frames), fragsFor(n))
		}
		if !slices.IsSortedFunc(d.offsets, func(a, b int) int { return b - a }) {
			t.Errorf("%d B datagram from %v: offsets %v, want highest first", n, d.src, d.offsets)
		}
		f := flows[n]
		if f == nil {
			f = &flow{}
			flows[n] = f
		}
		switch {
		case d.src == ipA && d.dst == ipB:
			f.req = append(f.req, d)
		case d.src == ipB && d.dst == ipA:
			f.rep = append(f.rep, d)
		default:
			t.Errorf("datagram %v -> %v", d.src, d.dst)
		}
	}
	for _, n := range sizes {
		f := flows[n]
		if f == nil || len(f.req) != 4 || len(f.rep) != 4 {
			t.Errorf("%d B: want 4 requests and 4 echoes on the wire, got %v", n, f)
			continue
		}
		for i := range f.req {
			if !bytes.Equal(f.req[i].data[header.UDPMinimumSize:], f.rep[i].data[header.UDPMinimumSize:]) {
				t.Errorf("%d B, message %d: the echo's data differs from the request's", n, i)
			}
		}
	}

	js2, _, capture2 := sweepRun(t)
	if !bytes.Equal(js, js2) {
		t.Error("two runs with the same seed gave different results")
	}
	if !bytes.Equal(capture, capture2) {
		t.Error("two runs with the same seed gave different captures")
	}
}

// TestUDPPcapTshark hands the sweep's capture to tshark, with IP and UDP
// checksum validation on: nothing may be malformed or carry a bad
// checksum, and tshark's own reassembly must find every fragmented
// datagram and dissect it as UDP.
func TestUDPPcapTshark(t *testing.T) {
	tshark := testtool.Need(t, "tshark")
	_, res, capture := sweepRun(t)
	f := filepath.Join(t.TempDir(), "lan0.pcap")
	if err := os.WriteFile(f, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	// Field names differ between tshark versions: use them only if this
	// one knows them.
	out, err := exec.Command(tshark, "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	fields := map[string]bool{}
	for line := range strings.SplitSeq(string(out), "\n") {
		if cols := strings.Split(line, "\t"); len(cols) > 2 && cols[0] == "F" {
			fields[cols[2]] = true
		}
	}
	for _, f := range []string{"ip.checksum.status", "udp.checksum.status", "ip.reassembled.length", "udp.length"} {
		if !fields[f] {
			t.Fatalf("tshark knows no field %s", f)
		}
	}
	run := func(filter string, fields ...string) [][]string {
		t.Helper()
		args := []string{"-n", "-r", f, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "ip.defragment:TRUE", "-Y", filter, "-T", "fields"}
		for _, x := range fields {
			args = append(args, "-e", x)
		}
		out, err := exec.Command(tshark, args...).Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v", filter, err)
		}
		var rows [][]string
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			if line != "" {
				rows = append(rows, strings.Split(line, "\t"))
			}
		}
		return rows
	}
	if rows := run("_ws.malformed || _ws.expert.severity >= error", "frame.number"); len(rows) != 0 {
		t.Errorf("tshark: %d malformed or erroneous frames, first %v", len(rows), rows[0])
	}
	// Status 0 is "bad" (1 good, 2 unverified).
	if rows := run("ip.checksum.status == 0 || udp.checksum.status == 0", "frame.number"); len(rows) != 0 {
		t.Errorf("tshark: %d frames with a bad checksum, first %v", len(rows), rows[0])
	}
	if rows := run("udp && udp.checksum.status != 1", "frame.number"); len(rows) != 0 {
		t.Errorf("tshark: %d UDP datagrams whose checksum was not verified good, first %v", len(rows), rows[0])
	}
	// Every fragmented message, both ways, reassembled and dissected as
	// UDP with the right length.
	want := map[string]int{}
	for _, row := range udpRows(res) {
		if row.Packets > 1 {
			want[fmt.Sprint(row.Size+header.UDPMinimumSize)] += 2 * (row.Messages + 1)
		}
	}
	got := map[string]int{}
	for _, row := range run("udp && ip.reassembled.length", "ip.reassembled.length", "udp.length") {
		if len(row) != 2 || row[0] != row[1] {
			t.Errorf("tshark: reassembled %v: IP length and UDP length differ", row)
			continue
		}
		got[row[0]]++
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reassembled UDP datagrams by length (-want +got):\n%s", diff)
	}
}

// frameLog records the IPv4 frames that reach a host's card (after the
// link's faults), chained in front of whatever already watches the card.
type frameLog struct {
	arrivals map[fragKey][]fragArrival
}

type fragKey struct {
	src inet.Addr
	id  uint16
}

type fragArrival struct {
	off, end int
	more     bool
}

func watchFrames(h *machine.Host, to inet.Addr) *frameLog {
	fl := &frameLog{arrivals: map[fragKey][]fragArrival{}}
	machinetest.NICs(h)[0].Received().Connect(func(f []byte) {
		if len(f) >= header.EthernetHeaderLen+header.IPv4MinimumSize && header.Ethernet(f).Type() == header.EtherTypeIPv4 {
			ip := header.IPv4(f[header.EthernetHeaderLen:])
			if ip.IsValid(len(ip)) && ip.Dst() == to && ip.IsFragment() {
				k := fragKey{ip.Src(), ip.ID()}
				off := int(ip.FragmentOffset())
				fl.arrivals[k] = append(fl.arrivals[k], fragArrival{off, off + ip.PayloadLength(), ip.More()})
			}
		}
	})
	return fl
}

// tally says, for the fragmented datagrams that reached the card, how many
// arrived whole, how many arrived in part, how many fragment frames came,
// and how many of them were copies of one already there (split into the
// first fragment, offset 0, and the others).
func (fl *frameLog) tally() (whole, partial, frames, dupFirst, dupOther int) {
	for _, as := range fl.arrivals {
		seen := map[int]bool{}
		total, have := -1, 0
		for _, a := range as {
			frames++
			if seen[a.off] {
				if a.off == 0 {
					dupFirst++
				} else {
					dupOther++
				}
				continue
			}
			seen[a.off] = true
			have += a.end - a.off
			if !a.more {
				total = a.end
			}
		}
		if total >= 0 && have == total {
			whole++
		} else {
			partial++
		}
	}
	return
}

// watchDeliveries copies every datagram the host's IP layer hands to UDP
// (header and data), read from the host's memory without charge.
func watchDeliveries(h *machine.Host) *[][]byte {
	var got [][]byte
	machinetest.Inet(h).Delivered.Connect(func(b netdev.Buf) {
		p := make([]byte, b.Len)
		if err := h.Sys.Phys.Read(b.Addr, p); err != nil {
			panic(err)
		}
		got = append(got, p)
	})
	return &got
}

// checkDeliveries compares what reached UDP on pcB with the requests pcA
// put on the wire: each must be one of them, byte for byte, and none may
// be delivered twice.
func checkDeliveries(t *testing.T, got [][]byte, capture []byte) {
	t.Helper()
	_, dgs := readDatagrams(t, capture)
	sent := map[string]bool{}
	for _, d := range dgs {
		if d.src == ipA && d.dst == ipB && d.proto == header.IPv4ProtocolUDP && d.complete {
			sent[string(d.data)] = true
		}
	}
	seen := map[string]bool{}
	for i, p := range got {
		if !sent[string(p)] {
			t.Errorf("datagram %d handed to UDP (%d bytes) is not one pcA sent", i, len(p))
		}
		if seen[string(p)] {
			t.Errorf("datagram %d handed to UDP (%d bytes) twice", i, len(p))
		}
		seen[string(p)] = true
	}
}

// TestUDPReassemblyUnderLoss drops a fifth of the frames reaching pcB
// while the client sends 4 and 8 KiB messages (3 and 6 fragments): a
// message with a fragment missing is lost, never corrupt, and its
// fragments wait for frag_timeout and are freed. The reassembly counters
// must agree exactly with what reached the card.
func TestUDPReassemblyUnderLoss(t *testing.T) {
	const messages = 10
	exp := loadUDP(t, []int{4096, 8192}, messages, 1)
	// The client waits longer for an echo than pcB keeps fragments, so
	// that every incomplete datagram has expired when the run ends.
	udpParams(exp).Timeout = 1500 * sim.Millisecond
	machinetest.InetParams(ownMachine(exp, 1)).FragTimeout = sim.Second
	machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Drop = 0.2
	r := build(t, exp, machine.Options{})
	b := host(t, r, "pcB")
	fl := watchFrames(b, ipB)
	delivered := watchDeliveries(b)
	res := execute(t, r)

	lost := 0
	for _, row := range udpRows(res) {
		t.Logf("%d B: %d echoed, %d lost, %d corrupt", row.Size, row.Messages, row.Lost, row.Corrupt)
		lost += row.Lost
		if row.Corrupt != 0 || row.Messages+row.Lost != messages {
			t.Errorf("%d B: %d echoed + %d lost, %d corrupt; want %d, 0 corrupt", row.Size, row.Messages, row.Lost, row.Corrupt, messages)
		}
	}
	if lost == 0 {
		t.Error("no message lost with 20% of the frames dropped")
	}
	nic := machinetest.NICs(b)[0]
	if d := nic.Port.Stats().Dropped; d == 0 {
		t.Fatal("the link dropped nothing")
	}
	if c := ne2k(nic).Stats(); c.Missed != 0 || c.CRCErrors != 0 {
		t.Fatalf("pcB's card missed %d frames and saw %d CRC errors: the accounting below needs 0", c.Missed, c.CRCErrors)
	}
	whole, partial, frames, _, _ := fl.tally()
	st := machinetest.Inet(b).Stats()
	t.Logf("pcB: %d fragments arrived of %d datagrams (%d whole); inet %+v", frames, whole+partial, whole, st)
	type reasm struct {
		Reqds, OKs, Fails, Timeouts, Overlaps, Evicted, Delivered uint64
	}
	want := reasm{Reqds: uint64(frames), OKs: uint64(whole), Fails: uint64(partial), Timeouts: uint64(partial), Delivered: uint64(whole)}
	got := reasm{st.IPReasmReqds, st.IPReasmOKs, st.IPReasmFails, st.IPReasmTimeouts, st.IPReasmOverlaps, st.IPReasmEvicted, st.UDPInDatagrams}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pcB reassembly counters against the card's arrivals (-want +got):\n%s", diff)
	}
	if partial == 0 || st.IPReasmTimeouts == 0 {
		t.Error("no datagram timed out in reassembly")
	}
	if q, n := machinetest.Inet(b).ReassemblyPending(); q != 0 || n != 0 {
		t.Errorf("reassembly holds %d datagrams, %d bytes at the end; want none", q, n)
	}
	if st.UDPInErrors != 0 || st.UDPInBadChecksum != 0 || st.NoBuffers != 0 {
		t.Errorf("pcB: UDP errors %d, bad checksums %d, no buffers %d; want 0", st.UDPInErrors, st.UDPInBadChecksum, st.NoBuffers)
	}
	checkDeliveries(t, *delivered, r.Net.Captures()[0].Data)
	if len(*delivered) != whole {
		t.Errorf("%d datagrams handed to UDP, %d arrived whole", len(*delivered), whole)
	}
}

// TestUDPReassemblyHeapDrains compares pcB's kernel heap at the end of a
// run with lost fragments against a run without: fragments freed by the
// reassembly timeout must leave nothing behind.
func TestUDPReassemblyHeapDrains(t *testing.T) {
	inUse := func(drop float64) (uint64, inet.Stats) {
		exp := loadUDP(t, []int{4096}, 8, 1)
		udpParams(exp).Timeout = 1500 * sim.Millisecond
		machinetest.InetParams(ownMachine(exp, 1)).FragTimeout = sim.Second
		machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Drop = drop
		r := build(t, exp, machine.Options{})
		execute(t, r)
		b := host(t, r, "pcB")
		now, _ := machinetest.Kernel(b).Allocator().InUse()
		return now, machinetest.Inet(b).Stats()
	}
	clean, _ := inUse(0)
	lossy, st := inUse(0.25)
	if st.IPReasmTimeouts == 0 {
		t.Fatal("no reassembly timed out: the test shows nothing")
	}
	if lossy != clean {
		t.Errorf("pcB heap in use at the end: %d bytes with lost fragments, %d without", lossy, clean)
	}
}

// TestUDPDuplicateFragments delivers 30% of the frames reaching pcB twice.
// A copy of a fragment the datagram already holds is an overlap; a copy of
// the first fragment (offset 0, sent last) arrives after the datagram was
// reassembled and starts a queue of its own, which times out. Every
// message is delivered once and intact.
func TestUDPDuplicateFragments(t *testing.T) {
	const messages = 10
	exp := loadUDP(t, []int{2048, 4096, 8192}, messages, 1)
	udpParams(exp).Timeout = 1500 * sim.Millisecond
	machinetest.InetParams(ownMachine(exp, 1)).FragTimeout = sim.Second
	machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Duplicate = 0.3
	r := build(t, exp, machine.Options{})
	b := host(t, r, "pcB")
	fl := watchFrames(b, ipB)
	delivered := watchDeliveries(b)
	res := execute(t, r)

	for _, row := range udpRows(res) {
		if row.Messages != messages || row.Lost != 0 || row.Corrupt != 0 {
			t.Errorf("%d B: %d echoed, %d lost, %d corrupt; want %d, 0, 0", row.Size, row.Messages, row.Lost, row.Corrupt, messages)
		}
	}
	nic := machinetest.NICs(b)[0]
	if nic.Port.Stats().Duplicated == 0 {
		t.Fatal("the link duplicated nothing")
	}
	if c := ne2k(nic).Stats(); c.Missed != 0 || c.CRCErrors != 0 {
		t.Fatalf("pcB's card missed %d frames and saw %d CRC errors: the accounting below needs 0", c.Missed, c.CRCErrors)
	}
	whole, partial, frames, dupFirst, dupOther := fl.tally()
	st := machinetest.Inet(b).Stats()
	q, bytesHeld := machinetest.Inet(b).ReassemblyPending()
	t.Logf("pcB: %d fragment frames, %d datagrams, %d copies of first fragments, %d of others; pending %d; inet %+v", frames, whole, dupFirst, dupOther, q, st)
	if partial != 0 || whole != 3*(messages+1) {
		t.Fatalf("%d datagrams arrived whole, %d in part; want %d, 0", whole, partial, 3*(messages+1))
	}
	if dupOther == 0 || dupFirst == 0 {
		t.Fatalf("copies of %d first and %d other fragments: the test needs both", dupFirst, dupOther)
	}
	type reasm struct {
		Reqds, OKs, Overlaps, Stale, Delivered uint64
	}
	want := reasm{Reqds: uint64(frames), OKs: uint64(whole), Overlaps: uint64(dupOther), Stale: uint64(dupFirst), Delivered: uint64(whole)}
	got := reasm{st.IPReasmReqds, st.IPReasmOKs, st.IPReasmOverlaps, st.IPReasmTimeouts + uint64(q), st.UDPInDatagrams}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pcB reassembly counters against the card's arrivals (-want +got):\n%s", diff)
	}
	if st.IPReasmFails != st.IPReasmTimeouts || st.IPReasmEvicted != 0 {
		t.Errorf("fails %d, timeouts %d, evicted %d; want fails = timeouts, none evicted", st.IPReasmFails, st.IPReasmTimeouts, st.IPReasmEvicted)
	}
	if q != 0 || bytesHeld != 0 {
		t.Errorf("reassembly holds %d datagrams, %d bytes at the end; want none", q, bytesHeld)
	}
	checkDeliveries(t, *delivered, r.Net.Captures()[0].Data)
}

// TestUDPCorruptFramesDropped flips a bit in 20% of the frames reaching
// pcB: the card's FCS check (or its address filter, when the bit is in
// the destination) refuses every one, so IP and UDP never see a damaged
// datagram, and the messages are lost, not corrupt.
func TestUDPCorruptFramesDropped(t *testing.T) {
	const messages = 20
	exp := loadUDP(t, []int{64, 1472, 4096}, messages, 1)
	udpParams(exp).Timeout = 100 * sim.Millisecond
	machinetest.NICSpecs(&exp.Hosts[1])[0].Faults.Corrupt = 0.2
	r := build(t, exp, machine.Options{})
	b := host(t, r, "pcB")
	delivered := watchDeliveries(b)
	res := execute(t, r)

	lost := 0
	for _, row := range udpRows(res) {
		t.Logf("%d B: %d echoed, %d lost, %d corrupt", row.Size, row.Messages, row.Lost, row.Corrupt)
		lost += row.Lost
		if row.Corrupt != 0 || row.Messages+row.Lost != messages {
			t.Errorf("%d B: %d echoed + %d lost, %d corrupt; want %d, 0 corrupt", row.Size, row.Messages, row.Lost, row.Corrupt, messages)
		}
	}
	nic := machinetest.NICs(b)[0]
	port, card := nic.Port.Stats(), ne2k(nic).Stats()
	if port.Corrupted == 0 || lost == 0 {
		t.Fatalf("%d frames corrupted, %d messages lost: want some of each", port.Corrupted, lost)
	}
	if card.CRCErrors+card.RxFiltered != port.Corrupted {
		t.Errorf("card: %d CRC errors + %d filtered, want the %d frames the link corrupted", card.CRCErrors, card.RxFiltered, port.Corrupted)
	}
	st := machinetest.Inet(b).Stats()
	if st.IPInHdrErrors+st.IPInBadChecksum+st.IPInTruncated+st.IPInAddrErrors+st.IPReasmOverlaps+st.UDPInErrors+st.UDPInBadChecksum+st.ARPBadPackets != 0 {
		t.Errorf("pcB saw damaged packets above the card: %+v", st)
	}
	checkDeliveries(t, *delivered, r.Net.Captures()[0].Data)
}

// threadRun is a run with no workload of its own (noWorkload) in which the
// test spawns simulated threads; problems found inside them are collected
// and reported once the run is over.
type threadRun struct {
	t    *testing.T
	r    *machine.Run
	errs []string
}

func newThreadRun(t *testing.T, exp *machine.Experiment) *threadRun {
	t.Helper()
	noWorkload(exp)
	return &threadRun{t: t, r: build(t, exp, machine.Options{})}
}

func (tr *threadRun) errorf(format string, args ...any) {
	tr.errs = append(tr.errs, fmt.Sprintf(format, args...))
}

// spawn starts body as a thread of host name.
func (tr *threadRun) spawn(name string, body func(th *kernel.Thread, h *machine.Host)) {
	h := host(tr.t, tr.r, name)
	machinetest.Kernel(h).Spawn("test", func(th *kernel.Thread) { body(th, h) })
}

func (tr *threadRun) execute() *report.Result {
	tr.t.Helper()
	res := execute(tr.t, tr.r)
	for _, e := range tr.errs {
		tr.t.Error(e)
	}
	return res
}

// userBuf allocates n bytes for a thread's data and fills them with p.
func userBuf(h *machine.Host, n int, p []byte) memory.Addr {
	a := machinetest.Kernel(h).Kmalloc(n)
	if a == 0 {
		panic("out of kernel memory")
	}
	if p != nil {
		machinetest.Kernel(h).CPU().Write(a, p)
	}
	return a
}

// TestSocketErrors calls the socket interface from a simulated thread on
// pcA and checks each call's error number, then sends to a port nobody
// listens on and checks the ICMP port unreachable that comes back.
func TestSocketErrors(t *testing.T) {
	tr := newThreadRun(t, loadUDP(t, []int{4}, 1, 0))
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		buf := userBuf(h, 65508, nil)
		want := func(what string, got, want inet.Errno) {
			if got != want {
				tr.errorf("%s: %v, want %v", what, got, want)
			}
		}
		_, err := s.SendTo(th, 42, buf, 4, ipB, 9)
		want("sendto on fd 42", err, inet.EBADF)
		_, _, _, err = s.RecvFrom(th, -1, buf, 4, sim.Millisecond)
		want("recvfrom on fd -1", err, inet.EBADF)
		_, err = s.Socket(th, inet.SockType(7))
		want("socket of type 7", err, inet.EPROTONOSUPPORT)

		fd1, err := s.Socket(th, inet.SockDgram)
		want("socket", err, 0)
		fd2, err := s.Socket(th, inet.SockDgram)
		want("second socket", err, 0)
		if fd1 == fd2 {
			tr.errorf("two sockets got the same descriptor %d", fd1)
		}
		want("bind 5000", s.Bind(th, fd1, 5000), 0)
		want("bind the same socket again", s.Bind(th, fd1, 5001), inet.EINVAL)
		want("bind 5000 from another socket", s.Bind(th, fd2, 5000), inet.EADDRINUSE)

		_, err = s.SendTo(th, fd1, buf, 4, ipB, 0)
		want("sendto port 0", err, inet.EDESTADDRREQ)
		_, err = s.SendTo(th, fd1, buf, -1, ipB, 9)
		want("sendto of -1 bytes", err, inet.EINVAL)
		_, err = s.SendTo(th, fd1, buf, 65508, ipB, 9)
		want("sendto of 65508 bytes", err, inet.EMSGSIZE)
		_, err = s.SendTo(th, fd1, buf, 4, inet.Addr{192, 168, 7, 1}, 9)
		want("sendto off the link", err, inet.ENETUNREACH)

		// Nobody listens on port 9 of pcB, which answers each datagram
		// with an ICMP port unreachable. The first datagram waits for
		// ARP (whose queue holds 3 packets, so it must be small); then
		// the largest datagram goes, in 45 fragments.
		n, err := s.SendTo(th, fd2, buf, 4, ipB, 9)
		want("sendto of 4 bytes", err, 0)
		if n != 4 {
			tr.errorf("sendto of 4 bytes sent %d", n)
		}
		th.SleepFor(20 * sim.Millisecond)
		n, err = s.SendTo(th, fd1, buf, 65507, ipB, 9)
		want("sendto of 65507 bytes", err, 0)
		if n != 65507 {
			tr.errorf("sendto of 65507 bytes sent %d", n)
		}
		th.SleepFor(200 * sim.Millisecond)

		want("close", s.Close(th, fd1), 0)
		want("close again", s.Close(th, fd1), inet.EBADF)
		_, err = s.SendTo(th, fd1, buf, 4, ipB, 9)
		want("sendto on a closed socket", err, inet.EBADF)
		// The port is free again.
		fd3, err := s.Socket(th, inet.SockDgram)
		want("socket after close", err, 0)
		if fd3 != fd1 {
			tr.errorf("socket after close got descriptor %d, want the freed %d", fd3, fd1)
		}
		want("bind 5000 after close", s.Bind(th, fd3, 5000), 0)
		want("close", s.Close(th, fd3), 0)
		want("close", s.Close(th, fd2), 0)
	})
	tr.execute()

	a, b := machinetest.Inet(host(t, tr.r, "pcA")).Stats(), machinetest.Inet(host(t, tr.r, "pcB")).Stats()
	t.Logf("pcA %+v", a)
	t.Logf("pcB %+v", b)
	if b.UDPNoPorts != 2 || b.ICMPOutDestUnreachs != 2 || b.IPReasmOKs != 1 {
		t.Errorf("pcB: %d datagrams for no port, %d unreachables sent, %d reassembled; want 2, 2, 1", b.UDPNoPorts, b.ICMPOutDestUnreachs, b.IPReasmOKs)
	}
	if a.ICMPInMsgs != 2 || a.ICMPInErrors != 0 || a.UDPOutDatagrams != 2 || a.IPOutNoRoute != 1 {
		t.Errorf("pcA: %d ICMP messages in (%d errors), %d UDP datagrams out, %d no route; want 2 (0), 2, 1", a.ICMPInMsgs, a.ICMPInErrors, a.UDPOutDatagrams, a.IPOutNoRoute)
	}

	// On the wire: each unreachable quotes the offending datagram's IP
	// header and its first 8 bytes (the UDP header).
	_, dgs := readDatagrams(t, tr.r.Net.Captures()[0].Data)
	var quoted []int
	for _, d := range dgs {
		if d.proto != header.IPv4ProtocolICMP || d.src != ipB {
			continue
		}
		m := header.ICMPv4(d.data)
		if len(m) < header.ICMPv4MinimumSize+header.IPv4MinimumSize+header.UDPMinimumSize {
			t.Errorf("ICMP from pcB of %d bytes", len(m))
			continue
		}
		if m.Type() != header.ICMPv4DstUnreachable || m.Code() != header.ICMPv4PortUnreachable || header.Checksum(m, 0) != 0xFFFF {
			t.Errorf("ICMP from pcB: type %d code %d checksum ok %v; want port unreachable", m.Type(), m.Code(), header.Checksum(m, 0) == 0xFFFF)
			continue
		}
		ih := header.IPv4(m.Payload())
		u := header.UDP(ih[header.IPv4MinimumSize:])
		if !ih.IsValid(len(ih)+1<<16) || ih.Src() != ipA || ih.Dst() != ipB || ih.Protocol() != header.IPv4ProtocolUDP || u.DstPort() != 9 {
			t.Errorf("ICMP from pcB quotes %v -> %v proto %d port %d", ih.Src(), ih.Dst(), ih.Protocol(), u.DstPort())
		}
		quoted = append(quoted, int(u.Length())-header.UDPMinimumSize)
	}
	if !slices.Equal(quoted, []int{4, 65507}) {
		t.Errorf("unreachables on the wire quote datagrams of %v bytes, want [4 65507]", quoted)
	}
}

// TestRecvFromTimeout receives with a 10 ms timeout when nothing comes,
// called at several points between two clock ticks (sleeping ends just
// after a tick, then the thread computes for a while): ETIMEDOUT, after
// 10 ms. The timeout may be rounded up to clock ticks (10 ms at HZ 100),
// never down.
func TestRecvFromTimeout(t *testing.T) {
	phases := []sim.Time{0, 5 * sim.Millisecond, 9500 * sim.Microsecond}
	var waited []sim.Time
	tr := newThreadRun(t, loadUDP(t, []int{4}, 1, 0))
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		c := machinetest.Kernel(h).CPU()
		buf := userBuf(h, 4, nil)
		fd, err := s.Socket(th, inet.SockDgram)
		if err == 0 {
			err = s.Bind(th, fd, 5000)
		}
		if err != 0 {
			tr.errorf("socket and bind: %v", err)
			return
		}
		for _, phase := range phases {
			th.SleepFor(sim.Millisecond)
			c.Charge(c.Clock().Cycles(phase))
			c.Sync()
			start := c.LocalTime()
			_, _, _, err := s.RecvFrom(th, fd, buf, 4, 10*sim.Millisecond)
			c.Sync()
			waited = append(waited, c.LocalTime()-start)
			if err != inet.ETIMEDOUT {
				tr.errorf("recvfrom with nothing sent: %v, want ETIMEDOUT", err)
			}
		}
		s.Close(th, fd)
	})
	tr.execute()
	tick := sim.Second / 100
	for i, d := range waited {
		t.Logf("recvfrom with a 10 ms timeout called %v after a tick: ETIMEDOUT after %v", phases[i], d)
		if d < 10*sim.Millisecond || d > 10*sim.Millisecond+tick+sim.Millisecond {
			t.Errorf("recvfrom with a 10 ms timeout, called %v after a clock tick, returned after %v; want 10 ms to 10 ms + a tick", phases[i], d)
		}
	}
}

// echoRequest builds an ICMP echo request with the given sequence and
// data, identifier and checksum left for the kernel.
func echoRequest(seq uint16, data []byte) []byte {
	m := make([]byte, header.ICMPv4MinimumSize+len(data))
	header.ICMPv4(m).SetType(header.ICMPv4Echo)
	header.ICMPv4(m).SetSequence(seq)
	copy(m[header.ICMPv4MinimumSize:], data)
	return m
}

// TestPing sends ICMP echo requests from a ping socket on pcA to pcB and
// checks the replies, in the program and in the capture: a 56-byte ping
// (the ping program's default) and one that needs fragments both ways.
func TestPing(t *testing.T) {
	for _, n := range []int{56, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testPing(t, n) })
	}
}

func testPing(t *testing.T, size int) {
	const seq = 0x0102
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*3 + 1)
	}
	req := echoRequest(seq, data)
	tr := newThreadRun(t, loadUDP(t, []int{4}, 1, 0))
	var reply []byte
	var from inet.Addr
	tr.spawn("pcA", func(th *kernel.Thread, h *machine.Host) {
		s := machinetest.Inet(h)
		fd, err := s.Socket(th, inet.SockPing)
		if err != 0 {
			tr.errorf("socket: %v", err)
			return
		}
		if _, err := s.SendTo(th, fd, userBuf(h, len(req), nil), 7, ipB, 0); err != inet.EINVAL {
			tr.errorf("sendto of 7 bytes on a ping socket: %v, want EINVAL", err)
		}
		out := userBuf(h, len(req), req)
		if n, err := s.SendTo(th, fd, out, len(req), ipB, 0); err != 0 || n != len(req) {
			tr.errorf("sendto: %d, %v", n, err)
			return
		}
		in := userBuf(h, 65536, nil)
		n, src, _, err := s.RecvFrom(th, fd, in, 65536, 500*sim.Millisecond)
		if err != 0 {
			tr.errorf("recvfrom: %v", err)
			return
		}
		reply = make([]byte, n)
		h.Sys.Phys.Read(in, reply)
		from = src
		s.Close(th, fd)
	})
	tr.execute()
	if reply == nil {
		t.FailNow()
	}

	m := header.ICMPv4(reply)
	if from != ipB || len(m) != len(req) || m.Type() != header.ICMPv4EchoReply || m.Code() != 0 || m.Sequence() != seq ||
		!bytes.Equal(m.Payload(), data) || header.Checksum(m, 0) != 0xFFFF {
		t.Errorf("reply from %v: %d bytes, type %d code %d seq %#x, data equal %v, checksum ok %v; want %v, %d bytes, type 0, seq %#x",
			from, len(m), m.Type(), m.Code(), m.Sequence(), bytes.Equal(m.Payload(), data), header.Checksum(m, 0) == 0xFFFF, ipB, len(req), seq)
	}

	// The capture holds the request and the reply, each complete, with
	// the identifier the kernel chose, good checksums and the data.
	_, dgs := readDatagrams(t, tr.r.Net.Captures()[0].Data)
	var got []string
	for _, d := range dgs {
		if d.proto != header.IPv4ProtocolICMP {
			continue
		}
		w := header.ICMPv4(d.data)
		if !d.complete || len(w) < header.ICMPv4MinimumSize {
			got = append(got, fmt.Sprintf("incomplete %v->%v in %d frames", d.src, d.dst, len(d.frames)))
			continue
		}
		got = append(got, fmt.Sprintf("%v->%v type %d seq %#x ident ok %v checksum ok %v data ok %v frames %d",
			d.src, d.dst, w.Type(), w.Sequence(), w.Ident() == m.Ident(), header.Checksum(w, 0) == 0xFFFF, bytes.Equal(w.Payload(), data), len(d.frames)))
	}
	frames := fragsFor(size + header.ICMPv4MinimumSize - header.UDPMinimumSize)
	want := []string{
		fmt.Sprintf("%v->%v type 8 seq %#x ident ok true checksum ok true data ok true frames %d", ipA, ipB, seq, frames),
		fmt.Sprintf("%v->%v type 0 seq %#x ident ok true checksum ok true data ok true frames %d", ipB, ipA, seq, frames),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ICMP on the wire (-want +got):\n%s", diff)
	}
	a, b := machinetest.Inet(host(t, tr.r, "pcA")).Stats(), machinetest.Inet(host(t, tr.r, "pcB")).Stats()
	if b.ICMPInEchos != 1 || b.ICMPOutEchoReps != 1 || a.ICMPInMsgs != 1 || a.ICMPInErrors != 0 {
		t.Errorf("pcB: %d echoes in, %d replies out; pcA: %d ICMP in, %d errors; want 1, 1, 1, 0", b.ICMPInEchos, b.ICMPOutEchoReps, a.ICMPInMsgs, a.ICMPInErrors)
	}
}

// rogue is a station on lan0 that only sends: frames made by hand.
type rogue struct{}

func (rogue) Receive([]byte) {}

// injectFragments attaches a station to lan0 that, at 50 ms, sends pcB
// the IP payload msg (from pcA's address, protocol proto, ID id) in
// fragments of 1480 bytes, highest offset first, frame after frame.
func injectFragments(t *testing.T, tr *threadRun, proto uint8, id uint16, msg []byte) {
	t.Helper()
	src := ethersim.MAC{2, 0, 0, 0, 0, 0x0e}
	dst := machinetest.NICs(host(t, tr.r, "pcB"))[0].Spec.MAC
	var frames [][]byte
	for off := (len(msg) - 1) / 1480 * 1480; off >= 0; off -= 1480 {
		part := msg[off:min(off+1480, len(msg))]
		f := make([]byte, header.EthernetHeaderLen+header.IPv4MinimumSize, header.EthernetHeaderLen+header.IPv4MinimumSize+len(part)+4)
		header.Ethernet(f).Encode(&header.EthernetFields{Dst: dst, Src: src, Type: header.EtherTypeIPv4})
		ip := header.IPv4(f[header.EthernetHeaderLen:])
		var flags uint16
		if off+len(part) < len(msg) {
			flags = header.IPv4FlagMoreFragments
		}
		ip.Encode(&header.IPv4Fields{TotalLength: uint16(header.IPv4MinimumSize + len(part)), ID: id, Flags: flags,
			FragmentOffset: uint16(off), TTL: 64, Protocol: proto, Src: ipA, Dst: ipB})
		ip.SetChecksum(ip.CalculateChecksum())
		frames = append(frames, ethersim.AppendFCS(append(f, part...)))
	}
	att, err := lan0(t, tr.r).Attach("rogue", rogue{}, ethersim.FaultParams{})
	if err != nil {
		t.Fatal(err)
	}
	next := func() {
		if len(frames) == 0 {
			return
		}
		if err := att.Transmit(frames[0]); err != nil {
			panic(err)
		}
		frames = frames[1:]
	}
	att.OnTxDone = func(ethersim.TxStatus) { next() }
	tr.r.Sched.Schedule(sim.NewEvent("inject", next), 50*sim.Millisecond)
}

// TestReassemblyRefusesOversizeDatagram sends pcB, from a station on the
// segment, an ICMP echo request in fragments whose data ends past 65515
// bytes: glued to its 20-byte header the datagram would exceed the
// largest IPv4 datagram (65535 bytes, the total-length field; RFC 791),
// the "ping of death". Linux drops it (ip_frag_reasm: "Oversized IP
// packet"); the largest legal one is answered.
func TestReassemblyRefusesOversizeDatagram(t *testing.T) {
	for _, tc := range []struct {
		data int // bytes of IP data
		ok   bool
	}{{65515, true}, {65516, false}, {65535, false}} {
		t.Run(fmt.Sprint(tc.data), func(t *testing.T) {
			msg := echoRequest(0x0101, bytes.Repeat([]byte{0xa5}, tc.data-header.ICMPv4MinimumSize))
			header.ICMPv4(msg).SetChecksum(^header.Checksum(msg, 0))
			tr := newThreadRun(t, loadUDP(t, []int{4}, 1, 0))
			tr.spawn("pcB", func(th *kernel.Thread, _ *machine.Host) { th.SleepFor(300 * sim.Millisecond) })
			injectFragments(t, tr, header.IPv4ProtocolICMP, 0x4242, msg)
			tr.execute()
			st := machinetest.Inet(host(t, tr.r, "pcB")).Stats()
			t.Logf("pcB: %d fragments, reassembled %d, failed %d, echoes in %d, replies out %d", st.IPReasmReqds, st.IPReasmOKs, st.IPReasmFails, st.ICMPInEchos, st.ICMPOutEchoReps)
			if st.IPReasmReqds != uint64(fragsFor(tc.data-header.UDPMinimumSize)) {
				t.Fatalf("pcB got %d fragments, want %d", st.IPReasmReqds, fragsFor(tc.data-header.UDPMinimumSize))
			}
			if got := st.IPReasmOKs == 1 && st.ICMPInEchos == 1 && st.ICMPOutEchoReps == 1; got != tc.ok {
				t.Errorf("%d bytes of data (a %d-byte datagram): reassembled %d, echoes in %d, replies %d; want the datagram accepted: %v",
					tc.data, header.IPv4MinimumSize+tc.data, st.IPReasmOKs, st.ICMPInEchos, st.ICMPOutEchoReps, tc.ok)
			}
			if !tc.ok && st.IPReasmFails != 1 {
				t.Errorf("reassembly failures %d, want 1", st.IPReasmFails)
			}
		})
	}
}
