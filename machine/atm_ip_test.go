package machine_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"simkron/internal/isotest"
	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
)

// configs/atm-ip.toml: the sweeps over classical IP over AAL5 and TP4 over
// CLNP over AAL5 complete with nothing lost, every PDU's first cell is
// seen by the card's observers once, and the SunATM capture of link a
// reads in tshark as VPI/VCI 0/100 carrying LLC/SNAP, IP and UDP or TCP
// with good checksums, or LLC FE-FE-03, CLNP (good header checksums) and
// COTP (CR, CC, DT, AK, DR, DC), nothing malformed, no expert warning but
// tshark 4.0's false bad COTP checksum (it sums the wrong octets: each
// TPDU's checksum is checked octet by octet here instead); no CLNP PDU is
// segmented, and DTs longer than an Ethernet frame holds go whole.
func TestATMIPConfig(t *testing.T) {
	exp, err := machine.LoadExperiment("../configs/atm-ip.toml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	firsts := map[string]int{}
	for _, h := range r.Hosts {
		machinetest.ATMCards(h)[0].Received().Connect(func(pdu []byte) {
			if len(pdu) != 48 {
				t.Errorf("%s: the listener got %d bytes of a first cell", h.Name, len(pdu))
			}
			firsts[h.Name]++
		})
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	for _, sw := range []string{"udp", "tcp", "tp4"} {
		for _, row := range section[[]latency.Row](res, sw) {
			if row.Lost != 0 || row.Messages == 0 {
				t.Errorf("%s %d bytes: %d messages, %d lost", sw, row.Size, row.Messages, row.Lost)
			}
			// Every message's receive is timed (TP4's from the first cell
			// of the PDU its DT is in), on both hosts.
			if row.Receive.N != 2*row.Messages || row.Send.N != 2*row.Messages || row.Receive.Min <= 0 {
				t.Errorf("%s %d bytes: %d sends and %d receives timed for %d messages (receive min %v)", sw, row.Size, row.Send.N, row.Receive.N, row.Messages, row.Receive.Min)
			}
		}
	}
	for i, h := range r.Hosts {
		d := machinetest.ATMCards(h)[0].Driver.Stats()
		if d.Overruns+d.RxBroken+d.RxBadCRC+d.RxBadLength != 0 {
			t.Errorf("%s: drops %+v", h.Name, d)
		}
		if d.TxPaced == 0 {
			t.Errorf("%s: no cell was paced", h.Name)
		}
		// The run stops when the programs end: the last PDU (the closing
		// FIN's ACK) may be on its way then, its first cell in, the rest
		// in the network.
		peer := machinetest.ATMCards(r.Hosts[1-i])[0]
		inNet := peer.End.Stats().TxCells - machinetest.ATMCards(h)[0].End.Stats().RxCells
		if n := uint64(firsts[h.Name]); n != d.RxPDUs && !(n == d.RxPDUs+1 && inNet > 0) {
			t.Errorf("%s: the observers saw %d first cells, the driver received %d PDUs (%d cells in the network)", h.Name, n, d.RxPDUs, inNet)
		}
		if machinetest.InetParams(h.Spec).MTU != 9180 {
			t.Errorf("%s: IP MTU %d", h.Name, machinetest.InetParams(h.Spec).MTU)
		}
	}
	var capture []byte
	for _, c := range r.Net.Captures() {
		if c.FileName() == "a.pcap" {
			capture = c.Data
		}
	}
	if capture == nil {
		t.Fatal("no capture a.pcap")
	}
	rows := testtool.TsharkFields(t, capture, []string{"udp.check_checksum:TRUE", "clnp.tp_nsap_selector:0x21", "clnp.always_decode_transport:FALSE", "clnp.reassemble:TRUE", "cotp.reassemble:TRUE"},
		"atm.vpi", "atm.vci", "frame.protocols", "ip.checksum.status", "udp.checksum.status", "tcp.checksum.status", "_ws.expert.severity",
		"llc.dsap", "clnp.checksum.status", "cotp.type", "_ws.expert")
	udp, tcp, clnp := 0, 0, 0
	cotp := map[string]int{}
	for _, f := range rows {
		p := f["frame.protocols"]
		if strings.Contains(p, ":clnp") {
			clnp++
			if f["atm.vpi"] != "0" || f["atm.vci"] != "100" || !strings.HasPrefix(p, "sunatm:atm:llc:osi:clnp:cotp") && !strings.HasPrefix(p, "atm:llc:osi:clnp:cotp") ||
				f["llc.dsap"] != "0xfe" || f["clnp.checksum.status"] != "1" || testtool.Malformed(f) {
				t.Errorf("frame %s: %v", f["frame.number"], f)
			}
			for e := range strings.SplitSeq(f["_ws.expert"], ",") {
				if e != "" && !strings.Contains(e, "(Note/") && !strings.Contains(e, "(Chat/") && e != "Expert Info (Error/Checksum): Bad checksum" {
					t.Errorf("frame %s: %s", f["frame.number"], e)
				}
			}
			for c := range strings.SplitSeq(f["cotp.type"], ",") {
				cotp[c]++
			}
			continue
		}
		switch {
		case f["atm.vpi"] != "0" || f["atm.vci"] != "100" || !strings.HasPrefix(p, "sunatm:atm:llc:ip") && !strings.HasPrefix(p, "atm:llc:ip"):
			t.Errorf("frame %s: VC %s/%s, protocols %q", f["frame.number"], f["atm.vpi"], f["atm.vci"], p)
		case testtool.Malformed(f) || testtool.Severity(f) >= testtool.ExpertWarn:
			t.Errorf("frame %s: malformed or expert warning: %v", f["frame.number"], f)
		case f["ip.checksum.status"] != "1" && f["ip.checksum.status"] != "":
			t.Errorf("frame %s: IP checksum status %q", f["frame.number"], f["ip.checksum.status"])
		case strings.Contains(p, ":udp") && f["udp.checksum.status"] != "1", strings.Contains(p, ":tcp") && f["tcp.checksum.status"] != "1":
			t.Errorf("frame %s: checksum status udp %q tcp %q", f["frame.number"], f["udp.checksum.status"], f["tcp.checksum.status"])
		}
		switch {
		case strings.Contains(p, ":udp"):
			udp++
		case strings.Contains(p, ":tcp"):
			tcp++
		}
	}
	t.Logf("%d SunATM records: %d UDP, %d TCP, %d CLNP (COTP %v)", len(rows), udp, tcp, clnp, cotp)
	// Each measured or warm-up message goes out and comes back: UDP
	// datagrams are reassembled by tshark, so one frame shows each.
	if udp < 2*9*7 || tcp < 2*12*7 || clnp < 2*12*7 {
		t.Errorf("%d frames: %d UDP, %d TCP, %d CLNP", len(rows), udp, tcp, clnp)
	}
	for _, c := range []string{"0x0e", "0x0d", "0x0f", "0x06", "0x08", "0x0c"} {
		if cotp[c] == 0 {
			t.Errorf("no COTP TPDU of type %s decoded", c)
		}
	}
	checked, large := checkISOCapture(t, capture)
	t.Logf("%d TPDUs checked, %d DTs longer than 1500 octets", checked, large)
	if checked < 2*2*12*7 || large < 2*10*4 {
		t.Errorf("%d TPDUs checked, %d DTs longer than 1500 octets", checked, large)
	}
}

// checkISOCapture reads the CLNP PDUs in LLC FE-FE-03 of a SunATM capture:
// each is whole (not a segment) and each TPDU in it passes its checksum
// (ISO 8073 annex B: both Fletcher sums of the TPDU 0 mod 255), computed
// octet by octet here. It returns the TPDUs checked and the DT PDUs longer
// than 1500 octets.
func checkISOCapture(t *testing.T, capture []byte) (checked, large int) {
	t.Helper()
	rd, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, _, err := rd.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) < 8 || !bytes.Equal(rec[4:8], []byte{0xFE, 0xFE, 0x03, header.CLNPNLPID}) {
			continue
		}
		p := header.CLNP(rec[7:])
		if !p.IsValid(len(p)) || int(p.SegmentLength()) != len(p) {
			t.Errorf("a CLNP PDU of %d octets that does not check", len(p))
			continue
		}
		if seg, ok := p.Segmentation(); ok && (seg.Offset != 0 || p.MoreSegments()) {
			t.Errorf("a CLNP segment: offset %d", seg.Offset)
		}
		if p.Type() != header.CLNPTypeDT {
			continue
		}
		if len(p) > 1500 {
			large++
		}
		n, err := isotest.CheckTPDUs(p.Payload())
		if err != nil {
			t.Error(err)
		}
		checked += n
	}
	return checked, large
}

// BenchmarkATMCells measures simulated cells per host second through
// the interfaces, the links and the switch: the UDP, TCP and TP4 sweeps of
// configs/atm-ip.toml.
func BenchmarkATMCells(b *testing.B) {
	var cells uint64
	var took time.Duration
	for range b.N {
		exp, err := machine.LoadExperiment("../configs/atm-ip.toml")
		if err != nil {
			b.Fatal(err)
		}
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := r.Execute(machine.Options{}); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		for _, h := range r.Hosts {
			cells += machinetest.ATMCards(h)[0].End.Stats().TxCells
		}
	}
	b.ReportMetric(float64(cells)/took.Seconds(), "cells/s")
}
