package atmnet_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"simkron/ethersim/atmnet"
	"simkron/internal/testtool"
	"simkron/sim"
	"simkron/stack/header"
)

// sink records the cells an end delivers, with their arrival times.
type sink struct {
	k     *sim.Scheduler
	cells []atmnet.Cell
	at    []sim.Time
}

func (s *sink) ReceiveCell(c *atmnet.Cell) {
	s.cells = append(s.cells, *c)
	s.at = append(s.at, s.k.Now())
}

// sender sends cells from an end back to back, as fast as the line
// takes them, starting at start.
type sender struct {
	end   *atmnet.End
	cells []atmnet.Cell
	sent  []sim.Time
}

func newSender(k *sim.Scheduler, e *atmnet.End, start sim.Time, cells []atmnet.Cell) *sender {
	s := &sender{end: e, cells: cells}
	e.OnTxDone = s.next
	k.Schedule(sim.NewEvent("start", s.next), start)
	return s
}

func (s *sender) next() {
	if len(s.sent) == len(s.cells) {
		return
	}
	c := s.cells[len(s.sent)]
	s.sent = append(s.sent, s.end.Link().Network().Scheduler().Now())
	if err := s.end.Send(&c); err != nil {
		panic(err)
	}
}

func cellOn(vc atmnet.VC, pt uint8, fill byte) atmnet.Cell {
	var c atmnet.Cell
	c.SetWord(vc.Word(pt))
	for i := atmnet.HeaderSize; i < atmnet.CellSize; i++ {
		c[i] = fill + byte(i)
	}
	return c
}

// The hardware HEC agrees with the software view and the two patterns
// I.361 fixes.
func TestHEC(t *testing.T) {
	if got := atmnet.HEC([]byte{0, 0, 0, 1}); got != 0x52 {
		t.Errorf("idle cell HEC %#02x, want 0x52", got)
	}
	if got := atmnet.HEC([]byte{0, 0, 0, 0}); got != 0x55 {
		t.Errorf("unassigned cell HEC %#02x, want 0x55", got)
	}
	for w := uint32(0); w < 1<<20; w += 7919 {
		var h [4]byte
		binary.BigEndian.PutUint32(h[:], w*2654435761)
		if a, b := atmnet.HEC(h[:]), header.ATMHEC(h[:]); a != b {
			t.Fatalf("HEC(% x): hardware %#02x, header view %#02x", h, a, b)
		}
	}
	c := cellOn(atmnet.VC{VPI: 2, VCI: 300}, 1, 0)
	for bit := range 40 {
		d := c
		d[bit/8] ^= 0x80 >> (bit % 8)
		if d.HECOK() || !d.CorrectHEC() || d != c {
			t.Errorf("bit %d: not detected or not corrected", bit)
		}
	}
	if atmnet.CRC32Update(atmnet.CRC32Init, []byte("123456789")) != ^uint32(0xFC891918) {
		t.Error("hardware CRC-32 misses the catalogue check value 0xFC891918")
	}
}

func TestLinkTiming(t *testing.T) {
	k := sim.NewScheduler(1)
	n := atmnet.New(k)
	p := atmnet.DefaultLinkParams()
	l, err := n.NewLink("l0", p)
	if err != nil {
		t.Fatal(err)
	}
	if p.CellTime() != 4240*sim.Nanosecond {
		t.Errorf("cell time %v, want 4.24us", p.CellTime())
	}
	// 52 bytes at 94.5 Mbit/s: 416 bits / 94.5e6 = 4402.116 ns, rounded up.
	if p.SlotTime() != 4402117*sim.Picosecond {
		t.Errorf("slot %v, want 4402117ps", p.SlotTime())
	}
	if c := p.PayloadCeiling(); c < 87.2e6 || c > 87.3e6 {
		t.Errorf("48-byte payload ceiling %.0f bit/s, want 87.2-87.3 Mbit/s", c)
	}
	var bs sink
	bs.k = k
	l.B().SetReceiver(&bs)
	var as sink
	as.k = k
	l.A().SetReceiver(&as)
	vc := atmnet.VC{VPI: 0, VCI: 32}
	cells := []atmnet.Cell{cellOn(vc, 0, 1), cellOn(vc, 0, 2), cellOn(vc, 1, 3)}
	s := newSender(k, l.A(), 0, cells)
	back := newSender(k, l.B(), 0, cells[:1]) // full duplex: both at once
	k.Run()
	if d := cmp.Diff(cells, bs.cells); d != "" {
		t.Errorf("cells at b (-want +got):\n%s", d)
	}
	for i, at := range bs.at {
		if want := s.sent[i] + p.CellTime() + p.Propagation; at != want {
			t.Errorf("cell %d arrived at %v, want %v", i, at, want)
		}
		if i > 0 && s.sent[i]-s.sent[i-1] != p.SlotTime() {
			t.Errorf("cells %d and %d sent %v apart, want a slot", i-1, i, s.sent[i]-s.sent[i-1])
		}
	}
	if len(as.cells) != 1 || as.at[0] != back.sent[0]+p.CellTime()+p.Propagation {
		t.Errorf("the reverse direction delivered %d cells at %v", len(as.cells), as.at)
	}
	if err := l.A().Send(&cells[0]); err != nil {
		t.Fatal(err)
	}
	if err := l.A().Send(&cells[0]); err == nil {
		t.Error("Send during a slot accepted")
	}
}

func TestLoopback(t *testing.T) {
	k := sim.NewScheduler(1)
	p := atmnet.DefaultLinkParams()
	p.Propagation = 5 * sim.Nanosecond // a short cable
	l, err := atmnet.New(k).NewLoopback("lo0", p)
	if err != nil {
		t.Fatal(err)
	}
	if l.B() != nil {
		t.Error("a loop-back has a second end")
	}
	s := sink{k: k}
	l.A().SetReceiver(&s)
	c := []atmnet.Cell{cellOn(atmnet.VC{VCI: 40}, 1, 9)}
	newSender(k, l.A(), sim.Microsecond, c)
	k.Run()
	if len(s.cells) != 1 || s.cells[0] != c[0] || s.at[0] != sim.Microsecond+4245*sim.Nanosecond {
		t.Errorf("loop-back delivered %v at %v", len(s.cells), s.at)
	}
}

func TestParamsValidate(t *testing.T) {
	p := atmnet.DefaultLinkParams()
	p.PayloadRate = 99 * sim.Mbps // a 53-byte cell would not fit its slot
	if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), "payload_rate:") {
		t.Errorf("payload_rate above rate·52/53: %v", err)
	}
	p.PayloadRate = 98113 * sim.Kbps
	if err := p.Validate(); err != nil {
		t.Errorf("payload_rate just under rate·52/53: %v", err)
	}
	if err := (atmnet.FaultParams{CellLoss: 1.5}).Validate(); err == nil {
		t.Error("cell_loss 1.5 accepted")
	}
	if err := (atmnet.SwitchParams{QueueCells: 0}).Validate(); err == nil {
		t.Error("queue_cells 0 accepted")
	}
	n := atmnet.New(sim.NewScheduler(1))
	if _, err := n.NewLink("x", atmnet.DefaultLinkParams()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.NewSwitch("x", atmnet.DefaultSwitchParams()); err == nil {
		t.Error("two components called x")
	}
}

// faultRun sends 4000 cells over a link with faults and returns what
// arrived.
func faultRun(t *testing.T, seed uint64, f atmnet.FaultParams) ([]atmnet.Cell, atmnet.EndStats) {
	k := sim.NewScheduler(seed)
	l, _ := atmnet.New(k).NewLink("l0", atmnet.DefaultLinkParams())
	if err := l.B().SetFaults(f); err != nil {
		t.Fatal(err)
	}
	s := sink{k: k}
	l.B().SetReceiver(&s)
	var cells []atmnet.Cell
	for i := range 4000 {
		cells = append(cells, cellOn(atmnet.VC{VCI: uint16(32 + i%5)}, uint8(i%2), byte(i)))
	}
	newSender(k, l.A(), 0, cells)
	k.Run()
	return s.cells, l.B().Stats()
}

func TestFaults(t *testing.T) {
	f := atmnet.FaultParams{CellLoss: 0.01, BitError: 0.05}
	got, st := faultRun(t, 3, f)
	again, _ := faultRun(t, 3, f)
	if d := cmp.Diff(got, again); d != "" {
		t.Fatal("the same seed gave different cells")
	}
	other, _ := faultRun(t, 4, f)
	if cmp.Equal(got, other) {
		t.Error("another seed gave the same faults")
	}
	if st.Lost < 20 || st.Lost > 65 || st.Corrupted < 150 || st.Corrupted > 260 {
		t.Errorf("lost %d (expect about 40), corrupted %d (about 200)", st.Lost, st.Corrupted)
	}
	if st.RxCells != 4000-st.Lost || uint64(len(got)) != st.RxCells {
		t.Errorf("%d delivered, stats say %d of 4000 with %d lost", len(got), st.RxCells, st.Lost)
	}
	bad := 0
	for _, c := range got {
		if !c.HECOK() {
			bad++
		}
	}
	// 40 of a cell's 424 bits are covered by the HEC.
	if bad == 0 || bad >= int(st.Corrupted) {
		t.Errorf("%d cells with header errors among %d corrupted", bad, st.Corrupted)
	}
}

// switchRig: hosts h0..h2 on ports 0..2 of one switch.
type switchRig struct {
	k     *sim.Scheduler
	net   *atmnet.Network
	sw    *atmnet.Switch
	hosts []*atmnet.End
	sinks []*sink
}

func newSwitchRig(t *testing.T, p atmnet.SwitchParams, hosts int) *switchRig {
	k := sim.NewScheduler(1)
	r := &switchRig{k: k, net: atmnet.New(k)}
	var err error
	if r.sw, err = r.net.NewSwitch("sw0", p); err != nil {
		t.Fatal(err)
	}
	for i := range hosts {
		l, err := r.net.NewLink("h"+string(rune('0'+i)), atmnet.DefaultLinkParams())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.sw.Connect(l.B()); err != nil {
			t.Fatal(err)
		}
		s := &sink{k: k}
		l.A().SetReceiver(s)
		r.hosts = append(r.hosts, l.A())
		r.sinks = append(r.sinks, s)
	}
	return r
}

func TestSwitchRouting(t *testing.T) {
	r := newSwitchRig(t, atmnet.DefaultSwitchParams(), 3)
	a, b := atmnet.VC{VCI: 100}, atmnet.VC{VPI: 3, VCI: 200}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.sw.Route(0, a, 1, b))
	must(r.sw.Route(1, b, 0, a))
	if r.sw.Route(0, a, 2, b) == nil || r.sw.Route(0, a, 7, b) == nil {
		t.Error("a duplicate route or one to a missing port accepted")
	}
	var out []atmnet.Cell
	for i := range 10 {
		out = append(out, cellOn(a, uint8(i&1), byte(i)))
	}
	bad := cellOn(a, 0, 99)
	bad[1] ^= 0x10 // header error
	out = append(out, bad, cellOn(atmnet.VC{VCI: 555}, 0, 1))
	s0 := newSender(r.k, r.hosts[0], 0, out)
	newSender(r.k, r.hosts[1], 0, []atmnet.Cell{cellOn(b, 1, 7)})
	r.k.Run()
	if len(r.sinks[1].cells) != 10 || len(r.sinks[0].cells) != 1 || len(r.sinks[2].cells) != 0 {
		t.Fatalf("delivered %d/%d/%d cells, want 1/10/0", len(r.sinks[0].cells), len(r.sinks[1].cells), len(r.sinks[2].cells))
	}
	p := atmnet.DefaultLinkParams()
	for i, c := range r.sinks[1].cells {
		want := out[i]
		want.SetVC(b) // relabelled, new HEC, payload untouched
		if c != want || !c.HECOK() || c.PT() != uint8(i&1) {
			t.Errorf("cell %d: % x, want % x", i, c[:5], want[:5])
		}
		// Through two links and the switch: each hop a cell time and the
		// propagation, plus the switch latency.
		if i == 0 {
			if at, w := r.sinks[1].at[0], s0.sent[0]+2*(p.CellTime()+p.Propagation)+atmnet.DefaultSwitchLatency; at != w {
				t.Errorf("first cell at %v, want %v", at, w)
			}
		}
	}
	if c := r.sinks[0].cells[0]; c.VC() != a {
		t.Errorf("reverse route relabelled to %v, want %v", c.VC(), a)
	}
	want := atmnet.SwitchStats{Cells: 13, Forwarded: 11, BadHEC: 1, Unrouted: 1}
	if d := cmp.Diff(want, r.sw.Stats()); d != "" {
		t.Errorf("switch stats (-want +got):\n%s", d)
	}
}

// Two inputs at line rate into one output: the output can send one cell
// a slot, so its queue grows by one cell every two slots and drops when
// full.
func TestSwitchQueueDrops(t *testing.T) {
	p := atmnet.DefaultSwitchParams()
	p.QueueCells = 16
	r := newSwitchRig(t, p, 3)
	for in := range 2 {
		if err := r.sw.Route(in, atmnet.VC{VCI: uint16(40 + in)}, 2, atmnet.VC{VCI: uint16(40 + in)}); err != nil {
			t.Fatal(err)
		}
	}
	const each = 100
	for in := range 2 {
		var cells []atmnet.Cell
		for i := range each {
			cells = append(cells, cellOn(atmnet.VC{VCI: uint16(40 + in)}, 0, byte(i)))
		}
		newSender(r.k, r.hosts[in], 0, cells)
	}
	r.k.Run()
	st := r.sw.Stats()
	port := r.sw.Ports()[2].Stats()
	got := uint64(len(r.sinks[2].cells))
	if st.QueueDrops == 0 || got+st.QueueDrops != 2*each || port.TxCells != got || port.QueuePeak != 16 {
		t.Errorf("delivered %d, dropped %d of %d; port sent %d, peak %d", got, st.QueueDrops, 2*each, port.TxCells, port.QueuePeak)
	}
	// About half the excess is lost: 200 offered in 100 slots, ~100 sent
	// in that time plus the 16 queued.
	if got < 110 || got > 125 {
		t.Errorf("%d cells got through, want about 116", got)
	}
}

// A tap writes the PDUs sent from an end as SunATM records: AAL5 PDUs
// with an LLC header as their SDU, type LLC; raw PDUs as their cells'
// payloads, type 0.
func TestTapAndTrace(t *testing.T) {
	k := sim.NewScheduler(1)
	net := atmnet.New(k)
	var trace bytes.Buffer
	tw := atmnet.NewTraceWriter(&trace)
	net.Trace.Connect(tw.Record)
	l, _ := net.NewLoopback("lo0", atmnet.DefaultLinkParams())
	s := sink{k: k}
	l.A().SetReceiver(&s)
	var pcap bytes.Buffer
	if err := l.A().Tap(&pcap); err != nil {
		t.Fatal(err)
	}
	ipvc, rawvc := atmnet.VC{VPI: 1, VCI: 100}, atmnet.VC{VCI: 33}
	var cells []atmnet.Cell
	var sdus [][]byte
	for i := range 3 {
		sdu := llcUDP(t, 20+700*i, uint16(i))
		sdus = append(sdus, sdu)
		cells = append(cells, aal5Cells(ipvc, sdu)...)
	}
	raw := []atmnet.Cell{cellOn(rawvc, 0, 1), cellOn(rawvc, 1, 2)}
	// Interleave the raw PDU's first cell into the middle of the IP ones.
	mid := len(cells) / 2
	cells = append(cells[:mid], append([]atmnet.Cell{raw[0]}, cells[mid:]...)...)
	cells = append(cells, raw[1])
	newSender(k, l.A(), 0, cells)
	k.Run()
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	recs := readSunATM(t, pcap.Bytes())
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	for i, sdu := range sdus {
		want := append([]byte{0x80 | atmnet.SunATMTypeLLC, 1, 0, 100}, sdu...)
		if !bytes.Equal(recs[i], want) {
			t.Errorf("record %d: % x..., want % x...", i, recs[i][:12], want[:12])
		}
	}
	wantRaw := append([]byte{0x80, 0, 0, 33}, append(raw[0][5:], raw[1][5:]...)...)
	if !bytes.Equal(recs[3], wantRaw) {
		t.Errorf("raw record % x..., want % x...", recs[3][:8], wantRaw[:8])
	}
	lines := strings.Split(strings.TrimSpace(trace.String()), "\n")
	if len(lines) != 1+2*len(cells) || !strings.HasPrefix(lines[0], "# simkron atm cell trace v1") {
		t.Fatalf("trace: %d lines for %d cells sent and received", len(lines), len(cells))
	}
	f := strings.Fields(lines[1])
	if len(f) != 7 || f[0] != "0" || f[1] != "lo0.a" || f[2] != "tx" || f[3] != "1/100" || len(f[5]) != 10 || len(f[6]) != 96 {
		t.Errorf("first trace line %q", lines[1])
	}
	tsharkSunATM(t, pcap.Bytes(), 4)
}

// llcUDP returns an LLC/SNAP-encapsulated IPv4/UDP datagram with n bytes
// of data.
func llcUDP(t *testing.T, n int, id uint16) []byte {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: id, Protocol: layers.IPProtocolUDP,
		SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 7000, DstPort: 7001}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		ip, udp, gopacket.Payload(bytes.Repeat([]byte{'u'}, n))); err != nil {
		t.Fatal(err)
	}
	return append([]byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}, buf.Bytes()...)
}

// aal5Cells segments sdu into the cells of an AAL5 PDU on vc.
func aal5Cells(vc atmnet.VC, sdu []byte) []atmnet.Cell {
	pdu := header.AAL5(make([]byte, header.AAL5PDULen(len(sdu))))
	copy(pdu, sdu)
	pdu.Encode(&header.AAL5Fields{Length: uint16(len(sdu))})
	var out []atmnet.Cell
	for off := 0; off < len(pdu); off += 48 {
		var c atmnet.Cell
		pt := uint8(0)
		if off+48 == len(pdu) {
			pt = 1
		}
		c.SetWord(vc.Word(pt))
		copy(c[5:], pdu[off:])
		out = append(out, c)
	}
	return out
}

func readSunATM(t *testing.T, b []byte) [][]byte {
	t.Helper()
	if len(b) < 24 || binary.LittleEndian.Uint32(b[20:]) != 123 {
		t.Fatalf("not a SunATM pcap: % x", b[:min(len(b), 24)])
	}
	var out [][]byte
	for p := b[24:]; len(p) >= 16; {
		n := int(binary.LittleEndian.Uint32(p[8:]))
		out = append(out, p[16:16+n])
		p = p[16+n:]
	}
	return out
}

// tsharkSunATM has Wireshark read a SunATM capture: every record
// dissected, nothing malformed, no error or warning, IP and UDP checksums
// validated, VPI/VCI shown.
func tsharkSunATM(t *testing.T, pcap []byte, records int) {
	t.Helper()
	path, ok := testtool.Have(t, "tshark")
	if !ok {
		return
	}
	file := filepath.Join(t.TempDir(), "atm.pcap")
	if err := os.WriteFile(file, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "-n", "-r", file, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
		"-T", "fields", "-e", "atm.vpi", "-e", "atm.vci", "-e", "frame.protocols", "-e", "udp.checksum.status",
		"-e", "_ws.malformed", "-e", "_ws.expert").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != records {
		t.Fatalf("tshark read %d records, want %d:\n%s", len(lines), records, out)
	}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 6 || f[4] != "" || strings.Contains(f[5], "Error/") || strings.Contains(f[5], "Warning/") {
			t.Errorf("tshark record %d: %q", i, l)
			continue
		}
		if i < records-1 && (f[0] != "1" || f[1] != "100" || f[2] != "atm:llc:ip:udp:data" || f[3] != "1") {
			t.Errorf("tshark record %d: VPI %s VCI %s protocols %s UDP checksum status %s", i, f[0], f[1], f[2], f[3])
		}
		if i == records-1 && (f[0] != "0" || f[1] != "33") {
			t.Errorf("tshark raw record: VPI %s VCI %s", f[0], f[1])
		}
	}
}

func BenchmarkSwitchCells(b *testing.B) {
	k := sim.NewScheduler(1)
	net := atmnet.New(k)
	sw, _ := net.NewSwitch("sw0", atmnet.DefaultSwitchParams())
	la, _ := net.NewLink("a", atmnet.DefaultLinkParams())
	lb, _ := net.NewLink("b", atmnet.DefaultLinkParams())
	sw.Connect(la.B())
	sw.Connect(lb.B())
	sw.Route(0, atmnet.VC{VCI: 40}, 1, atmnet.VC{VCI: 41})
	var got int
	lb.A().SetReceiver(counter{&got})
	c := cellOn(atmnet.VC{VCI: 40}, 0, 0)
	left := b.N
	la.A().OnTxDone = func() {
		if left > 0 {
			left--
			la.A().Send(&c)
		}
	}
	b.ResetTimer()
	la.A().OnTxDone()
	k.Run()
	if got != b.N {
		b.Fatalf("%d of %d cells arrived", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cells/s")
}

type counter struct{ n *int }

func (c counter) ReceiveCell(*atmnet.Cell) { *c.n++ }
