package inet_test

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
)

// tcpEcho loads configs/tcp-ne2000.toml's TCP sweep, with its UDP one
// beside it, cut to sizes and a few messages, without capture.
func tcpEcho(t testing.TB, sizes []int64, messages int) *machine.Experiment {
	t.Helper()
	return machinetest.Edit(t, machinetest.Config("tcp-ne2000.toml")).
		Set("workload.tcp.sizes", sizes).Set("workload.udp.sizes", sizes).
		Set("workload.tcp.messages", messages).Set("workload.tcp.warmup", 1).
		Set("workload.udp.messages", messages).Set("workload.udp.warmup", 1).
		Set("segment[0].pcap", false).Experiment()
}

// BenchmarkEcho runs configs/tcp-ne2000.toml's TCP and UDP echo sweeps
// of 1 KiB, 200 messages each, and reports the host time of a round
// trip: what the Internet layer's trace sources cost unlistened (the
// sockets' queues' gauges) is in it.
func BenchmarkEcho(b *testing.B) {
	exp := tcpEcho(b, []int64{1024}, 200)
	trips := 0
	for b.Loop() {
		b.StopTimer()
		r := build(b, exp, machine.Options{NoCapture: true})
		b.StartTimer()
		if res := execute(b, r); !res.Complete {
			b.Fatal(res.Incomplete)
		}
		trips += 2 * 201
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(trips), "ns/round-trip")
}
