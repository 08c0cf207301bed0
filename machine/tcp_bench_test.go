package machine_test

import (
	"strings"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
	"simkron/stack/apps/ttcp"
)

// BenchmarkTCPSegments reports simulated TCP segments per host second: the
// segments both hosts' TCPs sent (inet TCPOutSegs: data, ACKs, window
// updates, handshakes and FINs alike) over the host time of the runs, and
// simulated seconds per host second beside it.
//
//   - ttcp-*: a bulk transfer, the ttcp workload of configs/ttcp-stall.toml
//     cut to one streaming run at MTU 1500 (2000 writes of 2048 B, Nagle
//     on, the stack's default buffers) between the config's two 486DX-33s,
//     and the same between two R4000s with one transmit slot on their
//     cards (see ttcpBulk).
//   - tcp-1KiB: the TCP request/response sweep of configs/tcp-ne2000.toml
//     at 1 KiB alone, without the UDP sweep before it.
//
// An iteration is one whole run, from boot to the workload's end. Each run
// is long enough on its own (thousands of segments, seconds of simulated
// time) for the rate to be stable, so b.N counts runs rather than scaling
// one run's writes: every run then simulates exactly the same thing and
// is checked whole. Loading the files happens once, before the loop;
// building the hosts (machine.New) is outside the timer, so the figures are
// those of the simulation proper.
func BenchmarkTCPSegments(b *testing.B) {
	b.Run("ttcp-i486dx33", func(b *testing.B) { benchTCPSegments(b, ttcpBulk(b, "", ttcpBenchWrites)) })
	b.Run("ttcp-r4000", func(b *testing.B) {
		benchTCPSegments(b, ttcpBulk(b, "../configs/machines/r4000.toml", ttcpBenchWrites))
	})
	b.Run("tcp-1KiB", func(b *testing.B) { benchTCPSegments(b, tcpSweep1KiB(b)) })
}

const (
	ttcpBenchWrites = 2000
	ttcpBenchSize   = 2048
)

// ttcpBulk loads configs/ttcp-stall.toml with only its mtu-1500 run, set
// to writes writes of ttcpBenchSize bytes with the stack's socket buffers;
// machineFile, when set, replaces both hosts' machine.
func ttcpBulk(b testing.TB, machineFile string, writes int) *machine.Experiment {
	b.Helper()
	exp, err := machine.LoadExperiment("../configs/ttcp-stall.toml")
	if err != nil {
		b.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	w := ttcpParams(exp)
	found := false
	for _, c := range w.Cases {
		if c.Name == "mtu-1500" {
			c.Writes, c.Size = writes, ttcpBenchSize
			c.SndBuf, c.RcvBuf = 0, 0 // the stack's tcp_sndbuf and tcp_rcvbuf
			w.Cases, found = []ttcp.Case{c}, true
			break
		}
	}
	if !found {
		b.Fatal("ttcp-stall.toml has no run called mtu-1500")
	}
	w.Pattern = 0
	if machineFile == "" {
		return exp
	}
	// The experiment's [host.inet] and nic mtu were applied to the loaded
	// machines; the new machines take the [inet] those ended with. That is
	// only the experiment's own when both machine files leave [inet] alike,
	// which is checked. The cards keep their machine file's MTU (1500 for
	// the R4000's NE2000, not the config's 4352): the run sets the
	// interface MTU to 1500 on both hosts in either case.
	for i := range exp.Hosts {
		h := &exp.Hosts[i]
		plain, err := machine.LoadMachine("../configs/" + h.MachineFile)
		if err != nil {
			b.Fatal(err)
		}
		spec, err := machine.LoadMachine(machineFile)
		if err != nil {
			b.Fatal(err)
		}
		if *machinetest.InetParams(plain) != *machinetest.InetParams(spec) {
			b.Fatalf("%s and %s differ in [inet]: the experiment's [host.inet] cannot be carried over", h.MachineFile, machineFile)
		}
		inet := *machinetest.InetParams(h.Machine)
		inet.MTU = machinetest.InetParams(spec).MTU
		*machinetest.InetParams(spec) = inet
		h.Machine = spec
		h.MachineFile = machineFile
	}
	return exp
}

// tcpSweep1KiB loads configs/tcp-ne2000.toml with only the TCP sweep, at
// 1 KiB, long enough for a stable rate.
func tcpSweep1KiB(b testing.TB) *machine.Experiment {
	b.Helper()
	exp, err := machine.LoadExperiment("../configs/tcp-ne2000.toml")
	if err != nil {
		b.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	tcpParams(exp).CompareUDP = false
	tcpParams(exp).Sizes = []int{1024}
	tcpParams(exp).Messages = 1000
	return exp
}

func benchTCPSegments(b *testing.B, exp *machine.Experiment) {
	var segs uint64
	var simTime sim.Time
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := r.Execute(machine.Options{})
		if err != nil || !res.Complete {
			b.Fatal(err, res.Incomplete)
		}
		switch exp.Workload.Type {
		case "ttcp":
			c := ttcpResults(res)[0]
			if c.Bytes != ttcpBenchWrites*ttcpBenchSize || c.Corrupt != 0 || !strings.HasPrefix(c.Verdict, "streaming") {
				b.Fatalf("ttcp: %d bytes, %d corrupt: %s", c.Bytes, c.Corrupt, c.Verdict)
			}
		case "tcp":
			row := tcpRows(res)[0]
			if row.Messages != tcpParams(exp).Messages || row.Lost != 0 || row.Corrupt != 0 {
				b.Fatalf("tcp: %d messages, %d lost, %d corrupt", row.Messages, row.Lost, row.Corrupt)
			}
		}
		for _, h := range r.Hosts {
			segs += machinetest.Inet(h).Stats().TCPOutSegs
		}
		simTime += sim.Time(res.SimTimePS)
	}
	b.ReportMetric(float64(segs)/b.Elapsed().Seconds(), "segs/s")
	b.ReportMetric(simTime.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
	b.ReportMetric(float64(segs)/float64(b.N), "segs/op")
}
