package via_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/internal/testtool"
	"simkron/machine"
)

// TestStudyCaptureTshark: Wireshark reads the study's capture of the
// switch clean — IP, UDP and TCP checksums validated good, every
// fragmented UDP datagram reassembled — and finds the VIA frames under
// their EtherType (0x88b5), as many as the agents sent.
func TestStudyCaptureTshark(t *testing.T) {
	tshark := testtool.Need(t, "tshark")
	exp, err := machine.LoadExperiment(studyConfig)
	if err != nil {
		t.Fatal(err)
	}
	p := compareParams(exp)
	p.Sizes, p.Messages, p.Warmup = []int{4, 1024, 4096}, 2, 1
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil || !res.Complete {
		t.Fatalf("run: %v %s", err, res.Incomplete)
	}
	caps := r.Net.Captures()
	if len(caps) != 1 {
		t.Fatalf("%d captures, want lan0's", len(caps))
	}
	f := filepath.Join(t.TempDir(), "lan0.pcap")
	if err := os.WriteFile(f, caps[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(filter string) int {
		t.Helper()
		out, err := exec.Command(tshark, "-n", "-r", f, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
			"-o", "tcp.check_checksum:TRUE", "-o", "ip.defragment:TRUE", "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v", filter, err)
		}
		return len(strings.Fields(string(out)))
	}
	if n := count("_ws.malformed || _ws.expert.severity >= error"); n != 0 {
		t.Errorf("tshark: %d malformed or erroneous frames", n)
	}
	if n := count("(udp && udp.checksum.status != 1) || (tcp && tcp.checksum.status != 1) || (ip && ip.checksum.status != 1)"); n != 0 {
		t.Errorf("tshark: %d IP, UDP or TCP packets whose checksum was not verified good", n)
	}
	// Each 4 KiB message is a datagram of three fragments, each way.
	if n := count("udp && ip.reassembled.length == 4104"); n != 2*3 {
		t.Errorf("tshark: %d reassembled 4 KiB UDP datagrams, want 6", n)
	}
	if n := count("tcp.len > 0"); n == 0 {
		t.Error("tshark: no TCP data segments")
	}
	var frames int
	for _, h := range r.Hosts {
		frames += int(machinetest.VIA(h).Stats().FramesSent)
	}
	// The data frames and the connection request, its accept and the
	// client's disconnect.
	if n := count("eth.type == 0x88b5"); n != frames+3 {
		t.Errorf("tshark: %d frames under EtherType 0x88b5, want %d data frames and 3 connection frames", n, frames)
	}
	if n := count("eth.type == 0x88b5 && (ip || udp || tcp)"); n != 0 {
		t.Errorf("tshark: %d VIA frames taken for IP", n)
	}
}
