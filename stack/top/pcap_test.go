package top_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/testtool"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

// tsharkPrefs are the dissector preferences the capture test passes:
// reassemble CLNP segments (the default, stated), and decode transport
// only for selector 0xFF, which no system here uses, so that the layer
// users' NSDUs (selector 0x21, Wireshark's default transport selector)
// are not taken for COTP; TP4 traces (issue 15) will use 0x21.
var tsharkPrefs = []string{"-o", "clnp.reassemble:TRUE", "-o", "clnp.tp_nsap_selector:0xFF", "-o", "clnp.always_decode_transport:FALSE"}

// lookTshark returns tshark's path (testtool.Need: skipped without it,
// a failure under CI=true).
func lookTshark(t testing.TB) string {
	t.Helper()
	return testtool.Need(t, "tshark")
}

// A capture of the segment during CLNS runs (segmented and not), XID and
// TEST exchanges and an error report, written by ethersim's tap and read
// by tshark: every frame is dissected as LLC and every CLNP one as CLNP,
// nothing is malformed, every CLNP header checksum is good, and every
// segmented NSDU is reassembled by tshark.
func TestPcapTshark(t *testing.T) {
	path := lookTshark(t)
	var buf bytes.Buffer
	r := build(t, top.LevelCLNS, 4000, 20, false, clnp.DefaultParams())
	if err := r.seg.Tap(&buf); err != nil {
		t.Fatal(err)
	}
	p := newProber(t, r, 9)
	me := nsapOf(9)
	r.b.clns.N.AddRoute(me, p.mac)
	p.sendAt(200*sim.Millisecond, r.b.addr, []byte{0xFE, 0x04, 0xBF, 0x81, 0x01, 0x00})
	p.sendAt(201*sim.Millisecond, r.b.addr, append([]byte{0xFE, 0x04, 0xF3}, []byte("tshark")...))
	li := 9 + 2 + 20 + 20 + 6
	p.sendAt(202*sim.Millisecond, r.b.addr, clnpPDU(me, r.b.nsap, make([]byte, 32), 0,
		header.CLNPFlagSP|header.CLNPFlagER, &header.CLNPSegmentation{ID: 3, Total: uint16(li + 32)}, false))
	r.run(t, 10*sim.Second)
	r.k.RunUntil(300 * sim.Millisecond)
	if r.seg.TapErr() != nil {
		t.Fatal(r.seg.TapErr())
	}
	file := filepath.Join(t.TempDir(), "top.pcap")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two passes, so that each segment names the frame it is
	// reassembled in.
	args := append([]string{"-2", "-r", file}, tsharkPrefs...)
	args = append(args, "-T", "fields", "-E", "separator=|", "-e", "frame.number", "-e", "_ws.malformed", "-e", "_ws.expert",
		"-e", "llc.dsap", "-e", "llc.control", "-e", "clnp.cnf.type", "-e", "clnp.checksum.status", "-e", "clnp.cnf.more_segments",
		"-e", "clnp.reassembled_in", "-e", "clnp.segment.count")
	out, err := exec.Command(path, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	frames := int(r.seg.Stats().Frames)
	if len(lines) != frames {
		t.Errorf("tshark read %d frames, the segment carried %d", len(lines), frames)
	}
	var clnpFrames, segments, reassembled, nsdus, ers, xidTest int
	for _, l := range lines {
		f := strings.Split(l, "|")
		if len(f) != 10 {
			t.Fatalf("tshark line %q", l)
		}
		if f[1] != "" || strings.Contains(f[2], "Error/") || strings.Contains(f[2], "Warning/") {
			t.Errorf("tshark reports a malformed frame or a problem: %q", l)
		}
		if f[3] == "" {
			t.Errorf("frame %s not dissected as LLC: %q", f[0], l)
		}
		if f[5] == "" {
			if c := f[4]; c == "0xbf" || c == "0xf3" || c == "0xaf" || c == "0xe3" || c == "0x00bf" || c == "0x00f3" {
				xidTest++
			} else {
				t.Logf("LLC frame without CLNP: %q", l)
			}
			continue
		}
		clnpFrames++
		// An ER carries the discarded header: tshark lists its fields too,
		// after the ER's own.
		typ, _, _ := strings.Cut(f[5], ",")
		status, _, _ := strings.Cut(f[6], ",")
		if status != "1" {
			t.Errorf("frame %s: CLNP checksum status %q, want 1 (good)", f[0], f[6])
		}
		switch {
		case typ == "1":
			ers++
		case f[7] == "1":
			segments++
			if f[8] != "" {
				reassembled++
			}
		case f[9] != "":
			// The last segment, where tshark shows the reassembled NSDU.
			segments++
			reassembled++
			nsdus++
		}
	}
	t.Logf("%d frames: %d CLNP (%d segments of %d segmented NSDUs, %d ERs), %d XID/TEST", len(lines), clnpFrames, segments, nsdus, ers, xidTest)
	if nsdus != 21 {
		t.Errorf("tshark reassembled %d NSDUs, want 21 (20 messages and the reply)", nsdus)
	}
	if want := 20*3 + 3; segments != want {
		t.Errorf("%d segment frames, want %d (20 NSDUs of 3 segments each, and the reply)", segments, want)
	}
	if reassembled != segments {
		t.Errorf("tshark reassembled %d of %d segments", reassembled, segments)
	}
	if ers != 1 || xidTest != 4 {
		t.Errorf("%d ERs and %d XID/TEST frames, want 1 and 4", ers, xidTest)
	}
}
