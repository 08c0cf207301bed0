package via_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/testtool"
)

// TestPcapTshark: Wireshark reads the switch's capture of a VIA exchange
// clean, and finds the data and connection frames under VIA's EtherType
// (0x88b5, shown as IEEE's local experimental EtherType).
func TestPcapTshark(t *testing.T) {
	var capture bytes.Buffer
	_, _, _, a, _ := exchange(t, defaultOpts(), defaultOpts(), func(a, b *host) {
		if err := a.port.Segment().Tap(&capture); err != nil {
			t.Fatal(err)
		}
	})
	tshark := testtool.Need(t, "tshark")
	f := filepath.Join(t.TempDir(), "lan0.pcap")
	if err := os.WriteFile(f, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(filter string) int {
		out, err := exec.Command(tshark, "-n", "-r", f, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v", filter, err)
		}
		return len(strings.Fields(string(out)))
	}
	if n := count("_ws.malformed || _ws.expert.severity >= error"); n != 0 {
		t.Errorf("tshark: %d malformed or erroneous frames", n)
	}
	frames := int(a.agent.Stats().FramesSent)
	// Plus the connection request and its accept.
	if n := count("eth.type == 0x88b5"); n != frames+2 {
		t.Errorf("tshark: %d frames under EtherType 0x88b5, want %d data frames and 2 connection frames", n, frames)
	}
	if n := count("eth.type == 0x88b5 && eth.src == 02:00:00:00:00:01 && eth.dst == 02:00:00:00:00:02"); n != frames+1 {
		t.Errorf("tshark: %d VIA frames from a to b, want %d", n, frames+1)
	}
}
