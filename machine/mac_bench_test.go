package machine_test

import (
	"runtime"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/sim"
)

// BenchmarkMacTwoHosts1024 runs the two-host MAC workload of
// configs/ne2000-mac.toml at 1024 bytes of payload, 200 frames an
// iteration, and reports simulated frames per host second.
func BenchmarkMacTwoHosts1024(b *testing.B) {
	const frames = 200
	exp := loadMac(b, []int{1024}, frames)
	machinetest.Segments(exp)[0].Pcap = false
	var received int
	var simTime sim.Time
	b.ReportAllocs()
	for b.Loop() {
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.Execute(machine.Options{})
		if err != nil || !res.Complete {
			b.Fatal(err, res.Incomplete)
		}
		if row := macRows(res)[0]; row.Received != frames {
			b.Fatalf("received %d of %d", row.Received, frames)
		}
		received += frames
		simTime += sim.Time(res.SimTimePS)
	}
	b.ReportMetric(float64(received)/b.Elapsed().Seconds(), "frames/s")
	// Simulated seconds per host second: how much faster than the
	// machines it models the simulator runs.
	b.ReportMetric(simTime.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
}

// BenchmarkHostMemory reports the Go memory one simulated 486 with its
// NE2000 costs: a run of 16 hosts on one segment (the MAC workload
// between two of them, two frames) is built, and then executed, between
// readings of the heap after a full collection. The coroutine stacks of
// the hosts' threads are not heap; they are reported apart.
func BenchmarkHostMemory(b *testing.B) {
	const hosts = 16
	exp := loadMac(b, []int{46}, 2)
	machinetest.Segments(exp)[0].Pcap = false
	for i := len(exp.Hosts); i < hosts; i++ {
		addHost(exp, "pc"+string(rune('C'+i-2)), byte(0x10+i))
	}
	var built, ran, stack float64
	var ms runtime.MemStats
	read := func() (heap, stack uint64) {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, ms.StackInuse
	}
	for b.Loop() {
		h0, s0 := read()
		r, err := machine.New(exp, machine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		h1, _ := read()
		// Start every thread (their stacks come to life), then finish the
		// run; Execute ends the contexts, so stacks are read before it.
		r.Sched.RunUntil(sim.Millisecond)
		h2, s2 := read()
		res, err := r.Execute(machine.Options{})
		if err != nil || !res.Complete {
			b.Fatal(err, res.Incomplete)
		}
		runtime.KeepAlive(r)
		built += float64(h1 - h0)
		ran += float64(h2) - float64(h0)
		stack += float64(s2) - float64(s0)
	}
	n := float64(b.N) * hosts
	b.ReportMetric(built/n, "bytes/host")
	b.ReportMetric(ran/n, "running-bytes/host")
	b.ReportMetric(stack/n, "stack-bytes/host")
}
