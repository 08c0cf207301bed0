package machine_test

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/memory"
	"simkron/sim"
)

// BenchmarkUDPRoundTrips1KiB reports UDP round trips of 1 KiB messages per
// host second between two fully modelled hosts with NE2000s on 10 Mbit/s
// Ethernet: the 486s of configs/udp-ne2000.toml and the R4000s of
// configs/udp-r4000.toml; the -functional ones run the same exchange in
// functional detail (no cache model, the machine files' calibrated costs);
// the -q20us ones run each with a sync quantum of 20 us (not exact: the
// README's "Sync quantum"). Building the hosts (machine.New) is outside
// the timer, as in BenchmarkTCPSegments and as the ns-3 peer of this
// exchange times Simulator::Run alone, not the building of its topology.
func BenchmarkUDPRoundTrips1KiB(b *testing.B) {
	for _, q := range []sim.Time{0, 20 * sim.Microsecond} {
		suffix := ""
		if q > 0 {
			suffix = "-q" + q.String()
		}
		for _, detail := range []memory.Detail{memory.DetailFull, memory.DetailFunctional} {
			for _, cfg := range []string{"udp-ne2000", "udp-r4000"} {
				name := cfg
				if detail == memory.DetailFunctional {
					name += "-functional"
				}
				b.Run(name+suffix, func(b *testing.B) { benchUDP(b, "../configs/"+cfg+".toml", detail, q) })
			}
		}
	}
}

// udpBench1KiB loads the sweep at path cut to 500 round trips of 1 KiB,
// without capture.
func udpBench1KiB(tb testing.TB, path string) *machine.Experiment {
	tb.Helper()
	exp, err := machine.LoadExperiment(path)
	if err != nil {
		tb.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	udpParams(exp).Sizes = []int{1024}
	udpParams(exp).Warmup = 1
	udpParams(exp).Messages = 500
	return exp
}

func benchUDP(b *testing.B, path string, detail memory.Detail, quantum sim.Time) {
	exp := udpBench1KiB(b, path)
	exp.Info.Detail = detail
	exp.Info.SyncQuantum = quantum
	trips := 0
	var events, slow uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := r.Execute(machine.Options{})
		if err != nil || !res.Complete || udpRows(res)[0].Messages != 500 {
			b.Fatal(err, res.Incomplete)
		}
		trips += udpRows(res)[0].Messages + udpParams(exp).Warmup
		events += r.Sched.Fired()
		for _, h := range r.Hosts {
			slow += h.CPU.Stats().SyncsSlow
		}
	}
	b.ReportMetric(float64(trips)/b.Elapsed().Seconds(), "round-trips/s")
	// What the run costs in coordination, the run's start included: the
	// events fired, and the Syncs that found an event due before the
	// core's time (most of them a hand-over between the two hosts, whose
	// interrupt handlers run at the same instants; cpu's BenchmarkHandover
	// measures one).
	b.ReportMetric(float64(events)/float64(trips), "events/round-trip")
	b.ReportMetric(float64(slow)/float64(trips), "slow-syncs/round-trip")
}
