package machine_test

import (
	"strings"
	"testing"
	"time"

	"simkron/machine"
	"simkron/stack/apps/latency"
)

// configs/atm-ip.toml: the sweeps over classical IP over AAL5 complete
// with nothing lost, every PDU's first cell is seen by the card's
// observers once, and the SunATM capture of link a reads in tshark as
// VPI/VCI 0/100 carrying LLC/SNAP, IP and UDP or TCP with good checksums,
// nothing malformed, no expert warning.
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
		h.ATMCards[0].ObserveReceive(func(pdu []byte) {
			if len(pdu) != 48 {
				t.Errorf("%s: the observer got %d bytes of a first cell", h.Name, len(pdu))
			}
			firsts[h.Name]++
		})
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	for _, sw := range []string{"udp", "tcp"} {
		for _, row := range section[[]latency.Row](res, sw) {
			if row.Lost != 0 || row.Messages == 0 {
				t.Errorf("%s %d bytes: %d messages, %d lost", sw, row.Size, row.Messages, row.Lost)
			}
		}
	}
	for i, h := range r.Hosts {
		d := h.ATMCards[0].Driver.Stats()
		if d.Overruns+d.RxBroken+d.RxBadCRC+d.RxBadLength != 0 {
			t.Errorf("%s: drops %+v", h.Name, d)
		}
		if d.TxPaced == 0 {
			t.Errorf("%s: no cell was paced", h.Name)
		}
		// The run stops when the programs end: the last PDU (the closing
		// FIN's ACK) may be on its way then, its first cell in, the rest
		// in the network.
		peer := r.Hosts[1-i].ATMCards[0]
		inNet := peer.End.Stats().TxCells - h.ATMCards[0].End.Stats().RxCells
		if n := uint64(firsts[h.Name]); n != d.RxPDUs && !(n == d.RxPDUs+1 && inNet > 0) {
			t.Errorf("%s: the observers saw %d first cells, the driver received %d PDUs (%d cells in the network)", h.Name, n, d.RxPDUs, inNet)
		}
		if h.Spec.Inet.MTU != 9180 {
			t.Errorf("%s: IP MTU %d", h.Name, h.Spec.Inet.MTU)
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
	rows := tsharkFrames(t, capture, []string{"udp.check_checksum:TRUE"},
		"atm.vpi", "atm.vci", "frame.protocols", "ip.checksum.status", "udp.checksum.status", "tcp.checksum.status", "_ws.expert.severity")
	udp, tcp := 0, 0
	for _, f := range rows {
		p := f["frame.protocols"]
		switch {
		case f["atm.vpi"] != "0" || f["atm.vci"] != "100" || !strings.HasPrefix(p, "sunatm:atm:llc:ip") && !strings.HasPrefix(p, "atm:llc:ip"):
			t.Errorf("frame %s: VC %s/%s, protocols %q", f["frame.number"], f["atm.vpi"], f["atm.vci"], p)
		case tshMalformed(f) || tshSeverity(f) >= expertWarn:
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
	t.Logf("%d SunATM records: %d UDP, %d TCP", len(rows), udp, tcp)
	// Each measured or warm-up message goes out and comes back: UDP
	// datagrams are reassembled by tshark, so one frame shows each.
	if udp < 2*9*7 || tcp < 2*12*7 {
		t.Errorf("%d frames: %d UDP, %d TCP", len(rows), udp, tcp)
	}
}

// BenchmarkATMCells measures simulated cells per host second through
// the interfaces, the links and the switch: the UDP and TCP sweeps of
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
			cells += h.ATMCards[0].End.Stats().TxCells
		}
	}
	b.ReportMetric(float64(cells)/took.Seconds(), "cells/s")
}
