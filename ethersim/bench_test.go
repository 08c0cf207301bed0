package ethersim_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/sim"
)

// countStation counts receptions.
type countStation struct{ n int }

func (c *countStation) Receive([]byte) { c.n++ }

// benchFrames pushes b.N 1024-byte frames from a to b, each sent as soon
// as the last is done, and reports frames per host second.
func benchFrames(b *testing.B, p ethersim.SegmentParams, duplex bool) {
	k := sim.NewScheduler(1)
	seg, err := ethersim.NewNetwork(k).NewSegment("lan", p)
	if err != nil {
		b.Fatal(err)
	}
	var ca, cb countStation
	a, _ := seg.Attach("a", &ca, ethersim.FaultParams{})
	bb, _ := seg.Attach("b", &cb, ethersim.FaultParams{})
	fa, fb := frame(mac(2), mac(1), 1024, 1), frame(mac(1), mac(2), 1024, 2)
	a.OnTxDone = func(ethersim.TxStatus) { _ = a.Transmit(fa) }
	if duplex {
		bb.OnTxDone = func(ethersim.TxStatus) { _ = bb.Transmit(fb) }
	}
	// Warm the pools and teach the switch both addresses.
	_ = a.Transmit(fa)
	_ = bb.Transmit(fb)
	k.RunWhile(func() bool { return ca.n+cb.n < 4 })
	b.ReportAllocs()
	b.ResetTimer()
	target := ca.n + cb.n + b.N
	k.RunWhile(func() bool { return ca.n+cb.n < target })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(k.Now())/float64(sim.Second)/b.Elapsed().Seconds(), "simsec/s")
}

func BenchmarkSharedSegment(b *testing.B) {
	benchFrames(b, ethersim.DefaultSegmentParams(), false)
}

func BenchmarkSharedSegmentBothWays(b *testing.B) {
	benchFrames(b, ethersim.DefaultSegmentParams(), true)
}

func BenchmarkSwitch(b *testing.B) {
	benchFrames(b, switchParams(), false)
}

func BenchmarkSwitchFullDuplex(b *testing.B) {
	benchFrames(b, switchParams(), true)
}
