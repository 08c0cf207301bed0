package simoseth_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/devices/simoseth"
	"simkron/internal/testtool"
	"simkron/memory"
	"simkron/sim"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// inetPair runs the unchanged Internet stack over the driver on both
// hosts: a UDP echo of several sizes (fragmented past the MTU) and a TCP
// connection that sends 20000 bytes and reads them back. It returns the
// switch's capture.
func inetPair(t *testing.T) (udpSizes []int, capture []byte) {
	t.Helper()
	k, seg, a, b := pair(t, simoseth.DefaultParams(), drv.DefaultParams(), drv.DefaultParams())
	var pcap bytes.Buffer
	if err := seg.Tap(&pcap); err != nil {
		t.Fatal(err)
	}
	ipA, ipB := inet.Addr{10, 0, 0, 1}, inet.Addr{10, 0, 0, 2}
	mask := inet.Addr{255, 255, 255, 0}
	sa, err := inet.New(a.kern, a.ns, a.drv.Queue(), ipA, mask, inet.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := inet.New(b.kern, b.ns, b.drv.Queue(), ipB, mask, inet.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	udpSizes = []int{4, 1000, 1472, 1473, 4000, 32768}
	const tcpBytes = 20000
	var udpDone, tcpDone bool
	var udpBad, tcpBad string
	b.kern.Spawn("udpecho", func(th *kernel.Thread) {
		buf := b.kern.Kmalloc(65536)
		fd, _ := sb.Socket(th, inet.SockDgram)
		sb.Bind(th, fd, 7)
		for {
			n, from, port, err := sb.RecvFrom(th, fd, buf, 65536, 0)
			if err == 0 {
				sb.SendTo(th, fd, buf, n, from, port)
			}
		}
	})
	b.kern.Spawn("tcpecho", func(th *kernel.Thread) {
		buf := b.kern.Kmalloc(65536)
		lfd, _ := sb.Socket(th, inet.SockStream)
		sb.Bind(th, lfd, 5001)
		sb.Listen(th, lfd, 1)
		fd, _, _, _ := sb.Accept(th, lfd)
		for {
			n, err := sb.Recv(th, fd, buf, 65536, 0)
			if err != 0 || n == 0 {
				sb.Close(th, fd)
				return
			}
			sb.Send(th, fd, buf, n)
		}
	})
	a.kern.Spawn("client", func(th *kernel.Thread) {
		th.SleepFor(20 * sim.Millisecond)
		out, in := a.kern.Kmalloc(65536), a.kern.Kmalloc(65536)
		pat := make([]byte, 65536)
		for i := range pat {
			pat[i] = byte(i*5 + i>>9)
		}
		a.c.Write(out, pat)
		fd, _ := sa.Socket(th, inet.SockDgram)
		got := make([]byte, 65536)
		for _, n := range udpSizes {
			sa.SendTo(th, fd, out, n, ipB, 7)
			m, _, _, err := sa.RecvFrom(th, fd, in, 65536, sim.Second)
			a.sys.Phys.Read(in, got[:m])
			if err != 0 || m != n || !bytes.Equal(got[:m], pat[:n]) {
				udpBad = fmt.Sprintf("UDP echo of %d bytes: got %d, err %v", n, m, err)
			}
		}
		udpDone = true
		tfd, _ := sa.Socket(th, inet.SockStream)
		if err := sa.Connect(th, tfd, ipB, 5001); err != 0 {
			tcpBad = fmt.Sprintf("connect: %v", err)
			tcpDone = true
			return
		}
		sa.Send(th, tfd, out, tcpBytes)
		for r := 0; r < tcpBytes; {
			m, err := sa.Recv(th, tfd, in+memory.Addr(r), tcpBytes-r, sim.Second)
			if err != 0 || m == 0 {
				tcpBad = fmt.Sprintf("recv after %d bytes: %v", r, err)
				break
			}
			r += m
		}
		a.sys.Phys.Read(in, got[:tcpBytes])
		if tcpBad == "" && !bytes.Equal(got[:tcpBytes], pat[:tcpBytes]) {
			tcpBad = "TCP echo differs"
		}
		sa.Close(th, tfd)
		tcpDone = true
	})
	runUntil(t, k, 10*sim.Second, func() bool { return udpDone && tcpDone })
	k.RunUntil(k.Now() + 100*sim.Millisecond) // the FINs
	if udpBad != "" || tcpBad != "" {
		t.Fatalf("%s %s", udpBad, tcpBad)
	}
	noGuestErrors(t, a, b)
	if st := sb.Stats(); st.UDPInBadChecksum != 0 || st.TCPInBadChecksum != 0 || st.IPInBadChecksum != 0 {
		t.Errorf("B's stack counted bad checksums: %+v", st)
	}
	return udpSizes, pcap.Bytes()
}

// TestInetPcapTshark: UDP (fragmented too) and TCP over the driver, and
// Wireshark's dissectors, with IP, UDP and TCP checksum validation, find
// nothing malformed and every checksum good in the switch's capture;
// every fragmented datagram is reassembled as UDP, both ways.
func TestInetPcapTshark(t *testing.T) {
	sizes, capture := inetPair(t)
	tshark := testtool.Need(t, "tshark")
	f := filepath.Join(t.TempDir(), "lan0.pcap")
	if err := os.WriteFile(f, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(filter string, fields ...string) [][]string {
		t.Helper()
		args := []string{"-n", "-r", f, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
			"-o", "tcp.check_checksum:TRUE", "-o", "ip.defragment:TRUE", "-Y", filter, "-T", "fields"}
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
	if rows := run("ip.checksum.status == 0 || udp.checksum.status == 0 || tcp.checksum.status == 0", "frame.number"); len(rows) != 0 {
		t.Errorf("tshark: %d frames with a bad checksum, first %v", len(rows), rows[0])
	}
	if rows := run("(udp && udp.checksum.status != 1) || (tcp && tcp.checksum.status != 1)", "frame.number"); len(rows) != 0 {
		t.Errorf("tshark: %d UDP/TCP packets whose checksum was not verified good, first %v", len(rows), rows[0])
	}
	want := map[string]int{}
	for _, n := range sizes {
		if n+8 > 1480 {
			want[fmt.Sprint(n+8)] += 2
		}
	}
	got := map[string]int{}
	for _, row := range run("udp && ip.reassembled.length", "ip.reassembled.length") {
		got[row[0]]++
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reassembled UDP datagrams by length (-want +got):\n%s", d)
	}
	if rows := run("tcp.len > 0", "tcp.len"); len(rows) < 2*20000/1460 {
		t.Errorf("tshark found only %d TCP data segments", len(rows))
	}
}
