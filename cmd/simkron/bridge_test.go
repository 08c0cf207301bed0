//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"simkron/internal/netnstest"
	"simkron/report"
)

// The bridge tests run simkron on configs bridged to a TAP device in a
// network namespace the test makes (and removes), as a user would: the
// TAP made beforehand with ip tuntap, brought up and given 10.0.0.1/24 in
// the namespace; the simulated 486 is 10.0.0.2. The real side is the
// namespace's Linux: ping, and sockets the test opens in the namespace.

// bridgeConfig is a bridged experiment of one 486DX-33 with an NE2000,
// serving echo; serveKeys go into [workload.serve].
func bridgeConfig(root, serveKeys string) string {
	return fmt.Sprintf(`[experiment]
name = "bridge-test"
stop_at = "600s"

[[segment]]
name = "lan0"
pcap = true
[[segment.bridge]]
tap = "sk0"

[[host]]
name = "pc486"
machine = %q
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:02"
ip = "10.0.0.2"

[workload]
type = "serve"
[workload.serve]
%s`, filepath.Join(root, "configs/machines/i486dx33.toml"), serveKeys)
}

// bridgeSession is one simkron run bridged into a namespace.
type bridgeSession struct {
	ns             *netnstest.NS
	cmd            *exec.Cmd
	out            string
	stdout, stderr bytes.Buffer
	done           chan struct{}
	status         int
}

// startBridge makes the namespace and its TAP and starts simkron on the
// config; it returns once simkron has the TAP open.
func startBridge(t *testing.T, config string, commands ...string) *bridgeSession {
	t.Helper()
	netnstest.Require(t, commands...)
	bin, _ := hostileBinary(t)
	s := &bridgeSession{ns: netnstest.New(t), done: make(chan struct{})}
	s.ns.IP(t, "tuntap", "add", "dev", "sk0", "mode", "tap")
	s.ns.IP(t, "link", "set", "sk0", "up")
	s.ns.IP(t, "addr", "add", "10.0.0.1/24", "dev", "sk0")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s.out = filepath.Join(dir, "out")
	s.cmd = s.ns.Command(bin, "run", "--out", s.out, cfg)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := s.cmd.Wait()
		s.status = 0
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			s.status = ee.ExitCode()
		} else if err != nil {
			s.status = -1
		}
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	// A TAP has carrier once a program has it open.
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(s.ns.IP(t, "link", "show", "sk0"), "NO-CARRIER") {
		select {
		case <-s.done:
			t.Fatalf("simkron ended (exit %d) before opening the TAP:\n%s", s.status, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("simkron did not open the TAP in 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// wait waits for simkron to end by itself and returns its exit status.
func (s *bridgeSession) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(limit):
		t.Fatalf("simkron still running after %v", limit)
	}
	return s.status
}

// interrupt sends SIGINT, as Ctrl-C does, and returns the exit status.
func (s *bridgeSession) interrupt(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		<-s.done
		t.Fatalf("simkron ended before Ctrl-C, exit %d:\n%s\n%s", s.status, s.stderr.String(), s.stdout.String())
	}
	return s.wait(t, 60*time.Second)
}

// result reads the run's result.json.
func (s *bridgeSession) result(t *testing.T) *report.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(s.out, "result.json"))
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, s.stderr.String())
	}
	defer f.Close()
	res, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// serveCounts is the serve section's counts of one server.
type serveCounts struct {
	Port                  uint16
	Connections, Messages uint64
	Open                  int
	BytesIn               uint64 `json:"bytes_in"`
	BytesOut              uint64 `json:"bytes_out"`
	Errors                uint64
	Failed                string
}

func serveSection(t *testing.T, res *report.Result) (ended string, udp, tcp serveCounts) {
	t.Helper()
	var sec struct {
		Ended string
		Hosts []struct {
			Host          string
			UDP, TCP, TP4 serveCounts
		}
	}
	if err := res.Section("serve", &sec); err != nil {
		t.Fatal(err)
	}
	return sec.Ended, sec.Hosts[0].UDP, sec.Hosts[0].TCP
}

// checkBridged checks what every bridged run's result says: complete,
// non-deterministic, its bridge and pacing, and that every frame read
// from the TAP was sent or counted.
func checkBridged(t *testing.T, res *report.Result) report.Bridge {
	t.Helper()
	if !res.Complete {
		t.Errorf("incomplete: %s", res.Incomplete)
	}
	if !strings.Contains(res.Nondeterministic, "segment lan0 to TAP sk0") {
		t.Errorf("nondeterministic = %q", res.Nondeterministic)
	}
	if len(res.Bridges) != 1 || res.Realtime == nil {
		t.Fatalf("bridges %+v, realtime %+v", res.Bridges, res.Realtime)
	}
	b := res.Bridges[0]
	if lost := b.DroppedBehind + b.DroppedQueue + b.Oversized + b.Runts + b.Aborted; b.InFrames+lost+b.Pending != b.Read {
		t.Errorf("bridge %+v: %d read, %d sent + %d lost + %d pending", b, b.Read, b.InFrames, lost, b.Pending)
	}
	return b
}

// A real ping into the simulated 486 and back; tshark reads the capture
// clean, with every request and its reply.
func TestBridgePing(t *testing.T) {
	s := startBridge(t, bridgeConfig(hostileRootDir(t), ""), "ping", "tshark")
	out, err := s.ns.Command("ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.0.2").CombinedOutput()
	t.Logf("ping in the namespace:\n%s", out)
	if err != nil || !strings.Contains(string(out), "5 received, 0% packet loss") {
		t.Errorf("ping: %v", err)
	}
	if st := s.interrupt(t); st != exitOK {
		t.Fatalf("Ctrl-C: exit %d, want %d\nstderr: %s", st, exitOK, s.stderr.String())
	}
	res := s.result(t)
	b := checkBridged(t, res)
	if res.Realtime.Interrupted != "SIGINT" {
		t.Errorf("interrupted = %q, want SIGINT", res.Realtime.Interrupted)
	}
	if ended, _, _ := serveSection(t, res); !strings.HasPrefix(ended, "stopped by SIGINT at ") {
		t.Errorf("serve ended %q", ended)
	}
	t.Logf("summary:\n%s", s.stdout.String())
	pcap := filepath.Join(s.out, "lan0.pcap")
	view, err := exec.Command("tshark", "-r", pcap).CombinedOutput()
	t.Logf("tshark -r lan0.pcap:\n%s", view)
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if n := strings.Count(string(view), "Echo (ping) request"); n != 5 {
		t.Errorf("%d echo requests in the capture, want 5", n)
	}
	if n := regexp.MustCompile(`Echo \(ping\) reply .*\(request in \d+\)`).FindAllString(string(view), -1); len(n) != 5 {
		t.Errorf("%d echo replies matched to their requests in the capture, want 5", len(n))
	}
	if bad, _ := exec.Command("tshark", "-r", pcap, "-Y", "_ws.malformed || _ws.expert.severity >= warning").CombinedOutput(); len(bytes.TrimSpace(dropTsharkRoot(bad))) > 0 {
		t.Errorf("tshark finds malformed frames or warnings:\n%s", bad)
	}
	// Every frame that crossed is in the capture: in shared mode the
	// bridge's own transmissions and every station's.
	frames := strings.Count(strings.TrimSpace(string(dropTsharkRoot(view))), "\n") + 1
	if frames != int(res.Segments[0].Frames) || uint64(frames) != b.InFrames+b.OutFrames {
		t.Errorf("%d frames in the capture; the segment carried %d, the bridge %d in and %d out", frames, res.Segments[0].Frames, b.InFrames, b.OutFrames)
	}
}

// dropTsharkRoot removes tshark's warning about running as root.
func dropTsharkRoot(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("Running as user")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// hostileRootDir is the project's root, where the hostile suite runs.
func hostileRootDir(t *testing.T) string {
	_, root := hostileBinary(t)
	return root
}

// pattern is n bytes that differ from one offset to the next.
func bridgePattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8 + seed)
	}
	return b
}

// A real UDP echo exchange: datagrams of many sizes, some fragmented,
// come back as they were sent. As a real UDP client does, it sends a
// datagram again when no echo comes in a second: the simulated 486's
// NE2000 driver has Linux 2.x's ei_receive race (a frame stored between
// its last read of CURR and its acknowledgement of the receive interrupt
// waits for the next frame's interrupt), which a train of fragments sent
// back to back at wire speed, as Linux sends them, can hit; the echo of
// the datagram then comes with the next frame.
func TestBridgeUDPEcho(t *testing.T) {
	s := startBridge(t, bridgeConfig(hostileRootDir(t), ""))
	var conn *net.UDPConn
	err := s.ns.Do(func() error {
		var err error
		conn, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 7})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sizes := []int{1, 18, 64, 512, 1472, 1473, 4000, 8192, 20000}
	var sent, bytesSent, again, stale int
	buf := make([]byte, 65536)
	start := time.Now()
	for i, n := range sizes {
		msg := bridgePattern(n, i)
		echoed := false
		for try := 0; try < 5 && !echoed; try++ {
			if _, err := conn.Write(msg); err != nil {
				t.Fatal(err)
			}
			sent++
			bytesSent += n
			if try > 0 {
				again++
			}
			conn.SetReadDeadline(time.Now().Add(time.Second))
			for !echoed {
				got, err := conn.Read(buf)
				if err != nil {
					break
				}
				if echoed = bytes.Equal(buf[:got], msg); !echoed {
					stale++ // the late echo of an earlier one
				}
			}
		}
		if !echoed {
			t.Errorf("%d bytes: no echo in 5 tries", n)
		}
	}
	t.Logf("UDP echo of %d datagrams of %v bytes: %d sent (%d again), every echo intact, %d late echoes skipped, in %v",
		len(sizes), sizes, sent, again, stale, time.Since(start).Round(time.Millisecond))
	if st := s.interrupt(t); st != exitOK {
		t.Fatalf("Ctrl-C: exit %d\nstderr: %s", st, s.stderr.String())
	}
	res := s.result(t)
	checkBridged(t, res)
	if t.Failed() {
		view, _ := exec.Command("tshark", "-r", filepath.Join(s.out, "lan0.pcap")).CombinedOutput()
		t.Logf("summary:\n%s\ncapture:\n%s", s.stdout.String(), view)
	}
	// Every datagram sent reached the server and was echoed.
	if _, udp, _ := serveSection(t, res); udp.Messages != uint64(sent) || udp.BytesIn != uint64(bytesSent) || udp.BytesOut != uint64(bytesSent) {
		t.Errorf("UDP server counts %+v, want %d datagrams of %d bytes in all", udp, sent, bytesSent)
	}
}

// A real TCP transfer of 1 MiB between the namespace's Linux TCP and
// simkron's: sent to the echo server and read back, byte for byte.
func TestBridgeTCP(t *testing.T) {
	s := startBridge(t, bridgeConfig(hostileRootDir(t), ""))
	var conn *net.TCPConn
	err := s.ns.Do(func() error {
		c, err := net.DialTimeout("tcp4", "10.0.0.2:5007", 10*time.Second)
		if err == nil {
			conn = c.(*net.TCPConn)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 1 << 20
	msg := bridgePattern(size, 5)
	conn.SetDeadline(time.Now().Add(5 * time.Minute))
	start := time.Now()
	werr := make(chan error, 1)
	go func() {
		_, err := conn.Write(msg)
		if err == nil {
			err = conn.CloseWrite()
		}
		werr <- err
	}()
	got, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("reading the echo after %d bytes: %v", len(got), err)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		i := 0
		for i < len(got) && i < len(msg) && got[i] == msg[i] {
			i++
		}
		t.Fatalf("the echo (%d bytes) differs from the %d sent from byte %d", len(got), size, i)
	}
	t.Logf("TCP: %d bytes sent and echoed back intact in %v (%.1f KB/s each way)", size, elapsed.Round(time.Millisecond), float64(size)/1024/elapsed.Seconds())
	if st := s.interrupt(t); st != exitOK {
		t.Fatalf("Ctrl-C: exit %d\nstderr: %s", st, s.stderr.String())
	}
	res := s.result(t)
	checkBridged(t, res)
	if _, _, tcp := serveSection(t, res); tcp.Connections != 1 || tcp.BytesIn != size || tcp.BytesOut != size || tcp.Errors != 0 {
		t.Errorf("TCP server counts %+v, want one connection, %d bytes each way", tcp, size)
	}
}

// floodSeconds is how long TestBridgeFlood floods: SIMKRON_BRIDGE_FLOOD
// (seconds), 6 by default.
func floodSeconds(t *testing.T) int {
	if v := os.Getenv("SIMKRON_BRIDGE_FLOOD"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 3 {
			t.Fatalf("SIMKRON_BRIDGE_FLOOD=%q: want a number of seconds, at least 3", v)
		}
		return n
	}
	return 6
}

// tapCounters returns the packets Linux sent into the TAP (simkron read
// them) and received from it (simkron wrote them).
func tapCounters(t *testing.T, ns *netnstest.NS) (tx, rx uint64) {
	t.Helper()
	var st []struct {
		Stats64 struct {
			RX struct{ Packets uint64 }
			TX struct{ Packets uint64 }
		}
	}
	if err := json.Unmarshal([]byte(ns.IP(t, "-s", "-j", "link", "show", "sk0")), &st); err != nil || len(st) != 1 {
		t.Fatalf("ip -s -j link show sk0: %v", err)
	}
	return st[0].Stats64.TX.Packets, st[0].Stats64.RX.Packets
}

// Pacing under load: a flood ping and a UDP echo client from the real
// side for the serve workload's duration. The run ends by itself,
// complete (exit 0); its summary reports the lag; every frame Linux sent
// into the TAP was read and either sent on the simulated wire or counted
// lost, and every frame simkron wrote reached Linux.
func TestBridgeFlood(t *testing.T) {
	secs := floodSeconds(t)
	s := startBridge(t, bridgeConfig(hostileRootDir(t), fmt.Sprintf("duration = \"%ds\"\n", secs+2)), "ping")
	var conn *net.UDPConn
	if err := s.ns.Do(func() error {
		var err error
		conn, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 7})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ping := s.ns.Command("ping", "-f", "-w", strconv.Itoa(secs), "10.0.0.2")
	var pingOut bytes.Buffer
	ping.Stdout, ping.Stderr = &pingOut, &pingOut
	if err := ping.Start(); err != nil {
		t.Fatal(err)
	}
	// The UDP client: a datagram, its echo (or a 100 ms time-out), again.
	var sent, echoed, bad int
	buf := make([]byte, 2048)
	for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
		msg := bridgePattern(512, sent)
		if _, err := conn.Write(msg); err != nil {
			t.Fatal(err)
		}
		sent++
		conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				break // lost: the next one goes
			}
			if bytes.Equal(buf[:n], msg) {
				echoed++
				break
			}
			bad++ // a late echo of an earlier one
		}
	}
	ping.Wait()
	t.Logf("flood ping for %d s:\n%s", secs, lastLines(pingOut.String(), 3))
	t.Logf("UDP echo client: %d sent, %d echoed, %d late echoes", sent, echoed, bad)
	if st := s.wait(t, time.Duration(secs+60)*time.Second); st != exitOK {
		t.Fatalf("exit %d at the end of the duration, want %d\nstderr: %s", st, exitOK, s.stderr.String())
	}
	res := s.result(t)
	b := checkBridged(t, res)
	rt := res.Realtime
	t.Logf("summary:\n%s\nstderr: %s", s.stdout.String(), s.stderr.String())
	if ended, _, _ := serveSection(t, res); !strings.Contains(ended, "duration") {
		t.Errorf("serve ended %q, want at its duration", ended)
	}
	if !strings.Contains(s.stdout.String(), "realtime: paced to the wall clock, never ahead of it; fell behind by at most") {
		t.Error("the summary does not report the lag")
	}
	lost := b.DroppedBehind + b.DroppedQueue + b.Oversized + b.Runts + b.Aborted
	if want := rt.MaxLagPS > rt.TolerancePS || lost > 0; want != strings.Contains(s.stderr.String(), "simkron run: warning: ") {
		t.Errorf("lag %v and %d frames lost; a warning on stderr is %v, want %v", rt.MaxLagPS, lost, !want, want)
	}
	if behind := rt.MaxLagPS > rt.TolerancePS; behind != strings.Contains(s.stderr.String(), "the simulation fell behind the wall clock by up to") {
		t.Errorf("lag %v: the warning does not say so", rt.MaxLagPS)
	}
	tx, rx := tapCounters(t, s.ns)
	if tx != b.Read || rx != b.OutFrames {
		t.Errorf("Linux sent %d frames into the TAP and received %d; simkron read %d and wrote %d", tx, rx, b.Read, b.OutFrames)
	}
	if echoed == 0 || b.InFrames == 0 {
		t.Errorf("nothing came through: %d echoes, %d frames in", echoed, b.InFrames)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
