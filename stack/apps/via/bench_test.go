package via_test

import (
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
)

// BenchmarkVIARoundTrip1KiB measures how many 1 KiB VIA round trips
// between the study's two machines the whole simulator runs per second of
// host time: the via workload alone on configs/simos-study.toml's hosts, one size,
// b.N measured round trips (the hosts' boot and the connection included).
func BenchmarkVIARoundTrip1KiB(b *testing.B) {
	exp, err := machine.LoadExperiment(studyConfig)
	if err != nil {
		b.Fatal(err)
	}
	for i := range machinetest.Segments(exp) {
		machinetest.Segments(exp)[i].Pcap = false
	}
	exp.Workload.Type = "via"
	p := seriesParams(exp, "via")
	p.Client, p.Server = "mipsA", "mipsB"
	p.Sizes, p.Messages, p.Warmup = []int{1024}, b.N, 1
	exp.Info.StopAt = sim.Time(b.N+100) * sim.Millisecond
	b.ResetTimer()
	r, err := machine.New(exp, machine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	res, err := r.Execute(machine.Options{})
	b.StopTimer()
	if err != nil || !res.Complete {
		b.Fatalf("run: %v %s", err, res.Incomplete)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "roundtrips/s")
	b.ReportMetric(float64(res.SimTimePS)/1e3/float64(b.N), "sim-ns/roundtrip")
}
