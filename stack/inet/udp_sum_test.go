package inet_test

import (
	"math"
	"testing"

	"simkron/internal/machinetest"
	"simkron/machine"
	"simkron/stack/apps/latency"
)

// The layers of each latency add up to it exactly: the send split to the
// cycles inside sendto, the receive split (waiting for the wire counted as
// DMA) to the cycles from the first frame's arrival to recvfrom's return.
func TestUDPLayersSumToLatency(t *testing.T) {
	exp, err := machine.LoadExperiment(machinetest.Config("udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	udpParams(exp).Sizes = []int{4, 1472, 4096, 16384}
	udpParams(exp).Messages = 5
	res, _ := runSweep(t, exp)
	sum := func(ls []latency.LayerCost) float64 {
		var s float64
		for _, l := range ls {
			s += l.Cycles
		}
		return s
	}
	for _, row := range udpRows(res) {
		if got, want := sum(row.SendLayers), row.Send.Mean; math.Abs(got-want) > 1e-6*want {
			t.Errorf("size %d: send layers sum to %.3f, send latency %.3f", row.Size, got, want)
		}
		if got, want := sum(row.RecvLayers), row.Receive.Mean; math.Abs(got-want) > 1e-6*want {
			t.Errorf("size %d: receive layers sum to %.3f, receive latency %.3f", row.Size, got, want)
		}
	}
	// Fragmented messages wait for the wire between fragments: DMA grows.
	var dma4, dma16 float64
	for _, row := range udpRows(res) {
		for _, l := range row.RecvLayers {
			if l.Layer == "DMA" && row.Size == 4 {
				dma4 = l.Cycles
			}
			if l.Layer == "DMA" && row.Size == 16384 {
				dma16 = l.Cycles
			}
		}
	}
	if dma16 < 10*dma4 {
		t.Errorf("receive DMA: %.0f cycles at 4 B, %.0f at 16 KiB", dma4, dma16)
	}
}
