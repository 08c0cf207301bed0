package netiso_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"simkron/internal/isotest"
	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/membench"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/osi/netiso"
	"simkron/stack/osi/tp4"
)

// experiment is two 486DX-33 PCs whose machine file enables the ISO
// family, on one 10 Mbit/s segment, with faults on both cards' links and
// settings of the family per host; the workload does nothing (the test
// spawns its own programs).
func experiment(t testing.TB, faults, iso string, pcap bool) *machine.Experiment {
	t.Helper()
	text := fmt.Sprintf(`[experiment]
name = "iso"
seed = 7
stop_at = "600s"

[[segment]]
name = "lan0"
pcap = %v

[[host]]
name = "a"
machine = "machines/i486dx33.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
ip = "10.0.0.1"
%s
%s

[[host]]
name = "b"
machine = "machines/i486dx33.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0b"
ip = "10.0.0.2"
%s
%s

[workload]
type = "membench"
[workload.membench]
ops = ["copy"]
min_size = "4B"
max_size = "4B"
`, pcap, faults, iso, faults, iso)
	exp, err := machine.LoadExperimentBytes("../../../configs/iso-test.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	// No loop at all: the programs are the test's.
	exp.Workload.Params["membench"].(*membench.Params).Ops = nil
	return exp
}

// rig is a built experiment with programs to run on its hosts.
type rig struct {
	t    testing.TB
	r    *machine.Run
	errs []string
}

func newRig(t testing.TB, exp *machine.Experiment) *rig {
	t.Helper()
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, r: r}
}

func (g *rig) host(name string) *machine.Host {
	for _, h := range g.r.Hosts {
		if h.Name == name {
			return h
		}
	}
	g.t.Fatalf("no host %s", name)
	return nil
}

func (g *rig) errorf(format string, args ...any) {
	g.errs = append(g.errs, fmt.Sprintf(format, args...))
}

// spawn runs body as a thread of host name.
func (g *rig) spawn(name string, body func(t *kernel.Thread, h *machine.Host, f *netiso.Family)) {
	h := g.host(name)
	machinetest.Kernel(h).Spawn("test", func(t *kernel.Thread) { body(t, h, machinetest.ISO(h)) })
}

func (g *rig) run() {
	g.t.Helper()
	res, err := g.r.Execute(machine.Options{})
	if err != nil {
		g.t.Fatal(err)
	}
	if !res.Complete {
		g.t.Fatalf("incomplete: %s", res.Incomplete)
	}
	for _, h := range res.Hosts {
		if h.GuestErrors != 0 {
			g.t.Errorf("%s: %d guest errors: %v", h.Name, h.GuestErrors, h.GuestLog)
		}
	}
	for _, e := range g.errs {
		g.t.Error(e)
	}
}

// tsduBytes is the content of TSDU i: its number, then a pattern.
func tsduBytes(i, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(k*7 + i*13 + 1)
	}
	if n >= 4 {
		binary.BigEndian.PutUint32(b, uint32(i))
	}
	return b
}

// sizeOf is TSDU i's size: from 1 to 6000 octets (up to six DTs).
func sizeOf(i int) int { return (i*977)%6000 + 1 }

var tsap = []byte{0, 9}

// exchange runs a transfer of n TSDUs from a to b: a connects and sends
// them (each in two sendmsg calls, the second with EOT, when it is longer
// than 100 octets), then closes; b accepts, reads each whole, checks its
// order and content, and reads the end of the connection; it waits lag
// before its first read. It returns what b received.
func exchange(g *rig, n int, lag sim.Time) (got, octets *int) {
	got, octets = new(int), new(int)
	g.spawn("b", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
		lfd, _ := f.Socket(t)
		if err := f.Bind(t, lfd, tsap); err != 0 {
			g.errorf("bind: %v", err)
		}
		if err := f.Listen(t, lfd, 1); err != 0 {
			g.errorf("listen: %v", err)
		}
		fd, from, err := f.Accept(t, lfd, 0)
		if err != 0 {
			g.errorf("accept: %v", err)
			return
		}
		if !from.NSAP.SameSystem(machinetest.ISO(g.host("a")).NSAP()) {
			g.errorf("accepted a connection from %v", from.NSAP)
		}
		buf := machinetest.Kernel(h).Kmalloc(8192)
		if lag > 0 {
			t.SleepFor(lag)
		}
		for {
			total := 0
			for {
				k, eot, err := f.RecvMsg(t, fd, buf+memory.Addr(total), 8192-total, 0)
				if err != 0 {
					g.errorf("recvmsg after %d TSDUs: %v", *got, err)
					return
				}
				total += k
				if eot || k == 0 {
					break
				}
			}
			if total == 0 {
				break // the end of the connection
			}
			b := make([]byte, total)
			machinetest.Kernel(h).CPU().System().Phys.Read(buf, b)
			if want := tsduBytes(*got, sizeOf(*got)); !bytes.Equal(b, want) {
				g.errorf("TSDU %d: %d octets, first % x; want %d octets, first % x", *got, len(b), b[:min(8, len(b))], len(want), want[:min(8, len(want))])
			}
			*got++
			*octets += total
		}
		f.Close(t, fd)
		f.Close(t, lfd)
	})
	g.spawn("a", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
		fd, _ := f.Socket(t)
		if err := f.Connect(t, fd, machinetest.ISO(g.host("b")).Address(tsap), 0); err != 0 {
			g.errorf("connect: %v", err)
			return
		}
		buf := machinetest.Kernel(h).Kmalloc(8192)
		for i := range n {
			b := tsduBytes(i, sizeOf(i))
			machinetest.Kernel(h).CPU().Write(buf, b)
			cut := 0
			if len(b) > 100 {
				cut = len(b) / 3
				if _, err := f.SendMsg(t, fd, buf, cut, false); err != 0 {
					g.errorf("sendmsg %d: %v", i, err)
					return
				}
			}
			if _, err := f.SendMsg(t, fd, buf+memory.Addr(cut), len(b)-cut, true); err != 0 {
				g.errorf("sendmsg %d: %v", i, err)
				return
			}
		}
		f.Close(t, fd)
	})
	return got, octets
}

const lossy = `[host.nic.faults]
drop = 0.02
corrupt = 0.01
duplicate = 0.01
reorder = 0.01
reorder_delay = "3ms"`

const shortT1 = `[host.iso.tp4]
retransmit_time = "300ms"`

// TSDUs cross a link that loses 2% of the frames, damages 1%, duplicates
// 1% and reorders 1%: each arrives once, whole and in order, the
// connection is released cleanly, the retransmissions TP4 counts are what
// the faults made necessary, and the family gives back every frame and
// buffer. Its counters agree end to end.
func TestLossyLink(t *testing.T) {
	const n = 400
	g := newRig(t, experiment(t, lossy, shortT1, false))
	got, octets := exchange(g, n, 0)
	g.run()
	if *got != n {
		t.Fatalf("b received %d TSDUs, want %d", *got, n)
	}
	fa, fb := machinetest.ISO(g.host("a")), machinetest.ISO(g.host("b"))
	sa, sb := fa.Stats(), fb.Stats()
	ta, tb := fa.TP4().Stats(), fb.TP4().Stats()
	t.Logf("a: %+v\nb: %+v\nTP4 a: retransmissions %d; b: duplicates %d, out of sequence %d, bad checksums %d", sa, sb, ta.TxRetransmissions, tb.RxDTDuplicates, tb.RxDTOutOfSequence, tb.RxBadChecksum)
	var want uint64
	for i := range n {
		want += uint64(sizeOf(i))
	}
	if sa.TSDUsSent != n || sb.TSDUsReceived != n || sa.OctetsSent != want || sb.OctetsReceived != want || uint64(*octets) != want || sa.Copied != want {
		t.Errorf("counters: a sent %d TSDUs (%d octets, %d copied), b received %d (%d); want %d and %d", sa.TSDUsSent, sa.OctetsSent, sa.Copied, sb.TSDUsReceived, sb.OctetsReceived, n, want)
	}
	if ta.TxRetransmissions == 0 || tb.RxDTDuplicates+tb.RxDTOutOfSequence == 0 {
		t.Error("the faults made no retransmission, duplicate or resequencing")
	}
	if ta.Released != 1 || tb.Released != 1 || tb.RxDR != 1 {
		t.Errorf("releases: a %d, b %d (b got %d DRs)", ta.Released, tb.Released, tb.RxDR)
	}
	for _, f := range []*netiso.Family{fa, fb} {
		if fr, tx := f.Held(); fr != 0 || tx != 0 {
			t.Errorf("the family holds %d frames and %d transmit buffers at the end", fr, tx)
		}
	}
	// Every corrupted frame the cards took was dropped by their FCS
	// check; what reached LLC was whole.
	if tb.RxBadChecksum != 0 || ta.RxBadChecksum != 0 {
		t.Errorf("TP4 saw bad checksums: a %d, b %d", ta.RxBadChecksum, tb.RxBadChecksum)
	}
}

// The socket calls' errors: a TSAP taken twice, data before a connection,
// a connection to a TSAP nobody listens on, a receive that times out, a
// TSDU longer than TP4's whole send queue, a closed descriptor.
func TestSocketErrors(t *testing.T) {
	g := newRig(t, experiment(t, "", "", false))
	want := func(what string, got, want netiso.Errno) {
		if got != want {
			g.errorf("%s: %v, want %v", what, got, want)
		}
	}
	g.spawn("b", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
		lfd, _ := f.Socket(t)
		want("bind", f.Bind(t, lfd, tsap), 0)
		other, _ := f.Socket(t)
		want("bind a taken TSAP", f.Bind(t, other, tsap), netiso.EADDRINUSE)
		want("listen", f.Listen(t, lfd, 1), 0)
		fd, _, err := f.Accept(t, lfd, 0)
		want("accept", err, 0)
		buf := machinetest.Kernel(h).Kmalloc(64)
		_, _, err = f.RecvMsg(t, fd, buf, 64, 100*sim.Millisecond)
		want("recvmsg with nothing sent", err, netiso.ETIMEDOUT)
		n, eot, err := f.RecvMsg(t, fd, buf, 64, 0)
		if n != 0 || !eot && err != 0 {
			g.errorf("recvmsg at the end: %d octets, eot %v, %v", n, eot, err)
		}
		want("close", f.Close(t, fd), 0)
		want("close", f.Close(t, lfd), 0)
		_, _, err = f.RecvMsg(t, fd, buf, 64, 0)
		want("recvmsg on a closed descriptor", err, netiso.EBADF)
	})
	g.spawn("a", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
		buf := machinetest.Kernel(h).Kmalloc(70000)
		fd, _ := f.Socket(t)
		_, err := f.SendMsg(t, fd, buf, 4, true)
		want("sendmsg before connect", err, netiso.ENOTCONN)
		want("connect to nobody's TSAP", f.Connect(t, fd, machinetest.ISO(g.host("b")).Address([]byte{9, 9}), 0), netiso.ECONNREFUSED)
		t.SleepFor(50 * sim.Millisecond) // b listens by now
		fd, _ = f.Socket(t)
		want("connect", f.Connect(t, fd, machinetest.ISO(g.host("b")).Address(tsap), 0), 0)
		_, err = f.SendMsg(t, fd, buf, 70000, true)
		want("sendmsg of more than the send queue", err, netiso.EMSGSIZE)
		t.SleepFor(200 * sim.Millisecond)
		want("close", f.Close(t, fd), 0)
	})
	g.run()
	if r := machinetest.ISO(g.host("b")).TP4().Stats().TxDR; r < 1 {
		t.Errorf("b sent %d DRs, want the refusal", r)
	}
}

// A receiver that does not read closes TP4's window once its receive
// space is full, and reopens it as it reads: the sender waits, nothing is
// lost.
func TestReceiveSpace(t *testing.T) {
	const n = 60
	g := newRig(t, experiment(t, "", "[host.iso]\nrecv_space = \"8KiB\"", false))
	got, _ := exchange(g, n, 2*sim.Second)
	g.run()
	if *got != n {
		t.Fatalf("b received %d TSDUs, want %d", *got, n)
	}
	if st := machinetest.ISO(g.host("b")).Stats(); st.WindowsClosed == 0 {
		t.Errorf("b never closed the window: %+v", st)
	}
}

// A capture of a transfer as Wireshark reads it: every frame of the
// family is LLC at the ISO network SAP with CLNP (good header checksums)
// and COTP decoded (CR, CC, DT, AK, DR, DC), nothing malformed; each
// TPDU's checksum is right (checked octet by octet: tshark 4.0 sums the
// wrong octets for COTP and calls every one bad). Preferences: COTP at
// NSAP selector 0x21 (the family's), CLNP reassembly on.
func TestCaptureTshark(t *testing.T) {
	path := testtool.Need(t, "tshark")
	g := newRig(t, experiment(t, "", "", true))
	exchange(g, 30, 0)
	g.run()
	caps := g.r.Net.Captures()
	file := filepath.Join(t.TempDir(), "iso.pcap")
	if err := os.WriteFile(file, caps[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "-2", "-r", file, "-o", "clnp.tp_nsap_selector:0x21", "-o", "clnp.always_decode_transport:FALSE",
		"-o", "clnp.reassemble:TRUE", "-o", "cotp.reassemble:TRUE", "--disable-heuristic", "ses_cotp",
		"-T", "fields", "-E", "separator=|", "-E", "aggregator=;", "-e", "frame.number", "-e", "_ws.malformed", "-e", "_ws.expert",
		"-e", "llc.dsap", "-e", "clnp.checksum.status", "-e", "cotp.type").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	types := map[string]int{}
	frames := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		r := strings.Split(l, "|")
		if len(r) != 6 {
			t.Fatalf("tshark line %q", l)
		}
		if r[3] == "" {
			continue // not an ISO frame (the hosts' ARP, none here)
		}
		frames++
		if r[1] != "" || r[3] != "0xfe" || r[4] != "1" {
			t.Errorf("frame %s: %q", r[0], r)
		}
		for _, e := range strings.Split(r[2], ";") {
			if e != "" && !strings.Contains(e, "(Note/") && !strings.Contains(e, "(Chat/") && !(strings.Contains(e, "(Error/Checksum)") && strings.Contains(e, "Bad checksum")) {
				t.Errorf("frame %s: %s", r[0], e)
			}
		}
		for _, c := range strings.Split(r[5], ";") {
			types[c]++
		}
	}
	t.Logf("%d ISO frames: COTP %v", frames, types)
	for _, c := range []string{"0x0e", "0x0d", "0x0f", "0x06", "0x08", "0x0c"} {
		if types[c] == 0 {
			t.Errorf("no COTP TPDU of type %s decoded", c)
		}
	}
	checked := 0
	rd, err := pcapgo.NewReader(bytes.NewReader(caps[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		fr, _, err := rd.ReadPacketData()
		if err == io.EOF {
			break
		}
		e := header.Ethernet(fr)
		if !header.IsLengthField(e.Type()) {
			continue
		}
		p := header.CLNP(fr[17 : 14+int(e.Type())])
		if !p.IsValid(len(p)) || p.Type() != header.CLNPTypeDT {
			continue
		}
		n, err := isotest.CheckTPDUs(p.Payload())
		if err != nil {
			t.Error(err)
		}
		checked += n
	}
	if checked < 60 {
		t.Errorf("%d TPDUs checked, want a DT and an AK for each of the 30 TSDUs at least", checked)
	}
}

// BenchmarkRoundTrips reports TP4 socket round trips (1 KiB each way) per
// host second between the two PCs.
func BenchmarkRoundTrips(b *testing.B) {
	const n = 500
	var trips int
	for b.Loop() {
		g := newRig(b, experiment(b, "", "", false))
		g.spawn("b", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
			lfd, _ := f.Socket(t)
			f.Bind(t, lfd, tsap)
			f.Listen(t, lfd, 1)
			fd, _, _ := f.Accept(t, lfd, 0)
			buf := machinetest.Kernel(h).Kmalloc(1024)
			for {
				k, _, err := f.RecvMsg(t, fd, buf, 1024, 0)
				if err != 0 || k == 0 {
					break
				}
				f.SendMsg(t, fd, buf, k, true)
			}
			f.Close(t, fd)
		})
		g.spawn("a", func(t *kernel.Thread, h *machine.Host, f *netiso.Family) {
			fd, _ := f.Socket(t)
			if f.Connect(t, fd, machinetest.ISO(g.host("b")).Address(tsap), 0) != 0 {
				return
			}
			buf := machinetest.Kernel(h).Kmalloc(1024)
			for range n {
				f.SendMsg(t, fd, buf, 1024, true)
				if k, _, _ := f.RecvMsg(t, fd, buf, 1024, 0); k == 1024 {
					trips++
				}
			}
			f.Close(t, fd)
		})
		g.run()
	}
	b.ReportMetric(float64(trips)/b.Elapsed().Seconds(), "round-trips/s")
}

var _ = tp4.StateOpen

// atmExperiment is two DECstation 5000/200s whose only network cards are
// their Yes V2s, each on a TAXI link into one switch that joins VC 0/100
// of the first to 0/200 of the second (classical IP over AAL5, as
// configs/atm-ip.toml), the ISO family on with the settings iso (TOML
// of [host.iso]'s keys) on both, the SunATM capture of link a when pcap.
func atmExperiment(t testing.TB, iso string, pcap bool) *machine.Experiment {
	t.Helper()
	return atmFaultyExperiment(t, iso, "", pcap)
}

// atmFaultyExperiment is atmExperiment with faults (TOML of an
// [[atm_link]]'s keys) on both links.
func atmFaultyExperiment(t testing.TB, iso, faults string, pcap bool) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperimentBytes("../../../configs/iso-atm-test.toml", []byte(atmText(iso, faults, pcap)), nil)
	if err != nil {
		t.Fatal(err)
	}
	exp.Workload.Params["membench"].(*membench.Params).Ops = nil
	return exp
}

func atmText(iso, faults string, pcap bool) string {
	host := func(name, link, ip, peer string, vci int) string {
		return fmt.Sprintf(`[[host]]
name = %q
machine = "machines/ds5000-200.toml"
[[host.atm]]
device = "atm0"
link = %q
ip = %q
[[host.atm.vc]]
ip = %q
vpi = 0
vci = %d
pcr = 30000
[host.atm.driver]
rx_interrupt = "cell"
[host.iso]
enabled = true
%s
`, name, link, ip, peer, vci, iso)
	}
	text := fmt.Sprintf(`[experiment]
name = "iso-atm"
seed = 7
stop_at = "600s"

[[atm_link]]
name = "a"
pcap = %v
%s

[[atm_link]]
name = "b"
%s

[[atm_switch]]
name = "sw0"
ports = ["a", "b"]
[[atm_switch.route]]
in = "a"
vc = "0/100"
out = "b"
out_vc = "0/200"
duplex = true

%s
%s
[workload]
type = "membench"
[workload.membench]
ops = ["copy"]
min_size = "4B"
max_size = "4B"
`, pcap, faults, faults, host("a", "a", "10.1.0.1", "10.1.0.2", 100), host("b", "b", "10.1.0.2", "10.1.0.1", 200))
	return text
}

// An ATM card without an IP address cannot carry the family: the VC
// table names neighbours by address, and the host has none to be named by.
func TestATMNeedsAddress(t *testing.T) {
	text := strings.Replace(atmText("", "", false), `ip = "10.1.0.1"`+"\n[[host.atm.vc]]", `ip = "0.0.0.0"`+"\n[[host.atm.vc]]", 1)
	exp, err := machine.LoadExperimentBytes("../../../configs/iso-atm-test.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	exp.Workload.Params["membench"].(*membench.Params).Ops = nil
	_, err = machine.New(exp, machine.Options{})
	if err == nil || !strings.Contains(err.Error(), "nor an ATM card with an IP address") {
		t.Errorf("got %v, want the family refused for want of an address", err)
	}
}

// Over ATM the family runs on the card's VCs without LLC type 1: TSDUs of
// up to 6000 octets cross as RFC 2684 routed ISO PDUs, each once, whole
// and in order, with 8 KiB TPDUs every DT in one CLNP PDU (none
// segmented: the subnetwork takes 9180 octets), the connection released
// cleanly, every buffer given back; each host's default NSAP names it by
// its IP address, and the routes go through the VC to the peer.
func TestATM(t *testing.T) {
	const n = 200
	g := newRig(t, atmExperiment(t, "[host.iso.tp4]\ntpdu_size = \"8KiB\"", true))
	got, octets := exchange(g, n, 0)
	g.run()
	if *got != n {
		t.Fatalf("b received %d TSDUs, want %d", *got, n)
	}
	fa, fb := machinetest.ISO(g.host("a")), machinetest.ISO(g.host("b"))
	if !fa.Framed() || fa.LLC() != nil {
		t.Fatalf("a's family is not on the ATM card without LLC (framed %v)", fa.Framed())
	}
	if got, want := fa.NSAP().String(), "490001"+"0a0100010000"+"00"; got != want {
		t.Errorf("a's NSAP %s, want %s", got, want)
	}
	var want uint64
	for i := range n {
		want += uint64(sizeOf(i))
	}
	sa, sb := fa.Stats(), fb.Stats()
	if sa.TSDUsSent != n || sb.TSDUsReceived != n || sb.OctetsReceived != want || uint64(*octets) != want {
		t.Errorf("counters: a sent %d TSDUs, b received %d (%d octets); want %d and %d", sa.TSDUsSent, sb.TSDUsReceived, sb.OctetsReceived, n, want)
	}
	ca, cb := fa.CLNP().Stats(), fb.CLNP().Stats()
	t.Logf("a: %+v\nCLNP a: %+v\nCLNP b: %+v", sa, ca, cb)
	if ca.TxSegments+cb.TxSegments+ca.ReasmSegments+cb.ReasmSegments != 0 || ca.TxDT != sb.RxFrames || cb.TxDT != sa.RxFrames {
		t.Errorf("CLNP segmented or lost PDUs: a %+v, b %+v", ca, cb)
	}
	if ca.TxSubnetRefused+ca.TxNoRoute+cb.TxSubnetRefused+cb.TxNoRoute != 0 {
		t.Errorf("PDUs without a way: a %+v, b %+v", ca, cb)
	}
	ta, tb := fa.TP4().Stats(), fb.TP4().Stats()
	if ta.TxRetransmissions != 0 || ta.Released != 1 || tb.Released != 1 {
		t.Errorf("TP4: %d retransmissions, releases a %d b %d", ta.TxRetransmissions, ta.Released, tb.Released)
	}
	for _, f := range []*netiso.Family{fa, fb} {
		if fr, tx := f.Held(); fr != 0 || tx != 0 {
			t.Errorf("the family holds %d frames and %d transmit buffers at the end", fr, tx)
		}
	}
	for _, name := range []string{"a", "b"} {
		d := machinetest.ATMCards(g.host(name))[0].Driver
		if s := d.Stats(); s.RxBadLLC+s.RxBroken+s.Overruns != 0 {
			t.Errorf("%s: driver drops %+v", name, s)
		}
		if s := d.Interface().Stats(); s.NoVC != 0 || s.TxFrames != fa.Stats().TxFrames && name == "a" {
			t.Errorf("%s: interface %+v, family sent %d", name, s, fa.Stats().TxFrames)
		}
	}
	// On link a's capture every PDU is LLC FE-FE-03 and CLNP; the DTs
	// longer than an Ethernet frame holds went whole.
	rd, err := pcapgo.NewReader(bytes.NewReader(g.r.Net.Captures()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	pdus, large, largest := 0, 0, 0
	for {
		rec, _, err := rd.ReadPacketData()
		if err == io.EOF {
			break
		}
		if len(rec) < 8 || !bytes.Equal(rec[4:8], []byte{0xFE, 0xFE, 0x03, header.CLNPNLPID}) {
			t.Fatalf("a record that is not CLNP in LLC FE-FE-03: % x", rec[:min(len(rec), 12)])
		}
		pdus++
		p := header.CLNP(rec[7:])
		if !p.IsValid(len(p)) || int(p.SegmentLength()) != len(p) {
			t.Fatalf("a CLNP PDU of %d octets that does not check (segment length %d)", len(p), p.SegmentLength())
		}
		seg, ok := p.Segmentation()
		if ok && (seg.Offset != 0 || p.MoreSegments() || int(seg.Total) != len(p)) {
			t.Errorf("a segment: offset %d, total %d, %d octets", seg.Offset, seg.Total, len(p))
		}
		if p.Type() == header.CLNPTypeDT && len(p) > 1500 {
			large++
		}
		largest = max(largest, len(p))
	}
	t.Logf("link a: %d CLNP PDUs, %d longer than 1500 octets, the longest %d", pdus, large, largest)
	if large < n/2 || largest < 5000 {
		t.Errorf("%d of %d PDUs longer than an Ethernet frame, the longest %d octets", large, pdus, largest)
	}
}

// Over ATM a lost cell loses its whole AAL5 PDU and a flipped payload bit
// fails its CRC: with cells lost and damaged on both links both ways,
// TP4 retransmits what the driver dropped and every TSDU still arrives
// once, whole and in order, the connection released cleanly.
func TestATMLossy(t *testing.T) {
	const n = 150
	faults := "[atm_link.faults]\ncell_loss = 0.0005\nbit_error = 0.0002\n[atm_link.net_faults]\ncell_loss = 0.0005\nbit_error = 0.0002"
	g := newRig(t, atmFaultyExperiment(t, "[host.iso.tp4]\ntpdu_size = \"8KiB\"\nretransmit_time = \"300ms\"", faults, false))
	got, _ := exchange(g, n, 0)
	g.run()
	fa, fb := machinetest.ISO(g.host("a")), machinetest.ISO(g.host("b"))
	ta, tb := fa.TP4().Stats(), fb.TP4().Stats()
	if *got != n {
		t.Fatalf("b received %d TSDUs, want %d\nTP4 a %+v\nTP4 b %+v\nCLNP a %+v\nCLNP b %+v", *got, n, ta, tb, fa.CLNP().Stats(), fb.CLNP().Stats())
	}
	var dropped uint64
	for _, name := range []string{"a", "b"} {
		s := machinetest.ATMCards(g.host(name))[0].Driver.Stats()
		dropped += s.RxBadCRC + s.RxBroken + s.RxBadLength + s.RxSeqErrors
	}
	t.Logf("TP4 a: %d retransmissions; b: %d; PDUs the drivers dropped: %d", ta.TxRetransmissions, tb.TxRetransmissions, dropped)
	if dropped == 0 || ta.TxRetransmissions+tb.TxRetransmissions == 0 {
		t.Error("the faults dropped no PDU, or TP4 retransmitted nothing")
	}
	if ta.Released != 1 || tb.Released != 1 {
		t.Errorf("releases: a %d, b %d", ta.Released, tb.Released)
	}
	if ta.RxBadChecksum+tb.RxBadChecksum != 0 {
		t.Errorf("TP4 saw bad checksums (AAL5's CRC should have dropped them): a %d, b %d", ta.RxBadChecksum, tb.RxBadChecksum)
	}
	for _, f := range []*netiso.Family{fa, fb} {
		if fr, tx := f.Held(); fr != 0 || tx != 0 {
			t.Errorf("the family holds %d frames and %d transmit buffers at the end", fr, tx)
		}
	}
}
