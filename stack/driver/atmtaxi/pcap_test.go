package atmtaxi_test

// Wire conformance: the cells both hosts send through the switch,
// captured as SunATM records (one per AAL5 PDU, VPI/VCI in the
// pseudo-header), read by Wireshark's tshark: every record dissected as
// LLC/SNAP and IPv4 with UDP or TCP, IP, UDP and TCP checksums
// validated, nothing malformed, no error or warning.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"simkron/internal/testtool"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

func TestPcapTshark(t *testing.T) {
	dp := ipDriver(atm.PIO, atm.Sort)
	dp.CRCAssist = true
	r := ipRigP(t, "ds5000-200", dp, ipParams(atm.DefaultMTU), true)
	var capA, capB bytes.Buffer
	if err := r.la.A().Tap(&capA); err != nil {
		t.Fatal(err)
	}
	if err := r.lb.A().Tap(&capB); err != nil {
		t.Fatal(err)
	}
	// Some UDP first (one datagram IP fragments), then a TCP transfer.
	r.b.kern.Spawn("udprx", func(th *kernel.Thread) {
		s := r.b.ip
		fd, _ := s.Socket(th, inet.SockDgram)
		s.Bind(th, fd, 7)
		buf := r.b.kern.Kmalloc(32768)
		for range 3 {
			s.RecvFrom(th, fd, buf, 32768, sim.Second)
		}
	})
	r.a.kern.Spawn("udptx", func(th *kernel.Thread) {
		s := r.a.ip
		fd, _ := s.Socket(th, inet.SockDgram)
		buf := r.a.kern.Kmalloc(32768)
		for _, n := range []int{18, 4000, 12000} {
			r.a.c.Write(buf, patterned(0, n))
			s.SendTo(th, fd, buf, n, ipB, 7)
			th.SleepFor(10 * sim.Millisecond)
		}
	})
	r.k.RunUntil(100 * sim.Millisecond)
	const total = 200_000
	if got := tcpTransfer(t, r, total, 10*sim.Second); !bytes.Equal(got, patterned(0, total)) {
		t.Fatal("TCP bytes differ")
	}
	for _, e := range []error{r.la.A().TapErr(), r.lb.A().TapErr()} {
		if e != nil {
			t.Fatal(e)
		}
	}
	path := testtool.Need(t, "tshark")
	for _, tc := range []struct {
		name string
		pcap []byte
		vci  string
	}{{"a", capA.Bytes(), "100"}, {"b", capB.Bytes(), "200"}} {
		file := filepath.Join(t.TempDir(), tc.name+".pcap")
		if err := os.WriteFile(file, tc.pcap, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(path, "-n", "-r", file,
			"-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
			"-T", "fields", "-E", "separator=|", "-e", "atm.vpi", "-e", "atm.vci", "-e", "frame.protocols",
			"-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e", "tcp.checksum.status",
			"-e", "_ws.malformed", "-e", "_ws.expert.severity").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		udp, tcp := 0, 0
		for i, l := range lines {
			f := strings.Split(l, "|")
			if len(f) != 8 || f[0] != "0" || f[1] != tc.vci || !strings.HasPrefix(f[2], "atm:llc:ip") || f[6] != "" {
				t.Errorf("%s record %d: %q", tc.name, i, l)
				continue
			}
			for _, sev := range strings.Split(f[7], ",") {
				// Expert severities (epan/proto.h): chat 0x00200000, note
				// 0x00400000, warning 0x00600000, error 0x00800000.
				if sev == "6291456" || sev == "8388608" {
					t.Errorf("%s record %d: expert warning or error: %q", tc.name, i, l)
				}
			}
			if f[3] != "1" && f[3] != "" || strings.Contains(f[2], ":udp") && f[4] != "1" || strings.Contains(f[2], ":tcp") && f[5] != "1" {
				t.Errorf("%s record %d: checksum status ip %q udp %q tcp %q", tc.name, i, f[3], f[4], f[5])
			}
			switch {
			case strings.Contains(f[2], ":udp"):
				udp++
			case strings.Contains(f[2], ":tcp"):
				tcp++
			}
		}
		t.Logf("%s: %d SunATM records, %d UDP, %d TCP", tc.name, len(lines), udp, tcp)
		if tc.name == "a" && (udp != 3 || tcp < 20) || tc.name == "b" && tcp < 10 {
			t.Errorf("%s: %d UDP and %d TCP records", tc.name, udp, tcp)
		}
	}
	r.a.noGuestErrors(t)
	r.b.noGuestErrors(t)
	r.a.c.Shutdown()
	r.b.c.Shutdown()
}
