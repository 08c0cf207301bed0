package serve_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/apps/serve"
	"simkron/stack/inet"
	"simkron/stack/kernel"

	_ "simkron/stack/apps"
)

const experiment = `
[experiment]
name = "serve-test"
stop_at = "10s"

[[segment]]
name = "lan0"

[[host]]
name = "pcA"
machine = "machines/i486dx33.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0a"
ip = "10.0.0.1"

[[host]]
name = "pcB"
machine = "machines/i486dx33.toml"
[[host.nic]]
device = "nic0"
segment = "lan0"
mac = "02:00:00:00:00:0b"
ip = "10.0.0.2"

[workload]
type = "serve"
[workload.serve]
`

func load(t *testing.T, serveKeys string) *machine.Experiment {
	t.Helper()
	exp, err := machine.LoadExperimentBytes("../../../configs/serve-test.toml", []byte(experiment+serveKeys), nil)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func hostNamed(t *testing.T, r *machine.Run, name string) *machine.Host {
	t.Helper()
	for _, h := range r.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no host %s", name)
	return nil
}

// pattern is n bytes that differ from one offset to the next.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8 + seed)
	}
	return b
}

// A client on the other simulated host gets back what it sends to each
// server, and the run ends complete at the duration with the servers'
// counts.
func TestServeEchoesUntilDuration(t *testing.T) {
	exp := load(t, "hosts = [\"pcB\"]\nduration = \"3s\"\n")
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := hostNamed(t, r, "pcA"), hostNamed(t, r, "pcB")
	udpMsg, tcpMsg, tsdu := pattern(3000, 1), pattern(20000, 2), pattern(2500, 3)
	var udpGot, tcpGot, tp4Got []byte
	var problems []string
	fail := func(what string, err any) { problems = append(problems, what+": "+strings.TrimSpace(fmtAny(err))) }
	machinetest.Kernel(a).Spawn("client", func(th *kernel.Thread) {
		k, in, phys := machinetest.Kernel(a), machinetest.Inet(a), a.Sys.Phys
		buf := k.Kmalloc(32768)
		// UDP: one datagram (fragmented) and its echo.
		fd, _ := in.Socket(th, inet.SockDgram)
		phys.Write(buf, udpMsg)
		if _, err := in.SendTo(th, fd, buf, len(udpMsg), machinetest.Inet(b).Addr(), 7); err != 0 {
			fail("sendto", err)
		}
		n, _, _, err := in.RecvFrom(th, fd, buf, 32768, sim.Second)
		if err != 0 {
			fail("recvfrom", err)
		}
		udpGot = make([]byte, n)
		phys.Read(buf, udpGot)
		in.Close(th, fd)
		// TCP: 20000 bytes through one connection, read back whole.
		fd, _ = in.Socket(th, inet.SockStream)
		if err := in.Connect(th, fd, machinetest.Inet(b).Addr(), 5007); err != 0 {
			fail("connect", err)
			return
		}
		phys.Write(buf, tcpMsg)
		if _, err := in.Send(th, fd, buf, len(tcpMsg)); err != 0 {
			fail("send", err)
		}
		for len(tcpGot) < len(tcpMsg) {
			n, err := in.Recv(th, fd, buf, 32768, sim.Second)
			if err != 0 || n == 0 {
				fail("recv", err)
				break
			}
			part := make([]byte, n)
			phys.Read(buf, part)
			tcpGot = append(tcpGot, part...)
		}
		in.Close(th, fd)
		// TP4: one TSDU and its echo.
		f := machinetest.ISO(a)
		sfd, _ := f.Socket(th)
		var tsap [2]byte
		binary.BigEndian.PutUint16(tsap[:], 7)
		if err := f.Connect(th, sfd, machinetest.ISO(b).Address(tsap[:]), sim.Second); err != 0 {
			fail("tp4 connect", err)
			return
		}
		phys.Write(buf, tsdu)
		if _, err := f.SendMsg(th, sfd, buf, len(tsdu), true); err != 0 {
			fail("sendmsg", err)
		}
		for {
			n, eot, err := f.RecvMsg(th, sfd, buf, 32768, sim.Second)
			if err != 0 {
				fail("recvmsg", err)
				break
			}
			part := make([]byte, n)
			phys.Read(buf, part)
			tp4Got = append(tp4Got, part...)
			if eot {
				break
			}
		}
		f.Close(th, sfd)
	})
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("client: %v", problems)
	}
	if !res.Complete {
		t.Fatalf("incomplete: %s", res.Incomplete)
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"udp", udpGot, udpMsg}, {"tcp", tcpGot, tcpMsg}, {"tp4", tp4Got, tsdu}} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: %d bytes came back, not the %d sent", c.name, len(c.got), len(c.want))
		}
	}
	var sec serve.Result
	if err := res.Section("serve", &sec); err != nil {
		t.Fatal(err)
	}
	want := serve.Result{Ended: "the duration, 3s, was reached", Hosts: []serve.HostResult{{Host: "pcB",
		UDP: &serve.Counts{Port: 7, Messages: 1, BytesIn: 3000, BytesOut: 3000},
		TCP: &serve.Counts{Port: 5007, Connections: 1, BytesIn: 20000, BytesOut: 20000},
		TP4: &serve.Counts{Port: 7, Connections: 1, Messages: 1, BytesIn: 2500, BytesOut: 2500},
	}}}
	sec.Hosts[0].TCP.Messages = 0 // as many as the reads took
	if diff := cmp.Diff(want, sec); diff != "" {
		t.Errorf("serve section (-want +got):\n%s", diff)
	}
	if res.SimTimePS > int64(3*sim.Second) {
		t.Errorf("the run went on to %v, past the duration", sim.Time(res.SimTimePS))
	}
	if res.Nondeterministic != "" {
		t.Errorf("a run without a bridge is marked non-deterministic: %q", res.Nondeterministic)
	}
}

// Without a duration and without a signal, a server runs into stop_at:
// that is not its proper end.
func TestServeStopAtIsIncomplete(t *testing.T) {
	exp := load(t, "")
	exp.Info.StopAt = 500 * sim.Millisecond
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || !strings.Contains(res.Incomplete, "stop_at 500ms reached") {
		t.Errorf("complete %v (%q); want incomplete at stop_at", res.Complete, res.Incomplete)
	}
}

// The servers' problems are the config's, found before anything runs:
// a server after another workload, a host that cannot serve, no port.
func TestServeRefuses(t *testing.T) {
	for _, tc := range []struct{ keys, want string }{
		{"udp_port = 0\ntcp_port = 0\ntp4_port = 0\n", "serve-test.toml:30: workload.serve.udp_port: udp_port, tcp_port and tp4_port are all 0: there is nothing to serve"},
		{"tcp_port = 7\n", "workload.serve.tcp_port: 7 is udp_port too"},
		{"hosts = [\"pcC\"]\n", `no [[host]] is called "pcC"`},
	} {
		exp, err := machine.LoadExperimentBytes("../../../configs/serve-test.toml", []byte(experiment+tc.keys), nil)
		if err == nil {
			_, err = machine.New(exp, machine.Options{})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.keys, err, tc.want)
		}
	}
	text := strings.Replace(experiment, "type = \"serve\"", "type = \"ping\"\nthen = [\"serve\"]\n[workload.ping]\nfrom = \"pcA\"\nto = \"pcB\"", 1)
	exp, err := machine.LoadExperimentBytes("../../../configs/serve-test.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := machine.New(exp, machine.Options{}); err == nil || !strings.Contains(err.Error(), "must run alone") {
		t.Errorf("serve after ping: %v, want an error saying it must run alone", err)
	}
}

func fmtAny(v any) string {
	if e, ok := v.(interface{ Error() string }); ok {
		return e.Error()
	}
	return fmt.Sprint(v)
}
